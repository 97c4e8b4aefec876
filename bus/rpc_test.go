package bus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
)

type echoReq struct {
	N    int    `json:"n"`
	Word string `json:"word"`
}

type echoResp struct {
	Twice int `json:"twice"`
}

func startEcho(t *testing.T, cfg bus.ServerConfig) (*bus.Client, bus.Subjects) {
	t.Helper()
	ns := bustest.NewServer(t)
	subj, _ := bus.NewSubjects("t")
	if cfg.Name == "" {
		cfg.Name = "echo"
	}
	srv, err := bus.NewServer(ns.Conn, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	err = bus.Handle(srv, "echo", subj.Core("echo"), func(ctx context.Context, r *echoReq) (*echoResp, error) {
		switch r.Word {
		case "missing":
			return nil, bus.Errorf(bus.CodeNotFound, "job %d not found", r.N)
		case "boom":
			return nil, errors.New("disk on fire")
		}
		return &echoResp{Twice: 2 * r.N}, nil
	})
	require.NoError(t, err)
	require.NoError(t, srv.Ready())
	return bus.NewClient(bustest.Connect(t, ns.ClientURL()), time.Second), subj
}

func TestRPCRoundTrip(t *testing.T) {
	client, subj := startEcho(t, bus.ServerConfig{})
	var resp echoResp
	require.NoError(t, client.Call(context.Background(), subj.Core("echo"), echoReq{N: 21}, &resp))
	require.Equal(t, 42, resp.Twice)
}

func TestRPCErrorsCrossTheWireWithTheirCode(t *testing.T) {
	client, subj := startEcho(t, bus.ServerConfig{})
	ctx := context.Background()

	err := client.Call(ctx, subj.Core("echo"), echoReq{N: 9, Word: "missing"}, nil)
	require.ErrorIs(t, err, bus.ErrNotFound)
	require.NotErrorIs(t, err, bus.ErrInvalid)
	require.Contains(t, err.Error(), "job 9 not found")

	err = client.Call(ctx, subj.Core("echo"), echoReq{Word: "boom"}, nil)
	require.ErrorIs(t, err, bus.ErrInternal)
	require.Contains(t, err.Error(), "disk on fire")
}

func TestRPCBadBodiesAreInvalidAndNameTheField(t *testing.T) {
	client, subj := startEcho(t, bus.ServerConfig{MaxRequestBytes: 64})
	ctx := context.Background()
	cases := []struct {
		name, body, want string
	}{
		{"broken JSON", `{"n":`, "body: truncated JSON"},
		{"not JSON at all", `hello`, "body: not valid JSON"},
		{"a wrong field type", `{"n":"seven"}`, "n: expected int, got JSON string"},
		{"an unknown field", `{"nn":1}`, "nn: unknown field"},
		{"trailing data", `{"n":1} {}`, "unexpected data after"},
		// \v and \f are space to bytes.TrimSpace, not to JSON.
		{"trailing non-JSON space", "{\"n\":1}\v\f", "unexpected data after"},
		{"a body over the limit", `{"word":"` + strings.Repeat("x", 100) + `"}`, "over the limit of 64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := client.CallRaw(ctx, subj.Core("echo"), []byte(c.body), nil)
			require.ErrorIs(t, err, bus.ErrInvalid)
			require.Contains(t, err.Error(), c.want)
		})
	}
	// An empty body is {}.
	var resp echoResp
	require.NoError(t, client.CallRaw(ctx, subj.Core("echo"), nil, &resp))
}

func TestRPCWithNobodyListeningIsUnavailable(t *testing.T) {
	ns := bustest.NewServer(t)
	client := bus.NewClient(ns.Conn, time.Second)
	err := client.Call(context.Background(), "core.nobody", struct{}{}, nil)
	require.ErrorIs(t, err, bus.ErrUnavailable)
}

func TestStopWaitsForRequestsInFlight(t *testing.T) {
	ns := bustest.NewServer(t)
	srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "slow"})
	require.NoError(t, err)
	entered, finish := make(chan struct{}), make(chan struct{})
	require.NoError(t, bus.Handle(srv, "slow", "slow", func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		close(entered)
		<-finish
		return &struct{}{}, nil
	}))
	require.NoError(t, srv.Ready())
	client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), 5*time.Second)
	replied := make(chan error, 1)
	go func() { replied <- client.Call(context.Background(), "slow", struct{}{}, nil) }()
	select {
	case <-entered:
	case err := <-replied:
		t.Fatalf("the request never reached the handler: %v", err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Stop(context.Background()) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a request was in flight")
	case <-time.After(50 * time.Millisecond): // a bound on a negative, not a synchronisation
	}
	close(finish)
	require.NoError(t, <-stopped)
	require.NoError(t, <-replied)
}

func TestRepliesOverMaxPayloadBecomeErrors(t *testing.T) {
	ns := bustest.NewServer(t)
	srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "big"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	require.NoError(t, bus.Handle(srv, "big", "big", func(ctx context.Context, r *echoReq) (*echoReq, error) {
		return &echoReq{Word: strings.Repeat("x", r.N)}, nil
	}))
	require.NoError(t, srv.Ready())
	client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), 5*time.Second)
	err = client.Call(context.Background(), "big", echoReq{N: 2 << 20}, nil)
	require.ErrorIs(t, err, bus.ErrInvalid, "an answer, not a timeout")
	require.ErrorContains(t, err, "ask for fewer or smaller jobs")
}

// TestErrorRepliesUnderRace sends many failing requests at once: replies are
// sent from the request goroutines, which the race detector checks.
func TestErrorRepliesUnderRace(t *testing.T) {
	client, subj := startEcho(t, bus.ServerConfig{})
	errs := make(chan error, 50)
	for range 50 {
		go func() { errs <- client.Call(context.Background(), subj.Core("echo"), echoReq{Word: "missing"}, nil) }()
	}
	for range 50 {
		require.ErrorIs(t, <-errs, bus.ErrNotFound)
	}
}

func TestNoRespondersKeepsItsCause(t *testing.T) {
	ns := bustest.NewServer(t)
	err := bus.NewClient(ns.Conn, time.Second).Call(context.Background(), "nobody.home", struct{}{}, nil)
	require.ErrorIs(t, err, bus.ErrUnavailable)
	require.ErrorIs(t, err, nats.ErrNoResponders)
}

// TestWaitingRequestsTakeNoInFlightSlot: with one slot, a request held by
// a HandleWaiting method still lets a bounded one through.
func TestWaitingRequestsTakeNoInFlightSlot(t *testing.T) {
	ns := bustest.NewServer(t)
	srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "slots", MaxInFlight: 1})
	require.NoError(t, err)
	release := make(chan struct{})
	t.Cleanup(func() { close(release); _ = srv.Stop(context.Background()) })
	entered := make(chan struct{})
	require.NoError(t, bus.HandleWaiting(srv, "wait", "wait", func(ctx context.Context, _ *struct{}) (*struct{}, error) {
		close(entered)
		<-release
		return &struct{}{}, nil
	}))
	require.NoError(t, bus.Handle(srv, "quick", "quick", func(ctx context.Context, r *echoReq) (*echoResp, error) {
		return &echoResp{Twice: 2 * r.N}, nil
	}))
	require.NoError(t, srv.Ready())
	client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), 5*time.Second)
	go func() { _ = client.Call(context.Background(), "wait", struct{}{}, nil) }()
	<-entered
	var resp echoResp
	require.NoError(t, client.Call(context.Background(), "quick", echoReq{N: 2}, &resp))
	require.Equal(t, 4, resp.Twice)
}

// lockedBuffer is a log sink that request goroutines may write concurrently.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestAPanickingHandlerAnswersInternalAndKeepsServing: a handler that panics
// answers internal without its stack on the wire, logs the stack, and gives
// back its in-flight slot (the only one) and its place in Stop's wait.
func TestAPanickingHandlerAnswersInternalAndKeepsServing(t *testing.T) {
	ns := bustest.NewServer(t)
	var logs lockedBuffer
	srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "panicky", MaxInFlight: 1,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	require.NoError(t, bus.Handle(srv, "echo", "echo", func(ctx context.Context, r *echoReq) (*echoResp, error) {
		if r.Word == "panic" {
			var jobs []int
			_ = jobs[r.N] // index out of range
		}
		return &echoResp{Twice: 2 * r.N}, nil
	}))
	require.NoError(t, srv.Ready())
	client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), 5*time.Second)
	ctx := context.Background()

	for range 3 { // more panics than slots: each one gave its slot back
		err = client.Call(ctx, "echo", echoReq{N: 7, Word: "panic"}, nil)
		require.ErrorIs(t, err, bus.ErrInternal)
		require.ErrorContains(t, err, "an internal error happened")
		require.NotContains(t, err.Error(), "goroutine", "no stack on the wire")
		require.NotContains(t, err.Error(), "index out of range", "no panic value on the wire")
	}
	var resp echoResp
	require.NoError(t, client.Call(ctx, "echo", echoReq{N: 21}, &resp))
	require.Equal(t, 42, resp.Twice)

	require.Contains(t, logs.String(), "rpc handler panicked")
	require.Contains(t, logs.String(), "index out of range")
	require.Contains(t, logs.String(), "rpc_test.go", "the stack names the panicking frame")

	stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, srv.Stop(stopCtx))
	require.NoError(t, stopCtx.Err(), "Stop did not wait on a panicked request")
}

// TestErrorHeaders: a failed call's reply carries the code as a number in
// Nats-Service-Error-Code (what micro clients in other languages read) and
// as a word in Kuebus-Error-Code; the client reads the word, and a reply
// with the number alone (a plain micro service's) as the code of the same
// meaning.
func TestErrorHeaders(t *testing.T) {
	for code, status := range map[bus.Code]string{
		bus.CodeInvalid: "400", bus.CodeNotFound: "404", bus.CodeConflict: "409",
		bus.CodeUnavailable: "503", bus.CodeInternal: "500",
	} {
		require.Equal(t, status, fmt.Sprint(bus.StatusOf(code)), code)
	}

	client, subj := startEcho(t, bus.ServerConfig{})
	var resp echoResp
	err := client.Call(context.Background(), subj.Core("echo"), echoReq{N: 7, Word: "missing"}, &resp)
	require.ErrorIs(t, err, bus.ErrNotFound)
	require.EqualError(t, err, "kuebus: not_found: job 7 not found")

	// A micro service of someone else's, answering with a number only.
	plain := bustest.NewServer(t)
	svc, err := micro.AddService(plain.Conn, micro.Config{Name: "plain", Version: "1.0.0"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Stop() })
	require.NoError(t, svc.AddEndpoint("conflict", micro.HandlerFunc(func(r micro.Request) {
		_ = r.Error("409", "someone else holds it", nil)
	}), micro.WithEndpointSubject("plain.conflict")))
	require.NoError(t, svc.AddEndpoint("teapot", micro.HandlerFunc(func(r micro.Request) {
		_ = r.Error("418", "short and stout", nil)
	}), micro.WithEndpointSubject("plain.teapot")))
	// The endpoints subscribe on plain.Conn, the call comes on another
	// connection: a round trip makes sure the server has the subscriptions.
	require.NoError(t, plain.Conn.Flush())
	c := bus.NewClient(bustest.Connect(t, plain.ClientURL()), time.Second)
	err = c.Call(context.Background(), "plain.conflict", struct{}{}, nil)
	require.ErrorIs(t, err, bus.ErrConflict)
	require.EqualError(t, err, "kuebus: conflict: someone else holds it")
	err = c.Call(context.Background(), "plain.teapot", struct{}{}, nil)
	require.ErrorIs(t, err, bus.ErrInternal, "a number kuebus does not know")
}

// TestAFullServerAnswersUnavailableAtOnce: a request beyond MaxInFlight
// (Handle) or MaxWaiting (HandleWaiting) is answered unavailable, rather
// than left waiting in NATS's buffers for a slot until its caller gives
// up; the slot of a request that returns serves the next one.
func TestAFullServerAnswersUnavailableAtOnce(t *testing.T) {
	type handleFunc func(*bus.Server, string, string, func(context.Context, *echoReq) (*echoResp, error)) error
	for _, tc := range []struct {
		name   string
		handle handleFunc
	}{
		{"a bounded endpoint beyond MaxInFlight", bus.Handle[echoReq, echoResp]},
		{"a waiting endpoint beyond MaxWaiting", bus.HandleWaiting[echoReq, echoResp]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := bustest.NewServer(t)
			srv, err := bus.NewServer(ns.Conn, bus.ServerConfig{Name: "full", MaxInFlight: 1, MaxWaiting: 1})
			require.NoError(t, err)
			t.Cleanup(func() { _ = srv.Stop(context.Background()) })
			entered, release := make(chan struct{}, 1), make(chan struct{})
			require.NoError(t, tc.handle(srv, "slow", "slow", func(ctx context.Context, r *echoReq) (*echoResp, error) {
				entered <- struct{}{}
				if r.Word == "hold" {
					<-release
				}
				return &echoResp{Twice: 2 * r.N}, nil
			}))
			require.NoError(t, srv.Ready())
			// The deadline is far: a refusal must come long before it.
			client := bus.NewClient(bustest.Connect(t, ns.ClientURL()), time.Minute)
			ctx := context.Background()

			first := make(chan error, 1)
			go func() { first <- client.Call(ctx, "slow", echoReq{N: 1, Word: "hold"}, nil) }()
			<-entered
			err = client.Call(ctx, "slow", echoReq{N: 2}, nil)
			require.ErrorIs(t, err, bus.ErrUnavailable)
			require.Contains(t, err.Error(), "busy")

			close(release)
			require.NoError(t, <-first)
			// The slot is freed just after the first reply went out, so a
			// call right behind it may still find it taken.
			var resp echoResp
			require.Eventually(t, func() bool {
				return client.Call(ctx, "slow", echoReq{N: 3}, &resp) == nil
			}, 10*time.Second, time.Millisecond, "the freed slot serves the next request")
			require.Equal(t, 6, resp.Twice)
		})
	}
}

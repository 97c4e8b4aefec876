package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestMain runs the tests against a real Redis and checks for leaked
// goroutines (nodetest.Main).
func TestMain(m *testing.M) { os.Exit(nodetest.Main(m)) }

// waitTimeout bounds every wait on a signal; generous for slow machines.
const waitTimeout = 15 * time.Second

// env is one test's stack: embedded NATS, Redis, core, and the HTTP server
// behind httptest.
type env struct {
	t    *testing.T
	core *nodetest.Core
	srv  *httpapi.Server
	url  string
	// header is sent with every request of do.
	header http.Header
	// tr is this test's own transport, so that no idle connection outlives
	// it (the leak check would see its goroutines).
	tr *http.Transport
}

// newEnv starts a core and an HTTP server with cfg (Conn is filled in).
// coreCfg may set core's test hooks.
func newEnv(t *testing.T, cfg httpapi.Config, coreCfg ...service.Config) *env {
	t.Helper()
	var cc service.Config
	if len(coreCfg) > 0 {
		cc = coreCfg[0]
	}
	return newEnvWith(t, cc, func(*nodetest.Core) httpapi.Config { return cfg })
}

// newEnvWith is newEnv for a config that needs the running core. Each of
// setup runs on the server before it serves (to set its clock, say).
func newEnvWith(t *testing.T, cc service.Config, config func(*nodetest.Core) httpapi.Config, setup ...func(*httpapi.Server)) *env {
	t.Helper()
	c := nodetest.NewCore(t, cc)
	return newEnvOn(t, c, config(c), setup...)
}

// newEnvOn is newEnv on a core the test started.
func newEnvOn(t *testing.T, c *nodetest.Core, cfg httpapi.Config, setup ...func(*httpapi.Server)) *env {
	t.Helper()
	cfg.Conn = bustest.Connect(t, c.NATS.ClientURL())
	srv, err := httpapi.New(cfg)
	require.NoError(t, err)
	for _, fn := range setup {
		fn(srv)
	}
	require.NoError(t, srv.Start())
	ts := httptest.NewServer(srv.Handler())
	// Cleanups run last first: the event streams end (srv.Close) before
	// httptest waits for every request to finish.
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close)
	return &env{t: t, core: c, srv: srv, url: ts.URL, header: http.Header{}, tr: tr}
}

// reply is one HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// errorBody decodes {"error":{"code","message"}}.
func (r reply) err() (code, msg string) {
	var b struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(r.body, &b)
	return b.Error.Code, b.Error.Message
}

func (r reply) String() string { return string(r.body) }

// do sends a request. body is sent as is when it is a string or []byte, and
// as JSON otherwise; nil sends none. hdr are header name/value pairs.
func (e *env) do(method, path string, body any, hdr ...string) reply {
	e.t.Helper()
	r, err := e.send(method, path, body, hdr...)
	require.NoError(e.t, err)
	return r
}

// send is do for other goroutines than the test's: it returns its error.
func (e *env) send(method, path string, body any, hdr ...string) (reply, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, rd)
	if err != nil {
		return reply{}, err
	}
	for k, v := range e.header {
		req.Header[k] = v
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := e.tr.RoundTrip(req) // no redirects followed
	if err != nil {
		return reply{}, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	return reply{status: res.StatusCode, header: res.Header, body: data}, err
}

// ok sends a request that must answer want, and decodes its body into out
// (when not nil).
func (e *env) ok(want int, method, path string, body, out any) reply {
	e.t.Helper()
	r := e.do(method, path, body)
	require.Equal(e.t, want, r.status, "%s %s: %s", method, path, r.body)
	if out != nil {
		require.NoError(e.t, json.Unmarshal(r.body, out), string(r.body))
	}
	return r
}

// fails sends a request that must fail with status and code, and returns its
// message.
func (e *env) fails(status int, code, method, path string, body any) string {
	e.t.Helper()
	r := e.do(method, path, body)
	require.Equal(e.t, status, r.status, "%s %s: %s", method, path, r.body)
	gotCode, msg := r.err()
	require.Equal(e.t, code, gotCode, "%s %s: %s", method, path, r.body)
	require.NotEmpty(e.t, msg)
	return msg
}

// create makes a job through the API and returns it.
func (e *env) create(body any) core.Job {
	e.t.Helper()
	var out struct {
		ID  int64
		Job core.Job
	}
	e.ok(http.StatusCreated, "POST", "/job", body, &out)
	require.Equal(e.t, out.ID, out.Job.ID)
	return out.Job
}

// sseEvent is one event of GET /events.
type sseEvent struct {
	name string
	data string
	id   string // the SSE id: the stream sequence, with durable events
}

// stream is an open GET /events.
type stream struct {
	t      *testing.T
	res    *http.Response
	events chan sseEvent // closed when the stream ends
}

// events opens GET /events (query may be "") and waits for its ready event:
// from then on every event published reaches it.
func (e *env) events(query string, hdr ...string) *stream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", e.url+"/events"+query, nil)
	require.NoError(e.t, err)
	for k, v := range e.header {
		req.Header[k] = v
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := e.tr.RoundTrip(req)
	require.NoError(e.t, err)
	require.Equal(e.t, http.StatusOK, res.StatusCode)
	require.Equal(e.t, "text/event-stream", res.Header.Get("Content-Type"))
	st := &stream{t: e.t, res: res, events: make(chan sseEvent, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(st.events)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					st.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				// A comment (heartbeat) is passed on as an event named ":".
				st.events <- sseEvent{name: ":", data: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	e.t.Cleanup(func() {
		cancel()
		_ = res.Body.Close()
		<-done
	})
	require.Equal(e.t, "ready", st.next().name)
	return st
}

// next returns the next event, failing the test after waitTimeout.
func (s *stream) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		require.True(s.t, ok, "the event stream ended")
		return ev
	case <-time.After(waitTimeout):
		s.t.Fatal("no event on the stream within", waitTimeout)
	}
	return sseEvent{}
}

// until returns the first job event named event for job id, skipping others.
func (s *stream) until(event string, id int64) core.Event {
	s.t.Helper()
	for {
		ev := s.next()
		if ev.name != "job" {
			continue
		}
		var body core.Event
		require.NoError(s.t, json.Unmarshal([]byte(ev.data), &body))
		if body.Event == event && body.ID == id {
			return body
		}
	}
}

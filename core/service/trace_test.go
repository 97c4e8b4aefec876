package service_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// traceOf is a valid traceparent whose parent id ends in n.
func traceOf(n int) string {
	return fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", n+1)
}

// withHeader sends a request as any NATS client would, with a traceparent
// header, and returns the reply's body and its error code ("" for none).
func withHeader(t *testing.T, c *nodetest.Core, method, body, traceparent string) (string, string) {
	t.Helper()
	msg := &nats.Msg{Subject: c.Client.Subjects().Core(method), Data: []byte(body),
		Header: nats.Header{bus.HeaderTraceparent: []string{traceparent}}}
	reply, err := c.NATS.Conn.RequestMsg(msg, 5*time.Second)
	require.NoError(t, err)
	return string(reply.Data), reply.Header.Get(bus.HeaderKuebusCode)
}

// TestACreateKeepsItsTraceparentHeader: create keeps the header's
// traceparent as the job's trace; create_bulk gives it to every job but
// one that brings its own in the body; get and the enqueue event carry it.
func TestACreateKeepsItsTraceparentHeader(t *testing.T) {
	c, _ := newCore(t)
	evs := events(t, c, c.Client.Subjects().JobEventsOf("enqueue", ""))

	body, code := withHeader(t, c, bus.MethodCreate, `{"type":"t"}`, traceOf(1))
	require.Empty(t, code, body)
	var job core.Job
	require.NoError(t, json.Unmarshal([]byte(body), &job))
	require.Equal(t, traceOf(1), job.Trace)
	got, err := c.Client.Get(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, traceOf(1), got.Trace, "stored")
	require.Equal(t, traceOf(1), (<-evs).Job.Trace, "the enqueue event's job carries it")

	body, code = withHeader(t, c, bus.MethodCreateBulk,
		`{"jobs":[{"type":"t"},{"type":"t","trace":"`+traceOf(2)+`"},{"type":"u"}]}`, traceOf(3))
	require.Empty(t, code, body)
	var reply core.JobsReply
	require.NoError(t, json.Unmarshal([]byte(body), &reply))
	var traces []string
	for _, j := range reply.Jobs {
		got, err := c.Client.Get(ctx, j.ID)
		require.NoError(t, err)
		traces = append(traces, got.Trace)
	}
	require.Equal(t, []string{traceOf(3), traceOf(2), traceOf(3)}, traces, "the header for each job without its own")
}

// TestAMalformedTraceparentHeaderIsIgnored: a header that is not a W3C
// traceparent (version 00's 55 characters) does not fail the create, and
// the job keeps no trace; as W3C's propagators do, core starts afresh.
func TestAMalformedTraceparentHeaderIsIgnored(t *testing.T) {
	c, _ := newCore(t)
	for _, tp := range []string{
		"nope",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",     // no flags
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  // uppercase
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero parent id
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", // too long
		"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",  // not dashes
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",  // not hex
	} {
		body, code := withHeader(t, c, bus.MethodCreate, `{"type":"t"}`, tp)
		require.Empty(t, code, "%q: %s", tp, body)
		var job core.Job
		require.NoError(t, json.Unmarshal([]byte(body), &job))
		require.Empty(t, job.Trace, "%q", tp)
		got, err := c.Client.Get(ctx, job.ID)
		require.NoError(t, err)
		require.Empty(t, got.Trace, "%q: nothing stored", tp)
	}
}

// TestATraceInTheBodyIsCheckedAsEveryField: a spec's own trace that is not
// a traceparent is refused as invalid, naming it, and stores nothing.
func TestATraceInTheBodyIsCheckedAsEveryField(t *testing.T) {
	c, _ := newCore(t)
	for method, body := range map[string]string{
		bus.MethodCreate:     `{"type":"t","trace":"nope"}`,
		bus.MethodCreateBulk: `{"jobs":[{"type":"t"},{"type":"t","trace":"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}]}`,
	} {
		_, code := raw(t, c, method, body)
		require.Equal(t, "invalid", code, method)
	}
	_, err := c.Client.CreateSpec(ctx, core.Spec{Type: "t", Trace: "00-x"})
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "trace: not a W3C traceparent")
	_, err = c.Client.CreateBulk(ctx, []core.Spec{{Type: "t"}, {Type: "t", Trace: "00-x"}})
	require.ErrorContains(t, err, "jobs[1].trace: not a W3C traceparent")
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Zero(t, n, "nothing stored")
}

// TestConcurrentCreatesKeepTheirOwnTraces: creates that core's batcher
// joins into one store call each keep the trace of their own header.
func TestConcurrentCreatesKeepTheirOwnTraces(t *testing.T) {
	c, _ := newCore(t)
	const calls = 50
	traces := make([]string, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			msg := &nats.Msg{Subject: c.Client.Subjects().Core(bus.MethodCreate), Data: []byte(`{"type":"t"}`),
				Header: nats.Header{bus.HeaderTraceparent: []string{traceOf(i)}}}
			reply, err := c.NATS.Conn.RequestMsg(msg, 5*time.Second)
			if err != nil {
				traces[i] = err.Error()
				return
			}
			var job core.Job
			if err := json.Unmarshal(reply.Data, &job); err != nil {
				traces[i] = err.Error()
				return
			}
			got, err := c.Client.Get(ctx, job.ID)
			if err != nil {
				traces[i] = err.Error()
				return
			}
			traces[i] = got.Trace
		})
	}
	wg.Wait()
	for i, tr := range traces {
		require.Equal(t, traceOf(i), tr, "create %d", i)
	}
}

package redisstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// traceparent is a W3C traceparent as a create brings it.
const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestCreateJobsKeepsATraceAndLeaseHandsItOut: create_jobs writes a job's
// trace only when it has one (a SPARSE field), and the rows of get and
// of lease carry it, so a worker gets it with the job.
func TestCreateJobsKeepsATraceAndLeaseHandsItOut(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	jobs, _, err := st.Create(ctx, 1000, []core.Spec{
		{Type: "t", Data: []byte(`{"n":1}`), MaxAttempts: 3, TTL: 1000 * time.Millisecond, Trace: traceparent},
		{Type: "t", Data: []byte(`{"n":1}`), MaxAttempts: 3, TTL: 1000 * time.Millisecond},
	})
	require.NoError(t, err)
	require.Equal(t, traceparent, jobs[0].Trace)
	require.Empty(t, jobs[1].Trace)
	st.requireKeys(keyspace{
		"{_}:ids":    "1000",
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1000_000, "2": 1000_001},
		"{t}:ready":  map[string]float64{"0000000000000001:1": 0, "0000000000000002:2": 0},
		"{t}:seq":    "2",
		"{t}:job:1":  jobHash(map[string]string{"trace": traceparent}),
		"{t}:job:2":  jobHash(map[string]string{"id": "2", "rmember": "0000000000000002:2"}),
	}, "job 1 has a trace field, job 2 none")

	got, err := st.Get(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, jobs[0], *got, "get reads the trace")

	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 2000, Types: []string{"t"}, Max: 2, Worker: "w", Token: "L", TTL: 0})
	require.NoError(t, err)
	require.Len(t, leased, 2)
	require.Equal(t, traceparent, leased[0].Trace, "the lease reply carries each job's trace")
	require.Empty(t, leased[1].Trace)
}

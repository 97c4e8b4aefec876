package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/httpapi/prom"
	"github.com/kuebus/kuebus/node/nodetest"
)

// metricsEnv is an env whose server feeds a Prometheus exporter.
func metricsEnv(t *testing.T, node string, leader bool) *env {
	t.Helper()
	// The exporter needs a client before the server exists; any client of
	// the same core will do, so it gets one of its own.
	return newEnvWith(t, service.Config{}, func(c *nodetest.Core) httpapi.Config {
		exp, err := prom.New(prom.Config{Stats: c.Client, Node: node, Leader: leader})
		require.NoError(t, err)
		return httpapi.Config{Metrics: exp, MetricsHandler: exp.Handler()}
	})
}

// scrape reads /metrics and returns its lines without comments.
func (e *env) scrape() string {
	e.t.Helper()
	r := e.do("GET", "/metrics", nil)
	require.Equal(e.t, http.StatusOK, r.status, r)
	var keep []string
	for line := range strings.SplitSeq(r.String(), "\n") {
		// Buckets only make failure messages long: _count and _sum say enough.
		if strings.HasPrefix(line, "kuebus_") && !strings.Contains(line, "_bucket{") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := metricsEnv(t, "node-a", true)
	// The server counts an event before it forwards it to the streams, so
	// an event seen here has been counted.
	st := e.events("")

	done := e.create(map[string]any{"type": "email", "data": 1})
	st.until(bus.EventEnqueue, done.ID)
	var leased core.Job
	e.ok(http.StatusOK, "POST", "/pop?type=email", nil, &leased)
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/complete", done.ID), map[string]any{"lease": leased.Lease}, nil)
	st.until(bus.EventComplete, done.ID)

	broken := e.create(map[string]any{"type": "email", "options": map[string]any{"attempts": 2}})
	for range 2 {
		e.ok(http.StatusOK, "POST", "/pop?type=email", nil, &leased)
		e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/fail", broken.ID), map[string]any{"lease": leased.Lease, "error": "no"}, nil)
	}
	st.until(bus.EventFailed, broken.ID)
	waiting := e.create(map[string]any{"type": "sms"})
	st.until(bus.EventEnqueue, waiting.ID)
	e.ok(http.StatusOK, "PUT", "/types/sms/pause", nil, nil)
	// A re-run is an enqueue too, but not a new job.
	e.ok(http.StatusOK, "PUT", fmt.Sprintf("/job/%d/state/inactive", broken.ID), nil, nil)
	st.until(bus.EventEnqueue, broken.ID)
	dropped := e.create(map[string]any{"type": "sms"})
	e.ok(http.StatusOK, "POST", fmt.Sprintf("/job/%d/cancel", dropped.ID), nil, nil)
	st.until(bus.EventCancel, dropped.ID)

	got := e.scrape()
	for _, want := range []string{
		`kuebus_jobs_created_total{type="email"} 2`,
		`kuebus_jobs_created_total{type="sms"} 2`,
		`kuebus_jobs_cancelled_total{type="sms"} 1`,
		`kuebus_queue_depth{state="cancelled",type="sms"} 1`,
		`kuebus_jobs_completed_total{type="email"} 1`,
		`kuebus_jobs_failed_total{type="email"} 1`,
		`kuebus_job_attempts_failed_total{type="email"} 1`,
		`kuebus_job_duration_seconds_count{type="email"} 1`,
		`kuebus_queue_depth{state="complete",type="email"} 1`,
		`kuebus_queue_depth{state="inactive",type="email"} 1`,
		`kuebus_queue_depth{state="inactive",type="sms"} 1`,
		`kuebus_queue_depth{state="failed",type="sms"} 0`,
		`kuebus_core_up 1`,
		`kuebus_type_up{type="email"} 1`,
		`kuebus_type_up{type="sms"} 1`,
		`kuebus_queue_paused{type="sms"} 1`,
		`kuebus_queue_paused{type="email"} 0`,
		`kuebus_rpc_duration_seconds_count{code="ok",method="create"} 4`,
		`kuebus_rpc_duration_seconds_count{code="ok",method="lease"} 3`,
		`kuebus_rpc_duration_seconds_count{code="ok",method="complete"} 1`,
		`kuebus_promoter_leader{node="node-a"} 1`,
	} {
		require.Contains(t, got, want+"\n", "scrape:\n%s", got)
	}
	require.Contains(t, got, `kuebus_work_seconds_total `)

	t.Run("a failed core call is counted with its code", func(t *testing.T) {
		e.fails(http.StatusNotFound, "not_found", "GET", "/job/987654", nil)
		require.Contains(t, e.scrape(), `kuebus_rpc_duration_seconds_count{code="not_found",method="get"} 1`)
	})

	t.Run("the leader gauge follows queue.leader events", func(t *testing.T) {
		publish := func(leader string) {
			t.Helper()
			data := fmt.Sprintf(`{"event":"leader","at":1,"leader":%q}`, leader)
			require.NoError(t, e.core.NATS.Conn.Publish(e.core.Client.Subjects().Queue(bus.QueueLeader), []byte(data)))
			for ev := st.next(); ev.name != "queue" || ev.data != data; ev = st.next() {
			}
		}
		publish("node-b")
		require.Contains(t, e.scrape(), `kuebus_promoter_leader{node="node-a"} 0`)
		publish("node-a")
		require.Contains(t, e.scrape(), `kuebus_promoter_leader{node="node-a"} 1`)
	})

	t.Run("core down: kuebus_core_up 0 and no depth", func(t *testing.T) {
		require.NoError(t, e.core.Service.Stop(t.Context()))
		got := e.scrape()
		require.Contains(t, got, "kuebus_core_up 0")
		require.NotContains(t, got, "kuebus_queue_depth")
		require.NotContains(t, got, "kuebus_type_up")
		// The scrape's own stats call is observed while the scrape is being
		// collected, so it shows in the next one (or already in this one:
		// collectors run concurrently).
		require.Regexp(t, `kuebus_rpc_duration_seconds_count\{code="unavailable",method="stats"\} [12]\n`, e.scrape()+"\n")
	})
}

// TestQueueHealthMetrics: the figures operators alert on. The age of the
// job next in line grows with the clock while it waits and is 0 once none
// waits; every started job is observed by the wait histogram; a promotion
// by the lateness histogram; a rescued lease by the stall counter.
func TestQueueHealthMetrics(t *testing.T) {
	t.Parallel()
	var now atomic.Int64 // the exporter's clock, unix ms; 0: the real one
	e := newEnvWith(t, service.Config{}, func(c *nodetest.Core) httpapi.Config {
		exp, err := prom.New(prom.Config{Stats: c.Client, Now: func() time.Time {
			if ms := now.Load(); ms > 0 {
				return time.UnixMilli(ms)
			}
			return time.Now()
		}})
		require.NoError(t, err)
		return httpapi.Config{Metrics: exp, MetricsHandler: exp.Handler()}
	})
	st := e.events("")
	job := e.create(map[string]any{"type": "report"})
	st.until(bus.EventEnqueue, job.ID)

	now.Store(job.PromoteAt + 5000)
	require.Contains(t, e.scrape(), `kuebus_queue_oldest_job_age_seconds{type="report"} 5`+"\n")
	now.Store(job.PromoteAt + 65000)
	require.Contains(t, e.scrape(), `kuebus_queue_oldest_job_age_seconds{type="report"} 65`+"\n", "it grows while the job waits")

	for range 2 {
		var leased core.Job
		e.ok(http.StatusOK, "POST", "/pop?type=report&ttl=1", nil, &leased)
		st.until(bus.EventStart, leased.ID)
		if leased.ID != job.ID {
			continue
		}
		// Its 1 ms lease runs out: rescue puts it back (job.stalled).
		untilMoved(t, func() (*core.MoveReply, error) {
			return e.core.Client.Rescue(t.Context(), &core.RescueRequest{Limit: 10})
		})
		st.until(bus.EventStalled, job.ID)
		job = e.create(map[string]any{"type": "report"}) // a second one for the loop
		st.until(bus.EventEnqueue, job.ID)
	}
	got := e.scrape()
	require.Contains(t, got, `kuebus_job_wait_seconds_count{type="report"} 2`+"\n", "every started job")
	require.Contains(t, got, `kuebus_jobs_stalled_total{type="report"} 1`+"\n")

	delayed := e.create(map[string]any{"type": "later", "options": map[string]any{"delay": 1}})
	st.until(bus.EventEnqueue, delayed.ID)
	untilMoved(t, func() (*core.MoveReply, error) { return e.core.Client.Promote(t.Context(), 10) })
	st.until(bus.EventPromotion, delayed.ID)
	require.Contains(t, e.scrape(), `kuebus_promotion_lateness_seconds_count{type="later"} 1`+"\n")
}

// untilMoved calls a promoter method (promote, rescue) until it moves a job:
// what it waits for is a millisecond of the clock (a 1 ms delay or lease),
// which no event announces. Each call is a round trip to core, so a few
// hundred calls at most.
func untilMoved(t *testing.T, call func() (*core.MoveReply, error)) {
	t.Helper()
	for range 100000 {
		r, err := call()
		require.NoError(t, err)
		if r.Moved > 0 {
			return
		}
	}
	t.Fatal("no job moved")
}

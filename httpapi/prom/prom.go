package prom

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
)

// StatsSource reads the queue's counts; *core.Client is one. The exporter
// asks for partial stats: with one Redis Cluster master down it still
// exports the other types' counts, and marks the types core could not read
// with kuebus_type_up 0 (docs/protocol.md §3.12).
type StatsSource interface {
	StatsPartial(ctx context.Context) (*core.Stats, error)
}

// Defaults of Config.
const (
	NodeDefault          = "local"
	ScrapeTimeoutDefault = 5 * time.Second
)

// Config configures an Exporter.
type Config struct {
	// Stats reads queue depth at each scrape. Required.
	Stats StatsSource
	// Node is this node's name: the node label of kuebus_promoter_leader,
	// compared with the leader named by queue.leader events. Default
	// NodeDefault ("local").
	Node string
	// Leader is kuebus_promoter_leader's value until a queue.leader event
	// arrives. Default false. `kuebus dev` runs the only promoter: true.
	Leader bool
	// ScrapeTimeout bounds the core.stats call of one scrape. Default
	// ScrapeTimeoutDefault (5s).
	ScrapeTimeout time.Duration
	// Now is the clock of kuebus_queue_oldest_job_age_seconds. Default
	// time.Now; tests set it.
	Now func() time.Time
}

// Exporter holds the metrics. It implements httpapi.Metrics.
type Exporter struct {
	cfg      Config
	reg      *prometheus.Registry
	created  *prometheus.CounterVec
	complete *prometheus.CounterVec
	failed   *prometheus.CounterVec
	cancel   *prometheus.CounterVec
	retried  *prometheus.CounterVec
	duration *prometheus.HistogramVec
	wait     *prometheus.HistogramVec
	late     *prometheus.HistogramVec
	stalled  *prometheus.CounterVec
	rpc      *prometheus.HistogramVec
	leader   prometheus.Gauge
}

var _ httpapi.Metrics = (*Exporter)(nil)

// New builds the metrics on a registry of their own.
func New(cfg Config) (*Exporter, error) {
	if cfg.Stats == nil {
		return nil, errors.New("prom: Config.Stats is required")
	}
	cfg.Node = cmp.Or(cfg.Node, NodeDefault)
	cfg.ScrapeTimeout = cmp.Or(cfg.ScrapeTimeout, ScrapeTimeoutDefault)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	byType := []string{"type"}
	e := &Exporter{
		cfg: cfg,
		reg: prometheus.NewRegistry(),
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuebus_jobs_created_total", Help: "Jobs created, per type (from job.enqueue events of new jobs).",
		}, byType),
		complete: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuebus_jobs_completed_total", Help: "Jobs completed, per type (from job.complete events).",
		}, byType),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuebus_jobs_failed_total", Help: "Jobs failed for good, per type (from job.failed events).",
		}, byType),
		cancel: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuebus_jobs_cancelled_total", Help: "Jobs cancelled, per type (from job.cancel events).",
		}, byType),
		retried: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuebus_job_attempts_failed_total", Help: "Failed attempts that will be retried, per type (from job.failed_attempt events).",
		}, byType),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kuebus_job_duration_seconds",
			Help:    "Handler time of completed jobs, per type (job.duration of job.complete events).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
		}, byType),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kuebus_job_wait_seconds",
			Help:    "Time from ready (promote_at) to start of each started job, per type (job.start events).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
		}, byType),
		late: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kuebus_promotion_lateness_seconds",
			Help:    "How late after its due time (promote_at) each delayed job was promoted, per type (job.promotion events).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, byType),
		stalled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuebus_jobs_stalled_total", Help: "Leases that ran out and were rescued, per type (job.stalled events; a stall past the limit is a failed attempt, counted there too).",
		}, byType),
		rpc: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kuebus_rpc_duration_seconds",
			Help:    "Latency of this server's calls to core.<method>; code is ok or the error code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "code"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "kuebus_promoter_leader", Help: "1 while this node is the promoter leader (from queue.leader events).",
			ConstLabels: prometheus.Labels{"node": cfg.Node},
		}),
	}
	if cfg.Leader {
		e.leader.Set(1)
	}
	err := errors.Join(
		e.reg.Register(e.created), e.reg.Register(e.complete), e.reg.Register(e.failed),
		e.reg.Register(e.retried), e.reg.Register(e.cancel), e.reg.Register(e.duration), e.reg.Register(e.rpc),
		e.reg.Register(e.wait), e.reg.Register(e.late), e.reg.Register(e.stalled),
		e.reg.Register(e.leader), e.reg.Register(depthCollector{e}),
		e.reg.Register(collectors.NewGoCollector()),
		e.reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
	)
	if err != nil {
		return nil, fmt.Errorf("prom: %w", err)
	}
	return e, nil
}

// Registry is the exporter's registry, for a binary to add its own metrics.
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves the metrics in Prometheus's text format.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{Registry: e.reg})
}

// Event counts one event.
func (e *Exporter) Event(ev *core.Event) {
	switch ev.Event {
	case bus.EventEnqueue:
		// enqueue also announces a re-run (set_state) and a released
		// lease; core marks the enqueue of a job just created with "new".
		if ev.New {
			e.created.WithLabelValues(ev.Type).Inc()
		}
	case bus.EventComplete:
		e.complete.WithLabelValues(ev.Type).Inc()
		// A job that ran has started_at; one completed by hand from the
		// queue has no duration to observe. (Duration itself may be 0: a
		// handler faster than a millisecond.)
		if ev.Job != nil && ev.Job.StartedAt > 0 {
			e.duration.WithLabelValues(ev.Type).Observe(float64(ev.Job.Duration) / 1000)
		}
	case bus.EventStart:
		if ev.Job != nil && ev.Job.StartedAt > 0 && ev.Job.PromoteAt > 0 {
			e.wait.WithLabelValues(ev.Type).Observe(seconds(ev.Job.StartedAt - ev.Job.PromoteAt))
		}
	case bus.EventPromotion:
		if ev.Job != nil && ev.Job.PromoteAt > 0 {
			e.late.WithLabelValues(ev.Type).Observe(seconds(ev.At - ev.Job.PromoteAt))
		}
	case bus.EventStalled:
		e.stalled.WithLabelValues(ev.Type).Inc()
	case bus.EventFailed:
		e.failed.WithLabelValues(ev.Type).Inc()
	case bus.EventCancel:
		e.cancel.WithLabelValues(ev.Type).Inc()
	case bus.EventFailedAttempt:
		e.retried.WithLabelValues(ev.Type).Inc()
	case bus.QueueLeader:
		// A job event named "leader" would carry an id: only the queue's.
		if ev.ID == 0 && ev.Leader != "" {
			v := 0.0
			if ev.Leader == e.cfg.Node {
				v = 1
			}
			e.leader.Set(v)
		}
	}
}

// seconds is a span of ms in seconds, never negative: clocks of different
// machines may disagree by a little.
func seconds(ms int64) float64 { return float64(max(ms, 0)) / 1000 }

// RPC observes one call to core.
func (e *Exporter) RPC(method string, took time.Duration, err error) {
	code := "ok"
	if err != nil {
		code = string(bus.CodeOf(err))
	}
	e.rpc.WithLabelValues(method, code).Observe(took.Seconds())
}

// depthCollector reads core.stats at each scrape: depth is a fact about
// Redis, not something events could count reliably.
type depthCollector struct{ e *Exporter }

var (
	depthDesc   = prometheus.NewDesc("kuebus_queue_depth", "Jobs per state and type, read from core.stats at scrape time.", []string{"state", "type"}, nil)
	workDesc    = prometheus.NewDesc("kuebus_work_seconds_total", "Handler time of all completed jobs (core.stats work_time).", nil, nil)
	upDesc      = prometheus.NewDesc("kuebus_core_up", "1 if this scrape's core.stats call was answered, even partially (see kuebus_type_up), else 0.", nil, nil)
	typeUpDesc  = prometheus.NewDesc("kuebus_type_up", "1 if this scrape's core.stats read the type's counts, 0 if core could not (the type's Redis shard failed: stats type_errors).", []string{"type"}, nil)
	oldestDesc  = prometheus.NewDesc("kuebus_queue_oldest_job_age_seconds", "How long the job next in line of each type has been ready (now − its promote_at; 0 when none waits); read from core.stats at scrape time.", []string{"type"}, nil)
	limitedDesc = prometheus.NewDesc("kuebus_type_limited_jobs", "Inactive jobs of a type with a concurrency, a rate or a group limit that the limit (reason: concurrency, rate, group_concurrency, group_rate) holds back now; read from core.stats at scrape time.", []string{"type", "reason"}, nil)
	pausedDesc  = prometheus.NewDesc("kuebus_queue_paused", "1 while a type is paused (no leases), else 0; read from core.stats at scrape time.", []string{"type"}, nil)
)

func (d depthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- depthDesc
	ch <- workDesc
	ch <- upDesc
	ch <- typeUpDesc
	ch <- pausedDesc
	ch <- oldestDesc
	ch <- limitedDesc
}

func (d depthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), d.e.cfg.ScrapeTimeout)
	defer cancel()
	start := time.Now()
	st, err := d.e.cfg.Stats.StatsPartial(ctx)
	d.e.RPC(bus.MethodStats, time.Since(start), err)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(upDesc, prometheus.GaugeValue, 1)
	// A type core could not read has no counts, only type_up 0: a depth of
	// 0 would be a lie. Nor is work time exported then: the total leaves
	// those types out, and a counter that drops reads as a reset, so
	// rate() would count the whole total again when the shard comes back.
	for _, te := range st.TypeErrors {
		ch <- prometheus.MustNewConstMetric(typeUpDesc, prometheus.GaugeValue, 0, te.Type)
	}
	if len(st.TypeErrors) == 0 {
		ch <- prometheus.MustNewConstMetric(workDesc, prometheus.CounterValue, float64(st.WorkTime)/1000)
	}
	paused := make(map[string]bool, len(st.Paused))
	for _, typ := range st.Paused {
		paused[typ] = true
	}
	for typ, counts := range st.Types {
		ch <- prometheus.MustNewConstMetric(typeUpDesc, prometheus.GaugeValue, 1, typ)
		for _, state := range core.States {
			ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(counts.Get(state)), string(state), typ)
		}
		flag := 0.0
		if paused[typ] {
			flag = 1
		}
		ch <- prometheus.MustNewConstMetric(pausedDesc, prometheus.GaugeValue, flag, typ)
		age := 0.0
		if since, ok := st.ReadySince[typ]; ok {
			age = seconds(d.e.cfg.Now().UnixMilli() - since)
		}
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age, typ)
	}
	// Each limit a type has, at 0 while it holds nothing back, so that a
	// panel shows the type before its first held job.
	for typ, l := range st.Limits {
		for _, limit := range []struct {
			reason string
			has    bool
		}{
			{core.ReasonConcurrency, l.Concurrency > 0},
			{core.ReasonRate, l.Rate != nil},
			{core.ReasonGroupConcurrency, l.GroupConcurrency > 0},
			{core.ReasonGroupRate, l.GroupRate != nil},
		} {
			reason := limit.reason
			if !limit.has {
				continue
			}
			held := 0.0
			if l.HeldBy == reason {
				held = float64(l.Held)
			}
			ch <- prometheus.MustNewConstMetric(limitedDesc, prometheus.GaugeValue, held, typ, reason)
		}
	}
}

package workerprom

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kuebus/kuebus/worker"
)

// Metrics is worker.Metrics on Prometheus collectors.
type Metrics struct {
	running  *prometheus.GaugeVec
	ended    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

var _ worker.Metrics = (*Metrics)(nil)

// New registers the worker's collectors on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kuebus_worker_jobs_running", Help: "Handlers running now in this worker, per type.",
		}, []string{"type"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kuebus_worker_jobs_total", Help: "Handlers ended in this worker, per type and outcome (complete, fail, discard, retry_after).",
		}, []string{"type", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kuebus_worker_handler_seconds",
			Help:    "Handler time in this worker, per type, whatever the outcome.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600},
		}, []string{"type"}),
	}
	if err := errors.Join(reg.Register(m.running), reg.Register(m.ended), reg.Register(m.duration)); err != nil {
		return nil, fmt.Errorf("workerprom: %w", err)
	}
	return m, nil
}

// Started counts a handler in.
func (m *Metrics) Started(jobType string) { m.running.WithLabelValues(jobType).Inc() }

// Finished counts a handler out, with its outcome and time.
func (m *Metrics) Finished(jobType string, outcome worker.Outcome, took time.Duration) {
	m.running.WithLabelValues(jobType).Dec()
	m.ended.WithLabelValues(jobType, string(outcome)).Inc()
	m.duration.WithLabelValues(jobType).Observe(took.Seconds())
}

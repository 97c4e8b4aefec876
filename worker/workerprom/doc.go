// Package workerprom measures a Go worker for Prometheus: it implements
// worker.Metrics on a registry of the application's choosing.
//
//	m, err := workerprom.New(prometheus.DefaultRegisterer)
//	w, err := worker.New(worker.Config{Conn: nc, Metrics: m})
//
// Series (per type):
//
//	kuebus_worker_jobs_running{type}           handlers running now
//	kuebus_worker_jobs_total{type,outcome}     handlers ended: complete,
//	                                           fail, discard, retry_after
//	kuebus_worker_handler_seconds{type}        histogram of handler time
//
// Files:
//
//	doc.go      this comment
//	metrics.go  New, Metrics
package workerprom

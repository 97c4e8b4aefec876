// Package prom is the Prometheus backend of httpapi's Metrics hook, and the
// /metrics handler. It is apart from httpapi so that only the binary, which
// wires it in, depends on Prometheus.
//
// Series (every job type is a label value; types are bounded by the ones
// producers create):
//
//	kuebus_jobs_created_total{type}          new jobs, from job.enqueue events
//	kuebus_jobs_completed_total{type}        from job.complete
//	kuebus_jobs_failed_total{type}           jobs out of attempts, from job.failed
//	kuebus_job_attempts_failed_total{type}   attempts that will be retried, from job.failed_attempt
//	kuebus_jobs_cancelled_total{type}        jobs cancelled by hand, from job.cancel
//	kuebus_job_duration_seconds{type}        handler time of completed jobs (job.duration of job.complete)
//	kuebus_queue_depth{state,type}           jobs per state, read from core.stats at scrape time
//	kuebus_work_seconds_total                handler time of all completed jobs (core.stats work_time);
//	                                         absent while some type cannot be read
//	kuebus_core_up                           1 if the scrape's core.stats call was answered, even partially
//	kuebus_type_up{type}                     1 if the scrape read the type's counts, 0 if its Redis shard failed
//	kuebus_rpc_duration_seconds{method,code} this server's calls to core.<method>; code "ok" or the error code
//	kuebus_promoter_leader{node}             1 while this node is the promoter leader
//
// plus Go's runtime and process collectors.
//
// The counters come from events, which are at most once: they may miss a
// few jobs across a NATS reconnect, and every HTTP node counts every job, so
// aggregate them across nodes with max, not sum. queue_depth is exact at
// scrape time.
//
// Files:
//
//	doc.go   this comment
//	prom.go  Config, StatsSource, New, Exporter: the series, the Event and
//	         RPC hooks, the /metrics handler, the depth read at scrape time
package prom

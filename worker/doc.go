// Package worker runs user handlers for kuebus jobs: it leases jobs from core
// over NATS, bounds concurrency, gives each handler a context that ends at
// the job's time-to-run deadline, extends leases while handlers run, reports
// progress and logs, completes, fails or rejoins jobs, and releases unfinished
// work on a graceful stop. It never imports go-redis.
//
// The runtime arrives with the worker issue; until then this package holds
// only this description.
package worker

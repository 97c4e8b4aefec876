// Package kuebustest helps test code that uses kuebus, in two ways (the
// model is River's rivertest).
//
// Without a queue: Work runs a handler inline with a job made for the test
// (NewJob, or WorkArgs for a handler of a job type as a Go type), the way
// a worker runs a leased one: under the job's ttl, a panic recovered. The
// Result says how it ended (complete, failed, discarded, retry after) and
// what the handler did on the way: its log lines, its progress reports,
// its result.
//
//	res := kuebustest.WorkArgs(ctx, sendWelcome, Welcome{To: "ada@example.com"}, nil)
//	if res.Outcome != worker.OutcomeComplete { t.Fatal(res.Err) }
//
// With a queue: Start runs a real one for a test, as `kuebus dev` does
// (embedded NATS, core, the promoter, and a redis-server of its own), and
// stops it when the test ends. Producers and workers under test connect
// to Queue.URL like to any deployment; RequireEnqueued,
// RequireManyEnqueued and RequireNotEnqueued assert on the jobs created.
//
//	q := kuebustest.Start(t, nil)
//	signUp(ctx, q.Client, "ada@example.com") // the code under test
//	got := kuebustest.RequireEnqueued[Welcome](t, q.Client, nil)
//
// Start needs redis-server in PATH (or QueueOpts.RedisURL).
//
// Files:
//
//	doc.go      this comment
//	work.go     NewJob, Work, WorkArgs, Result: a handler run inline,
//	            what it logged, reported and returned
//	queue.go    Start, StartQueue, Queue: a real queue for a test, and a
//	            worker on it
//	require.go  Enqueued, RequireEnqueued, RequireManyEnqueued,
//	            RequireNotEnqueued: assertions on the jobs created
package kuebustest

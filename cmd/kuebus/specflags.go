package main

import (
	"flag"
	"strconv"

	"github.com/kuebus/kuebus/core"
)

// specFlags are the flags of a job spec, which job create and schedule set
// share: one set of names, one set of checks.
type specFlags struct {
	data, priority, delay, backoff, ttl, uniqueKey, stallLimit, group *string
	maxAttempts                                                       *int
	removeOnComplete, removeOnFail                                    retentionFlag
	broadcast                                                         *bool
}

func (f *specFlags) register(fs *flag.FlagSet) {
	f.data = fs.String("data", "", "the job's data, as `JSON` (default: none)")
	f.priority = fs.String("priority", "normal", "the job's `PRIORITY`: low, normal, medium, high, critical, or an integer (lower runs first)")
	f.delay = fs.String("delay", "0", "wait this `DURATION` (5s, or milliseconds) before the job may run")
	f.maxAttempts = fs.Int("attempts", 1, "how many times (`N`) the job may run before it fails for good")
	f.backoff = fs.String("backoff", "", "wait between attempts, a `SPEC`: fixed:D waits D each time, exponential:D waits D, then 3D, 7D, … (default: retry at once)")
	f.ttl = fs.String("ttl", "", "how long one attempt may run, a `DURATION` (default 60s)")
	f.uniqueKey = fs.String("unique-key", "", "business `KEY`: while a job with it is unfinished, create returns that job")
	f.broadcast = fs.Bool("broadcast", false, "send the job's data to every listener of its type when due (job.broadcast), never to a worker")
	fs.Var(&f.removeOnComplete, "remove-on-complete", "remove the job as it completes; or, as =age=DURATION,count=N, keep it that long and while among the N newest complete jobs of its type (default: the type's default, else kept)")
	fs.Var(&f.removeOnFail, "remove-on-fail", "the same, once the job failed for good")
	f.group = fs.String("group", "", "the job's `GROUP` within its type (a tenant, a customer): leases take groups in turn")
	f.stallLimit = fs.String("stall-limit", "", "how many times (`N`) the job's lease may run out and the job go back without using an attempt; each later stall is a failed attempt (default: the node's, 1)")
}

// spec is the job spec of type jobType the flags give; a bad flag is a
// usage error.
func (f *specFlags) spec(jobType string) (core.Spec, error) {
	sp := core.Spec{Type: jobType, MaxAttempts: *f.maxAttempts, UniqueKey: *f.uniqueKey, Group: *f.group,
		RemoveOnComplete: f.removeOnComplete.r, RemoveOnFail: f.removeOnFail.r}
	sp.Broadcast = *f.broadcast
	var err error
	if *f.data != "" {
		if sp.Data, err = parseJSON("data", *f.data); err != nil {
			return sp, err
		}
	}
	if sp.Priority, err = core.ParsePriority(*f.priority); err != nil {
		return sp, usagef("--priority: %v", err)
	}
	d, err := parseMillis("delay", *f.delay)
	if err != nil {
		return sp, err
	}
	sp.Delay = d
	if *f.maxAttempts < 1 {
		return sp, usagef("--attempts: %d is less than 1", *f.maxAttempts)
	}
	if sp.StallLimit, err = parseStallLimit(*f.stallLimit); err != nil {
		return sp, err
	}
	if *f.backoff != "" {
		if sp.Backoff, err = parseBackoff(*f.backoff); err != nil {
			return sp, err
		}
	}
	if *f.ttl != "" {
		d, err := parseMillis("ttl", *f.ttl)
		if err != nil {
			return sp, err
		}
		if d == 0 {
			return sp, usagef("--ttl: must be positive")
		}
		sp.TTL = d
	}
	return sp, nil
}

// parseStallLimit reads --stall-limit: nil when not given, else a whole
// number of 0 or more.
func parseStallLimit(s string) (*int, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return nil, usagef("--stall-limit: %q is not a whole number of 0 or more", s)
	}
	return &n, nil
}

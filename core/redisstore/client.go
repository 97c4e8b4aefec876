package redisstore

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ParseURL reads a redis:// or rediss:// URL into client options with
// kuebus's defaults (see ApplyOptions).
func ParseURL(url string) (*redis.Options, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisstore: redis URL %q: %w", url, err)
	}
	ApplyOptions(opts)
	return opts, nil
}

// ApplyOptions sets kuebus's defaults on the options of any go-redis client
// kuebus builds: *redis.Options, *redis.FailoverOptions (Sentinel) or
// *redis.ClusterOptions. They override what a URL says (max_retries=...).
//
// Retries off (MaxRetries -1; for a cluster also MaxRedirects -1, which
// go-redis reads as "one attempt"): go-redis retries a command or a pipeline
// whose reply did not come within the read timeout, but a Redis that stalls
// (a long fork, a full disk, SIGSTOP) still holds the first attempt in its
// socket buffer and runs it when it resumes. Every state change here is a
// script, and a script that runs twice can enqueue a job twice or hand one
// job to two workers. So a timed-out call fails once with unavailable, its
// outcome unknown, and the caller (a producer, a worker's ack) decides
// whether to try again. Reads share the client; they lose their retry too,
// which costs one unavailable answer where a retry might have hidden a
// blip. A cluster client that meets MOVED or ASK answers unavailable as
// well (neither ran the command) and reloads its slot map for the next call.
//
// RESP2 (Protocol 2): the store uses no RESP3 feature, and go-redis's
// handling of RESP3 push notifications cost several percent of CPU on every
// reply in our benchmarks.
func ApplyOptions(opts any) {
	switch o := opts.(type) {
	case *redis.Options:
		o.Protocol, o.MaxRetries = 2, -1
	case *redis.FailoverOptions:
		o.Protocol, o.MaxRetries = 2, -1
	case *redis.ClusterOptions:
		o.Protocol, o.MaxRetries, o.MaxRedirects = 2, -1, -1
	default:
		panic(fmt.Sprintf("redisstore: ApplyOptions: %T is not go-redis client options", opts))
	}
}

// Dial returns a client for a Redis URL with kuebus's defaults (ParseURL).
// It does not connect yet.
func Dial(url string) (*redis.Client, error) {
	opts, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	return redis.NewClient(opts), nil
}

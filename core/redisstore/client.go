package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

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
// blip. A cluster client that meets MOVED or ASK does not follow it here:
// go-redis would retry network errors on the same budget. The store sends a
// script once more after MOVED itself (neither MOVED nor ASK ran the
// command; eval.go), and a topology reloads the slot map on any error that
// may mean a failover (topology.go); other commands answer unavailable once.
//
// Sentinel needs nothing more: go-redis's failover client asks a Sentinel
// for the master on every new connection, listens on +switch-master and
// then drops its connections to the old master. TestSentinelFailover saw
// the first create succeed within about 100 ms of the switch, so a
// failover's time is Sentinel's own (down-after-milliseconds and the vote:
// docs/reliability.md, Redis Sentinel).
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

// scanCount is the COUNT hint of each SCAN, and the size of each DEL or
// HDEL, in the bench's deletes.
const scanCount = 1000

// Info is the text of INFO section: the bench reads the server's command
// counts, CPU time and version from it.
func (r *Redis) Info(ctx context.Context, section string) (string, error) {
	info, err := r.rdb.Info(ctx, section).Result()
	if err != nil {
		return "", fmt.Errorf("redisstore: INFO %s: %w", section, err)
	}
	return info, nil
}

// DropStore deletes every key of the store with this key prefix. keepIDs
// keeps the id counter, which must outlive every core of the store that
// still runs (see doc.go); only a store no core serves may lose it. Not
// for Redis Cluster: SCAN reads one node.
func (r *Redis) DropStore(ctx context.Context, prefix string, keepIDs bool) error {
	keep := ""
	if keepIDs {
		keep = keys{prefix: prefix}.ids()
	}
	_, err := r.scanDel(ctx, prefix+":*", keep)
	return err
}

// DropTypes deletes the keys of the job types that match typeGlob (a SCAN
// pattern, e.g. "kbench-*"), in every store of this Redis, and returns the
// key prefixes of the stores that held some. Their id blocks and the type
// names stay in those stores' global keys: ForgetTypes drops them.
func (r *Redis) DropTypes(ctx context.Context, typeGlob string) ([]string, error) {
	// A type's keys are <store prefix>:{<type>}:<name> (keys.go).
	found, err := r.scanDel(ctx, "*:{"+typeGlob+"}:*", "")
	var stores []string
	for _, key := range found {
		if i := strings.Index(key, ":{"); i > 0 && !slices.Contains(stores, key[:i]) {
			stores = append(stores, key[:i])
		}
	}
	return stores, err
}

// ForgetTypes drops job types from the global keys of the store with this
// key prefix (their id blocks and the set of types), once DropTypes deleted
// their keys.
func (r *Redis) ForgetTypes(ctx context.Context, prefix string, types []string) error {
	k := keys{prefix: prefix}
	if err := r.forgetBlocks(ctx, k, types); err != nil {
		return fmt.Errorf("redisstore: drop id blocks of %s: %w", prefix, err)
	}
	if len(types) > 0 {
		if err := r.rdb.SRem(ctx, k.types(), types).Err(); err != nil {
			return fmt.Errorf("redisstore: drop job types of %s: %w", prefix, err)
		}
	}
	return nil
}

// scanDel deletes the keys matching pattern but keep, and returns them.
func (r *Redis) scanDel(ctx context.Context, pattern, keep string) ([]string, error) {
	var all []string
	var cursor uint64
	for {
		keys, next, err := r.rdb.Scan(ctx, cursor, pattern, scanCount).Result()
		if err != nil {
			return all, fmt.Errorf("redisstore: scan %s: %w", pattern, err)
		}
		keys = slices.DeleteFunc(keys, func(key string) bool { return key == keep })
		if len(keys) > 0 {
			if err := r.rdb.Del(ctx, keys...).Err(); err != nil {
				return all, fmt.Errorf("redisstore: delete keys %s: %w", pattern, err)
			}
			all = append(all, keys...)
		}
		if next == 0 {
			return all, nil
		}
		cursor = next
	}
}

// SetLogger sends go-redis's own log lines (its retries, pool troubles) to
// log at debug level instead of the standard logger's stderr: they are
// details of errors that reach the caller anyway. The setting is
// process-wide; only a command sets it.
func SetLogger(log *slog.Logger) { redis.SetLogger(redisLogger{log}) }

type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, args ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, args...))
}

// forgetBlocks drops the id blocks of types.
func (r *Redis) forgetBlocks(ctx context.Context, k keys, types []string) error {
	if len(types) == 0 {
		return nil
	}
	var cursor uint64
	for {
		pairs, next, err := r.rdb.HScan(ctx, k.blocks(), cursor, "", scanCount).Result()
		if err != nil {
			return err
		}
		var gone []string
		for i := 0; i+1 < len(pairs); i += 2 {
			if slices.Contains(types, pairs[i+1]) {
				gone = append(gone, pairs[i])
			}
		}
		if len(gone) > 0 {
			if err := r.rdb.HDel(ctx, k.blocks(), gone...).Err(); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

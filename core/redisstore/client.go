package redisstore

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ParseURL reads a redis:// or rediss:// URL into client options with
// kuebus's defaults: RESP2, since the store uses no RESP3 feature and
// go-redis's handling of RESP3 push notifications cost several percent of
// CPU on every reply in our benchmarks.
func ParseURL(url string) (*redis.Options, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redisstore: redis URL %q: %w", url, err)
	}
	opts.Protocol = 2
	return opts, nil
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

package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kuebus/kuebus/core/redisstore"
)

// keyspace is the bench's part of the Redis: it names the job types and
// deletes exactly what the bench wrote, and it reads the server's command
// counts. The key names are redisstore's; it asks redisstore to delete.
//
// With its own core (own), everything lives under "<prefix>:", the core's
// key prefix. Against a running deployment, the job types are
// "<prefix>-<name>"; their keys carry the hash tag {<type>} under the
// deployment's key prefix, which clean learns from the keys it finds.
type keyspace struct {
	redis  *redisstore.Redis
	prefix string
	own    bool

	mu     sync.Mutex
	types  map[string]bool // not own: the job types handed out
	stores map[string]bool // not own: deployment key prefixes seen holding them
}

func newKeyspace(r *redisstore.Redis, prefix string, own bool) *keyspace {
	return &keyspace{redis: r, prefix: prefix, own: own, types: map[string]bool{}, stores: map[string]bool{}}
}

// jobType is the job type of a phase.
func (k *keyspace) jobType(name string) string {
	if k.own {
		return name
	}
	t := k.prefix + "-" + name
	k.mu.Lock()
	k.types[t] = true
	k.mu.Unlock()
	return t
}

// clean deletes every key the bench wrote since the last clean. While the
// bench's own core runs (final is false), its job id counter stays: the core
// hands out ids from a block it reserved, and a counter started again would
// hand out that block a second time.
func (k *keyspace) clean(ctx context.Context, final bool) error {
	if k.own {
		return k.redis.DropStore(ctx, k.prefix, !final)
	}
	// The bench's types all start with its prefix, which no one else uses.
	found, err := k.redis.DropTypes(ctx, k.prefix+"-*")
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, store := range found {
		k.stores[store] = true
	}
	if err != nil {
		return err
	}
	types := slices.Sorted(maps.Keys(k.types))
	for store := range k.stores {
		if err := k.redis.ForgetTypes(ctx, store, types); err != nil {
			return err
		}
	}
	return nil
}

// commandCalls is the number of commands the Redis server has run: the sum
// of calls= over INFO commandstats, which counts commands run by scripts
// too (Redis 7).
func (k *keyspace) commandCalls(ctx context.Context) (int64, error) {
	info, err := k.redis.Info(ctx, "commandstats")
	if err != nil {
		return 0, err
	}
	return sumCalls(info)
}

// redisCPU is the CPU time the Redis server has used, in seconds:
// used_cpu_user + used_cpu_sys of INFO cpu.
func (k *keyspace) redisCPU(ctx context.Context) (float64, error) {
	info, err := k.redis.Info(ctx, "cpu")
	if err != nil {
		return 0, err
	}
	var total float64
	for line := range strings.Lines(info) {
		name, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if name == "used_cpu_user" || name == "used_cpu_sys" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu: %q: %w", line, err)
			}
			total += f
		}
	}
	return total, nil
}

// sumCalls adds up calls= over the cmdstat_ lines of INFO commandstats.
func sumCalls(info string) (int64, error) {
	var total int64
	lines := 0
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		_, stats, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		for field := range strings.SplitSeq(stats, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats: %q: %w", line, err)
				}
				total += n
				lines++
			}
		}
	}
	if lines == 0 {
		return 0, errors.New("INFO commandstats: no cmdstat_ line with calls=")
	}
	return total, nil
}

// redisVersion is the server's redis_version, "" when unknown.
func (k *keyspace) redisVersion(ctx context.Context) string {
	info, err := k.redis.Info(ctx, "server")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}

// redactedURL hides the credentials in one or more comma-separated URLs.
func redactedURL(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = url.User("xxxxx")
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

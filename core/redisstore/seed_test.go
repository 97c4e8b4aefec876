package redisstore_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node/nodetest"
)

// The script tests seed keys, run one script through the store, and compare
// every key of the store with what the script must leave (asynq's
// internal/testutil is the model). A keyspace is written and read in one
// shape, so the state before and the state after read alike:
//
//	key: the key without the store's prefix and its colon ("{t}:ready")
//	hash → map[string]string   zset → map[string]float64 (member → score)
//	list → []string            set → []string, sorted    string → string
type keyspace map[string]any

// scriptStore is a store under a prefix of its own, with the client and
// prefix to seed and read its keys.
type scriptStore struct {
	*redisstore.Store
	t      *testing.T
	rdb    *redis.Client
	prefix string
}

func newScriptStore(t *testing.T, cfg redisstore.Config) *scriptStore {
	t.Helper()
	_, rdb := nodetest.NewStore(t)
	cfg.Client, cfg.Prefix = rdb, nodetest.Prefix(t, rdb)
	st, err := redisstore.New(cfg)
	require.NoError(t, err)
	return &scriptStore{Store: st, t: t, rdb: rdb, prefix: cfg.Prefix}
}

// seed writes the keys of ks.
func (s *scriptStore) seed(ks keyspace) {
	s.t.Helper()
	ctx := context.Background()
	pipe := s.rdb.TxPipeline()
	for name, v := range ks {
		key := s.prefix + ":" + name
		switch v := v.(type) {
		case map[string]string:
			pipe.HSet(ctx, key, v)
		case map[string]float64:
			for m, score := range v {
				pipe.ZAdd(ctx, key, redis.Z{Score: score, Member: m})
			}
		case []string:
			if strings.HasSuffix(name, ":types") || strings.Contains(name, ":pending:") || strings.Contains(name, ":dependents:") {
				pipe.SAdd(ctx, key, v)
			} else {
				pipe.RPush(ctx, key, v)
			}
		case string:
			pipe.Set(ctx, key, v, 0)
		default:
			s.t.Fatalf("seed %s: %T is not a key's shape", name, v)
		}
	}
	_, err := pipe.Exec(ctx)
	require.NoError(s.t, err)
}

// dump reads every key of the store.
func (s *scriptStore) dump() keyspace {
	s.t.Helper()
	ctx := context.Background()
	keys, err := s.rdb.Keys(ctx, s.prefix+":*").Result()
	require.NoError(s.t, err)
	ks := keyspace{}
	for _, key := range keys {
		name := strings.TrimPrefix(key, s.prefix+":")
		kind, err := s.rdb.Type(ctx, key).Result()
		require.NoError(s.t, err)
		switch kind {
		case "hash":
			ks[name] = s.rdb.HGetAll(ctx, key).Val()
		case "zset":
			m := map[string]float64{}
			for _, z := range s.rdb.ZRangeWithScores(ctx, key, 0, -1).Val() {
				m[z.Member.(string)] = z.Score
			}
			ks[name] = m
		case "list":
			ks[name] = s.rdb.LRange(ctx, key, 0, -1).Val()
		case "set":
			members := s.rdb.SMembers(ctx, key).Val()
			slices.Sort(members)
			ks[name] = members
		case "string":
			ks[name] = s.rdb.Get(ctx, key).Val()
		default:
			s.t.Fatalf("dump %s: a %s is not a key kuebus writes", name, kind)
		}
	}
	return ks
}

// requireKeys compares every key of the store with want.
func (s *scriptStore) requireKeys(want keyspace, msg string) {
	s.t.Helper()
	require.Equal(s.t, want, s.dump(), msg)
}

// with returns a copy of ks with the keys of more set over it; a nil value
// deletes the key.
func (ks keyspace) with(more keyspace) keyspace {
	out := maps.Clone(ks)
	for k, v := range more {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// fields returns a copy of a hash with more set over it; "-" deletes a field.
func fields(h map[string]string, more map[string]string) map[string]string {
	out := maps.Clone(h)
	for k, v := range more {
		if v == "-" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// jobHash is the hash of job 1 of type t as create_jobs stores it at 1000,
// ready, with more set over it: without the SPARSE fields
// (lua/includes/new_job.lua), which it writes only when not zero.
func jobHash(more map[string]string) map[string]string {
	return fields(map[string]string{
		"id": "1", "type": "t", "data": `{"n":1}`, "priority": "0", "state": "inactive",
		"max_attempts": "3", "ttl": "1000", "created_at": "1000", "updated_at": "1000", "promote_at": "1000",
		"stall_limit": "1", "rmember": "0000000000000001:1",
	}, more)
}

// activeJob is a keyspace holding job 1 of type t, leased with token "L"
// at 2000 until 3000.
func activeJob(more map[string]string) keyspace {
	return keyspace{
		"{_}:blocks": map[string]string{"0": "t"},
		"{_}:types":  []string{"t"},
		"{t}:jobs":   map[string]float64{"1": 1},
		"{t}:leases": map[string]float64{"1": 3000},
		"{t}:seq":    "1",
		"{t}:job:1": jobHash(fields(map[string]string{
			"state": "active", "lease": "L", "lease_until": "3000", "lease_ttl": "1000",
			"started_at": "2000", "updated_at": "2000", "worker_id": "w",
		}, more)),
	}
}

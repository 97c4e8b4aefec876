package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bench"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
	"github.com/kuebus/kuebus/promoter"
)

// small is a run that takes seconds, not minutes.
func small(t *testing.T) bench.Config {
	return bench.Config{
		RedisURL:        nodetest.RedisURL(t),
		KeyPrefix:       "kbench-test-" + randomHex(),
		N:               500,
		Producers:       4,
		Concurrency:     8,
		BulkSize:        100,
		LatencyDuration: 300 * time.Millisecond,
		DelayedJobs:     50,
		PhaseTimeout:    time.Minute,
	}
}

func randomHex() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// figures parses the bench's output: every line is a comment or "name value
// unit", and no name comes twice.
func figures(t *testing.T, out string) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			continue
		}
		f := strings.Fields(line)
		require.Len(t, f, 3, "line %q is not a comment nor 'name value unit'", line)
		v, err := strconv.ParseFloat(f[1], 64)
		require.NoError(t, err, "line %q", line)
		require.NotContains(t, got, f[0], "%s printed twice", f[0])
		got[f[0]] = v
	}
	return got
}

// checkFigures checks that every figure the peers print beside ours is there
// and plausible.
func checkFigures(t *testing.T, cfg bench.Config, out string) {
	t.Helper()
	got := figures(t, out)
	positive := []string{
		"enqueue_seq_throughput",
		"enqueue_conc" + strconv.Itoa(cfg.Producers) + "_throughput",
		"enqueue_bulk_throughput",
		"process_c" + strconv.Itoa(cfg.Concurrency) + "_throughput",
		"process_c" + strconv.Itoa(cfg.Concurrency) + "_redis_cmds_per_job",
		"latency_p50",
		"latency_p99",
	}
	for _, name := range positive {
		require.Contains(t, got, name, "output:\n%s", out)
		require.Greater(t, got[name], 0.0, "%s", name)
	}
	for _, name := range []string{"delayed_error_min", "delayed_error_p50", "delayed_error_p99", "delayed_error_max"} {
		require.Contains(t, got, name, "output:\n%s", out)
		require.False(t, math.IsNaN(got[name]) || math.IsInf(got[name], 0), "%s = %v", name, got[name])
	}
	require.LessOrEqual(t, got["delayed_error_min"], got["delayed_error_p50"])
	require.LessOrEqual(t, got["delayed_error_p99"], got["delayed_error_max"])
	require.LessOrEqual(t, got["latency_p50"], got["latency_p99"])
	require.NotContains(t, out, "warning", "output:\n%s", out)
}

// keysMatching lists the keys of a SCAN pattern.
func keysMatching(t *testing.T, rdb *redis.Client, pattern string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(t.Context(), 0, pattern, 1000).Iterator()
	for iter.Next(t.Context()) {
		keys = append(keys, iter.Val())
	}
	require.NoError(t, iter.Err())
	return keys
}

// sentinel sets a key no bench may touch and returns a check that it is
// still there, unchanged.
func sentinel(t *testing.T, rdb *redis.Client) func() {
	t.Helper()
	key := "ksentinel-" + randomHex() + ":keep"
	require.NoError(t, rdb.Set(t.Context(), key, "42", 0).Err())
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	return func() {
		v, err := rdb.Get(t.Context(), key).Result()
		require.NoError(t, err, "the bench deleted a key that is not its own")
		require.Equal(t, "42", v)
	}
}

func TestRunWithItsOwnCorePrintsEveryFigureAndLeavesNoKey(t *testing.T) {
	rdb := nodetest.NewRedis(t)
	untouched := sentinel(t, rdb)
	cfg := small(t)

	var out bytes.Buffer
	require.NoError(t, bench.Run(t.Context(), cfg, &out))
	t.Logf("output:\n%s", out.String())

	checkFigures(t, cfg, out.String())
	require.Empty(t, keysMatching(t, rdb, cfg.KeyPrefix+"*"), "keys of the bench left behind")
	untouched()
}

func TestRunAgainstADeploymentCleansUpByJobType(t *testing.T) {
	c := nodetest.NewCore(t, service.Config{})
	untouched := sentinel(t, c.Redis)
	// The deployment's own promoter moves the delayed jobs.
	ctx, stop := context.WithCancel(t.Context())
	var loop sync.WaitGroup
	loop.Go(func() { _ = promoter.RunLoop(ctx, promoter.LoopConfig{Core: c.Client}) })
	t.Cleanup(func() { stop(); loop.Wait() })
	// A job of the deployment that the bench must leave alone.
	other, err := c.Client.Create(t.Context(), "email", map[string]string{"to": "a@b.c"}, nil)
	require.NoError(t, err)
	typesBefore := deploymentTypes(t, c.Redis)

	cfg := small(t)
	cfg.NATSURL = c.NATS.ClientURL()
	var out bytes.Buffer
	require.NoError(t, bench.Run(t.Context(), cfg, &out))
	t.Logf("output:\n%s", out.String())

	checkFigures(t, cfg, out.String())
	require.Empty(t, keysMatching(t, c.Redis, "*"+cfg.KeyPrefix+"*"), "keys of the bench left behind")
	require.Equal(t, typesBefore, deploymentTypes(t, c.Redis), "the bench's job types are still listed")
	for _, key := range keysMatching(t, c.Redis, "*:{_}:blocks") {
		for block, typ := range c.Redis.HGetAll(t.Context(), key).Val() {
			require.NotContains(t, typ, cfg.KeyPrefix, "id block %s of the bench is still recorded", block)
		}
	}
	got, err := c.Client.Get(t.Context(), other.ID)
	require.NoError(t, err)
	require.Equal(t, core.StateInactive, got.State)
	untouched()
}

// deploymentTypes reads every types set in the Redis.
func deploymentTypes(t *testing.T, rdb *redis.Client) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, key := range keysMatching(t, rdb, "*:{_}:types") {
		out[key] = rdb.SMembers(t.Context(), key).Val()
	}
	return out
}

func TestRunRefusesBadConfigBeforeStartingAnything(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  bench.Config
		want string
	}{
		{"an unknown phase", bench.Config{Only: []string{"enqueue", "nope"}}, `"nope" is not a phase`},
		{"a key prefix that is a pattern", bench.Config{KeyPrefix: "kbench*"}, "only letters"},
		{"a NATS URL without the Redis of its core", bench.Config{NATSURL: "nats://127.0.0.1:1"}, "needs the Redis URL"},
		{"a negative n", bench.Config{N: -1}, "not positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := bench.Run(t.Context(), tc.cfg, &bytes.Buffer{})
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestOnlyRunsTheSelectedPhases(t *testing.T) {
	cfg := small(t)
	cfg.Only = []string{bench.PhaseEnqueueBulk, bench.PhaseDelayed}
	var out bytes.Buffer
	require.NoError(t, bench.Run(t.Context(), cfg, &out))
	got := figures(t, out.String())
	require.Contains(t, got, "enqueue_bulk_throughput")
	require.Contains(t, got, "delayed_error_p50")
	require.NotContains(t, got, "enqueue_seq_throughput")
	require.NotContains(t, got, "latency_p50")
}

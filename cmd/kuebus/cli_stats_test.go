package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestStatsWithADeadShard: with one Redis Cluster master down (no replica
// to take over), `kuebus stats` prints the counts of the types it can
// read, lists the dead master's types with their errors, and exits 1 with
// one line on stderr that names them. Before, it printed nothing but
// core's unavailable error.
func TestStatsWithADeadShard(t *testing.T) {
	t.Parallel() // its cluster is its own
	c := nodetest.NewShardCluster(t)
	victim, dead, healthy := nodetest.ShardTypes(t, c, 1)
	cr := nodetest.NewCoreOnCluster(t, service.Config{}, c)
	url := cr.NATS.ClientURL()
	for _, jt := range append(append([]string{}, dead...), healthy...) {
		_, err := cr.Client.Create(t.Context(), jt, nil, nil)
		require.NoError(t, err)
	}
	r := kuebus(t, "stats", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "UNREADABLE")

	nodetest.KillMaster(t, c, victim)

	r = kuebus(t, "stats", "--nats-url", url)
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Regexp(t, fmt.Sprintf(`(?m)^inactive\s+%d$`, len(healthy)), r.stdout, "totals of the types read")
	for _, jt := range healthy {
		require.Regexp(t, `(?m)^`+jt+`\s+0\s+1\s+0\s+0\s+0\s+0\s+0$`, r.stdout)
	}
	require.Regexp(t, `(?m)^UNREADABLE TYPE\s+ERROR$`, r.stdout)
	for _, jt := range dead {
		require.Regexp(t, `(?m)^`+jt+`\s+unavailable: \S`, r.stdout)
		require.Contains(t, r.stderr, jt)
	}
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	require.Contains(t, r.stderr, "Redis shard down")
}

package service_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestDependenciesOnARedisCluster: through core on a Redis Cluster of
// three masters, with job types on two of them, a diamond runs in order, a
// fan-in of 200 parents completed by 4 workers releases its child once,
// and the fail rule carries across the masters.
func TestDependenciesOnARedisCluster(t *testing.T) {
	t.Parallel()
	clock := nodetest.NewClock(t0)
	c := nodetest.NewClusterCore(t, service.Config{Now: clock.Now, MaxDataBytes: 4096})
	at := func(typ string) string {
		m, err := c.Cluster.MasterForKey(ctx, "{"+typ+"}")
		require.NoError(t, err)
		return m.Options().Addr
	}
	a, b := "ca0", ""
	for i := 1; i < 100 && b == ""; i++ {
		if typ := fmt.Sprint("ca", i); at(typ) != at(a) {
			b = typ
		}
	}
	require.NotEmpty(t, b, "two types on two masters")
	diamond(t, c, a, b)
	fanIn(t, c, a, b)

	flow, err := c.Client.CreateFlow(ctx,
		core.FlowJob{Ref: "top", Spec: core.Spec{Type: a}},
		core.FlowJob{Ref: "mid", Spec: core.Spec{Type: b}, DependsOn: []core.DepRef{core.Ref("top")}},
		core.FlowJob{Ref: "low", Spec: core.Spec{Type: a}, DependsOn: []core.DepRef{core.Ref("mid")}},
	)
	require.NoError(t, err)
	failOne(t, c, a, flow.IDOf("top"))
	require.Equal(t, core.StateFailed, stateOf(t, c, flow.IDOf("mid")).State)
	require.Equal(t, core.StateFailed, stateOf(t, c, flow.IDOf("low")).State)
}

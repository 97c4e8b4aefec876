package service_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/micro"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestMicroDiscoveryCountsErrorsAndWholeTimes: $SRV.INFO lists every method
// with its subject and queue group, and $SRV.STATS counts a request when it
// is answered: a refused one as an error, with its message, and a lease
// that waited for work with all the time it waited.
func TestMicroDiscoveryCountsErrorsAndWholeTimes(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	nc := bustest.Connect(t, c.NATS.ClientURL())
	request := func(subject, body string) {
		t.Helper()
		_, err := nc.Request(subject, []byte(body), 5*time.Second)
		require.NoError(t, err)
	}

	var info micro.Info
	msg, err := nc.Request("$SRV.INFO.kuebus-core", nil, 5*time.Second)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(msg.Data, &info))
	require.Equal(t, micro.InfoResponseType, info.Type)
	require.Equal(t, bus.ProtocolVersion, info.Version)
	endpoints := map[string]micro.EndpointInfo{}
	for _, e := range info.Endpoints {
		endpoints[e.Name] = e
	}
	require.Equal(t, micro.EndpointInfo{Name: "create", Subject: "core.create", QueueGroup: bus.CoreQueueGroup}, endpoints["create"])
	require.Contains(t, endpoints, "lease")

	request("core.create", `{"type":"a.b"}`) // invalid
	request("core.get", `{"id":1}`)          // not_found
	request("core.create", `{"type":"email"}`)
	const wait = 300 * time.Millisecond
	request("core.lease", `{"types":["idle"],"wait":300}`) // waits, then answers no job

	msg, err = nc.Request("$SRV.STATS.kuebus-core."+info.ID, nil, 5*time.Second)
	require.NoError(t, err)
	var st micro.Stats
	require.NoError(t, json.Unmarshal(msg.Data, &st))
	require.Equal(t, micro.StatsResponseType, st.Type)
	stats := map[string]*micro.EndpointStats{}
	for _, e := range st.Endpoints {
		stats[e.Name] = e
	}
	require.Equal(t, 2, stats["create"].NumRequests)
	require.Equal(t, 1, stats["create"].NumErrors)
	require.Contains(t, stats["create"].LastError, "invalid: type:")
	require.Equal(t, 1, stats["get"].NumErrors)
	require.Contains(t, stats["get"].LastError, "not_found: job 1 not found")
	require.Equal(t, 1, stats["lease"].NumRequests)
	require.Zero(t, stats["lease"].NumErrors)
	require.GreaterOrEqual(t, stats["lease"].ProcessingTime, wait, "a waiting lease counts the time it waited")
}

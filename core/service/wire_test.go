package service_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestAPlainNATSClientCanUseTheQueue speaks the protocol the way any
// language would: plain requests with JSON text, error headers, and a
// wildcard subscription, nothing from kuebus's Go client. The subjects and
// bodies are the ones docs/protocol.md shows.
func TestAPlainNATSClientCanUseTheQueue(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	nc := bustest.Connect(t, c.NATS.ClientURL())
	events := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe("job.>", events)
	require.NoError(t, err)
	defer sub.Unsubscribe()
	require.NoError(t, nc.Flush())

	req := func(subject, body string) map[string]any {
		t.Helper()
		msg, err := nc.Request(subject, []byte(body), 5*time.Second)
		require.NoError(t, err)
		require.Empty(t, msg.Header.Get("Nats-Service-Error-Code"), msg.Header.Get("Nats-Service-Error"))
		var out map[string]any
		require.NoError(t, json.Unmarshal(msg.Data, &out))
		return out
	}

	job := req("core.create", `{"type":"email","data":{"to":"a@example.com"},"priority":"high"}`)
	id := int64(job["id"].(float64))
	require.Equal(t, "inactive", job["state"])
	require.EqualValues(t, -10, job["priority"])
	select {
	case m := <-events:
		require.Equal(t, "job.enqueue."+itoa(id)+".email", m.Subject)
		var ev map[string]any
		require.NoError(t, json.Unmarshal(m.Data, &ev))
		require.Equal(t, "enqueue", ev["event"])
	case <-time.After(5 * time.Second):
		t.Fatal("no enqueue event")
	}

	got := req("core.get", `{"id":`+itoa(id)+`}`)
	require.Equal(t, map[string]any{"to": "a@example.com"}, got["data"])
	list := req("core.range", `{"state":"inactive","from":0,"to":19}`)
	require.Len(t, list["jobs"], 1)
	removed := req("core.remove", `{"id":`+itoa(id)+`}`)
	require.Equal(t, float64(id), removed["id"], "remove answers the job as it was")
	require.Nil(t, removed["data"])

	msg, err := nc.Request("core.get", []byte(`{"id":`+itoa(id)+`}`), 5*time.Second)
	require.NoError(t, err)
	// The code as a number for micro clients, as a word for ours.
	require.Equal(t, "404", msg.Header.Get("Nats-Service-Error-Code"))
	require.Equal(t, "not_found", msg.Header.Get("Kuebus-Error-Code"))
	require.Equal(t, "job "+itoa(id)+" not found", msg.Header.Get("Nats-Service-Error"))

	msg, err = nc.Request("core.create", []byte(`{"type":"a.b"}`), 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "400", msg.Header.Get("Nats-Service-Error-Code"))
	require.Equal(t, "invalid", msg.Header.Get("Kuebus-Error-Code"))
	require.Contains(t, msg.Header.Get("Nats-Service-Error"), "type:")

	info, err := nc.Request("$SRV.PING.kuebus-core", nil, 5*time.Second)
	require.NoError(t, err)
	require.Contains(t, string(info.Data), `"name":"kuebus-core"`)
	require.Contains(t, string(info.Data), `"version":"`+bus.ProtocolVersion+`"`, "the service's version is the protocol's")
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

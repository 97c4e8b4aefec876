package service_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestGetByTypeAndUniqueKey: get finds the unfinished job holding a key in
// its type; once the job finished the key is free and get answers
// not_found.
func TestGetByTypeAndUniqueKey(t *testing.T) {
	c, _ := newCore(t)
	created, err := c.Client.Create(ctx, "invoice", map[string]int{"n": 1}, &core.CreateOpts{UniqueKey: "INV-42"})
	require.NoError(t, err)
	got, err := c.Client.GetByKey(ctx, "invoice", "INV-42")
	require.NoError(t, err)
	require.Equal(t, created.ID, got.ID)
	require.JSONEq(t, `{"n":1}`, string(got.Data))
	body, code := raw(t, c, bus.MethodGet, `{"type":"invoice","unique_key":"INV-42"}`)
	require.Empty(t, code)
	require.Contains(t, body, `"unique_key":"INV-42"`)

	_, err = c.Client.GetByKey(ctx, "email", "INV-42")
	require.ErrorIs(t, err, core.ErrNotFound, "a key belongs to its type")
	jobs := lease(t, c, core.LeaseRequest{Types: []string{"invoice"}})
	require.NoError(t, c.Client.Complete(ctx, core.LeaseOp{ID: created.ID, Lease: jobs[0].Lease}))
	_, err = c.Client.GetByKey(ctx, "invoice", "INV-42")
	require.ErrorIs(t, err, core.ErrNotFound, "a finished job gave its key up")
}

// TestGetRefusesAMixedOrHalfRequest: an id with a type or key, a key
// without a type and the other way round are invalid.
func TestGetRefusesAMixedOrHalfRequest(t *testing.T) {
	c, _ := newCore(t)
	rc := bus.NewClient(c.NATS.Conn, 5*time.Second)
	for _, tc := range []struct{ body, want string }{
		{`{"id":1,"type":"t","unique_key":"k"}`, "id: give an id, or a type and a unique_key, not both"},
		{`{"id":1,"unique_key":"k"}`, "id: give an id, or a type and a unique_key, not both"},
		{`{"unique_key":"k"}`, "type: missing: a unique_key is looked up in its job type"},
		{`{"type":"t"}`, "unique_key: missing: give it with the type"},
		{`{"type":"a.b","unique_key":"k"}`, `type: "a.b" is not a job type`},
		{`{}`, "id: 0 is not a job id"},
	} {
		err := rc.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodGet), []byte(tc.body), nil)
		require.Equal(t, bus.CodeInvalid, nodetest.ErrCode(err), tc.body)
		require.ErrorContains(t, err, tc.want)
	}
}

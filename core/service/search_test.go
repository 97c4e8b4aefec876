package service_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestSearchFindsJobsPageByPage: by data, unique key and id, a type and a
// state; the cursor goes on until it is empty, and the jobs come without
// their data.
func TestSearchFindsJobsPageByPage(t *testing.T) {
	c, _ := newCore(t)
	var want []int64
	for i := range 5 {
		j, err := c.Client.Create(ctx, "order", map[string]any{"customer": "ACME", "n": i}, nil)
		require.NoError(t, err)
		want = append(want, j.ID)
	}
	_, err := c.Client.Create(ctx, "order", map[string]any{"customer": "other"}, nil)
	require.NoError(t, err)
	keyed, err := c.Client.Create(ctx, "invoice", nil, &core.CreateOpts{UniqueKey: "acme-77"})
	require.NoError(t, err)
	want = append([]int64{keyed.ID}, want...) // invoice sorts before order

	var got []int64
	req := core.SearchRequest{Q: "acme", Limit: 2}
	for range 10 {
		page, err := c.Client.Search(ctx, req)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Jobs), 2)
		for _, j := range page.Jobs {
			require.Nil(t, j.Data)
			got = append(got, j.ID)
		}
		if page.Cursor == "" {
			break
		}
		req.Cursor = page.Cursor
	}
	require.Equal(t, want, got)

	// a cursor of an earlier version, "<type>:<id>", still reads: among
	// jobs scored by creation time it goes on from its type's start
	page, err := c.Client.Search(ctx, core.SearchRequest{Q: "acme", Limit: 10, Cursor: "order:" + strconv.FormatInt(want[3], 10)})
	require.NoError(t, err)
	var again []int64
	for _, j := range page.Jobs {
		again = append(again, j.ID)
	}
	require.Equal(t, want[1:], again, "repeats, never skips")

	page, err = c.Client.Search(ctx, core.SearchRequest{Q: "ACME", Type: "invoice", State: core.StateInactive})
	require.NoError(t, err)
	require.Equal(t, keyed.ID, page.Jobs[0].ID)
	require.Empty(t, page.Cursor)
	body, code := raw(t, c, bus.MethodSearch, `{"q":"zebra"}`)
	require.Empty(t, code)
	require.JSONEq(t, `{"jobs":[]}`, body)
}

// TestSearchRefusesBadInput: each bad field is invalid, naming it.
func TestSearchRefusesBadInput(t *testing.T) {
	c, _ := newCore(t)
	rc := bus.NewClient(c.NATS.Conn, 5*time.Second)
	for _, tc := range []struct{ body, want string }{
		{`{}`, "q: missing: the text to look for"},
		{`{"q":"` + strings.Repeat("x", core.MaxSearchQuery+1) + `"}`, "q: 257 bytes is longer than 256"},
		{`{"q":"a","limit":-1}`, "limit: -1 is outside 0..1000"},
		{`{"q":"a","limit":1001}`, "limit: 1001 is outside 0..1000"},
		{`{"q":"a","type":"a.b"}`, `type: "a.b" is not a job type`},
		{`{"q":"a","state":"done"}`, `state: "done" is not a state`},
		{`{"q":"a","cursor":"nope"}`, `cursor: "nope" is not a cursor from a search reply: expected <type>:<score>:<member>`},
		{`{"q":"a","cursor":"t:1:2:3"}`, `cursor: "t:1:2:3" is not a cursor from a search reply: expected <type>:<score>:<member>`},
		{`{"q":"a","cursor":"a.b:1:1"}`, `cursor: "a.b:1:1" is not a cursor from a search reply: the type`},
		{`{"q":"a","cursor":"t:inf:1"}`, `cursor: "t:inf:1" is not a cursor from a search reply: the score is not a finite number`},
		{`{"q":"a","cursor":"t:5:x"}`, `cursor: "t:5:x" is not a cursor from a search reply: the member is not a job id`},
		{`{"q":"a","cursor":"t:-1"}`, `cursor: "t:-1" is not a cursor from a search reply: the member is not a job id`},
		{`{"q":"a","type":"t","cursor":"u:5"}`, `cursor: "u:5" is a cursor of type u, not of t`},
		{`{"q":"a","bogus":1}`, "bogus: unknown field"},
	} {
		err := rc.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodSearch), []byte(tc.body), nil)
		require.Equal(t, bus.CodeInvalid, nodetest.ErrCode(err), tc.body)
		require.ErrorContains(t, err, tc.want)
	}
}

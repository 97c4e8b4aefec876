package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestIDsArePagedTypeByType: pages of a given size, type after type, and
// the last page says there is no more.
func TestIDsArePagedTypeByType(t *testing.T) {
	c, _ := newCore(t)
	mk := func(typ string, n int) []int64 {
		var ids []int64
		for range n {
			j, err := c.Client.Create(ctx, typ, nil, nil)
			require.NoError(t, err)
			ids = append(ids, j.ID)
		}
		return ids
	}
	a, c3 := mk("a", 5), mk("c", 3)
	mk("b", 0)
	delayed, err := c.Client.CreateSpec(ctx, core.Spec{Type: "b", Delay: 60_000 * time.Millisecond})
	require.NoError(t, err)

	var pages [][]int64
	var cursors []string
	req := core.IDsRequest{State: core.StateInactive, Limit: 2}
	for {
		page, err := c.Client.IDsPage(ctx, req)
		require.NoError(t, err)
		pages = append(pages, page.IDs)
		cursors = append(cursors, page.Cursor)
		if page.Cursor == "" {
			break
		}
		req.Cursor = page.Cursor
	}
	require.Equal(t, [][]int64{{a[0], a[1]}, {a[2], a[3]}, {a[4], c3[0]}, {c3[1], c3[2]}}, pages)
	require.Equal(t, []string{"a:2", "a:4", "c:1", ""}, cursors, "the last page ends the listing")

	all, err := c.Client.IDs(ctx, core.StateInactive)
	require.NoError(t, err)
	require.Equal(t, append(append([]int64{}, a...), c3...), all)
	ids, err := c.Client.IDs(ctx, core.StateDelayed)
	require.NoError(t, err)
	require.Equal(t, []int64{delayed.ID}, ids)
	ids, err = c.Client.IDs(ctx, core.StateFailed)
	require.NoError(t, err)
	require.Empty(t, ids)

	// A cursor whose type is unknown goes on with the next type by name.
	page, err := c.Client.IDsPage(ctx, core.IDsRequest{State: core.StateInactive, Cursor: "bb:7"})
	require.NoError(t, err)
	require.Equal(t, c3, page.IDs)
	require.Empty(t, page.Cursor)
}

func TestIDsRefusesBadPagesAndNamesTheField(t *testing.T) {
	c, _ := newCore(t)
	raw := bus.NewClient(c.NATS.Conn, 5*time.Second)
	for body, want := range map[string]string{
		`{"state":"inactive","limit":-1}`:                        "limit: -1 is outside 0..10000",
		`{"state":"inactive","limit":10001}`:                     "limit: 10001 is outside 0..10000",
		`{"state":"inactive","limit":1e30}`:                      "limit: expected int",
		`{"state":"inactive","cursor":"nocolon"}`:                `cursor: "nocolon" is not a cursor`,
		`{"state":"inactive","cursor":"a:-1"}`:                   `cursor: "a:-1" is not a cursor`,
		`{"state":"inactive","cursor":"a.b:1"}`:                  `cursor: "a.b:1" is not a cursor`,
		`{"state":"inactive","cursor":"a:99999999999999999999"}`: `cursor: "a:99999999999999999999"`,
		`{"state":"inactive","cursor":7}`:                        "cursor: expected string",
	} {
		err := raw.CallRaw(ctx, c.Client.Subjects().Core(bus.MethodIDs), []byte(body), nil)
		require.ErrorIs(t, err, core.ErrInvalid, body)
		require.ErrorContains(t, err, want, body)
	}
}

// TestIDsPagesFitTheMessageLimit: on a NATS whose messages carry at most
// 16 KiB, a state of 3,000 jobs (some 20 KiB of ids) is read in pages that
// each fit, even when a page of 10,000 is asked for.
func TestIDsPagesFitTheMessageLimit(t *testing.T) {
	t.Parallel()
	const maxPayload = 16 << 10
	ns, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", MaxPayload: maxPayload})
	require.NoError(t, err)
	t.Cleanup(ns.Shutdown)
	st, _ := nodetest.NewStore(t)
	svc, err := service.New(service.Config{Store: st, Conn: bustest.Connect(t, ns.ClientURL())})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Stop(context.Background()) })
	client, err := core.NewClient(bustest.Connect(t, ns.ClientURL()), nil)
	require.NoError(t, err)

	var want []int64
	for range 3 {
		specs := make([]core.Spec, 1000)
		for i := range specs {
			specs[i] = core.Spec{Type: "many", MaxAttempts: 1, TTL: 1000 * time.Millisecond}
		}
		jobs, _, err := st.Create(ctx, 1, specs)
		require.NoError(t, err)
		for _, j := range jobs {
			want = append(want, j.ID)
		}
	}
	var got []int64
	req := core.IDsRequest{State: core.StateInactive, Limit: core.MaxIDsLimit}
	pages := 0
	for {
		page, err := client.IDsPage(ctx, req)
		require.NoError(t, err, "page %d", pages)
		pages++
		got = append(got, page.IDs...)
		if page.Cursor == "" {
			break
		}
		req.Cursor = page.Cursor
	}
	require.Equal(t, want, got)
	require.Greater(t, pages, 2, "the pages were cut to the message size")
}

// TestARangeOfLargeJobsComesInPartsThatFit: three jobs of 400 KB cannot
// share one 1 MiB message; range answers with those that fit and says
// where to go on, instead of refusing the whole reply.
func TestARangeOfLargeJobsComesInPartsThatFit(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	data := json.RawMessage(`"` + strings.Repeat("x", 400<<10) + `"`)
	var want []int64
	for range 3 {
		j, err := c.Client.Create(ctx, "big", data, nil)
		require.NoError(t, err)
		want = append(want, j.ID)
	}
	var got []int64
	req := core.RangeRequest{Type: "big", To: 9}
	for {
		page, err := c.Client.RangePage(ctx, req)
		require.NoError(t, err)
		require.NotEmpty(t, page.Jobs)
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		if page.Next == 0 {
			break
		}
		require.Equal(t, req.From+int64(len(page.Jobs)), page.Next)
		req.From = page.Next
	}
	require.Equal(t, want, got)
}

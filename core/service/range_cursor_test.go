package service_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node/nodetest"
)

// seedRangeJobs creates n jobs over four types with three priorities, so
// that the ready indexes hold long runs of equal scores, and delays every
// fifth one by a time shared with others.
func seedRangeJobs(t *testing.T, c *nodetest.Core, n int) {
	t.Helper()
	specs := make([]core.Spec, n)
	for i := range specs {
		specs[i] = core.Spec{Type: fmt.Sprintf("t%d", i%4), Priority: core.Priority([]int{0, -10, 10}[i%3])}
		if i%5 == 0 {
			specs[i].Delay = time.Duration(1000*(i%3)) * time.Millisecond
		}
	}
	_, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
}

// walk reads a range by cursor to its end, limit jobs a page, and returns
// the ids in order.
func walk(t *testing.T, c *nodetest.Core, req core.RangeRequest) []int64 {
	t.Helper()
	var ids []int64
	for pages := 0; ; pages++ {
		require.Less(t, pages, 1000, "the walk ends")
		page, err := c.Client.RangePage(ctx, req)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Jobs), req.Limit)
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
		}
		if page.Cursor == "" {
			return ids
		}
		req.Cursor = page.Cursor
	}
}

// TestARangeByCursorListsWhatPositionsList: pages by cursor of every type,
// or of one, in either order, list the jobs that one page by position
// lists, in its order, none twice; and a reply's back cursor, read in the
// other order, gives the jobs before the page, nearest first.
func TestARangeByCursorListsWhatPositionsList(t *testing.T) {
	c, _ := newCore(t)
	seedRangeJobs(t, c, 150)
	for _, state := range []core.State{"", core.StateInactive, core.StateDelayed} {
		for _, typ := range []string{"", "t1"} {
			for _, order := range []core.Order{core.OrderAsc, core.OrderDesc} {
				t.Run(fmt.Sprintf("state %q type %q %s", state, typ, order), func(t *testing.T) {
					whole := rangeIDs(t, c, core.RangeRequest{State: state, Type: typ, To: 999, Order: order})
					require.NotEmpty(t, whole)
					got := walk(t, c, core.RangeRequest{State: state, Type: typ, Order: order, Limit: 7})
					require.Equal(t, whole, got)
					if len(whole) < 21 {
						return // too few for three pages
					}

					// The third page's back cursor, in the other order.
					req := core.RangeRequest{State: state, Type: typ, Order: order, Limit: 7}
					var page *core.JobsReply
					for range 3 {
						var err error
						page, err = c.Client.RangePage(ctx, req)
						require.NoError(t, err)
						req.Cursor = page.Cursor
					}
					require.NotEmpty(t, page.Back)
					other := core.OrderDesc
					if order == core.OrderDesc {
						other = core.OrderAsc
					}
					before := rangeIDs(t, c, core.RangeRequest{State: state, Type: typ, Order: other, Cursor: page.Back, Limit: 20})
					want := slices.Clone(whole[:14])
					slices.Reverse(want)
					require.Equal(t, want, before, "the two pages before, nearest first")
				})
			}
		}
	}
}

// TestARangeCursorOutlivesItsJob: a cursor whose job has left the index
// (removed) still goes on after the place the job held.
func TestARangeCursorOutlivesItsJob(t *testing.T) {
	c, _ := newCore(t)
	seedRangeJobs(t, c, 40)
	whole := rangeIDs(t, c, core.RangeRequest{State: core.StateInactive, To: 999})
	page, err := c.Client.RangePage(ctx, core.RangeRequest{State: core.StateInactive, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, whole[9], page.Jobs[9].ID)
	_, err = c.Client.Remove(ctx, whole[9])
	require.NoError(t, err)
	next, err := c.Client.RangePage(ctx, core.RangeRequest{State: core.StateInactive, Limit: 5, Cursor: page.Cursor})
	require.NoError(t, err)
	ids := make([]int64, len(next.Jobs))
	for i, j := range next.Jobs {
		ids[i] = j.ID
	}
	require.Equal(t, whole[10:15], ids)
}

// TestARangePageByPositionCarriesCursors: a shallow page by position
// answers as before, plus the cursor to go on from; a typed range reads
// any position; the last page has no cursor.
func TestARangePageByPositionCarriesCursors(t *testing.T) {
	c, _ := newCore(t)
	seedRangeJobs(t, c, 30)
	whole := rangeIDs(t, c, core.RangeRequest{To: 999})
	page, err := c.Client.RangePage(ctx, core.RangeRequest{From: 0, To: 9})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 10)
	require.Empty(t, page.Back, "the first page has nothing before it")
	next := rangeIDs(t, c, core.RangeRequest{Cursor: page.Cursor, Limit: 10})
	require.Equal(t, whole[10:20], next)

	last, err := c.Client.RangePage(ctx, core.RangeRequest{From: 20, To: 39})
	require.NoError(t, err)
	require.Len(t, last.Jobs, 10)
	require.Empty(t, last.Cursor, "past the end: no cursor")
	require.NotEmpty(t, last.Back)

	jobs, err := c.Client.Range(ctx, core.RangeRequest{Type: "t1", From: 1_000_000, To: 1_000_019})
	require.NoError(t, err)
	require.Empty(t, jobs, "a typed range reads any position")
}

// TestARangeRefusesBadPagesNamingTheField: each bad range is invalid,
// names its field, and a deep page of every type names the cursor.
func TestARangeRefusesBadPagesNamingTheField(t *testing.T) {
	c, _ := newCore(t)
	seedRangeJobs(t, c, 8)
	page, err := c.Client.RangePage(ctx, core.RangeRequest{State: core.StateInactive, Limit: 2})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		req  core.RangeRequest
		want string
	}{
		{"a deep page of every type", core.RangeRequest{From: 1_000_000, To: 1_000_019}, "from: 1000000..1000019 of every type is past position 999"},
		{"a page of every type that ends too deep", core.RangeRequest{From: 990, To: 1009}, "to: 990..1009 of every type is past position 999"},
		{"a deep page names the cursor", core.RangeRequest{State: core.StateFailed, From: 5000, To: 5019}, "page with cursor"},
		{"a negative limit", core.RangeRequest{Limit: -1}, "limit: -1 is outside 0..1000"},
		{"a limit over the bound", core.RangeRequest{Limit: 1001}, "limit: 1001 is outside 0..1000"},
		{"a limit with positions", core.RangeRequest{From: 3, To: 5, Limit: 2}, "limit: a page by cursor takes no from or to"},
		{"a cursor with positions", core.RangeRequest{To: 5, Cursor: "all_1_1"}, "cursor: a page by cursor takes no from or to"},
		{"a cursor that is no cursor", core.RangeRequest{Cursor: "x"}, `cursor: "x" is not a cursor from a range reply`},
		{"a cursor with a bad score", core.RangeRequest{Cursor: "all_NaN_1"}, "the score is not a finite number"},
		{"a cursor with a bad member", core.RangeRequest{Cursor: "all_1_1a"}, "the member is not digits"},
		{"a cursor of a state that is none", core.RangeRequest{Cursor: "done_1_1"}, `no state "done"`},
		{"a cursor of another state", core.RangeRequest{State: core.StateFailed, Cursor: page.Cursor}, "is a cursor of state inactive, not of state failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Client.RangePage(ctx, tc.req)
			require.ErrorIs(t, err, core.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
	n, err := c.Client.Count(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, int64(8), n, "nothing stored or removed")
}

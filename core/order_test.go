package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
)

// TestSameMillisecondDelayedJobsRunInCreationOrder: 20 jobs of one
// create_bulk with one delay fall due at the same millisecond. Promoted 7
// at a time (the limit cuts the group) and leased, they come in creation
// order, not in the text order of their ids ([1 10 11 … 19 2 20 3 …]).
func TestSameMillisecondDelayedJobsRunInCreationOrder(t *testing.T) {
	c, clock := newCore(t)
	specs := make([]core.Spec, 20)
	for i := range specs {
		specs[i] = core.Spec{Type: "due", Delay: 1000}
	}
	jobs, err := c.Client.CreateBulk(ctx, specs)
	require.NoError(t, err)
	created := make([]int64, len(jobs))
	for i, j := range jobs {
		created[i] = j.ID
	}
	clock.Advance(time.Second)
	for moved := 0; moved < len(jobs); {
		mv, err := c.Client.Promote(ctx, 7)
		require.NoError(t, err)
		require.Positive(t, mv.Moved)
		moved += mv.Moved
	}
	var leased []int64
	for _, j := range lease(t, c, core.LeaseRequest{Types: []string{"due"}, Max: 20}) {
		leased = append(leased, j.ID)
	}
	require.Equal(t, created, leased)
}

package redisstore_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// TestFailKeepsTheLastAttemptsWithTheirStacks: a fail adds its attempt,
// time, error and stack to the end of the job's error history, which keeps
// the newest core.ErrorsKept; get returns the history, not the row.
func TestFailKeepsTheLastAttemptsWithTheirStacks(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	var old []string
	for n := 1; n <= core.ErrorsKept; n++ {
		old = append(old, fmt.Sprintf(`{"attempt":%d,"at":%d,"error":"e%d"}`, n, 1000+n, n))
	}
	before := activeJob(map[string]string{"attempts": "25", "max_attempts": "100"}).with(keyspace{"{t}:errors:1": old})
	st.seed(before)
	stack := "goroutine 1 [running]:\nmain.handler()\n\t/src/\"quoted\"/main.go:12"
	res := apply(t, st, 2500, core.OpFail, service.StoreOp{ID: 1, Lease: "L", Type: "t", Error: "boom ☃", Stack: stack})
	require.NoError(t, res.Err)
	require.Empty(t, res.Job.Errors, "a script's row carries no history")

	got := st.dump()["{t}:errors:1"].([]string)
	require.Len(t, got, core.ErrorsKept, "the oldest went")
	require.Equal(t, old[1:], got[:core.ErrorsKept-1])
	job, err := st.Get(ctx, 1)
	require.NoError(t, err)
	require.Len(t, job.Errors, core.ErrorsKept)
	require.Equal(t, core.AttemptError{Attempt: 2, At: 1002, Error: "e2"}, job.Errors[0])
	require.Equal(t, core.AttemptError{Attempt: 26, At: 2500, Error: "boom ☃", Stack: stack}, job.Errors[core.ErrorsKept-1])
}

// TestRescueRecordsTheStallThatFailsAnAttempt: a stall past the stall
// limit is a failed attempt in the history, with no stack; a stall within
// it records nothing.
func TestRescueRecordsTheStallThatFailsAnAttempt(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(activeJob(map[string]string{"stall_limit": "1"}))
	_, _, err := st.Rescue(ctx, 3000, 10, 1)
	require.NoError(t, err)
	job, err := st.Get(ctx, 1)
	require.NoError(t, err)
	require.Empty(t, job.Errors, "a stall within the limit is no failed attempt")
	require.Nil(t, st.dump()["{t}:errors:1"])

	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: 3000, Types: []string{"t"}, Max: 1, Worker: "w", Token: "M", TTL: 0})
	require.NoError(t, err)
	require.Len(t, leased, 1)
	_, _, err = st.Rescue(ctx, 5000, 10, 1)
	require.NoError(t, err)
	job, err = st.Get(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []core.AttemptError{{Attempt: 1, At: 5000, Error: "lease expired: ran past its ttl of 1000 ms"}}, job.Errors)
}

// TestGetReadsAJobWithoutHistory: a job stored before the history existed,
// or that never failed, has none, and an entry that does not decode is
// left out rather than failing the get.
func TestGetReadsAJobWithoutHistory(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(activeJob(nil))
	job, err := st.Get(ctx, 1)
	require.NoError(t, err)
	require.Nil(t, job.Errors)

	st.seed(keyspace{"{t}:errors:1": []string{"not json", `{"attempt":1,"at":5,"error":"x"}`}})
	job, err = st.Get(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, []core.AttemptError{{Attempt: 1, At: 5, Error: "x"}}, job.Errors)
}

package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
)

// TestGetByKeyReadsTheJobHoldingIt: the unfinished job holding a unique
// key is read whole (data and history); a key nobody holds, or held in
// another type, is not found; nothing is written.
func TestGetByKeyReadsTheJobHoldingIt(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	before := activeJob(map[string]string{"unique_key": "ref-7"}).with(keyspace{
		"{t}:unique":   map[string]string{"ref-7": "1"},
		"{t}:errors:1": []string{`{"attempt":1,"at":1500,"error":"boom"}`},
	})
	st.seed(before)
	job, err := st.GetByKey(ctx, "t", "ref-7")
	require.NoError(t, err)
	require.Equal(t, int64(1), job.ID)
	require.Equal(t, "ref-7", job.UniqueKey)
	require.JSONEq(t, `{"n":1}`, string(job.Data))
	require.Len(t, job.Errors, 1)

	_, err = st.GetByKey(ctx, "t", "ref-8")
	require.ErrorIs(t, err, core.ErrNotFound)
	require.ErrorContains(t, err, `no unfinished t job holds unique_key "ref-8"`)
	_, err = st.GetByKey(ctx, "u", "ref-7")
	require.ErrorIs(t, err, core.ErrNotFound)
	st.requireKeys(before, "reads write nothing")
}

package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/httpapi"
)

// TestCreateKeepsTheTraceparentHeader: POST /job passes the caller's
// traceparent header on to core, for one job and for an array; a
// malformed one is ignored, as core ignores it.
func TestCreateKeepsTheTraceparentHeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t, httpapi.Config{})
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for body, want := range map[string]int{`{"type":"a"}`: 1, `[{"type":"a"},{"type":"b"}]`: 2} {
		for header, kept := range map[string]string{tp: tp, "00-nope": ""} {
			r := e.do("POST", "/job", body, "traceparent", header)
			require.Equal(t, http.StatusCreated, r.status, string(r.body))
			var ids []struct{ ID int64 }
			if want == 1 {
				ids = make([]struct{ ID int64 }, 1)
				require.NoError(t, json.Unmarshal(r.body, &ids[0]))
			} else {
				require.NoError(t, json.Unmarshal(r.body, &ids))
			}
			require.Len(t, ids, want)
			for _, id := range ids {
				got, err := e.core.Client.Get(t.Context(), id.ID)
				require.NoError(t, err)
				require.Equal(t, kept, got.Trace, "%s with %q", body, header)
			}
		}
	}
}

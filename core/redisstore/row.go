package redisstore

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/kuebus/kuebus/core"
)

// A row is a job's fields by position, as the scripts reply them
// (snapshot, lua/includes/row_gen.lua) and as Get reads them: the order of
// rowFields, which jobFields (fields.go) decides for Go and Lua alike.

// decodeRow turns a row, as a script replies it or HMGET reads it, into a
// Job: values in rowFields order, then withData's when present. A
// missing or empty value is the zero value. ok is false for an empty row
// ({}) or the row of a job that does not exist (no id; ids start at 1).
func decodeRow(v any) (j core.Job, ok bool) {
	ok = decodeRowInto(&j, v)
	return j, ok
}

// decodeRowInto is decodeRow into *j, which it expects zero. The decoders
// take j's address, so a Job decodeRow returns is made on the heap; on the
// hot paths (a batch's results) the caller decodes into a slice it has
// made anyway, one allocation fewer per job.
func decodeRowInto(j *core.Job, v any) bool {
	vals, _ := v.([]any)
	if len(vals) == 0 {
		return false
	}
	for i, dec := range rowWithDataDecoders {
		if i < len(vals) && vals[i] != nil && dec != nil {
			dec(j, vals[i])
		}
	}
	return j.ID != 0
}

// decodePairsInto turns a job's hash as name-value pairs (HGETALL, as
// lease_job.lua replies it) into *j, which it expects zero; a later pair
// wins. It says false without an id.
func decodePairsInto(j *core.Job, v any) bool {
	vals, _ := v.([]any)
	for i := 0; i+1 < len(vals); i += 2 {
		name, _ := vals[i].(string)
		// a result from an earlier run is not the leased job's
		if dec := fieldDecoders[name]; dec != nil && name != "result" && vals[i+1] != nil {
			dec(j, vals[i+1])
		}
	}
	return j.ID != 0
}

// num, str and raw read one value of a row: Lua's numbers come as int64,
// strings (and numbers Redis stored) as string, missing fields as nil.
func num(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

func raw(v any) json.RawMessage {
	if s := str(v); s != "" {
		return json.RawMessage(s)
	}
	return nil
}

// appendNewJob appends a new job's own values (create_jobs.lua's ARGV,
// after the shared ones): each OWN field's, then how many SPARSE fields
// are not zero (filled in once they are known), then each of those by name
// and value.
// extra are more name-value pairs to store, SPARSE-like (deps_check).
func appendNewJob(args []any, j *core.Job, extra ...any) []any {
	for _, enc := range newJobOwn {
		args = append(args, enc(j))
	}
	at := len(args)
	args = append(args, 0)
	n := 0
	for i, enc := range newJobSparse {
		if v := enc(j); !isZeroArg(v, newJobSparseZero[i]) {
			args = append(args, newJobSparseFields[i], v)
			n++
		}
	}
	args = append(args, extra...)
	args[at] = n + len(extra)/2
	return args
}

// isZeroArg says whether an encoder's value is what the hash reads a
// missing field as (zero, as jobFields spells it).
func isZeroArg(v any, zero string) bool {
	switch v := v.(type) {
	case string:
		return v == zero
	case int64:
		return zero == "0" && v == 0
	case int:
		return zero == "0" && v == 0
	}
	return false
}

// readyID is the job id in a ready member "<seq>:<id>".
func readyID(member string) int64 {
	_, id, _ := strings.Cut(member, ":")
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

// strs reads a list of strings a script replied (LRANGE's).
func strs(v any) []string {
	vals, _ := v.([]any)
	out := make([]string, len(vals))
	for i, s := range vals {
		out[i] = str(s)
	}
	return out
}

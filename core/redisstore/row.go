package redisstore

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kuebus/kuebus/core"
)

// A row is a job's fields by position, as the scripts reply them and as Get
// reads them. The order is written once, as ROW in lua/includes/row.lua,
// where the scripts use it; rowFields is read from that file when the
// package loads, so Go holds no copy of the order that could drift. Go
// knows, per field name, how to decode it (rowDecoders): a field the Lua
// list gains without a decoder here stops the package at load.
//
// A row may be followed by the job's data, then its result: rowData and
// rowResult are their positions; rowWithData is the HMGET of all three.
var (
	rowFields   = readLuaList("lua/includes/row.lua", "ROW")
	rowDecoders = decodersOf(rowFields)
	rowData     = len(rowFields)
	rowResult   = len(rowFields) + 1
	rowWithData = append(slices.Clone(rowFields), "data", "result")
)

// readLuaList reads the names of the list "local NAME = {'a', 'b', ...}"
// in an embedded Lua file: the one place such a list is written.
func readLuaList(file, name string) []string {
	text, err := luaFiles.ReadFile(file)
	if err != nil {
		panic(fmt.Sprintf("redisstore: %v", err))
	}
	list := regexp.MustCompile(`(?s)\nlocal ` + name + ` = \{(.*?)\}`).FindSubmatch(text)
	if list == nil {
		panic(fmt.Sprintf("redisstore: %s declares no %s list", file, name))
	}
	var fields []string
	for _, m := range regexp.MustCompile(`'(\w+)'`).FindAllSubmatch(list[1], -1) {
		fields = append(fields, string(m[1]))
	}
	return fields
}

// fieldDecoders decode each field of a row into a Job. A nil decoder marks
// a field the Job does not carry: lease (the token; only lease hands it
// out, to the worker that holds it), lease_ttl, rmember and last_lease
// (bookkeeping of the scripts).
var fieldDecoders = map[string]func(j *core.Job, v any){
	"id":           func(j *core.Job, v any) { j.ID = num(v) },
	"type":         func(j *core.Job, v any) { j.Type = str(v) },
	"priority":     func(j *core.Job, v any) { j.Priority = core.Priority(num(v)) },
	"state":        func(j *core.Job, v any) { j.State = core.State(str(v)) },
	"delay":        func(j *core.Job, v any) { j.Delay = num(v) },
	"max_attempts": func(j *core.Job, v any) { j.MaxAttempts = int(num(v)) },
	"attempts":     func(j *core.Job, v any) { j.Attempts = int(num(v)) },
	"backoff":      func(j *core.Job, v any) { j.Backoff = decodeBackoff(str(v)) },
	"ttl":          func(j *core.Job, v any) { j.TTL = num(v) },
	"roc":          func(j *core.Job, v any) { j.RemoveOnComplete.AtOnce = str(v) == "1" },
	"roc_limit":    func(j *core.Job, v any) { decodeLimit(&j.RemoveOnComplete, str(v)) },
	"rof":          func(j *core.Job, v any) { j.RemoveOnFail.AtOnce = str(v) == "1" },
	"rof_limit":    func(j *core.Job, v any) { decodeLimit(&j.RemoveOnFail, str(v)) },
	"unique_key":   func(j *core.Job, v any) { j.UniqueKey = str(v) },
	"progress":     func(j *core.Job, v any) { j.Progress = int(num(v)) },
	"error":        func(j *core.Job, v any) { j.Error = str(v) },
	"created_at":   func(j *core.Job, v any) { j.CreatedAt = num(v) },
	"promote_at":   func(j *core.Job, v any) { j.PromoteAt = num(v) },
	"started_at":   func(j *core.Job, v any) { j.StartedAt = num(v) },
	"updated_at":   func(j *core.Job, v any) { j.UpdatedAt = num(v) },
	"failed_at":    func(j *core.Job, v any) { j.FailedAt = num(v) },
	"duration":     func(j *core.Job, v any) { j.Duration = num(v) },
	"worker_id":    func(j *core.Job, v any) { j.WorkerID = str(v) },
	"stalls":       func(j *core.Job, v any) { j.Stalls = int(num(v)) },
	"stall_limit":  func(j *core.Job, v any) { j.StallLimit = int(num(v)) },
	"lease_until":  func(j *core.Job, v any) { j.LeaseUntil = num(v) },
	"schedule":     func(j *core.Job, v any) { j.Schedule = str(v) },
	"schedule_at":  func(j *core.Job, v any) { j.ScheduleAt = num(v) },
	"trace":        func(j *core.Job, v any) { j.Trace = str(v) },
	"lease":        nil,
	"lease_ttl":    nil,
	"rmember":      nil,
	"last_lease":   nil,
}

// decodersOf lines the decoders up with the fields, by position.
func decodersOf(fields []string) []func(*core.Job, any) {
	out := make([]func(*core.Job, any), len(fields))
	for i, f := range fields {
		dec, ok := fieldDecoders[f]
		if !ok {
			panic(fmt.Sprintf("redisstore: row field %q (lua/includes/row.lua) has no decoder in row.go", f))
		}
		out[i] = dec
	}
	return out
}

// decodeRow turns a row, as a script replies it or HMGET reads it, into a
// Job: values in rowFields order, then data and result when present. A
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
	for i, dec := range rowDecoders {
		if i < len(vals) && vals[i] != nil && dec != nil {
			dec(j, vals[i])
		}
	}
	if len(vals) > rowData {
		j.Data = raw(vals[rowData])
	}
	if len(vals) > rowResult {
		j.Result = raw(vals[rowResult])
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
		switch dec, known := fieldDecoders[name]; {
		case name == "data":
			j.Data = raw(vals[i+1])
		case known && dec != nil && vals[i+1] != nil:
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

// newJob is what a job looks like when it is created: the one place that
// says so. create_jobs writes its fields (newJobShared, newJobOwn) verbatim.
func newJob(sp *core.Spec, id, now int64) core.Job {
	j := core.Job{ID: id, Type: sp.Type, Data: sp.Data, Priority: sp.Priority, State: core.StateInactive,
		Delay: sp.Delay, MaxAttempts: sp.MaxAttempts, Backoff: sp.Backoff, TTL: sp.TTL,
		RemoveOnComplete: sp.RemoveOnComplete, RemoveOnFail: sp.RemoveOnFail, UniqueKey: sp.UniqueKey, StallLimit: 1,
		CreatedAt: now, UpdatedAt: now, PromoteAt: now + sp.Delay, Trace: sp.Trace}
	if sp.Delay > 0 {
		j.State = core.StateDelayed
	}
	if sp.StallLimit != nil { // core fills it in; 1 guards a caller that did not
		j.StallLimit = *sp.StallLimit
	}
	return j
}

// newJobShared, newJobOwn and newJobSparse are the hash fields of a new
// job that create_jobs writes: those the same for every job of one call
// (one type, one now), sent once per call; each job's own; and those a new
// job most often lacks, sent only when not zero, by name. The lists are
// written once, in lua/includes/new_job.lua, and read from it here.
var (
	newJobOwnFields    = readLuaList("lua/includes/new_job.lua", "OWN")
	newJobSharedFields = readLuaList("lua/includes/new_job.lua", "SHARED")
	newJobSparseFields = readLuaList("lua/includes/new_job.lua", "SPARSE")
	newJobShared       = encodersOf(newJobSharedFields)
	newJobOwn          = encodersOf(newJobOwnFields)
	newJobSparse       = encodersOf(newJobSparseFields)
	newJobSparseZero   = zerosOf(newJobSparseFields)
)

// appendNewJob appends a new job's own values (create_jobs.lua's ARGV,
// after the shared ones): each OWN field's, then how many SPARSE fields
// are not zero (filled in once they are known), then each of those by name
// and value.
func appendNewJob(args []any, j *core.Job) []any {
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
	args[at] = n
	return args
}

// isZeroArg says whether an encoder's value is what the hash reads a
// missing field as (zero, as newJobZero spells it).
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

// newJobEncoders encode each field of a new job as its hash stores it: the
// inverse of fieldDecoders for what newJob sets, plus data. Zero values are
// written too, so a new job's hash has the fields it always had.
var newJobEncoders = map[string]func(j *core.Job) any{
	"id":           func(j *core.Job) any { return j.ID },
	"type":         func(j *core.Job) any { return j.Type },
	"data":         func(j *core.Job) any { return []byte(j.Data) }, // no copy: go-redis writes the bytes
	"priority":     func(j *core.Job) any { return int64(j.Priority) },
	"state":        func(j *core.Job) any { return string(j.State) },
	"delay":        func(j *core.Job) any { return j.Delay },
	"max_attempts": func(j *core.Job) any { return j.MaxAttempts },
	"attempts":     func(j *core.Job) any { return j.Attempts },
	"backoff":      func(j *core.Job) any { return encodeBackoff(j.Backoff) },
	"ttl":          func(j *core.Job) any { return j.TTL },
	"roc":          func(j *core.Job) any { return flag(j.RemoveOnComplete.AtOnce) },
	"roc_limit":    func(j *core.Job) any { return encodeLimit(j.RemoveOnComplete) },
	"rof":          func(j *core.Job) any { return flag(j.RemoveOnFail.AtOnce) },
	"rof_limit":    func(j *core.Job) any { return encodeLimit(j.RemoveOnFail) },
	"unique_key":   func(j *core.Job) any { return j.UniqueKey },
	"progress":     func(j *core.Job) any { return j.Progress },
	"created_at":   func(j *core.Job) any { return j.CreatedAt },
	"updated_at":   func(j *core.Job) any { return j.UpdatedAt },
	"promote_at":   func(j *core.Job) any { return j.PromoteAt },
	"stall_limit":  func(j *core.Job) any { return j.StallLimit },
	"trace":        func(j *core.Job) any { return j.Trace },
}

// encodersOf lines the encoders up with the fields, by position.
func encodersOf(fields []string) []func(*core.Job) any {
	out := make([]func(*core.Job) any, len(fields))
	for i, f := range fields {
		enc, ok := newJobEncoders[f]
		if !ok {
			panic(fmt.Sprintf("redisstore: new job field %q (lua/includes/new_job.lua) has no encoder in row.go", f))
		}
		out[i] = enc
	}
	return out
}

// newJobZero is the value of each SPARSE field of a new job
// (lua/includes/new_job.lua) that create_jobs does not write: what a
// missing field reads as (decodeRow here, "or 0" and "== '1'" in the
// scripts). A unique key "0" is a key, not a zero.
var newJobZero = map[string]string{
	"delay": "0", "roc": "0", "rof": "0",
	"backoff": "", "unique_key": "", "roc_limit": "", "rof_limit": "", "trace": "",
}

// zerosOf lines each SPARSE field's zero (newJobZero) up with the fields.
func zerosOf(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		zero, ok := newJobZero[f]
		if !ok {
			panic(fmt.Sprintf("redisstore: sparse new job field %q (lua/includes/new_job.lua) has no zero in row.go", f))
		}
		out[i] = zero
	}
	return out
}

// flag is a bool as a hash stores it; the roc decoder reads "1" as true.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// A backoff is stored as "<type>:<delay ms>", "" for none.
func encodeBackoff(b *core.Backoff) string {
	if b == nil {
		return ""
	}
	return string(b.Type) + ":" + strconv.FormatInt(b.Delay, 10)
}

func decodeBackoff(s string) *core.Backoff {
	if s == "" {
		return nil
	}
	t, d, _ := strings.Cut(s, ":")
	delay, _ := strconv.ParseInt(d, 10, 64)
	return &core.Backoff{Type: core.BackoffType(t), Delay: delay}
}

// A retention's limits are stored as "<age ms>:<count>", "" for none
// (lua/clean.lua reads them); true is the roc or rof flag beside it.
func encodeLimit(r core.Retention) string {
	if !r.Limited() {
		return ""
	}
	return strconv.FormatInt(r.Age, 10) + ":" + strconv.FormatInt(r.Count, 10)
}

func decodeLimit(r *core.Retention, s string) {
	age, count, _ := strings.Cut(s, ":")
	r.Age, _ = strconv.ParseInt(age, 10, 64)
	r.Count, _ = strconv.ParseInt(count, 10, 64)
}

// readyID is the job id in a ready member "<seq>:<id>".
func readyID(member string) int64 {
	_, id, _ := strings.Cut(member, ":")
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

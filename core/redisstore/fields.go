package redisstore

import (
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/core"
)

//go:generate go test -run TestGeneratedLuaIsCurrent -update .

// jobFields is the one table of a job's hash fields that Go and the
// scripts agree through: what Go decodes from a row, what a create sends
// for a new job, and the order of both. `go generate` writes from it
// lua/includes/job_fields.lua (luagen.go): each field's position in a row
// (ROW_<FIELD>), snapshot (the row's HMGET), each OWN field's position
// (OWN_<FIELD>) and write_new_job (the new job's HSET). Nothing rewrites a
// script's text at load: the text Redis runs is the files, includes
// resolved (scripts.go). TestGeneratedLuaIsCurrent fails when the
// generated file is stale.
//
// The order is that of a new job's HSET (SHARED, then OWN, then SPARSE,
// then the fields only later scripts write): a hash keeps its fields in
// the order they were first written, and Redis finds a field by walking
// them, so the fields every script reads come first.
var jobFields = []jobField{
	// SHARED: the same for every job of one create call (one type, one
	// now), sent once per call.
	{name: "type", row: true, newJob: shared,
		decode: func(j *core.Job, v any) { j.Type = str(v) },
		encode: func(j *core.Job) any { return j.Type }},
	{name: "created_at", row: true, newJob: shared,
		decode: func(j *core.Job, v any) { j.CreatedAt = num(v) },
		encode: func(j *core.Job) any { return j.CreatedAt }},
	{name: "updated_at", row: true, newJob: shared,
		decode: func(j *core.Job, v any) { j.UpdatedAt = num(v) },
		encode: func(j *core.Job) any { return j.UpdatedAt }},

	// OWN: each job's own, sent for every job.
	{name: "id", row: true, newJob: own,
		decode: func(j *core.Job, v any) { j.ID = num(v) },
		encode: func(j *core.Job) any { return j.ID }},
	{name: "data", newJob: own, // not in a row: a reply carries it apart, or not at all
		decode: func(j *core.Job, v any) { j.Data = raw(v) },
		encode: func(j *core.Job) any { return []byte(j.Data) }}, // no copy: go-redis writes the bytes
	{name: "priority", row: true, newJob: own,
		decode: func(j *core.Job, v any) { j.Priority = core.Priority(num(v)) },
		encode: func(j *core.Job) any { return int64(j.Priority) }},
	{name: "state", row: true, newJob: own,
		decode: func(j *core.Job, v any) { j.State = core.State(str(v)) },
		encode: func(j *core.Job) any { return string(j.State) }},
	{name: "max_attempts", row: true, newJob: own,
		decode: func(j *core.Job, v any) { j.MaxAttempts = int(num(v)) },
		encode: func(j *core.Job) any { return j.MaxAttempts }},
	{name: "ttl", row: true, newJob: own,
		decode: func(j *core.Job, v any) { j.TTL = num(v) },
		encode: func(j *core.Job) any { return j.TTL }},
	{name: "promote_at", row: true, newJob: own,
		decode: func(j *core.Job, v any) { j.PromoteAt = num(v) },
		encode: func(j *core.Job) any { return j.PromoteAt }},
	{name: "stall_limit", row: true, newJob: own,
		decode: func(j *core.Job, v any) { j.StallLimit = int(num(v)) },
		encode: func(j *core.Job) any { return j.StallLimit }},

	// SPARSE: what a new job most often lacks, sent by name only when it
	// is not its zero (what a missing field reads as, in Go and in every
	// script: "or 0", "== '1'"). A unique key "0" is a key, not a zero.
	{name: "delay", row: true, newJob: sparse, zero: "0",
		decode: func(j *core.Job, v any) { j.Delay = num(v) },
		encode: func(j *core.Job) any { return j.Delay }},
	{name: "backoff", row: true, newJob: sparse,
		decode: func(j *core.Job, v any) { j.Backoff = decodeBackoff(str(v)) },
		encode: func(j *core.Job) any { return encodeBackoff(j.Backoff) }},
	{name: "roc", row: true, newJob: sparse, zero: "0", // "1": removed as it completes
		decode: func(j *core.Job, v any) { j.RemoveOnComplete.AtOnce = str(v) == "1" },
		encode: func(j *core.Job) any { return flag(j.RemoveOnComplete.AtOnce) }},
	{name: "unique_key", row: true, newJob: sparse,
		decode: func(j *core.Job, v any) { j.UniqueKey = str(v) },
		encode: func(j *core.Job) any { return j.UniqueKey }},
	{name: "roc_limit", row: true, newJob: sparse, // "<age ms>:<count>", clean.lua reads it
		decode: func(j *core.Job, v any) { decodeLimit(&j.RemoveOnComplete, str(v)) },
		encode: func(j *core.Job) any { return encodeLimit(j.RemoveOnComplete) }},
	{name: "rof", row: true, newJob: sparse, zero: "0", // "1": removed as it fails for good
		decode: func(j *core.Job, v any) { j.RemoveOnFail.AtOnce = str(v) == "1" },
		encode: func(j *core.Job) any { return flag(j.RemoveOnFail.AtOnce) }},
	{name: "rof_limit", row: true, newJob: sparse,
		decode: func(j *core.Job, v any) { decodeLimit(&j.RemoveOnFail, str(v)) },
		encode: func(j *core.Job) any { return encodeLimit(j.RemoveOnFail) }},
	{name: "trace", row: true, newJob: sparse, // the W3C traceparent of the create
		decode: func(j *core.Job, v any) { j.Trace = str(v) },
		encode: func(j *core.Job) any { return j.Trace }},
	{name: "schedule", row: true, newJob: sparse, // the schedule whose tick made the job (fire_schedule.lua)
		decode: func(j *core.Job, v any) { j.Schedule = str(v) },
		encode: func(j *core.Job) any { return j.Schedule }},
	{name: "schedule_at", row: true, newJob: sparse, zero: "0", // that tick, unix ms
		decode: func(j *core.Job, v any) { j.ScheduleAt = num(v) },
		encode: func(j *core.Job) any { return j.ScheduleAt }},
	{name: "broadcast", row: true, newJob: sparse, zero: "0", // "1": published to every listener when due, never leased (promote_due.lua)
		decode: func(j *core.Job, v any) { j.Broadcast = str(v) == "1" },
		encode: func(j *core.Job) any { return flag(j.Broadcast) }},
	{name: "group", row: true, newJob: sparse, // the job's group: leases take groups in turn (includes/indexes.lua)
		decode: func(j *core.Job, v any) { j.Group = str(v) },
		encode: func(j *core.Job) any { return j.Group }},

	// Dependencies (issue 26, deps.go): the ids the job waits for, "5,7"
	// (Go writes it; the scripts read deps_check instead), and its rule
	// when one fails ("" for fail). Not in a row (no script replies
	// them; a wider row costs every script that reads one): a read with
	// data has them (rowWithData).
	{name: "depends_on", newJob: sparse,
		decode: func(j *core.Job, v any) { j.DependsOn = decodeIDs(str(v)) },
		encode: func(j *core.Job) any { return encodeIDs(j.DependsOn) }},
	{name: "on_dep_fail", newJob: sparse,
		decode: func(j *core.Job, v any) { j.OnDependencyFailure = core.DepPolicy(str(v)) },
		encode: func(j *core.Job) any { return string(j.OnDependencyFailure) }},

	// Written by later scripts only. A new job has no attempts and no
	// progress: it writes neither, and they read as 0.
	{name: "attempts", row: true,
		decode: func(j *core.Job, v any) { j.Attempts = int(num(v)) }},
	{name: "progress", row: true,
		decode: func(j *core.Job, v any) { j.Progress = int(num(v)) }},
	{name: "error", row: true,
		decode: func(j *core.Job, v any) { j.Error = str(v) }},
	{name: "started_at", row: true,
		decode: func(j *core.Job, v any) { j.StartedAt = num(v) }},
	{name: "failed_at", row: true,
		decode: func(j *core.Job, v any) { j.FailedAt = num(v) }},
	{name: "duration", row: true,
		decode: func(j *core.Job, v any) { j.Duration = num(v) }},
	{name: "worker_id", row: true,
		decode: func(j *core.Job, v any) { j.WorkerID = str(v) }},
	{name: "stalls", row: true,
		decode: func(j *core.Job, v any) { j.Stalls = int(num(v)) }},
	{name: "lease_until", row: true,
		decode: func(j *core.Job, v any) { j.LeaseUntil = num(v) }},

	// pending: how many dependencies a waiting job still waits for;
	// dependents: not zero once jobs wait for this one (how many its
	// dependents set holds: a flow's create counts those of the job's
	// type, and a create or a link adds those it enters). Neither is in a row: complete.lua reads dependents
	// of a job only when its type has had dependents at all (the type's
	// stats field dependents, one HGET per call), so that a job of a type
	// without any pays nothing (an absent field costs an HMGET a scan of
	// the hash).
	{name: "pending", // not in a row either, as depends_on
		decode: func(j *core.Job, v any) { j.Pending = int(num(v)) }},
	{name: "dependents"},

	// The scripts' bookkeeping, which a Job does not carry (no decoder).
	// lease is the token: only a lease hands it out, to the worker that
	// holds it. lease_ttl is how long that lease lasts per touch; rmember
	// the job's member in ready; last_lease "<op>:<lease>" of the
	// operation that ended its last lease (includes/lease_holder.lua).
	{name: "lease", row: true},
	{name: "lease_ttl", row: true},
	{name: "rmember", row: true},
	{name: "last_lease", row: true},

	// The handler's result: not in a row either (as data).
	{name: "result",
		decode: func(j *core.Job, v any) { j.Result = raw(v) }},
}

// A jobField is one field of a job's hash.
type jobField struct {
	name string
	// row says the field is in a job's row: what snapshot reads (the
	// scripts' replies) and Go decodes by position. Every field is, but
	// data and result, which a reply or an event carries apart or not at
	// all.
	row bool
	// newJob says how a create sends the field for a new job: not at all
	// (0: a new job lacks it), once per call, per job, or per job only
	// when it is not zero.
	newJob newJobClass
	// decode sets the field's value in a Job; nil for a field a Job does
	// not carry.
	decode func(j *core.Job, v any)
	// encode is the field's value in a new job as the hash stores it;
	// nil for a field a new job lacks.
	encode func(j *core.Job) any
	// zero is what the field reads as when the hash lacks it: sparse
	// fields only, "" when not given.
	zero string
}

// newJobClass is how a create sends a field of a new job.
type newJobClass uint8

const (
	notNew newJobClass = iota // a new job lacks it
	shared                    // SHARED: once per create call
	own                       // OWN: for every job
	sparse                    // SPARSE: for a job whose value is not zero
)

// The tables jobFields decides, each in its order: a row's fields and
// their decoders (nil where a Job does not carry the field), and a new
// job's SHARED, OWN and SPARSE fields with their encoders and zeros.
var (
	rowFields, rowDecoders = rowOf(jobFields)

	newJobSharedFields = ofClass(shared, jobField.nameOf)
	newJobOwnFields    = ofClass(own, jobField.nameOf)
	newJobSparseFields = ofClass(sparse, jobField.nameOf)
	newJobShared       = ofClass(shared, jobField.encoder)
	newJobOwn          = ofClass(own, jobField.encoder)
	newJobSparse       = ofClass(sparse, jobField.encoder)
	newJobSparseZero   = ofClass(sparse, jobField.zeroOf)

	// fieldDecoders decode a field by name (a leased job's hash, which
	// lease_job.lua replies as name-value pairs).
	fieldDecoders = decodersByName(jobFields)
)

// A row may be followed by the job's data, its result and its
// dependencies (withData): rowWithData is the HMGET of them all, and
// rowWithDataDecoders decode them by position.
var (
	withData            = []string{"data", "result", "depends_on", "on_dep_fail", "pending"}
	rowWithData         = append(append([]string{}, rowFields...), withData...)
	rowWithDataDecoders = func() []func(*core.Job, any) {
		out := append([]func(*core.Job, any){}, rowDecoders...)
		for _, name := range withData {
			out = append(out, fieldDecoders[name])
		}
		return out
	}()
)

func rowOf(fields []jobField) (names []string, decoders []func(*core.Job, any)) {
	for _, f := range fields {
		if f.row {
			names, decoders = append(names, f.name), append(decoders, f.decode)
		}
	}
	return names, decoders
}

// ofClass lists what of reads of each field a create sends as class, in
// jobFields' order.
func ofClass[T any](class newJobClass, of func(jobField) T) []T {
	var out []T
	for _, f := range jobFields {
		if f.newJob == class {
			out = append(out, of(f))
		}
	}
	return out
}

func (f jobField) nameOf() string               { return f.name }
func (f jobField) encoder() func(*core.Job) any { return f.encode }
func (f jobField) zeroOf() string               { return f.zero }

func decodersByName(fields []jobField) map[string]func(*core.Job, any) {
	out := make(map[string]func(*core.Job, any), len(fields))
	for _, f := range fields {
		if f.decode != nil {
			out[f.name] = f.decode
		}
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

// A backoff is stored as "<type>:<delay ms>", "" for none
// (lua/includes/attempt_failed.lua reads it).
func encodeBackoff(b *core.Backoff) string {
	if b == nil {
		return ""
	}
	return string(b.Type) + ":" + strconv.FormatInt(b.Delay.Milliseconds(), 10)
}

func decodeBackoff(s string) *core.Backoff {
	if s == "" {
		return nil
	}
	t, d, _ := strings.Cut(s, ":")
	delay, _ := strconv.ParseInt(d, 10, 64)
	return &core.Backoff{Type: core.BackoffType(t), Delay: time.Duration(delay) * time.Millisecond}
}

// A retention's limits are stored as "<age ms>:<count>", "" for none
// (lua/clean.lua reads them); true is the roc or rof flag beside it.
func encodeLimit(r core.Retention) string {
	if !r.Limited() {
		return ""
	}
	return strconv.FormatInt(r.Age.Milliseconds(), 10) + ":" + strconv.FormatInt(r.Count, 10)
}

func decodeLimit(r *core.Retention, s string) {
	age, count, _ := strings.Cut(s, ":")
	ms, _ := strconv.ParseInt(age, 10, 64)
	r.Age = core.MsDuration(ms)
	r.Count, _ = strconv.ParseInt(count, 10, 64)
}

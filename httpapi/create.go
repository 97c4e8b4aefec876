package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// jobBody is one job in POST /job, in either of two forms:
//
//   - Kue's: {"type","data","options":{"attempts","priority","delay",
//     "backoff","ttl","removeOnComplete"}};
//   - core.create's flat spec: {"type","data","priority","delay",
//     "max_attempts","backoff","ttl","remove_on_complete","remove_on_fail"}
//     (each retention true, false or {"age","count"}).
//
// unique_key, stall_limit, broadcast, group, depends_on and
// on_dependency_failure (kuebus's own, Kue has none of them) sit at the
// top in both forms.
// Options in both places at once are refused: one of them would be ignored.
type jobBody struct {
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data,omitempty"`
	Options   *kueOptions     `json:"options,omitempty"`
	UniqueKey string          `json:"unique_key,omitempty"`

	Priority         *core.Priority  `json:"priority,omitempty"`
	Delay            *int64          `json:"delay,omitempty"`
	MaxAttempts      *int            `json:"max_attempts,omitempty"`
	Backoff          *core.Backoff   `json:"backoff,omitempty"`
	TTL              *int64          `json:"ttl,omitempty"`
	RemoveOnComplete *core.Retention `json:"remove_on_complete,omitempty"`
	RemoveOnFail     *core.Retention `json:"remove_on_fail,omitempty"`

	// StallLimit is at the top in both forms, as UniqueKey is.
	StallLimit *int `json:"stall_limit,omitempty"`
	// Broadcast too (kuebus's own): the job goes to every listener when
	// due, never to a worker.
	Broadcast bool `json:"broadcast,omitempty"`
	// Group, DependsOn and OnDependencyFailure too: the job's group within
	// its type (docs/policy.md) and the jobs it waits for (protocol §3.42).
	Group               string         `json:"group,omitempty"`
	DependsOn           []int64        `json:"depends_on,omitempty"`
	OnDependencyFailure core.DepPolicy `json:"on_dependency_failure,omitempty"`
}

// kueOptions are Kue's job options, with Kue's names on the wire.
type kueOptions struct {
	MaxAttempts int           `json:"attempts"` // Kue's attempts is a maximum
	Priority    core.Priority `json:"priority"`
	Delay       int64         `json:"delay"` // ms
	// Backoff is true (fixed, waiting Delay) or {"type","delay"}, where a
	// missing delay is Delay, as in Kue.
	Backoff          json.RawMessage `json:"backoff"`
	TTL              int64           `json:"ttl"`              // ms
	RemoveOnComplete core.Retention  `json:"removeOnComplete"` // Kue's bool, or {"age","count"}
}

// spec turns the body into core.create's spec. Values are checked by core,
// which names the field.
func (b *jobBody) spec() (core.Spec, error) {
	sp := core.Spec{Type: b.Type, Data: b.Data, UniqueKey: b.UniqueKey, StallLimit: b.StallLimit, Broadcast: b.Broadcast,
		Group: b.Group, DependsOn: b.DependsOn, OnDependencyFailure: b.OnDependencyFailure}
	flat := b.Priority != nil || b.Delay != nil || b.MaxAttempts != nil || b.Backoff != nil || b.TTL != nil || b.RemoveOnComplete != nil || b.RemoveOnFail != nil
	if b.Options == nil {
		sp.Priority, sp.Delay, sp.MaxAttempts = deref(b.Priority), core.MsDuration(deref(b.Delay)), deref(b.MaxAttempts)
		sp.Backoff, sp.TTL, sp.RemoveOnComplete = b.Backoff, core.MsDuration(deref(b.TTL)), deref(b.RemoveOnComplete)
		sp.RemoveOnFail = deref(b.RemoveOnFail)
		return sp, nil
	}
	if flat {
		return sp, badRequest("options: give the job's options either in \"options\" (Kue's form) or at the top level (core.create's spec), not both")
	}
	o := b.Options
	sp.Priority, sp.MaxAttempts, sp.RemoveOnComplete = o.Priority, o.MaxAttempts, o.RemoveOnComplete
	sp.Delay, sp.TTL = core.MsDuration(o.Delay), core.MsDuration(o.TTL)
	backoff, err := kueBackoff(o.Backoff, o.Delay)
	if err != nil {
		return sp, err
	}
	sp.Backoff = backoff
	return sp, nil
}

// kueBackoff reads Kue's backoff option: true, false, or an object.
func kueBackoff(raw json.RawMessage, delay int64) (*core.Backoff, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "false":
		return nil, nil
	case "true":
		return &core.Backoff{Type: core.BackoffFixed, Delay: core.MsDuration(delay)}, nil
	}
	var obj struct {
		Type  core.BackoffType `json:"type"`
		Delay *int64           `json:"delay"`
	}
	if err := bus.Decode(raw, &obj); err != nil {
		return nil, badRequest(`options.backoff: expected true, false or {"type":"fixed"|"exponential","delay":ms}, got %s (%s)`,
			truncate(string(raw), 60), messageOf(err))
	}
	b := &core.Backoff{Type: obj.Type, Delay: core.MsDuration(delay)}
	if obj.Delay != nil {
		b.Delay = core.MsDuration(*obj.Delay)
	}
	return b, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// createReply is the reply for each new job: Kue's {"message","id"} and the job.
type createReply struct {
	Message string    `json:"message"`
	ID      int64     `json:"id"`
	Job     *core.Job `json:"job"`
}

// createJobs is POST /job: one job (reply: one object) or an array (reply:
// an array, all created or none).
func (s *Server) createJobs(w http.ResponseWriter, r *http.Request) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if err := checkJSONType(r); err != nil {
		return err
	}
	ctx := r.Context()
	if tp := r.Header.Get(bus.HeaderTraceparent); tp != "" {
		// The caller's W3C trace context goes on as the create's header:
		// the jobs keep it (protocol §3.38), or core ignores it when
		// malformed, as for any NATS client.
		ctx = bus.WithHeader(ctx, bus.HeaderTraceparent, tp)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return badRequest(`body: empty: expected a job {"type":...,"data":...} or an array of them`)
	}
	if trimmed[0] != '[' {
		var jb jobBody
		if err := bus.Decode(trimmed, &jb); err != nil {
			return err
		}
		sp, err := jb.spec()
		if err != nil {
			return err
		}
		job, err := s.core.CreateSpec(ctx, sp)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, createReply{Message: "job created", ID: job.ID, Job: job})
		return nil
	}

	var raws []json.RawMessage
	if err := json.Unmarshal(trimmed, &raws); err != nil {
		return bus.Decode(trimmed, &raws) // the same failure, described by field
	}
	if len(raws) == 0 {
		return badRequest("body: an empty array: no jobs given")
	}
	specs := make([]core.Spec, len(raws))
	for i, raw := range raws {
		var jb jobBody
		if err := bus.Decode(raw, &jb); err != nil {
			return badRequest("jobs[%d].%s", i, messageOf(err))
		}
		if specs[i], err = jb.spec(); err != nil {
			return badRequest("jobs[%d].%s", i, messageOf(err))
		}
	}
	jobs, err := s.core.CreateBulk(ctx, specs)
	if err != nil {
		return err
	}
	out := make([]createReply, len(jobs))
	for i := range jobs {
		out[i] = createReply{Message: "job created", ID: jobs[i].ID, Job: &jobs[i]}
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// messageOf is an error's message without its code.
func messageOf(err error) string {
	_, _, msg := statusOf(err)
	return msg
}

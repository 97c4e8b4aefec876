package redisstore

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/kuebus/kuebus/core"
)

// decodeJob turns a job hash into a Job. A missing or empty field is the
// zero value. The lease token is never copied out here: only lease hands it
// to the worker that holds it.
func decodeJob(h map[string]string) core.Job {
	num := func(f string) int64 {
		n, _ := strconv.ParseInt(h[f], 10, 64)
		return n
	}
	j := core.Job{
		ID:               num("id"),
		Type:             h["type"],
		Priority:         core.Priority(num("priority")),
		State:            core.State(h["state"]),
		Delay:            num("delay"),
		MaxAttempts:      int(num("max_attempts")),
		Attempts:         int(num("attempts")),
		TTL:              num("ttl"),
		RemoveOnComplete: h["roc"] == "1",
		UniqueKey:        h["unique_key"],
		Progress:         int(num("progress")),
		Error:            h["error"],
		CreatedAt:        num("created_at"),
		PromoteAt:        num("promote_at"),
		StartedAt:        num("started_at"),
		UpdatedAt:        num("updated_at"),
		FailedAt:         num("failed_at"),
		Duration:         num("duration"),
		WorkerID:         h["worker_id"],
		Stalls:           int(num("stalls")),
		StallLimit:       int(num("stall_limit")),
		LeaseUntil:       num("lease_until"),
	}
	if d := h["data"]; d != "" {
		j.Data = json.RawMessage(d)
	}
	if r := h["result"]; r != "" {
		j.Result = json.RawMessage(r)
	}
	if b := h["backoff"]; b != "" {
		j.Backoff = decodeBackoff(b)
	}
	return j
}

// A backoff is stored as "<type>:<delay>".
func encodeBackoff(b *core.Backoff) string {
	if b == nil {
		return ""
	}
	return string(b.Type) + ":" + strconv.FormatInt(b.Delay, 10)
}

func decodeBackoff(s string) *core.Backoff {
	t, d, _ := strings.Cut(s, ":")
	delay, _ := strconv.ParseInt(d, 10, 64)
	return &core.Backoff{Type: core.BackoffType(t), Delay: delay}
}

// readyID is the job id in a ready member "<seq>:<id>".
func readyID(member string) int64 {
	_, id, _ := strings.Cut(member, ":")
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

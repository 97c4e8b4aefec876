package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/core"
)

// The delay-queue style for clients that cannot speak NATS: POST /pop leases
// a job, and the lease token it carries finishes it with POST
// /job/{id}/complete|fail, extends it with touch or gives it back with
// release. A stale token gets 409 and changes nothing.

// popWorkerDefault is the worker name a pop without ?worker= leases as.
const popWorkerDefault = "http"

// pop is POST /pop?type=T[&type=U...][&ttl=ms][&wait=ms][&worker=NAME]:
// lease one job of the types, by priority then first in first out, for ttl
// ms (default: the job's own ttl; touch extends by the same). 200 with the
// job (its "lease" field is the token), or 204 when none is ready within
// wait (default 0: answer at once).
func (s *Server) pop(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for name := range q {
		switch name {
		case "type", "wait", "worker", "ttl":
		default:
			return badRequest("%s: unknown parameter (pop takes type, ttl, wait and worker)", name)
		}
	}
	var types []string
	for _, v := range q["type"] {
		types = append(types, strings.Split(v, ",")...)
	}
	if len(types) == 0 {
		return badRequest("type: missing: POST /pop?type=T (several: type=T,U)")
	}
	var wait time.Duration
	if raw := q.Get("wait"); raw != "" {
		ms, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || ms < 0 {
			return badRequest("wait: %q is not a number of milliseconds", raw)
		}
		// Compared in ms before the conversion, which would overflow.
		if ms > s.cfg.MaxPopWait.Milliseconds() {
			return badRequest("wait: %d ms is over the limit of %d ms", ms, s.cfg.MaxPopWait.Milliseconds())
		}
		wait = time.Duration(ms) * time.Millisecond
	}
	var ttl int64
	if raw := q.Get("ttl"); raw != "" {
		ms, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || ms <= 0 {
			return badRequest("ttl: %q is not a positive number of milliseconds", raw)
		}
		ttl = ms
	}
	worker := q.Get("worker")
	if worker == "" {
		worker = popWorkerDefault
	}
	req := core.LeaseRequest{Types: types, Max: 1, Worker: worker, Wait: wait.Milliseconds(), TTL: ttl}

	// The lease must not be cut short by a client that hangs up: core may
	// already have leased the job. Run it to its end, then give the job back
	// at once if nobody is left to take it, rather than let it sit active
	// until its ttl runs out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), wait+s.cfg.CallTimeout)
	defer cancel()
	jobs, err := s.core.Lease(ctx, req)
	if err != nil {
		return err
	}
	if len(jobs) == 0 {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	job := &jobs[0]
	if r.Context().Err() != nil {
		op := core.LeaseOp{ID: job.ID, Lease: job.Lease, Type: job.Type}
		if err := s.core.Release(ctx, op); err != nil {
			s.log.WarnContext(ctx, "pop: client gone, job not released; it returns when its lease runs out", "job_id", job.ID, "err", err)
		}
		return nil
	}
	writeJSON(w, http.StatusOK, job)
	return nil
}

// leaseBody is the body of complete, fail, touch, release, rejoin and
// progress. Fields a route does not take are refused, by core, with their
// name.
type leaseBody struct {
	Lease    string          `json:"lease"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Final    bool            `json:"final,omitempty"`
	Stack    string          `json:"stack,omitempty"`
	Delay    *int64          `json:"delay,omitempty"`
	Complete *int64          `json:"complete,omitempty"`
	Total    *int64          `json:"total,omitempty"`
}

// holderCall is the core call of one lease holder's route, and the reply
// the route answers with: core's own.
type holderCall func(ctx context.Context, op core.LeaseOp) (reply any, err error)

// The lease holder's routes: complete, release, rejoin and progress answer
// {}, fail the job (retried or failed), touch {"lease_until":ms}.

func (s *Server) complete(ctx context.Context, op core.LeaseOp) (any, error) {
	return core.Empty{}, s.core.Complete(ctx, op)
}

func (s *Server) fail(ctx context.Context, op core.LeaseOp) (any, error) {
	return s.core.Fail(ctx, op)
}

func (s *Server) touch(ctx context.Context, op core.LeaseOp) (any, error) {
	until, err := s.core.Touch(ctx, op)
	if err != nil {
		return nil, err
	}
	return core.TouchReply{LeaseUntil: until.UnixMilli()}, nil
}

func (s *Server) release(ctx context.Context, op core.LeaseOp) (any, error) {
	return core.Empty{}, s.core.Release(ctx, op)
}

func (s *Server) rejoin(ctx context.Context, op core.LeaseOp) (any, error) {
	return core.Empty{}, s.core.Rejoin(ctx, op)
}

func (s *Server) progress(ctx context.Context, op core.LeaseOp) (any, error) {
	return core.Empty{}, s.core.Progress(ctx, op)
}

// leaseOp serves POST /job/{id}/complete|fail|touch|release|rejoin|progress
// with call.
func (s *Server) leaseOp(call holderCall) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		var body leaseBody
		if err := s.decodeBody(w, r, &body); err != nil {
			return err
		}
		if body.Lease == "" {
			return badRequest(`lease: missing: send {"lease":"<the token from POST /pop>"}`)
		}
		op := core.LeaseOp{ID: id, Lease: body.Lease, Result: body.Result, Error: body.Error, Final: body.Final,
			Stack: body.Stack, Delay: body.Delay, Complete: body.Complete, Total: body.Total}
		reply, err := call(r.Context(), op)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, reply)
		return nil
	}
}

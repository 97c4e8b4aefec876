package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// The RPC methods of docs/protocol.md §3 that are not the worker's: each checks its
// input, calls the store once, and publishes what changed.

func (s *Service) register() error {
	return errors.Join(
		handle(s, bus.MethodCreate, s.create),
		handle(s, bus.MethodCreateBulk, s.createBulk),
		handle(s, bus.MethodGet, s.get),
		handle(s, bus.MethodExists, s.exists),
		handle(s, bus.MethodRemove, s.remove),
		handle(s, bus.MethodLog, s.logLines),
		handle(s, bus.MethodAddLog, s.addLog),
		handle(s, bus.MethodRange, s.rangeJobs),
		handle(s, bus.MethodCount, s.count),
		handle(s, bus.MethodTypes, s.types),
		handle(s, bus.MethodIDs, s.ids),
		handle(s, bus.MethodStats, s.stats),
		handle(s, bus.MethodSetState, s.setState),
		handle(s, bus.MethodSetPriority, s.setPriority),
		handle(s, bus.MethodPromote, s.promote),
		handle(s, bus.MethodPause, s.pause),
		handle(s, bus.MethodResume, s.resume),
		handle(s, bus.MethodCancel, s.cancel),
		handle(s, bus.MethodBulk, s.bulk),
		handle(s, bus.MethodClean, s.clean),
		handle(s, bus.MethodSearch, s.search),
		handle(s, bus.MethodHistory, s.historyOf),
		handle(s, bus.MethodFailedErrors, s.failedErrors),
		handle(s, bus.MethodHeartbeat, s.heartbeat),
		handle(s, bus.MethodWorkers, s.workers),
		handle(s, bus.MethodCreateFlow, s.createFlow),
		handle(s, bus.MethodDependencies, s.dependencies),
		handle(s, bus.MethodDependents, s.dependents),
	)
}

// handle serves one method on core.<method>, and reports on queue.error
// the failures that are core's, not the caller's (reportError).
func handle[Req, Resp any](s *Service, method string, fn func(context.Context, *Req) (*Resp, error)) error {
	return bus.Handle(s.server, method, s.subj.Core(method), func(ctx context.Context, req *Req) (*Resp, error) {
		resp, err := fn(ctx, req)
		if err != nil {
			s.errs.report(method, err)
		}
		return resp, err
	})
}

func checkID(id int64) error {
	if id <= 0 {
		return core.Invalidf("id", "%d is not a job id (a positive integer)", id)
	}
	return nil
}

// checkState accepts a state name, or "" when optional is true.
func checkState(st core.State, optional bool) error {
	if st == "" && optional {
		return nil
	}
	if _, err := core.ParseState(string(st)); err != nil {
		return core.Invalidf("state", "%v", err)
	}
	return nil
}

func checkType(t string) error {
	if t == "" {
		return nil
	}
	if err := bus.ValidToken(t); err != nil {
		return core.Invalidf("type", "%q is not a job type: %v", t, err)
	}
	return nil
}

func (s *Service) create(ctx context.Context, sp *core.Spec) (*core.Job, error) {
	if err := s.withTypeDefaults(ctx, sp); err != nil {
		return nil, err
	}
	if err := sp.Normalize(s.cfg.MaxDataBytes); err != nil {
		return nil, err
	}
	s.withNodeDefaults(sp)
	specs := []core.Spec{*sp}
	withHeaderTrace(ctx, specs)
	jobs, existing, err := s.createJobs(ctx, specs)
	if err != nil {
		return nil, err
	}
	s.announceCreated(jobs, existing)
	return &jobs[0], nil
}

// checkBulk normalizes every spec of a create_bulk.
func (s *Service) checkBulk(req *core.BulkRequest) error {
	if len(req.Jobs) == 0 {
		return core.Invalidf("jobs", "no jobs given")
	}
	if len(req.Jobs) > s.cfg.MaxBulk {
		return core.Invalidf("jobs", "%d jobs is over the limit of %d per call", len(req.Jobs), s.cfg.MaxBulk)
	}
	for i := range req.Jobs {
		if err := req.Jobs[i].Normalize(s.cfg.MaxDataBytes); err != nil {
			// Name the job too: "jobs[3].type: ...".
			return bus.Errorf(bus.CodeInvalid, "jobs[%d].%s", i, bus.MessageOf(err))
		}
		s.withNodeDefaults(&req.Jobs[i])
	}
	return nil
}

func (s *Service) createBulk(ctx context.Context, req *core.BulkRequest) (*core.BulkReply, error) {
	if len(req.Jobs) <= s.cfg.MaxBulk { // else checkBulk refuses it, reading no policy
		for i := range req.Jobs {
			if err := s.withTypeDefaults(ctx, &req.Jobs[i]); err != nil {
				return nil, err
			}
		}
	}
	if err := s.checkBulk(req); err != nil {
		return nil, err
	}
	withHeaderTrace(ctx, req.Jobs)
	jobs, existing, err := s.createJobs(ctx, req.Jobs)
	if err != nil {
		return nil, err
	}
	s.announceCreated(jobs, existing)
	if req.IDsOnly {
		ids := make([]int64, len(jobs))
		for i := range jobs {
			ids[i] = jobs[i].ID
		}
		return &core.BulkReply{IDs: ids}, nil
	}
	// The reply leaves out the data the caller just sent, so that it can
	// never outgrow the request and fail after the jobs are stored.
	for i := range jobs {
		jobs[i].Data = nil
	}
	return &core.BulkReply{Jobs: jobs}, nil
}

// checkGet checks a get request: an id, or a type and a unique key.
func checkGet(req *core.GetRequest) error {
	byKey := req.Type != "" || req.UniqueKey != ""
	switch {
	case req.ID != 0 && byKey:
		return core.Invalidf("id", "give an id, or a type and a unique_key, not both")
	case !byKey:
		return checkID(req.ID)
	case req.Type == "":
		return core.Invalidf("type", "missing: a unique_key is looked up in its job type")
	case req.UniqueKey == "":
		return core.Invalidf("unique_key", "missing: give it with the type")
	case len(req.UniqueKey) > core.MaxUniqueKeyLen:
		return core.Invalidf("unique_key", "%d bytes is longer than %d", len(req.UniqueKey), core.MaxUniqueKeyLen)
	}
	return checkType(req.Type)
}

func (s *Service) get(ctx context.Context, req *core.GetRequest) (*core.Job, error) {
	if err := checkGet(req); err != nil {
		return nil, err
	}
	if req.ID == 0 {
		return s.store.GetByKey(ctx, req.Type, req.UniqueKey)
	}
	return s.store.Get(ctx, req.ID)
}

func (s *Service) exists(ctx context.Context, req *core.IDRequest) (*core.ExistsReply, error) {
	if err := checkID(req.ID); err != nil {
		return nil, err
	}
	_, err := s.store.Get(ctx, req.ID)
	if bus.CodeOf(err) == bus.CodeNotFound {
		return &core.ExistsReply{Exists: false}, nil
	}
	if err != nil {
		return nil, err
	}
	return &core.ExistsReply{Exists: true}, nil
}

// remove answers the job as it was, as its remove event carries it.
func (s *Service) remove(ctx context.Context, req *core.IDRequest) (*core.Job, error) {
	if err := checkID(req.ID); err != nil {
		return nil, err
	}
	job, err := s.store.Remove(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	s.publish(bus.EventRemove, job, nil)
	return job.ForEvent(), nil
}

func (s *Service) logLines(ctx context.Context, req *core.IDRequest) (*core.LogReply, error) {
	if err := checkID(req.ID); err != nil {
		return nil, err
	}
	entries, err := s.store.Log(ctx, req.ID)
	if err != nil {
		return nil, err
	}
	reply := &core.LogReply{Lines: make([]string, len(entries)), Entries: entries}
	for i, e := range entries {
		reply.Lines[i] = e.Line
	}
	return reply, nil
}

// checkAddLog checks an add_log request. The line needs no UTF-8 check:
// the JSON decoder has already made it valid UTF-8 (invalid bytes and lone
// surrogates become U+FFFD).
func (s *Service) checkAddLog(req *core.AddLogRequest) error {
	if err := checkID(req.ID); err != nil {
		return err
	}
	if len(req.Line) > s.cfg.MaxLogLineBytes {
		return core.Invalidf("line", "%d bytes is over the limit of %d", len(req.Line), s.cfg.MaxLogLineBytes)
	}
	return nil
}

func (s *Service) addLog(ctx context.Context, req *core.AddLogRequest) (*core.Empty, error) {
	if err := s.checkAddLog(req); err != nil {
		return nil, err
	}
	job, err := s.store.AddLog(ctx, s.now(), req.ID, req.Line)
	if err != nil {
		return nil, err
	}
	s.publish(bus.EventLog, job, func(ev *core.Event) { ev.Line = req.Line })
	return &core.Empty{}, nil
}

// checkRange checks a range request. The size test is written as a
// difference of two non-negative numbers, To-From, which cannot overflow,
// where To-From+1 can (to = MaxInt64 made it wrap and pass).
func checkRange(req *core.RangeRequest) error {
	if err := checkState(req.State, true); err != nil {
		return err
	}
	if err := checkType(req.Type); err != nil {
		return err
	}
	if req.Order != "" && req.Order != core.OrderAsc && req.Order != core.OrderDesc {
		return core.Invalidf("order", "%q is not asc or desc", req.Order)
	}
	if req.ByCursor() {
		return checkRangeCursor(req)
	}
	switch {
	case req.From < 0:
		return core.Invalidf("from", "%d is negative", req.From)
	case req.To < req.From:
		return core.Invalidf("to", "%d is before from (%d)", req.To, req.From)
	case req.To-req.From >= core.MaxRangeSize:
		// uint64: To-From+1 is at most MaxInt64+1.
		return core.Invalidf("to", "%d..%d is %d jobs, over the limit of %d per call", req.From, req.To, uint64(req.To-req.From)+1, core.MaxRangeSize)
	case req.Type == "" && req.To >= core.MaxUntypedPosition:
		// Every type's index would be read up to To and merged: refuse
		// rather than cost memory in proportion to the offset.
		field := "to"
		if req.From >= core.MaxUntypedPosition {
			field = "from"
		}
		return core.Invalidf(field, "%d..%d of every type is past position %d, the deepest a range of every type reads by position; page with cursor (send each reply's cursor back, with limit), or give a type", req.From, req.To, core.MaxUntypedPosition-1)
	}
	return nil
}

// checkRangeCursor checks a range by cursor: a limit within bounds, a
// cursor of the state's index, and no positions.
func checkRangeCursor(req *core.RangeRequest) error {
	field := "limit"
	if req.Cursor != "" {
		field = "cursor"
	}
	switch {
	case req.Limit < 0 || req.Limit > core.MaxRangeSize:
		return core.Invalidf("limit", "%d is outside 0..%d (0 means %d)", req.Limit, core.MaxRangeSize, core.RangeLimitDefault)
	case req.From != 0 || req.To != 0:
		return core.Invalidf(field, "a page by cursor takes no from or to (got %d..%d): give from..to, or a cursor and a limit", req.From, req.To)
	}
	if req.Cursor != "" {
		if _, err := core.ParseRangeCursor(req.Cursor, req.State); err != nil {
			return err
		}
	}
	return nil
}

// rangeParams turns a checked range request into the Store's arguments.
func rangeParams(req *core.RangeRequest) *RangeParams {
	p := &RangeParams{State: req.State, Type: req.Type, Desc: req.Order == core.OrderDesc, From: req.From, To: req.To}
	if req.ByCursor() {
		p.Limit = cmp.Or(req.Limit, core.RangeLimitDefault)
		if req.Cursor != "" {
			after, _ := core.ParseRangeCursor(req.Cursor, req.State) // checked
			p.After = &after
		}
	}
	return p
}

// rangeJobs answers a range: the page's jobs that fit one message, the
// cursor after the last of them while there may be more, and the cursor
// of the first when the page did not start at the beginning.
func (s *Service) rangeJobs(ctx context.Context, req *core.RangeRequest) (*core.JobsReply, error) {
	if err := checkRange(req); err != nil {
		return nil, err
	}
	p := rangeParams(req)
	page, err := s.store.Range(ctx, p)
	if err != nil {
		return nil, err
	}
	reply := &core.JobsReply{Jobs: fitJobs(page.Jobs, int(s.nc.MaxPayload())-replyHeadroom)}
	n := len(reply.Jobs)
	cut := n < len(page.Jobs)
	if cut && !req.ByCursor() {
		reply.Next = req.From + int64(n)
	}
	if n > 0 && (cut || page.More) {
		reply.Cursor = page.Places[n-1].String()
	}
	if n > 0 && (p.After != nil || (!req.ByCursor() && req.From > 0)) {
		reply.Back = page.Places[0].String()
	}
	return reply, nil
}

// fitJobs keeps the leading jobs whose JSON fits in limit bytes, so that a
// range of large jobs is answered in part rather than refused whole. The
// first job is always kept: alone it fits unless the server's max payload
// is below a job's size limits.
func fitJobs(jobs []core.Job, limit int) []core.Job {
	size := 0
	for i := range jobs {
		b, err := json.Marshal(&jobs[i]) // exact: escaping can grow a string sixfold
		if err != nil {
			return jobs // the reply's own encoding reports it
		}
		if size += len(b) + 1; size > limit && i > 0 {
			return jobs[:i]
		}
	}
	return jobs
}

func checkCount(req *core.CountRequest) error {
	if err := checkState(req.State, true); err != nil {
		return err
	}
	return checkType(req.Type)
}

func (s *Service) count(ctx context.Context, req *core.CountRequest) (*core.CountReply, error) {
	if err := checkCount(req); err != nil {
		return nil, err
	}
	n, err := s.store.Count(ctx, req.State, req.Type)
	if err != nil {
		return nil, err
	}
	return &core.CountReply{Count: n}, nil
}

func (s *Service) types(ctx context.Context, _ *core.Empty) (*core.TypesReply, error) {
	types, err := s.store.Types(ctx)
	if err != nil {
		return nil, err
	}
	paused, err := s.store.Paused(ctx, types)
	if err != nil {
		return nil, err
	}
	return &core.TypesReply{Types: types, Paused: paused}, nil
}

// checkIDs checks an ids request and returns its cursor and page size.
func checkIDs(req *core.IDsRequest) (core.IDsCursor, int, error) {
	if err := checkState(req.State, false); err != nil {
		return core.IDsCursor{}, 0, err
	}
	if req.Limit < 0 || req.Limit > core.MaxIDsLimit {
		return core.IDsCursor{}, 0, core.Invalidf("limit", "%d is outside 0..%d (0 means %d)", req.Limit, core.MaxIDsLimit, core.IDsLimitDefault)
	}
	from, err := core.ParseIDsCursor(req.Cursor)
	if err != nil {
		return core.IDsCursor{}, 0, err
	}
	return from, cmp.Or(req.Limit, core.IDsLimitDefault), nil
}

// idBytes bounds the JSON of one id in a reply: 19 digits and a comma.
const idBytes = 20

func (s *Service) ids(ctx context.Context, req *core.IDsRequest) (*core.IDsReply, error) {
	from, limit, err := checkIDs(req)
	if err != nil {
		return nil, err
	}
	// A page always fits one message, whatever the server's max payload:
	// a state of any size is read in pages, never refused whole.
	limit = max(1, min(limit, (int(s.nc.MaxPayload())-replyHeadroom)/idBytes))
	ids, next, err := s.store.IDs(ctx, req.State, from, limit)
	if err != nil {
		return nil, err
	}
	reply := &core.IDsReply{IDs: ids}
	if next != nil {
		reply.Cursor = next.String()
	}
	return reply, nil
}

// replyHeadroom is room in a reply for everything but its list (headers,
// field names, a cursor).
const replyHeadroom = 8 << 10

// stats answers with the counts of every type, or, when some types' Redis
// failed (a Cluster master down): with a partial request, the counts of
// the others and the failed ones in type_errors; without, unavailable
// naming the failed types. Either way the failure goes to queue.error.
func (s *Service) stats(ctx context.Context, req *core.StatsRequest) (*core.Stats, error) {
	st, err := s.store.Stats(ctx)
	if st != nil {
		s.addRetention(st)
	}
	var te *TypesError
	if err != nil && !errors.As(err, &te) {
		return nil, err
	}
	if te != nil {
		if !req.Partial {
			return nil, te.Unwrap() // handle reports it
		}
		s.errs.report(bus.MethodStats, err)
		st.TypeErrors = te.Wire()
	}
	if err := s.addLimits(ctx, st); err != nil && !req.Partial {
		return nil, err
	}
	return st, nil
}

// stateEvents says which event a move by hand into a state publishes.
var stateEvents = map[core.State]string{
	core.StateInactive: bus.EventEnqueue,
	core.StateDelayed:  bus.EventEnqueue,
	core.StateActive:   bus.EventStart,
	core.StateComplete: bus.EventComplete,
	core.StateFailed:   bus.EventFailed,
}

func checkSetState(req *core.SetStateRequest) error {
	if err := checkID(req.ID); err != nil {
		return err
	}
	if req.State == core.StateCancelled {
		// cancel also tells the job's worker; a move by hand would not.
		return core.Invalidf("state", "a job is cancelled by cancel, not set_state")
	}
	if req.State == core.StateWaiting {
		// waiting is what depends_on makes: a job moved there by hand
		// would wait for nothing
		return core.Invalidf("state", "a job waits by its depends_on, not set_state")
	}
	return checkState(req.State, false)
}

func (s *Service) setState(ctx context.Context, req *core.SetStateRequest) (*core.Job, error) {
	if err := checkSetState(req); err != nil {
		return nil, err
	}
	job, changed, err := s.store.SetState(ctx, s.now(), req.ID, req.State)
	if err != nil {
		return nil, err
	}
	if changed {
		s.publish(stateEvents[req.State], job, func(ev *core.Event) {
			if req.State == core.StateFailed {
				ev.Error, ev.Attempts = job.Error, job.Attempts
			}
		})
		if job.State == core.StateDelayed { // a broadcast job sent to inactive is due at once instead
			s.announceDue(job.PromoteAt)
		}
	}
	return job, nil
}

// checkSetPriority checks a set_priority request; the priority's range
// was checked as it was decoded (Priority.UnmarshalJSON).
func checkSetPriority(req *core.SetPriorityRequest) error {
	if err := checkID(req.ID); err != nil {
		return err
	}
	if req.Priority == nil {
		return core.Invalidf("priority", "missing")
	}
	return nil
}

func (s *Service) setPriority(ctx context.Context, req *core.SetPriorityRequest) (*core.Job, error) {
	if err := checkSetPriority(req); err != nil {
		return nil, err
	}
	job, err := s.store.SetPriority(ctx, s.now(), req.ID, *req.Priority)
	if err != nil {
		return nil, err
	}
	p := job.Priority
	s.publish(bus.EventPriority, job, func(ev *core.Event) { ev.Priority = &p })
	return job, nil
}

func checkLimit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, core.Invalidf("limit", "%d is negative", limit)
	case limit > core.MaxMoveLimit:
		return 0, core.Invalidf("limit", "%d is over %d", limit, core.MaxMoveLimit)
	case limit == 0:
		return core.MoveLimitDefault, nil
	}
	return limit, nil
}

func (s *Service) promote(ctx context.Context, req *core.LimitRequest) (*core.MoveReply, error) {
	limit, err := checkLimit(req.Limit)
	if err != nil {
		return nil, err
	}
	now := s.dueNow()
	moved, next, err := s.store.Promote(ctx, now, limit)
	promoted := false
	for i := range moved {
		if moved[i].Broadcast {
			promoted = true
		} else {
			s.publish(bus.EventPromotion, &moved[i], nil)
		}
	}
	// The broadcasts this promote completed, and any a core took before
	// and did not say it sent (broadcast.go), go out now; the promoter
	// wakes again for one whose claim runs out.
	if bnext := s.broadcast(ctx, now, limit, promoted); bnext > 0 && (next == 0 || bnext < next) {
		next = bnext
	}
	s.sweepHandOvers(ctx, now)
	return s.moveReply(bus.MethodPromote, moved, next, err)
}

// moveReply is promote's and rescue's reply. When the store skipped some
// types (their Redis failed, a Cluster master down) and swept the others,
// the call succeeds with what moved, the others' next due time and the
// skipped types in type_errors, and the failure is reported on queue.error
// and in core's log: the promoter goes on promoting the healthy types on
// time, and tries the failed ones again on its next call. A call that
// swept no type fails.
func (s *Service) moveReply(method string, moved []core.Job, next int64, err error) (*core.MoveReply, error) {
	var te *TypesError
	switch {
	case errors.As(err, &te):
		s.errs.report(method, err)
		s.log.Warn(method+" skipped job types whose Redis failed", "types", te.Types(), "moved", len(moved), "err", err)
		return &core.MoveReply{Moved: len(moved), NextDue: next, TypeErrors: te.Wire()}, nil
	case err != nil:
		return nil, fmt.Errorf("core: %s after %d moved: %w", method, len(moved), err)
	}
	return &core.MoveReply{Moved: len(moved), NextDue: next}, nil
}

// announceCreated publishes enqueue for every job that was stored (not for a
// unique-key duplicate, which changed nothing), and queue.due once with the
// earliest due time among the delayed ones.
func (s *Service) announceCreated(jobs []core.Job, existing []bool) {
	var earliest int64
	for i := range jobs {
		if existing[i] {
			continue
		}
		event := bus.EventEnqueue
		if jobs[i].State == core.StateWaiting {
			event = bus.EventWaiting
		}
		s.publish(event, &jobs[i], func(ev *core.Event) { ev.New = true })
		if jobs[i].State == core.StateDelayed && (earliest == 0 || jobs[i].PromoteAt < earliest) {
			earliest = jobs[i].PromoteAt
		}
	}
	if earliest > 0 {
		s.announceDue(earliest)
	}
}

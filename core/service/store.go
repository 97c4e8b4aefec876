package service

import (
	"context"
	"encoding/json"

	"github.com/kuebus/kuebus/core"
)

// Store is the queue's persistence: every read and every state change core
// makes. A method with more than four arguments takes them in a Params
// struct by name (LeaseParams, SearchParams, CleanParams, FireParams). It is the one wide interface in core, on purpose: core/redisstore is
// its implementation and the only package that imports go-redis, and this
// interface is what keeps go-redis out of everything that imports core (the
// worker, the CLI, outside producers).
//
// A Store trusts its input: the Service has validated and normalized it.
// Errors are *bus.Error with a code (not_found, unavailable, internal, ...).
// Lease, Promote, Rescue and Stats, which work over several job types,
// return a *TypesError beside their result when some types failed (their
// Redis Cluster master down) and the others were served.
type Store interface {
	// Heartbeat notes a worker's heartbeat as heard at now, or forgets it
	// when it is gone (workers.go).
	Heartbeat(ctx context.Context, now int64, hb *core.Heartbeat) error
	// Workers lists the workers heard from since `since` (unix ms).
	Workers(ctx context.Context, since int64) ([]core.WorkerInfo, error)
	// AddHistory adds one core's counts of a type to its per-minute and
	// per-hour history (history.go); a Waiting of -1 is no sample.
	AddHistory(ctx context.Context, jobType string, counts []core.MinuteCounts) error
	// History sums the steps from..to (unix minutes or hours by step, 60000
	// or 3600000 ms, inclusive) of types, one entry per step, oldest first,
	// with Waits (WaitP95 is left to the caller).
	History(ctx context.Context, types []string, step, from, to int64) ([]core.MinuteCounts, error)
	// Create stores jobs. For each spec it returns the stored job and whether
	// it is an existing unfinished job that has the spec's unique key (then
	// nothing was stored for the spec).
	Create(ctx context.Context, now int64, specs []core.Spec) ([]core.Job, []bool, error)
	// Get reads a job, its data, result and error history included.
	Get(ctx context.Context, id int64) (*core.Job, error)
	// GetByKey reads, as Get does, the unfinished job of jobType that
	// has uniqueKey; not_found when none does.
	GetByKey(ctx context.Context, jobType, uniqueKey string) (*core.Job, error)
	// Remove deletes a job, its log and its error history, returning what
	// it was.
	Remove(ctx context.Context, id int64) (*core.Job, error)
	// Log reads a job's log, oldest first, each line with its time (0 for
	// a line stored before lines had times).
	Log(ctx context.Context, id int64) ([]core.LogEntry, error)
	// AddLog appends a line to a job's log, stamped now, keeping its last
	// lines; it returns the job, not_found when there is none.
	AddLog(ctx context.Context, now, id int64, line string) (*core.Job, error)
	// Range reads a page of a state's index (of one type, or of every
	// type merged), by position or after a place, as p says.
	Range(ctx context.Context, p *RangeParams) (*RangePage, error)
	// Count counts the jobs of a state, of jobType ("" for every type).
	Count(ctx context.Context, state core.State, jobType string) (int64, error)
	// Types lists every job type the store has seen, sorted.
	Types(ctx context.Context) ([]string, error)
	// IDs returns up to limit ids of a state from a cursor on, and the
	// cursor to go on from (nil when the listing is done).
	IDs(ctx context.Context, state core.State, from core.IDsCursor, limit int) (ids []int64, next *core.IDsCursor, err error)
	// Stats counts the jobs of every state, in all and per type, with each
	// type's work time.
	Stats(ctx context.Context) (*core.Stats, error)
	// Search looks for jobs as p says. Jobs come without data.
	Search(ctx context.Context, p *SearchParams) (*SearchPage, error)
	// SetState moves a job by hand; changed is false when it was already there.
	SetState(ctx context.Context, now, id int64, state core.State) (job *core.Job, changed bool, err error)
	// SetPriority changes a job's priority (an inactive job moves in
	// ready); it returns the job, not_found when there is none.
	SetPriority(ctx context.Context, now, id int64, p core.Priority) (*core.Job, error)
	// Promote moves up to limit delayed jobs whose time has come to inactive,
	// returning them and the next due time (0 when none waits).
	Promote(ctx context.Context, now int64, limit int) (moved []core.Job, nextDue int64, err error)
	// TakeBroadcasts claims, until `until`, up to limit broadcast jobs
	// that a promote completed and no core has published yet (or whose
	// earlier claim ran out), returning them with their data and the
	// earliest time another waits (0: none).
	TakeBroadcasts(ctx context.Context, now, until int64, limit int) (jobs []core.Job, next int64, err error)
	// BroadcastsSent ends the broadcasts of jobs once they are published.
	BroadcastsSent(ctx context.Context, jobs []core.Job) error
	// Pause pauses (paused true) or resumes a job type; changed is false
	// when it was so already. A type paused before it has jobs is listed
	// by Types from then on.
	Pause(ctx context.Context, jobType string, paused bool) (changed bool, err error)
	// Paused returns those of types that are paused, in their order.
	Paused(ctx context.Context, types []string) ([]string, error)
	// SetType stores a type's policy (checked), replacing the one it had;
	// a policy that sets nothing removes it.
	SetType(ctx context.Context, p *core.TypePolicy) error
	// TypePolicy reads a type's policy: nil when it has none.
	TypePolicy(ctx context.Context, jobType string) (*core.TypePolicy, error)
	// TypePolicies reads the policy of every type that has one, sorted
	// by type.
	TypePolicies(ctx context.Context) ([]core.TypePolicy, error)
	// Holding reads what may hold an inactive job back at now, its type's
	// rate window being per ms (0: no rate) and its group rate's
	// groupPer ms (0: none): for explain. A job of ID 0 asks for the
	// type's numbers alone (Ahead -1).
	Holding(ctx context.Context, job *core.Job, now, per, groupPer int64) (*Holding, error)
	// Cancel moves a delayed, inactive or active job to cancelled and drops
	// its lease; changed is false, and the job as it is, when it had
	// finished already.
	Cancel(ctx context.Context, now, id int64) (job *core.Job, changed bool, err error)
	// Bulk applies q's action to the jobs of q's state that pass its
	// filters, looking at no more than q.Limit jobs.
	Bulk(ctx context.Context, now int64, q *BulkQuery) (*BulkResult, error)
	// Clean removes finished jobs as p says: how many it removed, and more
	// when it stopped short having removed some.
	Clean(ctx context.Context, p *CleanParams) (removed int, more bool, err error)
	// RescoreJobs gives a bounded batch of jobs of jobType that an
	// earlier version indexed by id their place in creation order (the
	// order of range over every state): how many moved, and more when a
	// call at once may move more.
	RescoreJobs(ctx context.Context, jobType string) (moved int, more bool, err error)
	// FailedErrors groups the error of the newest limit failed jobs of
	// jobType (core.FailedErrorsRequest), the groups in the order their
	// newest job failed.
	FailedErrors(ctx context.Context, jobType string, limit int) (*core.FailedErrorsReply, error)
	// Ping says whether the store answers: nil, or unavailable.
	Ping(ctx context.Context) error
	LeaseStore
	ScheduleStore
	DepsStore
}

// LeaseStore is the part of the Store a worker's requests use.
type LeaseStore interface {
	// Lease hands ready jobs to a worker as p says, best priority first
	// across the types. A paused type hands out none; paused lists those
	// of p.Types the store found paused. It is called for many requests at
	// once, and never hands one job to two of them.
	Lease(ctx context.Context, p *LeaseParams) (leased []core.Job, paused []string, err error)
	// Apply runs operations of one kind by lease holders; results are in the
	// order of ops. Each op is already validated.
	Apply(ctx context.Context, now int64, op core.Op, ops []StoreOp) ([]Applied, error)
	// Rescue takes back active jobs whose lease ran out, at most limit; next
	// is the next expiry. A job within its stall limit (its own, or
	// stallLimit for a job stored without one) goes back to inactive; past
	// it, the stall is a failed attempt. Each moved job carries the limit it
	// was judged by, so Stalls > StallLimit tells a failed attempt.
	Rescue(ctx context.Context, now int64, limit, stallLimit int) (moved []core.Job, next int64, err error)
	// ExpireSilent ends now the leases of the active jobs of workers not
	// heard from for core.WorkerSilentAfter (docs/protocol.md §3.37), once per
	// silence, so that the Rescue after it takes them back as stalls. It
	// returns how many leases it ended, and when the first live worker
	// turns silent if it is not heard from again (0: none is live).
	ExpireSilent(ctx context.Context, now int64) (ended int, next int64, err error)
}

// LeaseParams are a Lease's arguments.
type LeaseParams struct {
	Now    int64    // unix ms
	Types  []string // the job types to lease from
	Max    int      // how many jobs at most, >= 1
	Worker string   // the worker's id, "" for none
	Token  string   // the lease token the jobs are handed out under
	TTL    int64    // ms each lease lasts; 0: each job's own ttl
	// OnLimited, when not nil, hears of each type whose policy (its
	// concurrency or rate, DESIGN §10.1) held the lease back: until is
	// when its rate allows the next start (unix ms), 0 when only a job
	// leaving active makes room.
	OnLimited func(jobType string, until int64)
}

// NoteLimited calls OnLimited, if any.
func (p *LeaseParams) NoteLimited(jobType string, until int64) {
	if p.OnLimited != nil {
		p.OnLimited(jobType, until)
	}
}

// Holding is what may hold an inactive job back, as the store read it.
type Holding struct {
	Paused      bool  // its type is paused
	Active      int64 // the type's active jobs
	Starts      int64 // the type's starts in its rate's window
	OldestStart int64 // the oldest of them (unix ms), 0 when none
	Ahead       int64 // ready jobs of the type ranked before it; -1: not in ready
	Parked      int64 // the type's inactive jobs parked by their group's limit
	// For a job of a group: the group's active jobs that hold a slot of
	// its group_concurrency, its starts in its group_rate's window and
	// the oldest of them (unix ms, 0 when none), and whether the job is
	// parked: out of ready while its group is at its limit.
	GroupActive      int64
	GroupStarts      int64
	GroupOldestStart int64
	GroupParked      bool
}

// SearchParams are a Search's arguments: it looks at no more than Budget
// jobs, type by type (sorted) and in creation order within a type, after
// From (the start when zero), for jobs of Type and State (each "" for
// any) whose id, unique key or data contains Query, and stops at Limit
// matches.
type SearchParams struct {
	Query string // "" for any
	// Error and ErrorGroup: "" for any; as BulkQuery's.
	Error      string
	ErrorGroup string
	Type       string
	State      core.State
	From       core.SearchCursor
	Limit      int
	Budget     int
}

// SearchPage is what a Search found: the jobs, each job's place (Places[i]
// is Jobs[i]'s, where a search cut after it goes on), and Next, where to
// go on after the last job looked at, nil when all was looked at.
type SearchPage struct {
	Jobs   []core.Job
	Places []core.SearchCursor
	Next   *core.SearchCursor
}

// RangeParams are a Range's arguments: the jobs of State and Type (each
// "" for any) in the state's order, reversed when Desc. With Limit 0 the
// page is positions From..To; with Limit > 0 it is the Limit jobs after
// After (from the start when nil), and From and To are unused.
type RangeParams struct {
	State    core.State
	Type     string
	Desc     bool
	From, To int64
	After    *core.RangeCursor
	Limit    int
}

// RangePage is what a Range read: the jobs, the place of each (Places[i]
// is Jobs[i]'s), and More, set when the index may hold jobs after the
// last (the page was read whole). A job removed between the reads of the
// index and of the jobs is left out.
type RangePage struct {
	Jobs   []core.Job
	Places []core.RangeCursor
	More   bool
}

// CleanParams are a Clean's arguments: it removes up to Limit finished
// jobs of Type in State (complete, failed or cancelled) that their own
// retention (none for cancelled), or else Rule (the type's default, zero
// or {age, count}), no longer keeps, at Now.
type CleanParams struct {
	Now   int64 // unix ms
	Type  string
	State core.State
	Rule  core.Retention
	Limit int
}

// StoreOp is one lease holder's operation as the Store runs it: a
// core.LeaseOp the Service has checked, with the arguments of its kind of
// operation by name. Fields another kind uses are left zero.
type StoreOp struct {
	ID    int64
	Lease string // the token the holder shows
	// Type is the job's type when the holder said it (a worker does); ""
	// makes the Store look it up. A wrong type reads as not found.
	Type   string
	Result json.RawMessage // complete: the handler's result, nil for none
	Error  string          // fail: the handler's error
	Final  bool            // fail: no attempt remains, whatever max_attempts says
	Stack  string          // fail: the handler's stack, "" for none
	// Delay is rejoin's ms until the job is due again (nil: 0), and fail's
	// ms before the retry while attempts remain (nil: the job's backoff).
	Delay   *int64
	Percent int64 // progress: 0..100
	// Bare, for complete only, says that nobody would receive the
	// operation's event (service.Config.Listening): the Store may then
	// answer with a Job of ID, Type, State and Progress alone, sparing
	// Redis and core the job's other fields, which only the event carries.
	// The Service decides it (Service.batch) and publishes accordingly
	// (announceComplete), in worker_methods.go.
	Bare bool
}

// Applied is what a Store reports for one lease operation.
type Applied struct {
	Job *core.Job // after the operation; nil when it failed
	// Err is nil, or a coded error: not_found, conflict (the lease is not
	// the job's current one).
	Err error
	// Removed is set when the job was deleted as it completed or failed for
	// good (remove_on_complete or remove_on_fail true).
	Removed bool
	// Repeated is set when this very operation had been applied before with
	// the same lease (a retried acknowledgement): it succeeds and nothing
	// changed. Its event is published again, marked repeated: the first
	// attempt may have been applied by a script that ran on after core had
	// given up waiting for Redis, and then nobody published it.
	Repeated bool
	// Settled are the jobs that left waiting because of this operation
	// (a complete released them, a failure for good ended them by their
	// rule; DepsStore), for the Service to publish after the operation's
	// own event.
	Settled []core.Job
}

// BulkQuery is a checked bulk request.
type BulkQuery struct {
	Action core.BulkAction
	State  core.State
	Type   string // "" for every type, in name order
	Error  string // "" for any
	// ErrorGroup: "" for any, else the error's group must be it.
	ErrorGroup string
	Before     int64 // 0 for any
	Limit      int   // jobs looked at, at most; 1..core.BulkLimitMax
	From       core.IDsCursor
}

// BulkResult is what a bulk call did.
type BulkResult struct {
	Matched int        // jobs in the state that passed the filters
	Jobs    []core.Job // those the action was applied to, after (remove: before)
	Next    *core.IDsCursor
}

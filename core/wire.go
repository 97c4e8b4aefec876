package core

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/kuebus/kuebus/bus"
)

// The request and reply bodies of core's RPC methods (docs/protocol.md §3). Field names
// are the wire names; docs/protocol.md shows each with an example.

// IDRequest names one job: get, exists, remove, log.
type IDRequest struct {
	ID int64 `json:"id"`
}

// GetRequest is get's request: a job by its id, or by its type and unique
// key (the unfinished job holding the key), never both.
type GetRequest struct {
	ID        int64  `json:"id,omitempty"`
	Type      string `json:"type,omitempty"`
	UniqueKey string `json:"unique_key,omitempty"`
}

// BulkRequest is create_bulk's request.
type BulkRequest struct {
	Jobs []Spec `json:"jobs"`
	// IDsOnly asks for the jobs' ids alone (BulkReply.IDs) instead of the
	// jobs: a producer that only needs to know its jobs are stored, and
	// under which ids, spares core encoding each job and itself decoding
	// it (River's InsertManyFast, BullMQ's addBulk building its jobs
	// client-side). docs/protocol.md §3.2.
	IDsOnly bool `json:"ids_only,omitempty"`
}

// BulkReply is create_bulk's reply: the jobs, each without data, or with
// ids_only their ids, in request order (a duplicate's is the id of the job
// holding its unique key).
type BulkReply struct {
	Jobs []Job   `json:"jobs,omitempty"`
	IDs  []int64 `json:"ids,omitempty"`
}

// JobsReply carries jobs: range, lease.
type JobsReply struct {
	Jobs []Job `json:"jobs"`
	// Next is set by a range whose jobs did not all fit one NATS message:
	// the position to ask from for the rest (the reply holds the jobs from
	// From up to Next-1).
	Next int64 `json:"next,omitempty"`
	// Cursor, on a range's reply, is the place of its last job: send it
	// back as RangeRequest.Cursor to read the jobs after it. It is set while
	// there may be more (the page was full, or cut to fit one message).
	Cursor string `json:"cursor,omitempty"`
	// Back, on a range's reply, is the place of its first job: sent as
	// RangeRequest.Cursor with the other Order, it reads the jobs before
	// it, nearest first. It is set when the reply holds jobs and did not
	// start at the beginning.
	Back string `json:"back,omitempty"`
	// Until, on a lease's reply that holds no job, is when the rate of a
	// type asked for (DESIGN §10.1) allows its next start (unix ms): a
	// lease before then finds that type held back. Left out otherwise.
	Until int64 `json:"until,omitempty"`
}

// ExistsReply is exists' reply.
type ExistsReply struct {
	Exists bool `json:"exists"`
}

// Empty is the reply of methods that return nothing: {}.
type Empty struct{}

// AddLogRequest is add_log's request.
type AddLogRequest struct {
	ID   int64  `json:"id"`
	Line string `json:"line"`
}

// LogReply is log's reply: the job's log lines, oldest first, as Kue's
// lines and as entries with their times.
type LogReply struct {
	Lines   []string   `json:"lines"`
	Entries []LogEntry `json:"entries"`
}

// LogEntry is one line of a job's log and when it was added (unix ms). At
// is left out for a line stored before lines had times.
type LogEntry struct {
	At   int64  `json:"at,omitempty"`
	Line string `json:"line"`
}

// Order is the direction of a range: asc (the default) or desc.
type Order string

// The orders of a range.
const (
	OrderAsc  Order = "asc"
	OrderDesc Order = "desc"
)

// RangeRequest selects jobs by state and type, both optional, and pages
// through them in one of two ways: by position, From..To (inclusive,
// 0-based), or by cursor, the Limit jobs after Cursor (from the start when
// Cursor is ""). A request with a Cursor or a Limit pages by cursor, and
// then leaves From and To out. The order is the state's own (see
// docs/protocol.md): inactive by queue position, delayed by due time,
// active by lease expiry, complete and failed by finish time, and all
// states by id.
//
// A range of every type (no Type) reads each type's index up to the page
// and merges them, so by position it reaches no deeper than
// MaxUntypedPosition; past it, page by cursor, which costs the same at any
// depth. A range of one type reaches any position.
type RangeRequest struct {
	State State  `json:"state,omitempty"`
	Type  string `json:"type,omitempty"`
	From  int64  `json:"from"`
	To    int64  `json:"to"`
	Order Order  `json:"order,omitempty"`
	// Cursor is a reply's Cursor (or Back, with the other Order): the page
	// starts after the job it names. "" with a Limit starts at the
	// beginning.
	Cursor string `json:"cursor,omitempty"`
	// Limit is how many jobs a page by cursor holds: default
	// RangeLimitDefault, at most MaxRangeSize.
	Limit int `json:"limit,omitempty"`
}

// The bounds of a range.
const (
	// MaxRangeSize bounds the jobs one range returns.
	MaxRangeSize = 1000
	// RangeLimitDefault is the jobs of a page by cursor without a Limit.
	RangeLimitDefault = 20
	// MaxUntypedPosition bounds the positions a range of every type reads
	// by position: To is below it. Such a page reads To+1 entries of each
	// type's index at most, whatever the offset asked.
	MaxUntypedPosition = 1000
)

// ByCursor tells whether a range pages by cursor rather than by position.
func (r *RangeRequest) ByCursor() bool { return r.Cursor != "" || r.Limit != 0 }

// CountRequest counts jobs by state and type, both optional.
type CountRequest struct {
	State State  `json:"state,omitempty"`
	Type  string `json:"type,omitempty"`
}

// CountReply is count's reply.
type CountReply struct {
	Count int64 `json:"count"`
}

// TypesReply is types' reply: every job type ever created (or paused),
// sorted, and those of them that are paused.
type TypesReply struct {
	Types []string `json:"types"`
	// Paused lists the paused types, sorted; left out when none is.
	Paused []string `json:"paused,omitempty"`
}

// PauseRequest is pause's and resume's request: the job type.
type PauseRequest struct {
	Type string `json:"type"`
}

// PauseReply is pause's and resume's reply: the type, and whether it is
// paused now.
type PauseReply struct {
	Type   string `json:"type"`
	Paused bool   `json:"paused"`
}

// IDsRequest is ids' request: one page of the ids of a state. A listing
// starts with no cursor and goes on with the cursor of each reply until a
// reply has none.
type IDsRequest struct {
	State State `json:"state"`
	// Cursor is the cursor of the previous reply; "" starts at the beginning.
	Cursor string `json:"cursor,omitempty"`
	// Limit bounds the ids of this page: default IDsLimitDefault, at most
	// MaxIDsLimit. Core may answer fewer, to fit one NATS message.
	Limit int `json:"limit,omitempty"`
}

// The page sizes of ids.
const (
	IDsLimitDefault = 1000
	MaxIDsLimit     = 10_000
)

// IDsReply is one page of ids: type by type (types sorted by name), each
// type's ids in the state's order. Cursor is set while there may be more.
type IDsReply struct {
	IDs    []int64 `json:"ids"`
	Cursor string  `json:"cursor,omitempty"`
}

// IDsCursor is where a listing of ids goes on: a job type and a position in
// that type's index of the state. On the wire it is "<type>:<position>"
// (a type never holds a colon).
type IDsCursor struct {
	Type     string
	Position int64
}

func (c IDsCursor) String() string {
	if c.Type == "" {
		return ""
	}
	return c.Type + ":" + strconv.FormatInt(c.Position, 10)
}

// ParseIDsCursor reads a cursor that ids sent; "" is the beginning.
func ParseIDsCursor(s string) (IDsCursor, error) {
	if s == "" {
		return IDsCursor{}, nil
	}
	t, pos, ok := strings.Cut(s, ":")
	if !ok {
		return IDsCursor{}, Invalidf("cursor", "%q is not a cursor from an ids reply", s)
	}
	if err := bus.ValidToken(t); err != nil {
		return IDsCursor{}, Invalidf("cursor", "%q is not a cursor from an ids reply: %v", s, err)
	}
	n, err := strconv.ParseInt(pos, 10, 64)
	if err != nil || n < 0 {
		return IDsCursor{}, Invalidf("cursor", "%q is not a cursor from an ids reply", s)
	}
	return IDsCursor{Type: t, Position: n}, nil
}

// StateCounts counts jobs per state.
type StateCounts struct {
	Delayed  int64 `json:"delayed"`
	Inactive int64 `json:"inactive"`
	Active   int64 `json:"active"`
	Complete int64 `json:"complete"`
	Failed   int64 `json:"failed"`
	// Cancelled is appended last, as every field added in issue 13.
	Cancelled int64 `json:"cancelled"`
	// Waiting: jobs waiting for their dependencies (issue 26).
	Waiting int64 `json:"waiting"`
}

// Add adds n to the count of state s.
func (c *StateCounts) Add(s State, n int64) {
	switch s {
	case StateDelayed:
		c.Delayed += n
	case StateInactive:
		c.Inactive += n
	case StateActive:
		c.Active += n
	case StateComplete:
		c.Complete += n
	case StateFailed:
		c.Failed += n
	case StateCancelled:
		c.Cancelled += n
	case StateWaiting:
		c.Waiting += n
	}
}

// Get returns the count of state s.
func (c StateCounts) Get(s State) int64 {
	switch s {
	case StateDelayed:
		return c.Delayed
	case StateInactive:
		return c.Inactive
	case StateActive:
		return c.Active
	case StateComplete:
		return c.Complete
	case StateFailed:
		return c.Failed
	case StateCancelled:
		return c.Cancelled
	case StateWaiting:
		return c.Waiting
	}
	return 0
}

// Stats is stats' reply: counts per state, the same per type, the total
// time spent in handlers of completed jobs (ms), and the paused types.
type Stats struct {
	StateCounts
	WorkTime int64                  `json:"work_time"`
	Types    map[string]StateCounts `json:"types"`
	// Paused lists the paused types, sorted, as types does; left out when
	// none is.
	Paused []string `json:"paused,omitempty"`
	// ReadySince gives, per type with jobs waiting, the promote_at (unix
	// ms) of the job at the head of its queue, the next to run: how long
	// the line has stood still (kuebus_queue_oldest_job_age_seconds).
	// Left out when no job waits.
	ReadySince map[string]int64 `json:"ready_since,omitempty"`
	// Limits gives, per type with a concurrency or a rate (DESIGN §10.1),
	// those limits and how many of its inactive jobs they hold back now
	// (policy.go). Left out when no type has one.
	Limits map[string]TypeLimits `json:"limits,omitempty"`
	// TypeErrors lists, in a reply to a partial stats request, the types
	// whose counts could not be read (the Redis Cluster master that holds
	// them failed), sorted by type. Those types are absent from Types,
	// Paused and ReadySince, and the totals leave them out. Left out when
	// every type was read; a stats request that is not partial fails whole
	// instead.
	TypeErrors []TypeError `json:"type_errors,omitempty"`
	// Retention gives, per type of Types that has one, the default
	// retention of its finished jobs (a node's config: the type's own
	// entry, else "*"'s), which the cleaner applies to the jobs without
	// a retention of their own: what the dashboard shows as the rule that
	// applies. Left out when no type has one.
	Retention map[string]TypeRetention `json:"retention,omitempty"`
}

// StatsRequest is stats' request. The empty request ({}) is the one older
// clients send.
type StatsRequest struct {
	// Partial asks for the counts of the types that could be read when
	// others could not (a Redis Cluster master down), with the others
	// listed in the reply's type_errors. Without it such a stats request
	// fails whole with unavailable, naming the types: never a total that
	// silently leaves a type out.
	Partial bool `json:"partial,omitempty"`
}

// TypeError is one job type that a call over several types could not
// serve, while it served the others: the Redis (Cluster master) that holds
// the type failed.
type TypeError struct {
	Type  string `json:"type"`
	Code  string `json:"code"`  // a bus code: unavailable or internal
	Error string `json:"error"` // what failed, for a person
}

// SetStateRequest is set_state's request.
type SetStateRequest struct {
	ID    int64 `json:"id"`
	State State `json:"state"`
}

// SetPriorityRequest is set_priority's request.
type SetPriorityRequest struct {
	ID       int64     `json:"id"`
	Priority *Priority `json:"priority"`
}

// LimitRequest is promote's and rescue's request: how many jobs to move at
// most in this call (default 1000).
type LimitRequest struct {
	Limit int `json:"limit,omitempty"`
}

// MoveLimitDefault is promote's and rescue's limit when none is given.
const MoveLimitDefault = 1000

// MoveReply is promote's and rescue's reply: how many jobs moved, and when
// the next one falls due (unix ms; 0 when none is waiting).
type MoveReply struct {
	Moved   int   `json:"moved"`
	NextDue int64 `json:"next_due"`
	// TypeErrors lists the types this call could not look at, sorted by
	// type: the Redis Cluster master that holds them failed. Moved and
	// NextDue count the other types only. Left out when every type was
	// looked at.
	TypeErrors []TypeError `json:"type_errors,omitempty"`
}

// Event is the body of every job and queue event.
type Event struct {
	Event    string          `json:"event"`
	ID       int64           `json:"id,omitempty"`
	Type     string          `json:"type,omitempty"`
	At       int64           `json:"at"`
	Job      *Job            `json:"job,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Attempts int             `json:"attempts,omitempty"`
	Progress *int            `json:"progress,omitempty"`
	Line     string          `json:"line,omitempty"`
	// New marks the enqueue event of a job just created, as against one
	// that is back in the queue (a re-run by hand, a released lease).
	New bool `json:"new,omitempty"`
	// Repeated marks an event published again for a retried acknowledgement
	// (complete, fail, release, rejoin sent twice with one lease): the first
	// may or may not have been published, so a consumer that counts
	// should count a job's event once by id.
	Repeated bool `json:"repeated,omitempty"`
	// DueAt is queue.due's: the earliest due time among the jobs just
	// delayed. Leader is queue.leader's: the new leader's name.
	DueAt  int64  `json:"due_at,omitempty"`
	Leader string `json:"leader,omitempty"`
	// State and Removed are queue.cleaned's: the finished state (complete
	// or failed) of the type's jobs that the cleaner removed, and how many.
	State   State `json:"state,omitempty"`
	Removed int   `json:"removed,omitempty"`
	// Reason is job.cancel's: why the job was cancelled, as the request
	// gave it ("" for none).
	Reason string `json:"reason,omitempty"`
	// Priority is job.priority's: the job's new priority.
	Priority *Priority `json:"priority,omitempty"`
	// Code, Method and Suppressed are queue.error's: the error's code
	// (unavailable, internal), the method that met it, and how many errors
	// of that code were not published since the last queue.error of it.
	Code       string `json:"code,omitempty"`
	Method     string `json:"method,omitempty"`
	Suppressed int    `json:"suppressed,omitempty"`
	// Seq is the event's sequence in the durable event stream, set by
	// Client.Replay only (not on the wire): resume after it with FromSeq =
	// Seq+1.
	Seq uint64 `json:"-"`
}

// CancelRequest is cancel's request: the job, and why (optional, shown in
// the job.cancel event).
type CancelRequest struct {
	ID     int64  `json:"id"`
	Reason string `json:"reason,omitempty"`
}

// MaxMoveLimit bounds promote's and rescue's limit.
const MaxMoveLimit = 100_000

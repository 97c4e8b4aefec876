package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/batch"
)

// ClientOptions configures a Client. The zero value is fine.
type ClientOptions struct {
	// Prefix is the subject prefix of the deployment. Default: none.
	Prefix string
	// Timeout bounds calls whose context has no deadline. Default 10s.
	Timeout time.Duration
	// OnCall, when set, is called after every call to core with the
	// method's name (bus.Method*), how long the call took and its error (nil
	// on success): a metrics hook. It must not block.
	OnCall func(method string, took time.Duration, err error)
	// Middleware wraps every call the client makes to core, the first
	// outermost: tracing, logging, retries or rate limits of the caller's
	// own. It sees each call with its caller's context, creates too: the
	// creates of concurrent goroutines, which the client joins into one
	// create_bulk message (create.go), pass through it one by one, as
	// create, before they are joined (OnCall counts the messages). Headers
	// a middleware puts in the context (bus.WithHeader) go with the
	// message; a batched create keeps its context's traceparent as its
	// spec's trace. Default: none.
	Middleware []CallMiddleware
}

// CallFunc is one call to core: the method (bus.Method*), its request, and
// where its reply goes (nil: none wanted).
type CallFunc func(ctx context.Context, method string, req, reply any) error

// CallMiddleware wraps the calls of a Client: it gets the next CallFunc
// and returns one that calls it (or not) around work of its own.
type CallMiddleware func(next CallFunc) CallFunc

// Client is the Go API to a kuebus queue, over NATS only: create jobs, read
// and change them, and listen to their events. It is safe for concurrent use.
//
// Kue's queue.create(type, data).priority('high').save() is
//
//	job, err := client.Create(ctx, "email", data, &core.CreateOpts{Priority: core.PriorityHigh})
//
// and Kue's queue.on('job complete', fn) is
//
//	sub, err := client.Subscribe(client.Subjects().JobEventsOf("complete", ""), fn)
type Client struct {
	rpc     *bus.Client
	nc      *nats.Conn
	subj    bus.Subjects
	onCall  func(method string, took time.Duration, err error)
	creates *batch.Joiner[Spec, createOutcome] // create.go
	send    CallFunc                           // send, wrapped in the options' middleware
}

// NewClient returns a client on an open NATS connection (see bus.Connect;
// on a locked server, bus.Auth's options give the user's credentials and
// inbox prefix, which must be under opts.Prefix).
func NewClient(nc *nats.Conn, opts *ClientOptions) (*Client, error) {
	if opts == nil {
		opts = &ClientOptions{}
	}
	subj, err := bus.NewSubjects(opts.Prefix)
	if err != nil {
		return nil, err
	}
	c := &Client{rpc: bus.NewClient(nc, opts.Timeout), nc: nc, subj: subj, onCall: opts.OnCall}
	c.send = c.sendCall
	for i := len(opts.Middleware) - 1; i >= 0; i-- {
		c.send = opts.Middleware[i](c.send)
	}
	c.creates = c.newCreateBatcher(createSenders, c.sendCreates)
	return c, nil
}

// Close refuses further creates and returns once the creates handed over
// are sent. Optional: an idle client runs no goroutine.
// The NATS connection stays open: it is the caller's.
func (c *Client) Close() { c.creates.Stop() }

// Subjects returns the subject builder of the client's deployment, to build
// patterns for Subscribe.
func (c *Client) Subjects() bus.Subjects { return c.subj }

// call sends a core method's request and decodes its reply (nil: none
// wanted); every typed method is built on it. Its errors name the method
// and keep the sentinel of their code for errors.Is.
func (c *Client) call(ctx context.Context, method string, req, reply any) error {
	return c.send(ctx, method, req, reply)
}

// sendCall is the innermost CallFunc: a create joins the batch of
// concurrent creates (create.go), every other call is sent at once.
func (c *Client) sendCall(ctx context.Context, method string, req, reply any) error {
	if sp, ok := req.(Spec); ok && method == bus.MethodCreate && sp.UniqueKey == "" {
		return c.createBatched(ctx, sp, reply)
	}
	return c.sendNow(ctx, method, req, reply)
}

// sendNow sends one request over NATS, timed for OnCall.
func (c *Client) sendNow(ctx context.Context, method string, req, reply any) error {
	start := time.Now()
	body, err := encodeRequest(req)
	if err == nil {
		err = c.rpc.CallRaw(ctx, c.subj.Core(method), body, reply)
	}
	if err != nil {
		err = fmt.Errorf("core.%s: %w", method, err)
	}
	if c.onCall != nil {
		c.onCall(method, time.Since(start), err)
	}
	return err
}

// encodeRequest is a request's body: a create's and a create_bulk's
// written by their own code (wirefast.go), every other by bus.Encode.
func encodeRequest(req any) ([]byte, error) {
	switch r := req.(type) {
	case Spec:
		return r.appendJSON(nil)
	case BulkRequest:
		return r.appendJSON(make([]byte, 0, 64*len(r.Jobs)))
	}
	return bus.Encode(req)
}

// CreateOpts are the optional fields of a new job. Durations are rounded
// down to milliseconds on the wire.
type CreateOpts struct {
	Priority         Priority
	Delay            time.Duration
	MaxAttempts      int      // default 1
	Backoff          *Backoff // nil: retry at once
	TTL              time.Duration
	RemoveOnComplete Retention // zero: the type's default (none: kept)
	UniqueKey        string
	StallLimit       *int      // nil: the core's configured limit (1)
	RemoveOnFail     Retention // zero: the type's default (none: kept)
	// Broadcast sends the job to every SubscribeBroadcast listener of its
	// type when due, instead of to one worker (Spec.Broadcast).
	Broadcast bool
	Group     string // "": none (Spec.Group)
	// DependsOn: the jobs this one waits for (deps.go); it is created
	// waiting unless all of them are complete.
	DependsOn           []int64
	OnDependencyFailure DepPolicy // "": fail
}

// Spec turns a type, data and options into the spec sent on the wire. data
// is marshalled as JSON unless it is already a json.RawMessage.
func (o *CreateOpts) Spec(jobType string, data any) (Spec, error) {
	raw, ok := data.(json.RawMessage)
	if !ok && data != nil {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return Spec{}, fmt.Errorf("core: job data: %w", err)
		}
	}
	sp := Spec{Type: jobType, Data: raw}
	if o != nil {
		sp.Priority, sp.MaxAttempts, sp.Backoff = o.Priority, o.MaxAttempts, o.Backoff
		sp.Delay, sp.TTL = o.Delay, o.TTL
		sp.RemoveOnComplete, sp.UniqueKey = o.RemoveOnComplete, o.UniqueKey
		sp.StallLimit, sp.RemoveOnFail = o.StallLimit, o.RemoveOnFail
		sp.Broadcast = o.Broadcast
		sp.Group = o.Group
		sp.DependsOn, sp.OnDependencyFailure = o.DependsOn, o.OnDependencyFailure
	}
	return sp, nil
}

// Create creates a job. With a UniqueKey held by an unfinished job, it
// returns that job instead.
func (c *Client) Create(ctx context.Context, jobType string, data any, opts *CreateOpts) (*Job, error) {
	sp, err := opts.Spec(jobType, data)
	if err != nil {
		return nil, err
	}
	return c.CreateSpec(ctx, sp)
}

// CreateSpec creates a job from a wire spec. Creates of concurrent
// goroutines share one message to core (create.go), but for a create with
// a unique key, which may answer with another job, data and all. ctx
// bounds the wait for the answer; the message itself is bounded by the
// client's Timeout, so a create whose ctx ended may still be stored, as
// with any call that timed out.
func (c *Client) CreateSpec(ctx context.Context, sp Spec) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodCreate, sp, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// CreateBulk creates many jobs in one call, all or none.
func (c *Client) CreateBulk(ctx context.Context, specs []Spec) ([]Job, error) {
	reply := BulkReply{Jobs: make([]Job, 0, len(specs))} // filled, not grown (Lease)
	return reply.Jobs, c.call(ctx, bus.MethodCreateBulk, BulkRequest{Jobs: specs}, &reply)
}

// CreateBulkIDs creates jobs as CreateBulk does, all or none per type, and
// returns only their ids, in the order of specs (a duplicate's is the id of
// the job holding its unique key). It is the bulk create for throughput:
// core encodes no job and the caller decodes none, about half of what a
// bulk of small jobs costs both sides besides Redis (docs/benchmarks-log.md,
// issue 12 step 6).
func (c *Client) CreateBulkIDs(ctx context.Context, specs []Spec) ([]int64, error) {
	var reply BulkReply
	if err := c.call(ctx, bus.MethodCreateBulk, BulkRequest{Jobs: specs, IDsOnly: true}, &reply); err != nil {
		return nil, err
	}
	if len(reply.IDs) != len(specs) {
		return nil, bus.Errorf(bus.CodeInternal, "create_bulk: %d ids for %d jobs", len(reply.IDs), len(specs))
	}
	return reply.IDs, nil
}

// Get reads a job.
func (c *Client) Get(ctx context.Context, id int64) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodGet, IDRequest{ID: id}, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// GetByKey reads the unfinished job of jobType that holds uniqueKey, as
// Get does; ErrNotFound when none does (a finished job gave its key up:
// Search finds it).
func (c *Client) GetByKey(ctx context.Context, jobType, uniqueKey string) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodGet, GetRequest{Type: jobType, UniqueKey: uniqueKey}, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// Exists reports whether a job exists.
func (c *Client) Exists(ctx context.Context, id int64) (bool, error) {
	var reply ExistsReply
	return reply.Exists, c.call(ctx, bus.MethodExists, IDRequest{ID: id}, &reply)
}

// Remove removes a job, its log and its error history, and returns the
// job as it was (without data).
func (c *Client) Remove(ctx context.Context, id int64) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodRemove, IDRequest{ID: id}, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// Log reads a job's log lines, oldest first.
func (c *Client) Log(ctx context.Context, id int64) ([]string, error) {
	var reply LogReply
	return reply.Lines, c.call(ctx, bus.MethodLog, IDRequest{ID: id}, &reply)
}

// Search returns one page of the jobs whose id, unique key or data
// contains req.Q (see SearchRequest). Go on with the reply's Cursor until
// it is "": a page may hold fewer jobs than the limit, none even, while
// jobs remain to look at.
func (c *Client) Search(ctx context.Context, req SearchRequest) (*SearchReply, error) {
	var reply SearchReply
	if err := c.call(ctx, bus.MethodSearch, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// LogEntries reads a job's log lines with their times, oldest first.
func (c *Client) LogEntries(ctx context.Context, id int64) ([]LogEntry, error) {
	var reply LogReply
	return reply.Entries, c.call(ctx, bus.MethodLog, IDRequest{ID: id}, &reply)
}

// AddLog appends a line to a job's log.
func (c *Client) AddLog(ctx context.Context, id int64, line string) error {
	return c.call(ctx, bus.MethodAddLog, AddLogRequest{ID: id, Line: line}, nil)
}

// Range pages through jobs by state and type. Jobs too large to fit one
// message together come back in part: ask again from From+len(jobs), or use
// RangePage, whose reply says where to go on.
func (c *Client) Range(ctx context.Context, req RangeRequest) ([]Job, error) {
	reply, err := c.RangePage(ctx, req)
	if err != nil {
		return nil, err
	}
	return reply.Jobs, nil
}

// RangePage is Range with the whole reply: Next is set when the jobs were
// cut to fit one message, Cursor while there may be more jobs after the
// page, Back when there are jobs before it. To page at any depth (a range
// of every type reads by position only below MaxUntypedPosition), start
// with a Limit and no Cursor, then send each reply's Cursor back until it
// is "".
func (c *Client) RangePage(ctx context.Context, req RangeRequest) (*JobsReply, error) {
	var reply JobsReply
	if err := c.call(ctx, bus.MethodRange, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// Count counts jobs by state and type ("" for any).
func (c *Client) Count(ctx context.Context, state State, jobType string) (int64, error) {
	var reply CountReply
	return reply.Count, c.call(ctx, bus.MethodCount, CountRequest{State: state, Type: jobType}, &reply)
}

// Types lists the job types.
func (c *Client) Types(ctx context.Context) ([]string, error) {
	var reply TypesReply
	return reply.Types, c.call(ctx, bus.MethodTypes, Empty{}, &reply)
}

// IDs lists the ids of every job in a state, reading page after page (see
// IDsPage); for a state of millions of jobs, page through IDsPage instead.
func (c *Client) IDs(ctx context.Context, state State) ([]int64, error) {
	ids := []int64{}
	req := IDsRequest{State: state, Limit: MaxIDsLimit}
	for {
		page, err := c.IDsPage(ctx, req)
		if err != nil {
			return nil, err
		}
		ids = append(ids, page.IDs...)
		if page.Cursor == "" {
			return ids, nil
		}
		req.Cursor = page.Cursor
	}
}

// IDsPage reads one page of the ids of a state: start with no cursor and
// go on with each reply's cursor until it is "".
func (c *Client) IDsPage(ctx context.Context, req IDsRequest) (*IDsReply, error) {
	var reply IDsReply
	if err := c.call(ctx, bus.MethodIDs, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// Stats counts jobs per state and type. When some types cannot be read
// (the Redis Cluster master that holds them is down) it fails with
// unavailable, naming them; StatsPartial answers with the others.
func (c *Client) Stats(ctx context.Context) (*Stats, error) {
	var st Stats
	if err := c.call(ctx, bus.MethodStats, Empty{}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// StatsPartial is Stats that, when some types cannot be read, answers with
// the counts of the others and lists those in TypeErrors (the totals leave
// them out). A core older than the partial request answers invalid.
func (c *Client) StatsPartial(ctx context.Context) (*Stats, error) {
	var st Stats
	if err := c.call(ctx, bus.MethodStats, StatsRequest{Partial: true}, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// SetState moves a job by hand: a failed job set to inactive runs again.
func (c *Client) SetState(ctx context.Context, id int64, state State) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodSetState, SetStateRequest{ID: id, State: state}, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// Cancel ends a job that has not finished: it is cancelled, and never
// leased again. A running job's worker cancels its handler's context
// (cause worker.ErrCancelled); its later acknowledgement changes nothing.
// A job finished already (complete, failed, cancelled) is ErrConflict and
// stays as it is; reason ("" for none) goes with the job.cancel event.
func (c *Client) Cancel(ctx context.Context, id int64, reason string) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodCancel, CancelRequest{ID: id, Reason: reason}, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// SetPriority changes a job's priority.
func (c *Client) SetPriority(ctx context.Context, id int64, p Priority) (*Job, error) {
	var job Job
	if err := c.call(ctx, bus.MethodSetPriority, SetPriorityRequest{ID: id, Priority: &p}, &job); err != nil {
		return nil, err
	}
	return &job, nil
}

// Promote moves due delayed jobs to inactive: the promoter's call.
func (c *Client) Promote(ctx context.Context, limit int) (*MoveReply, error) {
	var reply MoveReply
	if err := c.call(ctx, bus.MethodPromote, LimitRequest{Limit: limit}, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// Pause pauses a job type: its jobs stay and new ones are taken, but none
// is leased until Resume. Pausing a paused type changes nothing. Core
// publishes queue.pause when the type was not paused.
func (c *Client) Pause(ctx context.Context, jobType string) error {
	return c.call(ctx, bus.MethodPause, PauseRequest{Type: jobType}, nil)
}

// Resume lets a paused type's jobs be leased again; waiting leases of the
// type wake at once. Resuming a type that is not paused changes nothing.
// Core publishes queue.resume when the type was paused.
func (c *Client) Resume(ctx context.Context, jobType string) error {
	return c.call(ctx, bus.MethodResume, PauseRequest{Type: jobType}, nil)
}

// Subscribe calls fn with every event on subject, a pattern from Subjects()
// (JobEvents, JobEventsOf, AllJobEvents, Queue...). fn runs on the
// subscription's goroutine, one event at a time. Bodies that do not decode
// are skipped. When Subscribe returns, the server knows the subscription:
// every event published after that reaches fn. Events are at most once: a
// listener that must not miss a change reads the job after subscribing.
func (c *Client) Subscribe(subject string, fn func(*Event)) (*nats.Subscription, error) {
	sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) {
		var ev Event
		if bus.DecodeReply(m.Data, &ev) == nil {
			fn(&ev)
		}
	})
	if err == nil {
		err = c.nc.Flush()
	}
	if err != nil {
		return nil, fmt.Errorf("core: subscribe %s: %w", subject, err)
	}
	return sub, nil
}

// Await waits until a job is complete or failed and returns it as it is
// then. It subscribes to the job's events before it reads the job, so a job
// that completes or fails meanwhile is not missed.
func (c *Client) Await(ctx context.Context, id int64) (*Job, error) {
	changed := make(chan struct{}, 1)
	sub, err := c.Subscribe(c.subj.JobEvents(id), func(*Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = sub.Unsubscribe() }()
	for {
		job, err := c.Get(ctx, id)
		if err != nil || job.State.Finished() {
			return job, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("core: await job %d: %w", id, ctx.Err())
		}
	}
}

// Bulk applies an action to the jobs of a state that pass the filters, at
// most req.Limit per call: call again with the reply's cursor while More.
// BulkAll does that loop.
func (c *Client) Bulk(ctx context.Context, req BulkActionRequest) (*BulkActionReply, error) {
	var reply BulkActionReply
	if err := c.call(ctx, bus.MethodBulk, req, &reply); err != nil {
		return nil, err
	}
	return &reply, nil
}

// BulkAll calls Bulk until no more jobs match, each call going on from the
// last one's cursor, and returns the totals (More false). each, when not
// nil, sees every reply as it comes.
func (c *Client) BulkAll(ctx context.Context, req BulkActionRequest, each func(*BulkActionReply)) (*BulkActionReply, error) {
	var total BulkActionReply
	for {
		r, err := c.Bulk(ctx, req)
		if err != nil {
			return &total, err
		}
		if each != nil {
			each(r)
		}
		total.Matched += r.Matched
		total.Done += r.Done
		if !r.More {
			return &total, nil
		}
		req.Cursor = r.Cursor
	}
}

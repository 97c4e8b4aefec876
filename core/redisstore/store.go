package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// Config configures a Store.
type Config struct {
	// Client is the Redis connection: standalone, Sentinel (failover) or
	// Cluster. Required; the Store does not close it.
	Client redis.UniversalClient
	// Prefix starts every key. Default "kuebus". Tests use a random one.
	Prefix string
	// MaxLogLines is how many log lines a job keeps, the newest. Default 10000.
	MaxLogLines int
	// WaitReplicas is how many replicas must have each change before the
	// store answers: after every script that changes the queue, WAIT
	// WaitReplicas WaitTimeout runs on the connection that ran it (eval.go).
	// Fewer within WaitTimeout answers unavailable: the change is made on
	// the master but may not survive a failover. Default 0: no WAIT, and
	// a failover can lose the last changes a master acknowledged (Redis
	// replicates asynchronously). At most the replicas each master has.
	WaitReplicas int
	// WaitTimeout bounds each WAIT: 1ms … 2s, required with WaitReplicas.
	// Default: none.
	WaitTimeout time.Duration
}

// Store is service.Store on Redis.
type Store struct {
	rdb          redis.UniversalClient
	keys         keys
	maxLogLines  int
	waitReplicas int
	waitTimeout  time.Duration
	topo         *topology // a Cluster's, from Redis.Store; nil otherwise

	ids   idSpace     // ids.go
	down  downTypes   // shards.go
	order createOrder // the places of the jobs created in one ms

	// multiLease runs the leases of several types one at a time: each
	// reads the heads of its types, then leases them, and two at once
	// would read the same heads and one would come back short. A lease of
	// one type reads its head in its script (lease_head.lua) and needs no
	// turn.
	multiLease sync.Mutex

	// settled is told of the jobs a dependency's outcome moved (deps.go),
	// so their events are published; nil until the service sets it.
	settled atomic.Pointer[func([]core.Job)]
}

var _ service.Store = (*Store)(nil)

// New returns a Store. It does not talk to Redis yet, so core can start while
// Redis is still coming up and answer unavailable meanwhile.
func New(cfg Config) (*Store, error) {
	if cfg.Client == nil {
		panic("redisstore: New needs a Redis client")
	}
	prefix := cmp.Or(cfg.Prefix, "kuebus")
	if strings.ContainsAny(prefix, "{} \t\r\n") {
		return nil, fmt.Errorf("redisstore: key prefix %q must not contain braces or spaces", prefix)
	}
	if err := validateWait(cfg.WaitReplicas, cfg.WaitTimeout); err != nil {
		return nil, err
	}
	return &Store{
		rdb: cfg.Client, keys: keys{prefix: prefix}, maxLogLines: cmp.Or(cfg.MaxLogLines, 10000),
		waitReplicas: cfg.WaitReplicas, waitTimeout: cfg.WaitTimeout,
	}, nil
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.fail("ping", s.rdb.Ping(ctx).Err())
}

// fail turns a Redis error into a coded error: failures of the connection or
// of a Redis that is loading or failing over are unavailable (the caller may
// try again), and so is a refused password (NOAUTH, WRONGPASS: a password
// changed while the node ran, the servers' or the Sentinels'); an error
// reply from a script is internal (a bug).
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var coded *bus.Error
	if errors.As(err, &coded) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if redis.IsAuthError(err) {
		return bus.Errorf(bus.CodeUnavailable, "redis %s: authentication refused (the servers' password, or on Sentinel the Sentinels' own): %v", op, err)
	}
	var reply redis.Error
	if errors.As(err, &reply) && !isTransient(reply.Error()) {
		return bus.Errorf(bus.CodeInternal, "redis %s: %v", op, err)
	}
	return bus.Errorf(bus.CodeUnavailable, "redis %s: %v", op, err)
}

// execReads runs a pipeline of reads that may find nothing: a redis.Nil
// reply is no error, any other error of any command is. Exec alone returns
// the first error only, so a Nil early in the pipeline would hide a later
// command's failure, e.g. a Cluster shard that is down.
func execReads(ctx context.Context, pipe redis.Pipeliner) error {
	cmds, err := pipe.Exec(ctx)
	if err == nil {
		return nil
	}
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && !errors.Is(cerr, redis.Nil) {
			return cerr
		}
	}
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

func isTransient(msg string) bool {
	for _, p := range []string{"LOADING", "BUSY", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "NOREPLICAS", "MOVED", "ASK"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// typeOf finds a job's type from its id (ids.go).
func (s *Store) typeOf(ctx context.Context, id int64) (typeKeys, string, error) {
	types, err := s.typesOfIDs(ctx, []int64{id})
	if err != nil {
		return typeKeys{}, "", s.fail("find job type", err)
	}
	if types[0] == "" {
		return typeKeys{}, "", core.JobNotFound(id)
	}
	return s.keys.ofType(types[0]), types[0], nil
}

// Get reads one job, data and result included (its row, by position), and
// its error history, in one round trip.
func (s *Store) Get(ctx context.Context, id int64) (*core.Job, error) {
	tk, _, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.getOfType(ctx, tk, id)
}

// GetByKey reads the job of jobType that holds uniqueKey: the unfinished
// one, as create's unique check knows it. A job that finished in between
// is still read (it gave its key up after the first read).
func (s *Store) GetByKey(ctx context.Context, jobType, uniqueKey string) (*core.Job, error) {
	tk := s.keys.ofType(jobType)
	id, err := s.rdb.HGet(ctx, tk.unique(), uniqueKey).Int64()
	if errors.Is(err, redis.Nil) {
		return nil, bus.Errorf(bus.CodeNotFound, "no unfinished %s job holds unique_key %q", jobType, uniqueKey)
	}
	if err != nil {
		return nil, s.fail("find unique key", err)
	}
	return s.getOfType(ctx, tk, id)
}

func (s *Store) getOfType(ctx context.Context, tk typeKeys, id int64) (*core.Job, error) {
	pipe := s.rdb.Pipeline()
	vals := pipe.HMGet(ctx, tk.job(id), rowWithData...)
	history := pipe.LRange(ctx, tk.errors(id), 0, -1)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("get job", err)
	}
	j, ok := decodeRow(vals.Val())
	if !ok {
		return nil, core.JobNotFound(id)
	}
	j.Errors = decodeErrors(history.Val())
	return &j, nil
}

// decodeErrors reads a job's error history as lua/includes/errors.lua
// writes it; an entry that does not decode is left out, not fatal.
func decodeErrors(entries []string) []core.AttemptError {
	var out []core.AttemptError
	for _, e := range entries {
		var ae core.AttemptError
		if json.Unmarshal([]byte(e), &ae) == nil {
			out = append(out, ae)
		}
	}
	return out
}

// createOrder numbers the jobs a Store creates within one ms: a job's
// place, with its created_at, orders it in its type's jobs index
// (lua/includes/jobs_order.lua), so that the jobs one core creates list
// in the order it created them, also within one ms and across types, at
// no cost to Redis.
type createOrder struct {
	mu   sync.Mutex
	ms   int64 // the ms of the places taken last
	next int   // the first place of ms not taken
}

// take returns the first of n places in ms now: the next after those
// taken in now before, or 0 in a new ms (a clock that went back starts
// again too).
func (o *createOrder) take(now int64, n int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if now != o.ms {
		o.ms, o.next = now, 0
	}
	first := o.next
	o.next += n
	return first
}

// Create stores jobs, grouped by type: one id allocation and one create
// script per type. A bulk of one type is atomic; a bulk over several types
// is atomic per type, and when a later type fails, the jobs already stored
// for earlier types are removed again before the error is returned.
func (s *Store) Create(ctx context.Context, now int64, specs []core.Spec) ([]core.Job, []bool, error) {
	for i := range specs {
		if specs[i].Waits() {
			return s.createWaiting(ctx, now, specs)
		}
	}
	jobs := make([]core.Job, len(specs))
	existing := make([]bool, len(specs))
	var stored []int64 // for the rollback
	first := s.order.take(now, len(specs))
	for _, group := range groupByType(specs) {
		ids, err := s.createGroup(ctx, now, first, specs, group, jobs, existing)
		if err != nil {
			s.rollback(ctx, stored)
			return nil, nil, err
		}
		stored = append(stored, ids...)
	}
	return jobs, existing, nil
}

// createGroup stores the jobs of specs at idx, of one type; the call's
// jobs take the places first + their index in specs.
func (s *Store) createGroup(ctx context.Context, now int64, first int, specs []core.Spec, idx []int, jobs []core.Job, existing []bool) ([]int64, error) {
	jobType := specs[idx[0]].Type
	ids, err := s.reserveIDs(ctx, jobType, len(idx))
	if err != nil {
		return nil, s.fail("reserve ids", err)
	}
	group := make([]*core.Spec, len(idx))
	for n, i := range idx {
		group[n] = &specs[i]
	}
	res, err := s.runCreateJobs(ctx, now, jobType, ids, group, nil, first, idx)
	if err != nil {
		return nil, s.fail("create jobs", err)
	}
	var stored []int64
	for n, i := range idx {
		// The id reserved for a duplicate stays unused: it reads as not found.
		jobs[i], existing[i] = res[n].job, res[n].duplicate
		if !res[n].duplicate {
			stored = append(stored, ids[n])
		}
	}
	return stored, nil
}

func (s *Store) rollback(ctx context.Context, ids []int64) {
	for _, id := range ids {
		// Best effort: this runs because Redis just failed.
		_, _ = s.Remove(context.WithoutCancel(ctx), id)
	}
}

// groupByType returns the indexes of specs per type, types in first-seen order.
func groupByType(specs []core.Spec) [][]int {
	pos := map[string]int{}
	var groups [][]int
	for i, sp := range specs {
		g, ok := pos[sp.Type]
		if !ok {
			g = len(groups)
			pos[sp.Type] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// Remove deletes a job, its log and its error history.
func (s *Store) Remove(ctx context.Context, id int64) (*core.Job, error) {
	tk, _, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	j, err := s.runRemoveJob(ctx, tk, id)
	if err != nil {
		return nil, s.fail("remove job", err)
	}
	if j == nil {
		return nil, core.JobNotFound(id)
	}
	return j, nil
}

// Log returns a job's log entries, oldest first.
func (s *Store) Log(ctx context.Context, id int64) ([]core.LogEntry, error) {
	tk, _, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	exists := pipe.Exists(ctx, tk.job(id))
	lines := pipe.LRange(ctx, tk.log(id), 0, -1)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("read log", err)
	}
	if exists.Val() == 0 {
		return nil, core.JobNotFound(id)
	}
	entries := make([]core.LogEntry, len(lines.Val()))
	for i, l := range lines.Val() {
		entries[i] = logEntry(l)
	}
	return entries, nil
}

// timeMark starts a log line stored with its time, "\xff<unix ms> <line>"
// (lua/add_log.lua): a byte that UTF-8 never holds.
const timeMark = 0xff

// logEntry reads a stored log line: one with its time, or one stored
// before lines had times, which has no mark and reads with At 0.
func logEntry(stored string) core.LogEntry {
	if len(stored) == 0 || stored[0] != timeMark {
		return core.LogEntry{Line: stored}
	}
	at, line, _ := strings.Cut(stored[1:], " ")
	n, _ := strconv.ParseInt(at, 10, 64)
	return core.LogEntry{At: n, Line: line}
}

// AddLog appends a line to a job's log, with its time.
func (s *Store) AddLog(ctx context.Context, now, id int64, line string) (*core.Job, error) {
	tk, _, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	j, err := s.runAddLog(ctx, tk, id, now, line)
	if err != nil {
		return nil, s.fail("add log", err)
	}
	if j == nil {
		return nil, core.JobNotFound(id)
	}
	return j, nil
}

// SetState moves a job to a state by hand.
func (s *Store) SetState(ctx context.Context, now, id int64, state core.State) (*core.Job, bool, error) {
	tk, jobType, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, false, err
	}
	j, changed, err := s.runSetState(ctx, tk, id, now, state)
	if err != nil {
		return nil, false, s.fail("set state", err)
	}
	if changed && (state == core.StateComplete || state == core.StateFailed) {
		s.settleAfter(ctx, now, jobType) // those waiting for it take it as such
	}
	if j == nil {
		return nil, false, core.JobNotFound(id)
	}
	return j, changed, nil
}

// SetPriority changes a job's priority.
func (s *Store) SetPriority(ctx context.Context, now, id int64, p core.Priority) (*core.Job, error) {
	tk, _, err := s.typeOf(ctx, id)
	if err != nil {
		return nil, err
	}
	j, err := s.runSetPriority(ctx, tk, id, now, p)
	if err != nil {
		return nil, s.fail("set priority", err)
	}
	if j == nil {
		return nil, core.JobNotFound(id)
	}
	return j, nil
}

// Promote moves due delayed jobs to inactive, at most limit in all. Types
// whose Redis fails are skipped, as sweep says.
func (s *Store) Promote(ctx context.Context, now int64, limit int) ([]core.Job, int64, error) {
	return s.sweep(ctx, now, limit, typeKeys.due, func(tk typeKeys, ids []int64) (int64, []core.Job, error) {
		next, jobs, err := s.runPromoteDue(ctx, tk, now, ids)
		if err != nil {
			return 0, nil, s.fail("promote", err)
		}
		return next, jobs, nil
	})
}

// sweep is the shape promote and rescue share: read, in one pipeline, the
// members of a time-scored index (due, leases) that are due by now, and the
// index's head; then, for each type that has some, let move re-check and
// move them in one script. It returns what moved, at most limit, and the
// earliest time still waiting (0 when none).
//
// A type whose read or move fails (on Cluster: its master is down) is
// skipped and the others are swept, and so is a type that failed a moment
// ago (downTypes, shards.go); the error is then a *service.TypesError
// naming the skipped types, beside what moved and the earliest time among
// the types swept. When every type failed, it is the plain coded error.
func (s *Store) sweep(ctx context.Context, now int64, limit int, index func(typeKeys) string,
	move func(typeKeys, []int64) (next int64, moved []core.Job, err error)) ([]core.Job, int64, error) {
	all, err := s.Types(ctx)
	if err != nil {
		return nil, 0, err
	}
	failed := typeErrs{}
	types, started := s.down.skip(now, all, failed)
	if len(types) == 0 {
		return nil, 0, failed.result(len(all))
	}
	pipe := s.rdb.Pipeline()
	due := make([]*redis.StringSliceCmd, len(types))
	head := make([]*redis.ZSliceCmd, len(types))
	for i, t := range types {
		key := index(s.keys.ofType(t))
		due[i] = pipe.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(now, 10), Count: int64(limit)})
		head[i] = pipe.ZRangeWithScores(ctx, key, 0, 0)
	}
	_, err = pipe.Exec(ctx)
	if err := s.perType(ctx, "read due jobs", err, types, func(i int) []redis.Cmder { return []redis.Cmder{due[i], head[i]} }, failed); err != nil {
		return nil, 0, err
	}
	var moved []core.Job
	var next int64
	earliest := func(at int64) {
		if at > 0 && (next == 0 || at < next) {
			next = at
		}
	}
	for i, t := range types {
		if failed.has(t) {
			continue
		}
		ids := parseIDs(due[i].Val())
		if room := limit - len(moved); len(ids) > room {
			ids = ids[:room]
		}
		if len(ids) == 0 {
			if h := head[i].Val(); len(h) > 0 {
				earliest(int64(h[0].Score))
			}
			continue
		}
		at, jobs, err := move(s.keys.ofType(t), ids)
		if err != nil {
			if ctx.Err() != nil {
				return moved, 0, ctx.Err()
			}
			failed[t] = err
			continue
		}
		earliest(at)
		moved = append(moved, jobs...)
	}
	s.down.note(now, types, failed, time.Since(started))
	return moved, next, failed.result(len(all))
}

func parseIDs(members []string) []int64 {
	ids := make([]int64, 0, len(members))
	for _, m := range members {
		if id, err := strconv.ParseInt(m, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// Types lists every job type, sorted.
func (s *Store) Types(ctx context.Context) ([]string, error) {
	types, err := s.rdb.SMembers(ctx, s.keys.types()).Result()
	if err != nil {
		return nil, s.fail("list types", err)
	}
	slices.Sort(types)
	return types, nil
}

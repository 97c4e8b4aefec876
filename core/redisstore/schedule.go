package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
)

// Schedules live beside the keys of their job type (keys.go: schedules,
// schedule:<name>), so that firing a tick, which writes the schedule and
// the new job, is one script on one Cluster slot. Finding a schedule by
// name asks every type's schedules index, in one pipeline: schedules are
// few, and an index of names in the global slot could not be kept in step
// with them by one script.

// scheduleFields are a schedule's hash fields in the order of its row:
// what the schedule scripts reply (schedule_row, which `go generate` writes
// from this table into lua/includes/schedule_gen.lua) and Go decodes by
// position. spec is the job spec as JSON; paused is "1" while paused;
// next_at and last_at are unix ms (next_at "0" while paused); rev is new
// with each set (schedule_set.lua), so a tick read before a set is not
// fired after it (fire_schedule.lua). A spec that does not decode (a hash
// written by hand) reads as empty: the schedule is still listed, and the
// service refuses to fire it and logs why, rather than one bad schedule
// failing every call.
var scheduleFields = []struct {
	name   string
	decode func(sc *service.StoredSchedule, v any) // nil: not carried
}{
	{"name", func(sc *service.StoredSchedule, v any) { sc.Name = str(v) }},
	{"type", nil}, // the key the schedule lives under says it
	{"cron", func(sc *service.StoredSchedule, v any) { sc.Cron = str(v) }},
	{"every", func(sc *service.StoredSchedule, v any) { sc.Every = time.Duration(num(v)) * time.Millisecond }},
	{"tz", func(sc *service.StoredSchedule, v any) { sc.TZ = str(v) }},
	{"spec", func(sc *service.StoredSchedule, v any) {
		if json.Unmarshal([]byte(str(v)), &sc.Spec) != nil {
			sc.Spec = core.Spec{}
		}
	}},
	{"paused", func(sc *service.StoredSchedule, v any) { sc.Paused = str(v) == "1" }},
	{"next_at", func(sc *service.StoredSchedule, v any) { sc.NextAt = num(v) }},
	{"last_at", func(sc *service.StoredSchedule, v any) { sc.LastAt = num(v) }},
	{"created_at", func(sc *service.StoredSchedule, v any) { sc.CreatedAt = num(v) }},
	{"updated_at", func(sc *service.StoredSchedule, v any) { sc.UpdatedAt = num(v) }},
	{"rev", func(sc *service.StoredSchedule, v any) { sc.Rev = num(v) }},
}

// scheduleNames are scheduleFields' names, for an HMGET of a row.
var scheduleNames = func() []string {
	out := make([]string, len(scheduleFields))
	for i, f := range scheduleFields {
		out[i] = f.name
	}
	return out
}()

// decodeSchedule reads a schedule row; ok is false when the schedule does
// not exist (no name).
func decodeSchedule(v any) (service.StoredSchedule, bool) {
	vals, _ := v.([]any)
	var sc service.StoredSchedule
	if len(vals) == 0 || str(vals[0]) == "" {
		return sc, false
	}
	for i, f := range scheduleFields {
		if i < len(vals) && f.decode != nil {
			f.decode(&sc, vals[i])
		}
	}
	if sc.Paused {
		sc.NextAt = 0
	}
	return sc, true
}

// SetSchedule creates or replaces a schedule. One that had another job
// type is removed there first: a crash in between loses the schedule, and
// the set's error tells the caller to set it again.
func (s *Store) SetSchedule(ctx context.Context, now int64, sc *core.Schedule) (*service.StoredSchedule, error) {
	homes, err := s.scheduleTypes(ctx, sc.Name)
	if err != nil {
		return nil, err
	}
	for _, t := range homes {
		if t != sc.Spec.Type {
			if err := s.removeScheduleOf(ctx, t, sc.Name); err != nil {
				return nil, err
			}
		}
	}
	// The type joins types first, as for a pause: that is where schedules
	// are looked for. A crash before the script lists a type with no job.
	if err := s.rdb.SAdd(ctx, s.keys.types(), sc.Spec.Type).Err(); err != nil {
		return nil, s.fail("set schedule: list type", err)
	}
	spec, err := json.Marshal(sc.Spec)
	if err != nil {
		return nil, fmt.Errorf("redisstore: set schedule %s: %w", sc.Name, err)
	}
	tk := s.keys.ofType(sc.Spec.Type)
	every := ""
	if sc.Every > 0 {
		every = strconv.FormatInt(sc.Every.Milliseconds(), 10)
	}
	reply, err := s.eval(ctx, setSchedule, []string{tk.schedules(), tk.schedule(sc.Name), tk.scheduleRev()},
		sc.Name, sc.Spec.Type, sc.Cron, every, sc.TZ, spec, flag(sc.Paused), sc.NextAt, now).Result()
	if err != nil {
		return nil, s.fail("set schedule", err)
	}
	stored, ok := decodeSchedule(reply)
	if !ok {
		return nil, bus.Errorf(bus.CodeInternal, "redis set schedule: schedule_set replied no schedule")
	}
	return &stored, nil
}

// scheduleTypes returns the job types that hold a schedule of this name:
// one, or none (two only after a crash in the middle of a set).
func (s *Store) scheduleTypes(ctx context.Context, name string) ([]string, error) {
	types, err := s.Types(ctx)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	scores := make([]*redis.FloatCmd, len(types))
	for i, t := range types {
		scores[i] = pipe.ZScore(ctx, s.keys.ofType(t).schedules(), name)
	}
	if err := execReads(ctx, pipe); err != nil {
		return nil, s.fail("find schedule", err)
	}
	var homes []string
	for i, sc := range scores {
		if sc.Err() == nil {
			homes = append(homes, types[i])
		}
	}
	return homes, nil
}

func (s *Store) removeScheduleOf(ctx context.Context, jobType, name string) error {
	tk := s.keys.ofType(jobType)
	if err := s.eval(ctx, removeSched, []string{tk.schedules(), tk.schedule(name)}, name).Err(); err != nil {
		return s.fail("remove schedule", err)
	}
	return nil
}

// RemoveSchedule deletes a schedule; false when there was none.
func (s *Store) RemoveSchedule(ctx context.Context, name string) (bool, error) {
	homes, err := s.scheduleTypes(ctx, name)
	if err != nil {
		return false, err
	}
	for _, t := range homes {
		if err := s.removeScheduleOf(ctx, t, name); err != nil {
			return false, err
		}
	}
	return len(homes) > 0, nil
}

// Schedules lists every schedule, sorted by name: two round trips, one for
// the names of every type, one for the schedules.
func (s *Store) Schedules(ctx context.Context) ([]service.StoredSchedule, error) {
	types, err := s.Types(ctx)
	if err != nil {
		return nil, err
	}
	pipe := s.rdb.Pipeline()
	names := make([]*redis.StringSliceCmd, len(types))
	for i, t := range types {
		names[i] = pipe.ZRange(ctx, s.keys.ofType(t).schedules(), 0, -1)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("list schedules", err)
	}
	var keys []string
	for i, t := range types {
		for _, n := range names[i].Val() {
			keys = append(keys, s.keys.ofType(t).schedule(n))
		}
	}
	out, err := s.readSchedules(ctx, keys)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b service.StoredSchedule) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// readSchedules reads schedules by key in one pipeline, leaving out those
// that are gone.
func (s *Store) readSchedules(ctx context.Context, keys []string) ([]service.StoredSchedule, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	rows := make([]*redis.SliceCmd, len(keys))
	for i, k := range keys {
		rows[i] = pipe.HMGet(ctx, k, scheduleNames...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, s.fail("read schedules", err)
	}
	out := make([]service.StoredSchedule, 0, len(keys))
	for _, r := range rows {
		if sc, ok := decodeSchedule(r.Val()); ok {
			out = append(out, sc)
		}
	}
	return out, nil
}

// DueSchedules returns up to limit schedules whose next tick is at or
// before now, and the earliest next tick of the others: now itself when
// more are due than it returns, so that the leader calls again at once.
//
// A type whose Redis fails (on Cluster: its master is down), or failed a
// moment ago (downTypes, shards.go), is skipped and the others' schedules
// are returned, with a *service.TypesError naming the skipped types; when
// every type failed, the error is the plain coded one.
func (s *Store) DueSchedules(ctx context.Context, now int64, limit int) ([]service.StoredSchedule, int64, error) {
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
	at := strconv.FormatInt(now, 10)
	for i, t := range types {
		k := s.keys.ofType(t).schedules()
		due[i] = pipe.ZRangeByScore(ctx, k, &redis.ZRangeBy{Min: "-inf", Max: at, Count: int64(limit)})
		head[i] = pipe.ZRangeByScoreWithScores(ctx, k, &redis.ZRangeBy{Min: "(" + at, Max: "+inf", Count: 1})
	}
	_, err = pipe.Exec(ctx)
	if err := s.perType(ctx, "read due schedules", err, types, func(i int) []redis.Cmder { return []redis.Cmder{due[i], head[i]} }, failed); err != nil {
		return nil, 0, err
	}
	var keys []string
	var next int64
	for i, t := range types {
		if failed.has(t) {
			continue
		}
		names := due[i].Val()
		if len(names) == limit || len(keys)+len(names) > limit {
			next = now // more may be due than this call takes
		}
		for _, n := range names {
			if len(keys) < limit {
				keys = append(keys, s.keys.ofType(t).schedule(n))
			}
		}
		if h := head[i].Val(); len(h) > 0 && !math.IsInf(h[0].Score, 1) {
			if at := int64(h[0].Score); next == 0 || at < next {
				next = at
			}
		}
	}
	out, err := s.readSchedules(ctx, keys)
	if err != nil {
		return nil, 0, err
	}
	s.down.note(now, types, failed, time.Since(started))
	return out, next, failed.result(len(all))
}

// FireSchedule fires one tick (lua/fire_schedule.lua) as a job with a
// fresh id of the type's blocks (ids.go); an id the tick does not use stays
// unused.
func (s *Store) FireSchedule(ctx context.Context, p *service.FireParams) (*core.Job, bool, error) {
	now, sc, tick, next, sp := p.Now, p.Schedule, p.Tick, p.Next, p.Spec
	ids, err := s.reserveIDs(ctx, sp.Type, 1)
	if err != nil {
		return nil, false, s.fail("reserve ids", err)
	}
	id := ids[0]
	job := sp.NewJob(id, now)
	job.Schedule, job.ScheduleAt = sc.Name, tick
	tk := s.keys.ofType(sp.Type)
	keys := append(tk.fixed(), tk.schedules(), tk.schedule(sc.Name), tk.job(id))
	args := make([]any, 0, 7+len(newJobShared)+len(newJobOwn))
	args = append(args, sc.Name, sc.Rev, tick, next, now, s.order.take(now, 1))
	for _, enc := range newJobShared {
		args = append(args, enc(&job))
	}
	args = appendNewJob(args, &job)
	res, err := s.eval(ctx, fireSchedule, keys, args...).Result()
	if err != nil {
		return nil, false, s.fail("fire schedule", err)
	}
	switch codeOf(res) {
	case codeDone:
		return &job, true, nil
	case codeDuplicate: // fired, but an unfinished job has the spec's unique key
		return nil, true, nil
	}
	return nil, false, nil // codeSkipped
}

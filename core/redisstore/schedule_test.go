package redisstore_test

import (
	"encoding/json"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
)

// scheduleSpec is the job spec of the schedules of these tests: job 1 of
// jobHash once created.
func scheduleSpec(jobType string) core.Spec {
	one := 1
	return core.Spec{Type: jobType, Data: json.RawMessage(`{"n":1}`), MaxAttempts: 3, TTL: 1000 * time.Millisecond, StallLimit: &one}
}

// everySecond is schedule s of type t, ticking every second from 1000.
func everySecond() *core.Schedule {
	return &core.Schedule{Name: "s", Every: 1000 * time.Millisecond, Spec: scheduleSpec("t"), NextAt: 2000}
}

// scheduleHash is schedule s's hash as schedule_set stores everySecond at
// 1000, with more set over it.
func scheduleHash(more map[string]string) map[string]string {
	return fields(map[string]string{
		"name": "s", "type": "t", "cron": "", "every": "1000", "tz": "",
		"spec":   `{"type":"t","data":{"n":1},"max_attempts":3,"ttl":1000,"stall_limit":1}`,
		"paused": "0", "next_at": "2000", "created_at": "1000", "updated_at": "1000", "rev": "1",
	}, more)
}

// TestSetScheduleStoresItBesideItsType: the schedule's hash and its entry
// in the type's schedules index, scored by its next tick; the type is
// listed. Setting the same timing again keeps the next tick and counts the
// set in rev.
func TestSetScheduleStoresItBesideItsType(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	got, err := st.SetSchedule(ctx, 1000, everySecond())
	require.NoError(t, err)
	want := service.StoredSchedule{Schedule: *everySecond(), Rev: 1}
	want.CreatedAt, want.UpdatedAt = 1000, 1000
	require.Equal(t, want, *got)
	set := keyspace{
		"{_}:types":        []string{"t"},
		"{t}:schedule_rev": "1",
		"{t}:schedules":    map[string]float64{"s": 2000},
		"{t}:schedule:s":   scheduleHash(nil),
	}
	st.requireKeys(set, "set")

	again := everySecond()
	again.NextAt = 2600 // what the service computes at 1600; the timing is the same
	again.Spec.Priority = core.PriorityHigh
	got, err = st.SetSchedule(ctx, 1600, again)
	require.NoError(t, err)
	require.Equal(t, int64(2000), got.NextAt, "same timing: the next tick stays")
	require.Equal(t, int64(2), got.Rev)
	st.requireKeys(set.with(keyspace{"{t}:schedule_rev": "2", "{t}:schedule:s": scheduleHash(map[string]string{
		"spec":       `{"type":"t","data":{"n":1},"priority":-10,"max_attempts":3,"ttl":1000,"stall_limit":1}`,
		"updated_at": "1600", "rev": "2",
	})}), "set again")

	list, err := st.Schedules(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, *got, list[0])
}

// TestSetScheduleWithAnotherTimingOrTypeMovesIt: a new timing takes the
// new next tick; a new job type moves the schedule to that type's keys;
// paused scores it +inf, so that it is never due, and lists it with no next
// tick.
func TestSetScheduleWithAnotherTimingOrTypeMovesIt(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	_, err := st.SetSchedule(ctx, 1000, everySecond())
	require.NoError(t, err)

	moved := everySecond()
	moved.Every, moved.NextAt, moved.Spec = 5*time.Second, 6500, scheduleSpec("u")
	got, err := st.SetSchedule(ctx, 1500, moved)
	require.NoError(t, err)
	require.Equal(t, int64(6500), got.NextAt)
	st.requireKeys(keyspace{
		"{_}:types":        []string{"t", "u"},
		"{t}:schedule_rev": "1",
		"{u}:schedule_rev": "1",
		"{u}:schedules":    map[string]float64{"s": 6500},
		"{u}:schedule:s": scheduleHash(map[string]string{
			"type": "u", "every": "5000", "next_at": "6500", "created_at": "1500", "updated_at": "1500",
			"spec": `{"type":"u","data":{"n":1},"max_attempts":3,"ttl":1000,"stall_limit":1}`,
		}),
	}, "moved to type u, with its new timing")

	moved.Paused, moved.NextAt = true, 0
	got, err = st.SetSchedule(ctx, 1700, moved)
	require.NoError(t, err)
	require.True(t, got.Paused)
	require.Zero(t, got.NextAt, "a paused schedule has no next tick")
	score, err := st.rdb.ZScore(ctx, st.prefix+":{u}:schedules", "s").Result()
	require.NoError(t, err)
	require.True(t, math.IsInf(score, 1))
	due, next, err := st.DueSchedules(ctx, math.MaxInt64/2, 10)
	require.NoError(t, err)
	require.Empty(t, due)
	require.Zero(t, next, "a paused schedule is never the next")
}

// TestFireScheduleFiresATickOnce is the double fire: the tick's job is
// created, marked with the schedule and the tick, and the schedule moves
// on, in one script; firing the same tick again (a leader that lost the
// reply, or a second leader) changes nothing, nor does an older tick, nor
// a tick read before the schedule was set again.
func TestFireScheduleFiresATickOnce(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	_, err := st.SetSchedule(ctx, 1000, everySecond())
	require.NoError(t, err)

	due, next, err := st.DueSchedules(ctx, 1999, 10)
	require.NoError(t, err)
	require.Empty(t, due, "not due before its tick")
	require.Equal(t, int64(2000), next)
	due, next, err = st.DueSchedules(ctx, 2000, 10)
	require.NoError(t, err)
	require.Len(t, due, 1, "due at its tick")
	require.Zero(t, next)

	job, fired, err := st.FireSchedule(ctx, &service.FireParams{Now: 2500, Schedule: &due[0], Tick: 2000, Next: 3000, Spec: scheduleSpec("t")})
	require.NoError(t, err)
	require.True(t, fired)
	require.Equal(t, int64(1), job.ID)
	require.Equal(t, "s", job.Schedule)
	require.Equal(t, int64(2000), job.ScheduleAt)
	after := keyspace{
		"{_}:ids":          "1000",
		"{t}:schedule_rev": "1",
		"{_}:blocks":       map[string]string{"0": "t"},
		"{_}:types":        []string{"t"},
		"{t}:jobs":         map[string]float64{"1": 2500_000}, // created at 2500, alone in its call
		"{t}:ready":        map[string]float64{"0000000000000001:1": 0},
		"{t}:seq":          "1",
		"{t}:job:1":        jobHash(map[string]string{"created_at": "2500", "updated_at": "2500", "promote_at": "2500", "schedule": "s", "schedule_at": "2000"}),
		"{t}:schedules":    map[string]float64{"s": 3000},
		"{t}:schedule:s":   scheduleHash(map[string]string{"last_at": "2000", "next_at": "3000"}),
	}
	st.requireKeys(after, "fired")
	stored, err := st.Get(ctx, 1)
	require.NoError(t, err)
	job.Data = stored.Data
	require.Equal(t, job, stored, "the job returned is the job stored")

	for _, tick := range []int64{2000, 1000} {
		job, fired, err = st.FireSchedule(ctx, &service.FireParams{Now: 2600, Schedule: &due[0], Tick: tick, Next: 3000, Spec: scheduleSpec("t")})
		require.NoError(t, err)
		require.False(t, fired, "tick %d: fired already", tick)
		require.Nil(t, job)
		st.requireKeys(after, "nothing changed; the unused id is out of the index again")
	}

	_, err = st.SetSchedule(ctx, 2700, everySecond())
	require.NoError(t, err)
	_, fired, err = st.FireSchedule(ctx, &service.FireParams{Now: 3100, Schedule: &due[0], Tick: 3000, Next: 4000, Spec: scheduleSpec("t")})
	require.NoError(t, err)
	require.False(t, fired, "read before a set")

	// Removed and set again, in the same millisecond as the first set: the
	// rev goes on from the type's counter, so the tick read before is not
	// fired.
	removed, err := st.RemoveSchedule(ctx, "s")
	require.NoError(t, err)
	require.True(t, removed)
	again, err := st.SetSchedule(ctx, 1000, everySecond())
	require.NoError(t, err)
	require.NotEqual(t, due[0].Rev, again.Rev)
	_, fired, err = st.FireSchedule(ctx, &service.FireParams{Now: 3100, Schedule: &due[0], Tick: 3000, Next: 4000, Spec: scheduleSpec("t")})
	require.NoError(t, err)
	require.False(t, fired, "read before a remove and a set")
}

// TestTwoLeadersFireATickOnce: two stores (two leaders' cores) fire the
// same tick at once; one job is made.
func TestTwoLeadersFireATickOnce(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	other, err := redisstore.New(redisstore.Config{Client: st.rdb, Prefix: st.prefix})
	require.NoError(t, err)
	_, err = st.SetSchedule(ctx, 1000, everySecond())
	require.NoError(t, err)
	due, _, err := st.DueSchedules(ctx, 2000, 10)
	require.NoError(t, err)
	var wg sync.WaitGroup
	fired := make([]bool, 2)
	for i, s := range []*redisstore.Store{st.Store, other} {
		wg.Go(func() {
			_, f, err := s.FireSchedule(ctx, &service.FireParams{Now: 2000, Schedule: &due[0], Tick: 2000, Next: 3000, Spec: scheduleSpec("t")})
			require.NoError(t, err)
			fired[i] = f
		})
	}
	wg.Wait()
	require.NotEqual(t, fired[0], fired[1], "exactly one fired: %v", fired)
	n, err := st.Count(ctx, "", "t")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// TestFireSchedulePausedOrGoneFiresNothing: a paused or removed schedule's
// tick makes no job; removing keeps the jobs made; a second remove finds
// nothing.
func TestFireSchedulePausedOrGoneFiresNothing(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	_, err := st.SetSchedule(ctx, 1000, everySecond())
	require.NoError(t, err)
	due, _, err := st.DueSchedules(ctx, 2000, 10)
	require.NoError(t, err)
	paused := everySecond()
	paused.Paused, paused.NextAt = true, 0
	sc, err := st.SetSchedule(ctx, 1500, paused)
	require.NoError(t, err)
	_, fired, err := st.FireSchedule(ctx, &service.FireParams{Now: 2000, Schedule: sc, Tick: 2000, Next: 3000, Spec: scheduleSpec("t")})
	require.NoError(t, err)
	require.False(t, fired, "paused")

	removed, err := st.RemoveSchedule(ctx, "s")
	require.NoError(t, err)
	require.True(t, removed)
	st.requireKeys(keyspace{"{_}:types": []string{"t"}, "{_}:ids": "1000", "{_}:blocks": map[string]string{"0": "t"}, "{t}:schedule_rev": "2"},
		"gone; the rev counter stays")
	_, fired, err = st.FireSchedule(ctx, &service.FireParams{Now: 2000, Schedule: &due[0], Tick: 2000, Next: 3000, Spec: scheduleSpec("t")})
	require.NoError(t, err)
	require.False(t, fired, "gone")
	removed, err = st.RemoveSchedule(ctx, "s")
	require.NoError(t, err)
	require.False(t, removed)
	list, err := st.Schedules(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

// TestFireScheduleIsNeverEarly: a tick after now does not fire, whatever
// the schedule says (a leader that read a due schedule after another
// leader fired it sees its next tick, still to come).
func TestFireScheduleIsNeverEarly(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	sc, err := st.SetSchedule(ctx, 1000, everySecond())
	require.NoError(t, err)
	job, fired, err := st.FireSchedule(ctx, &service.FireParams{Now: 1999, Schedule: sc, Tick: 2000, Next: 3000, Spec: scheduleSpec("t")})
	require.NoError(t, err)
	require.False(t, fired)
	require.Nil(t, job)
	st.requireKeys(keyspace{
		"{_}:ids":          "1000",
		"{_}:blocks":       map[string]string{"0": "t"},
		"{_}:types":        []string{"t"},
		"{t}:schedule_rev": "1",
		"{t}:schedules":    map[string]float64{"s": 2000},
		"{t}:schedule:s":   scheduleHash(nil),
	}, "nothing changed")
}

// TestDueSchedulesBeyondTheLimitAskForANextCallAtOnce: with more schedules
// due than the limit, the next tick reported is now.
func TestDueSchedulesBeyondTheLimitAskForANextCallAtOnce(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	for _, name := range []string{"a", "b"} {
		sc := everySecond()
		sc.Name = name
		_, err := st.SetSchedule(ctx, 1000, sc)
		require.NoError(t, err)
	}
	due, next, err := st.DueSchedules(ctx, 2500, 1)
	require.NoError(t, err)
	require.Len(t, due, 1)
	require.Equal(t, int64(2500), next, "one more is due")
	due, next, err = st.DueSchedules(ctx, 2500, 2)
	require.NoError(t, err)
	require.Len(t, due, 2)
	require.Equal(t, int64(2500), next, "exactly the limit: maybe more")
	due, next, err = st.DueSchedules(ctx, 2500, 3)
	require.NoError(t, err)
	require.Len(t, due, 2)
	require.Zero(t, next, "all taken, none waits")
}

// TestAScheduleWithABrokenSpecIsListedEmpty: a schedule hash whose spec
// does not decode (written by hand) is listed with an empty spec, which
// the service refuses to fire, rather than failing every list and fire.
func TestAScheduleWithABrokenSpecIsListedEmpty(t *testing.T) {
	t.Parallel()
	st := newScriptStore(t, redisstore.Config{})
	st.seed(keyspace{
		"{_}:types":      []string{"t"},
		"{t}:schedules":  map[string]float64{"s": 2000},
		"{t}:schedule:s": scheduleHash(map[string]string{"spec": "{not json"}),
	})
	list, err := st.Schedules(ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "s", list[0].Name)
	require.Equal(t, core.Spec{}, list[0].Spec)
	due, _, err := st.DueSchedules(ctx, 2000, 10)
	require.NoError(t, err)
	require.Len(t, due, 1)
}

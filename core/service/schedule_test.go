package service_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// TestScheduleSetListRemove: set answers the schedule with its next tick
// and announces it on queue.due; list shows it; remove deletes it, and a
// second remove is not_found.
func TestScheduleSetListRemove(t *testing.T) {
	c, clock := newCore(t)
	due := events(t, c, c.Client.Subjects().Queue(bus.QueueDue))
	now := clock.Now().UnixMilli()
	body, code := raw(t, c, bus.MethodScheduleSet, `{"name":"nightly","every":5000,"spec":{"type":"report","data":{"n":1}}}`)
	require.Empty(t, code, body)
	want := `{"name":"nightly","every":5000,"spec":{"type":"report","data":{"n":1},"max_attempts":1,"ttl":60000},
		"paused":false,"next_at":` + itoa(now+5000) + `,"created_at":` + itoa(now) + `,"updated_at":` + itoa(now) + `}`
	require.JSONEq(t, want, body)
	require.Equal(t, now+5000, next(t, due).DueAt, "a sleeping leader hears of the tick")

	body, code = raw(t, c, bus.MethodScheduleList, `{}`)
	require.Empty(t, code)
	require.JSONEq(t, `{"schedules":[`+want+`]}`, body)

	body, code = raw(t, c, bus.MethodScheduleRemove, `{"name":"nightly"}`)
	require.Empty(t, code, body)
	require.JSONEq(t, `{}`, body)
	body, code = raw(t, c, bus.MethodScheduleRemove, `{"name":"nightly"}`)
	require.Equal(t, "not_found", code, body)
	list, err := c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Empty(t, list)
}

// TestCronSchedulesTickInTheirZone: 5 fields in a zone, 6 fields with
// seconds, a descriptor; each answers its first tick after now (t0 is
// 12:00 UTC, 07:00 in New York).
func TestCronSchedulesTickInTheirZone(t *testing.T) {
	c, _ := newCore(t)
	for _, tc := range []struct {
		cron, tz string
		next     time.Time
	}{
		{"0 9 * * *", "America/New_York", time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)},
		{"0 9 * * *", "", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)},
		{"*/10 * * * * *", "", t0.Add(10 * time.Second)},
		{"@hourly", "", t0.Add(time.Hour)},
	} {
		sc, err := c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "s", Cron: tc.cron, TZ: tc.tz, Spec: core.Spec{Type: "t"}})
		require.NoError(t, err, tc.cron)
		require.Equal(t, tc.next.UnixMilli(), sc.NextAt, "%s in %q", tc.cron, tc.tz)
	}
}

// TestScheduleFireNeverEarlyOnceAndMissedTicksOnce: a tick is not fired
// before its time, fires once at it (a second call fires nothing), and
// ten ticks missed while no leader called fire as one job, for the latest
// of them; the job carries the schedule and its tick, and is created at
// or after it.
func TestScheduleFireNeverEarlyOnceAndMissedTicksOnce(t *testing.T) {
	c, clock := newCore(t)
	enq := events(t, c, c.Client.Subjects().JobEventsOf(bus.EventEnqueue, "t"))
	every := int64(1000)
	sc, err := c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "s", Every: new(time.Duration(every) * time.Millisecond), Spec: core.Spec{Type: "t", Data: []byte(`{"a":1}`)}})
	require.NoError(t, err)
	tick := sc.NextAt

	clock.Advance(999 * time.Millisecond)
	reply, err := c.Client.FireSchedules(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, core.FireReply{Fired: 0, NextDue: tick}, *reply, "1 ms early: nothing")

	clock.Advance(time.Millisecond)
	reply, err = c.Client.FireSchedules(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, core.FireReply{Fired: 1, NextDue: tick + every}, *reply)
	ev := next(t, enq)
	require.Equal(t, "s", ev.Job.Schedule)
	require.Equal(t, tick, ev.Job.ScheduleAt)
	require.GreaterOrEqual(t, ev.Job.CreatedAt, tick)
	job, err := c.Client.Get(ctx, ev.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"a":1}`, string(job.Data))
	require.Equal(t, "s", job.Schedule)

	reply, err = c.Client.FireSchedules(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, core.FireReply{Fired: 0, NextDue: tick + every}, *reply, "fired already")

	clock.Advance(10*time.Second + 500*time.Millisecond) // ticks tick+1s .. tick+10s missed
	reply, err = c.Client.FireSchedules(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, core.FireReply{Fired: 1, NextDue: tick + 11*every}, *reply, "ten missed ticks, one job")
	ev = next(t, enq)
	require.Equal(t, tick+10*every, ev.Job.ScheduleAt, "the latest missed tick")
	n, err := c.Client.Count(ctx, "", "t")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)

	list, err := c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Equal(t, tick+10*every, list[0].LastAt)
	require.Equal(t, tick+11*every, list[0].NextAt)
}

// TestAPausedScheduleFiresNothing: paused, its ticks pass without jobs;
// set unpaused again, it starts from its first tick after now.
func TestAPausedScheduleFiresNothing(t *testing.T) {
	c, clock := newCore(t)
	every := int64(1000)
	req := &core.ScheduleSetRequest{Name: "s", Every: new(time.Duration(every) * time.Millisecond), Spec: core.Spec{Type: "t"}, Paused: true}
	sc, err := c.Client.SetSchedule(ctx, req)
	require.NoError(t, err)
	require.True(t, sc.Paused)
	require.Zero(t, sc.NextAt)
	clock.Advance(5 * time.Second)
	reply, err := c.Client.FireSchedules(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, core.FireReply{}, *reply)

	req.Paused = false
	sc, err = c.Client.SetSchedule(ctx, req)
	require.NoError(t, err)
	require.Equal(t, clock.Now().UnixMilli()+every, sc.NextAt)
}

// TestBadScheduleIsInvalidAndStoresNothing: every bad field answers
// invalid naming it, and leaves no schedule.
func TestBadScheduleIsInvalidAndStoresNothing(t *testing.T) {
	c, _ := newCore(t)
	for _, tc := range []struct{ body, field string }{
		{`{"every":5000,"spec":{"type":"t"}}`, "name"},
		{`{"name":"a.b","every":5000,"spec":{"type":"t"}}`, "name"},
		{`{"name":"s","spec":{"type":"t"}}`, "cron"},
		{`{"name":"s","cron":"* * * * *","every":5000,"spec":{"type":"t"}}`, "every"},
		{`{"name":"s","every":-1000,"spec":{"type":"t"}}`, "every"},
		{`{"name":"s","every":999,"spec":{"type":"t"}}`, "every"},
		{`{"name":"s","every":9223372036854775807,"spec":{"type":"t"}}`, "every"},
		{`{"name":"s","every":5000,"tz":"Europe/Paris","spec":{"type":"t"}}`, "tz"},
		{`{"name":"s","cron":"61 * * * *","spec":{"type":"t"}}`, "cron"},
		{`{"name":"s","cron":"* * *","spec":{"type":"t"}}`, "cron"},
		{`{"name":"s","cron":"0 0 30 2 *","spec":{"type":"t"}}`, "cron"},
		{`{"name":"s","cron":"CRON_TZ=Europe/Paris 0 9 * * *","spec":{"type":"t"}}`, "cron"},
		{`{"name":"s","cron":"@every 5m","spec":{"type":"t"}}`, "cron"},
		{`{"name":"s","cron":"0 9 * * *","tz":"Mars/Olympus","spec":{"type":"t"}}`, "tz"},
		{`{"name":"s","cron":"0 9 * * *","tz":"Local","spec":{"type":"t"}}`, "tz"},
		{`{"name":"s","every":5000}`, "spec.type"},
		{`{"name":"s","every":5000,"spec":{"type":"a b"}}`, "spec.type"},
		{`{"name":"s","every":5000,"spec":{"type":"t","delay":-1}}`, "spec.delay"},
		{`{"name":"s","every":5000,"spec":{"type":"t","trace":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`, "spec.trace"},
	} {
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodScheduleSet), []byte(tc.body), 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "invalid", msg.Header.Get(bus.HeaderKuebusCode), tc.body)
		require.Contains(t, msg.Header.Get(bus.HeaderError), tc.field, tc.body)
	}
	for _, bad := range []string{`{}`, `{"name":"a b"}`} {
		_, code := raw(t, c, bus.MethodScheduleRemove, bad)
		require.Equal(t, "invalid", code, bad)
	}
	_, code := raw(t, c, bus.MethodScheduleFire, `{"limit":-1}`)
	require.Equal(t, "invalid", code)
	list, err := c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")
}

// TestACronIsBoundedAndQuotedSafely: a cron over MaxCronLen is refused by
// its length, before it is parsed; a NUL or a newline in one comes back
// escaped in the error header (robfig's own message quotes the field raw),
// and nothing is stored. A tz over MaxTZLen is refused by its length.
func TestACronIsBoundedAndQuotedSafely(t *testing.T) {
	c, _ := newCore(t)
	set := func(cron string) string {
		t.Helper()
		body, err := json.Marshal(core.ScheduleSetRequest{Name: "s", Cron: cron, Spec: core.Spec{Type: "t"}})
		require.NoError(t, err)
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodScheduleSet), body, 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "invalid", msg.Header.Get(bus.HeaderKuebusCode), cron)
		require.Len(t, msg.Header, 3, "the three error headers, no more")
		return msg.Header.Get(bus.HeaderError)
	}
	require.Equal(t, "cron: 257 bytes is longer than 256", set("0 "+strings.Repeat("1,", 127)+"1"))
	require.Equal(t, "cron: 65536 bytes is longer than 256", set(strings.Repeat("*", 64<<10)))

	// Exactly the bound is parsed: a valid list of 256 bytes is a schedule.
	cron := "00" + strings.Repeat(",0", 123) + " * * * *"
	require.Len(t, cron, core.MaxCronLen)
	_, err := c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "bound", Cron: cron, Spec: core.Spec{Type: "t"}})
	require.NoError(t, err)
	require.NoError(t, c.Client.RemoveSchedule(ctx, "bound"))

	for _, bad := range []string{"\x00 * * * *", "1\x00 * * * *", "* * * * \x00", "1\n2\n3 * * * * *", "a\r\nX-Injected: yes * * * *"} {
		got := set(bad)
		require.True(t, strings.HasPrefix(got, "cron: "), got)
		require.NotContains(t, got, "\x00", "no raw NUL")
		require.NotContains(t, got, "\n")
		require.NotContains(t, got, "\r")
	}
	require.Contains(t, set("1\x00 * * * *"), `\x00`, "the NUL, escaped")

	// tz is bounded too, before a zone file is looked for by its name
	body, err := json.Marshal(core.ScheduleSetRequest{Name: "s", Cron: "@daily", TZ: strings.Repeat("Europe/", 10), Spec: core.Spec{Type: "t"}})
	require.NoError(t, err)
	msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodScheduleSet), body, 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "invalid", msg.Header.Get(bus.HeaderKuebusCode))
	require.Equal(t, "tz: 70 bytes is longer than 64", msg.Header.Get(bus.HeaderError))

	list, err := c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")
}

// TestAScheduleSpecsErrorsNameTheFieldByItsPath: whatever is wrong in a
// schedule's spec, in decoding (a type, a name, an unknown key) or in its
// checks, the error starts with the field's path under spec, as the
// create of the same spec names the field itself.
func TestAScheduleSpecsErrorsNameTheFieldByItsPath(t *testing.T) {
	c, _ := newCore(t)
	big := `"` + strings.Repeat("x", 5000) + `"`
	for _, tc := range []struct{ spec, want string }{
		{`{}`, `spec.type: "" is not a job type`},
		{`{"type":"a b"}`, `spec.type: "a b" is not a job type`},
		{`{"type":1}`, "spec.type: expected string, got JSON number"},
		{`{"type":"t","data":` + big + `}`, "spec.data: 5002 bytes is over the limit of 4096"},
		{`{"type":"t","priority":"urgent"}`, `spec.priority: "urgent" is neither a priority name`},
		{`{"type":"t","priority":1.5}`, "spec.priority: 1.5 is not an integer"},
		{`{"type":"t","priority":9007199254740992}`, "spec.priority: 9007199254740992 is outside ±9007199254740991"},
		{`{"type":"t","priority":true}`, "spec.priority: expected a number or a name, got true"},
		{`{"type":"t","delay":-1}`, "spec.delay: -1 ms is outside"},
		{`{"type":"t","delay":"x"}`, "spec.delay: expected int64, got JSON string"},
		{`{"type":"t","max_attempts":-1}`, "spec.max_attempts: -1 is outside"},
		{`{"type":"t","max_attempts":"x"}`, "spec.max_attempts: expected int, got JSON string"},
		{`{"type":"t","backoff":{"type":"linear"}}`, `spec.backoff.type: "linear" is not fixed or exponential`},
		{`{"type":"t","backoff":{"type":"fixed","delay":-1}}`, "spec.backoff.delay: -1 ms is outside"},
		{`{"type":"t","backoff":{"type":"fixed","jitter":1}}`, "spec.backoff.jitter: unknown field"},
		{`{"type":"t","ttl":-1}`, "spec.ttl: -1 ms is outside"},
		{`{"type":"t","remove_on_complete":"x"}`, `spec.remove_on_complete: expected true, false or {"age":ms,"count":n}`},
		{`{"type":"t","remove_on_complete":{"age":-1}}`, "spec.remove_on_complete.age: -1 is negative"},
		{`{"type":"t","remove_on_fail":{"size":1}}`, "spec.remove_on_fail.size: unknown key (age, count)"},
		{`{"type":"t","unique_key":"` + strings.Repeat("k", 513) + `"}`, "spec.unique_key: 513 bytes is longer than 512"},
		{`{"type":"t","unique_key":5}`, "spec.unique_key: expected string, got JSON number"},
		{`{"type":"t","stall_limit":-1}`, "spec.stall_limit: -1 is outside"},
		{`{"type":"t","trace":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`, "spec.trace: a schedule's jobs keep no trace"},
		{`{"type":"t","bogus":1}`, "spec.bogus: unknown field"},
		{`{"type":"t","depends_on":[1]}`, "spec.depends_on: a schedule's jobs wait for no other job"},
		{`{"type":"t","after":[1]}`, "spec.after: unknown field"},
		{`"t"`, "spec: expected a JSON object, got JSON string"},
	} {
		body := `{"name":"s","every":5000,"spec":` + tc.spec + `}`
		msg, err := c.NATS.Conn.Request(c.Client.Subjects().Core(bus.MethodScheduleSet), []byte(body), 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, "invalid", msg.Header.Get(bus.HeaderKuebusCode), tc.spec)
		require.True(t, strings.HasPrefix(msg.Header.Get(bus.HeaderError), tc.want), "%s\n got: %s\nwant: %s…", tc.spec, msg.Header.Get(bus.HeaderError), tc.want)
	}
	list, err := c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")
}

// TestScheduleRunMakesAJobNowAndKeepsTheNextTick: schedule_run makes the
// schedule's job now, marked with the schedule, and leaves the next tick
// where it was; a second run later makes another. A paused schedule is a
// conflict, an unknown one not_found, a bad name invalid.
func TestScheduleRunMakesAJobNowAndKeepsTheNextTick(t *testing.T) {
	c, clock := newCore(t)
	sc, err := c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "nightly", Cron: "0 3 * * *", Spec: core.Spec{Type: "report"}})
	require.NoError(t, err)
	clock.Advance(time.Minute)
	now := clock.Now().UnixMilli()
	job, err := c.Client.RunSchedule(ctx, "nightly")
	require.NoError(t, err)
	require.Equal(t, "report", job.Type)
	require.Equal(t, "nightly", job.Schedule)
	require.Equal(t, now, job.ScheduleAt)
	require.Equal(t, core.StateInactive, job.State)
	list, err := c.Client.Schedules(ctx)
	require.NoError(t, err)
	require.Equal(t, sc.NextAt, list[0].NextAt, "the next tick stays")
	require.Equal(t, now, list[0].LastAt, "the run is its last run")

	clock.Advance(time.Second)
	again, err := c.Client.RunSchedule(ctx, "nightly")
	require.NoError(t, err)
	require.NotEqual(t, job.ID, again.ID)

	_, err = c.Client.SetSchedule(ctx, &core.ScheduleSetRequest{Name: "nightly", Cron: "0 3 * * *", Spec: core.Spec{Type: "report"}, Paused: true})
	require.NoError(t, err)
	_, err = c.Client.RunSchedule(ctx, "nightly")
	require.ErrorIs(t, err, core.ErrConflict)
	_, err = c.Client.RunSchedule(ctx, "nope")
	require.ErrorIs(t, err, core.ErrNotFound)
	for _, body := range []string{`{}`, `{"name":"a.b"}`, `{"name":"x","what":1}`} {
		reply, code := raw(t, c, bus.MethodScheduleRun, body)
		require.Equal(t, "invalid", code, "%s: %s", body, reply)
	}
}

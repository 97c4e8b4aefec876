package core_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestDurationsAreMillisecondsOnTheWire: a Go user writes time.Duration;
// the JSON carries whole milliseconds, in the order and with the names it
// always had, and reads back the same.
func TestDurationsAreMillisecondsOnTheWire(t *testing.T) {
	every := 90 * time.Second
	sp := core.Spec{Type: "email", Delay: 1500 * time.Millisecond, MaxAttempts: 3,
		Backoff: core.FixedBackoff(2 * time.Second), TTL: time.Minute, UniqueKey: "k"}
	cases := []struct {
		v    any
		want string
		back any
	}{
		{sp, `{"type":"email","delay":1500,"max_attempts":3,"backoff":{"type":"fixed","delay":2000},"ttl":60000,"unique_key":"k"}`, &core.Spec{}},
		{core.ScheduleSetRequest{Name: "s", Every: &every, Spec: core.Spec{Type: "w"}}, `{"name":"s","every":90000,"spec":{"type":"w"}}`, &core.ScheduleSetRequest{}},
		{core.Schedule{Name: "s", Every: every, Spec: core.Spec{Type: "w", TTL: time.Second}, NextAt: 5, CreatedAt: 1, UpdatedAt: 2},
			`{"name":"s","every":90000,"spec":{"type":"w","ttl":1000},"paused":false,"next_at":5,"created_at":1,"updated_at":2}`, &core.Schedule{}},
	}
	for _, c := range cases {
		for _, enc := range []func(any) ([]byte, error){json.Marshal, bus.Encode} {
			b, err := enc(c.v)
			require.NoError(t, err)
			require.Equal(t, c.want, string(b))
		}
		require.NoError(t, bus.Decode([]byte(c.want), c.back))
		require.Equal(t, c.v, deref(c.back))
	}
	// A retention's age too.
	var r core.Retention
	require.NoError(t, bus.Decode([]byte(`{"age":90000,"count":3}`), &r))
	require.Equal(t, core.Retention{Age: 90 * time.Second, Count: 3}, r)
	err := bus.Decode([]byte(`{"age":9223372036854775807}`), &r)
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "age: 9223372036854775807 ms is more than a duration holds")
	// A duration finer than the wire's millisecond is cut to one.
	b, err := json.Marshal(core.Spec{Type: "t", Delay: 1999 * time.Microsecond})
	require.NoError(t, err)
	require.Equal(t, `{"type":"t","delay":1}`, string(b))
}

func deref(v any) any {
	switch v := v.(type) {
	case *core.Spec:
		return *v
	case *core.ScheduleSetRequest:
		return *v
	case *core.Schedule:
		return *v
	}
	panic("no such type")
}

// TestBadDurationsAreInvalidAndNamed: what core refuses in a spec,
// schedule or backoff is an invalid error naming the field by its path,
// as before durations were Go's.
func TestBadDurationsAreInvalidAndNamed(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"t","delay":9223372036854775807}`:                           "delay: 9223372036854775807 ms is outside 0..315360000000",
		`{"type":"t","ttl":-9223372036854775808}`:                            "ttl: -9223372036854775808 ms is outside",
		`{"type":"t","delay":1.5}`:                                           "delay: expected int64",
		`{"type":"t","delay":"5s"}`:                                          "delay: expected int64, got JSON string",
		`{"type":"t","bogus":1}`:                                             "bogus: unknown field",
		`{"type":"t","backoff":{"type":"fixed","delay":1,"x":2}}`:            "backoff.x: unknown field",
		`{"type":"t","backoff":{"type":"fixed","delay":1e400}}`:              "backoff.delay",
		`{"type":"t","priority":"urgent"}`:                                   `priority: "urgent" is neither`,
		`{"type":"t","remove_on_complete":{"age":-1}}`:                       "remove_on_complete.age: -1 is negative",
		`{"type":"t","backoff":{"type":"fixed","delay":-99999999999999999}}`: "backoff.delay: -99999999999999999 ms is outside",
	} {
		var sp core.Spec
		err := bus.Decode([]byte(body), &sp)
		require.ErrorIs(t, err, core.ErrInvalid, body)
		require.ErrorContains(t, err, want, body)
	}
	for body, want := range map[string]string{
		`{"name":"s","every":99999999999999999,"spec":{"type":"t"}}`: "every: 99999999999999999 ms is outside",
		`{"name":"s","every":1000,"spec":{"type":"t","ttl":true}}`:   "spec.ttl: expected int64, got JSON bool",
		`{"name":"s","every":1000,"spec":{"type":"t","nope":1}}`:     "spec.nope: unknown field",
		`{"name":"s","every":1000,"spec":{"type":"t"},"nope":1}`:     "nope: unknown field",
	} {
		var req core.ScheduleSetRequest
		err := bus.Decode([]byte(body), &req)
		require.ErrorIs(t, err, core.ErrInvalid, body)
		require.ErrorContains(t, err, want, body)
	}
	var bulk core.BulkRequest
	err := bus.Decode([]byte(`{"jobs":[{"type":"a"},{"type":"b","ttl":"x"}]}`), &bulk)
	require.ErrorContains(t, err, "jobs.ttl: expected int64, got JSON string")
}

// TestNormalizeTakesDurations: the bounds a spec is checked against are
// the wire's, in milliseconds; a default ttl is TTLDefault ms.
func TestNormalizeTakesDurations(t *testing.T) {
	ok := core.Spec{Type: "t", Delay: core.MaxDelay * time.Millisecond, TTL: 1500 * time.Microsecond}
	require.NoError(t, ok.Normalize(10))
	require.Equal(t, time.Millisecond, ok.TTL, "cut to the millisecond the wire carries")
	for _, bad := range []core.Spec{
		{Type: "t", Delay: core.MaxDelay*time.Millisecond + time.Millisecond},
		{Type: "t", Delay: -time.Millisecond},
		{Type: "t", TTL: core.MaxDelay*time.Millisecond + time.Millisecond},
		{Type: "t", Backoff: &core.Backoff{Type: core.BackoffFixed, Delay: core.MaxDelay*time.Millisecond + time.Millisecond}},
	} {
		require.ErrorIs(t, bad.Normalize(10), core.ErrInvalid, "%+v", bad)
	}
}

// TestJobTimesAreTimes: a job's and a schedule's unix ms read as
// time.Time (zero for none) and its ms as time.Duration.
func TestJobTimesAreTimes(t *testing.T) {
	j := core.Job{CreatedAt: 1795320459450, TTL: 30_000, Delay: 1500, Duration: 608}
	require.Equal(t, time.UnixMilli(1795320459450), j.CreatedTime())
	require.True(t, j.StartedTime().IsZero(), "no start: the zero time, not 1970")
	require.Equal(t, 30*time.Second, j.TTLDuration())
	require.Equal(t, 1500*time.Millisecond, j.DelayDuration())
	require.Equal(t, 608*time.Millisecond, j.RunDuration())
	sc := core.Schedule{NextAt: 1795320459450}
	require.Equal(t, time.UnixMilli(1795320459450), sc.NextTime())
	require.True(t, sc.LastTime().IsZero())
	e := core.AttemptError{At: 1795320459450}
	require.Equal(t, time.UnixMilli(1795320459450), e.Time())
}

// TestSetScheduleArgsMakesTheSpec: the typed schedule's spec comes from
// its args and options; one given in the request as well is refused.
func TestSetScheduleArgsMakesTheSpec(t *testing.T) {
	c := nodetest.NewCore(t, service.Config{})
	every := time.Hour
	_, err := core.SetScheduleArgs(t.Context(), c.Client, &core.ScheduleSetRequest{Name: "d", Every: &every,
		Spec: core.Spec{Type: "other"}}, Digest{List: "x"}, nil)
	require.ErrorIs(t, err, core.ErrInvalid)
	require.ErrorContains(t, err, "spec: SetScheduleArgs makes the spec from args and opts")
	list, err := c.Client.Schedules(t.Context())
	require.NoError(t, err)
	require.Empty(t, list, "nothing stored")
}

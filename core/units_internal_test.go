package core

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWireTwins: each type with durations in Go and ms on the wire has a
// twin (units.go) with the same fields, in the same order, with the same
// JSON tags and types, but the durations as int64. A field added to one
// and not the other would be dropped from the wire, or change its order.
func TestWireTwins(t *testing.T) {
	msOf := map[reflect.Type]reflect.Type{
		reflect.TypeFor[time.Duration]():  reflect.TypeFor[int64](),
		reflect.TypeFor[*time.Duration](): reflect.TypeFor[*int64](),
		reflect.TypeFor[time.Time]():      reflect.TypeFor[int64](),
		reflect.TypeFor[[]Spec]():         reflect.TypeFor[[]specJSON](), // a bulk's specs as their twins
	}
	for typ, twin := range map[reflect.Type]reflect.Type{
		reflect.TypeFor[Spec]():               reflect.TypeFor[specJSON](),
		reflect.TypeFor[Backoff]():            reflect.TypeFor[backoffJSON](),
		reflect.TypeFor[ScheduleSetRequest](): reflect.TypeFor[scheduleSetJSON](),
		reflect.TypeFor[Schedule]():           reflect.TypeFor[scheduleJSON](),
		reflect.TypeFor[BulkActionRequest]():  reflect.TypeFor[bulkActionJSON](),
		reflect.TypeFor[Rate]():               reflect.TypeFor[rateJSON](),
		reflect.TypeFor[BulkRequest]():        reflect.TypeFor[bulkRequestJSON](),
		reflect.TypeFor[Aging]():              reflect.TypeFor[agingJSON](),
		reflect.TypeFor[TypeDefaults]():       reflect.TypeFor[typeDefaultsJSON](),
	} {
		require.Equal(t, typ.NumField(), twin.NumField(), "%v and its twin %v: add the field to both, and to the copies of units.go", typ, twin)
		for i := range typ.NumField() {
			f, w := typ.Field(i), twin.Field(i)
			require.Equal(t, f.Name, w.Name, "%v field %d", typ, i)
			tag := f.Tag.Get("json")
			if f.Type == reflect.TypeFor[time.Time]() { // omitzero in Go, omitempty of its int64 twin
				tag = strings.Replace(tag, ",omitzero", ",omitempty", 1)
			}
			require.Equal(t, tag, w.Tag.Get("json"), "%v.%s", typ, f.Name)
			want := f.Type
			if ms, ok := msOf[f.Type]; ok {
				want = ms
			}
			require.Equal(t, want, w.Type, "%v.%s", typ, f.Name)
		}
	}
}

// TestWireTwinsCopyEveryField: the copies to and from each twin miss no
// field: a value with every field set goes to JSON and back whole.
func TestWireTwinsCopyEveryField(t *testing.T) {
	two := 2
	every := 3 * time.Second
	sp := Spec{Type: "t", Data: []byte(`{"a":1}`), Priority: PriorityHigh, Delay: time.Second, MaxAttempts: 3,
		Backoff: &Backoff{Type: BackoffFixed, Delay: time.Minute}, TTL: time.Hour, RemoveOnComplete: RemoveAtOnce,
		UniqueKey: "u", StallLimit: &two, RemoveOnFail: Retention{Age: 5 * time.Millisecond}, Trace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		Broadcast: true, Group: "g", DependsOn: []int64{7, 8}, OnDependencyFailure: DepIgnore}
	for _, v := range []any{
		&sp,
		&ScheduleSetRequest{Name: "n", Cron: "* * * * *", Every: &every, TZ: "UTC", Spec: sp, Paused: true},
		&Schedule{Name: "n", Cron: "c", Every: every, TZ: "UTC", Spec: sp, Paused: true, NextAt: 1, LastAt: 2, CreatedAt: 3, UpdatedAt: 4},
		&BulkActionRequest{Action: BulkRetry, State: StateFailed, Type: "t", Error: "e", ErrorGroup: "eg", Before: time.UnixMilli(1795320459450),
			Limit: 5, Cursor: "c"},
		&Rate{Limit: 5, Per: time.Second},
		&Aging{Per: time.Minute},
		&TypeDefaults{Priority: PriorityLow, MaxAttempts: 2, Backoff: &Backoff{Type: BackoffFixed, Delay: time.Second}, TTL: time.Hour,
			StallLimit: &two, RemoveOnComplete: RemoveAtOnce, RemoveOnFail: Retention{Count: 3}},
	} {
		rv := reflect.ValueOf(v).Elem()
		for i := range rv.NumField() {
			if rv.Type().Field(i).Tag.Get("json") == "-" {
				continue // never on the wire: it cannot come back
			}
			require.False(t, rv.Field(i).IsZero(), "%T.%s: set it in this test", v, rv.Type().Field(i).Name)
		}
		b, err := rv.Interface().(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
		require.NoError(t, err)
		back := reflect.New(rv.Type())
		require.NoError(t, back.Interface().(interface{ UnmarshalJSON([]byte) error }).UnmarshalJSON(b))
		require.Equal(t, rv.Interface(), back.Elem().Interface())
	}
}

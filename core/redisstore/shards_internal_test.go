package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

// hung is a failure that took as long as a read timeout.
const hung = 3 * time.Second

func TestDownTypesSkipForAWindowThatDoublesUpToItsMax(t *testing.T) {
	var d downTypes
	boom := bus.Errorf(bus.CodeUnavailable, "redis read ready jobs: i/o timeout")
	now := int64(1000)
	for _, window := range []int64{2000, 4000, 8000, 10_000, 10_000} {
		d.note(now, []string{"a", "b"}, typeErrs{"a": boom}, hung)
		failed := typeErrs{}
		try, _ := d.skip(now+window-1, []string{"a", "b"}, failed)
		require.Equal(t, []string{"b"}, try, "a is skipped within %d ms", window)
		require.ErrorIs(t, failed["a"], bus.ErrUnavailable)
		require.Contains(t, failed["a"].Error(), "i/o timeout")
		try, _ = d.skip(now+window, []string{"a", "b"}, typeErrs{})
		require.Equal(t, []string{"a", "b"}, try, "a is tried after %d ms", window)
		now += window
	}
}

// TestDownTypesCountCallsBesideEachOtherOnce: calls that ran at once and
// failed slowly are one failure: the window does not double per call in
// flight, only when a call tries the type again after its window.
func TestDownTypesCountCallsBesideEachOtherOnce(t *testing.T) {
	var d downTypes
	boom := bus.Errorf(bus.CodeUnavailable, "redis lease: dial tcp: connection refused")
	for range 4 { // four calls started at 1000, each failing slowly
		d.note(1000, []string{"a"}, typeErrs{"a": boom}, hung)
	}
	require.Equal(t, int64(2000), d.m["a"].window, "one outage, one window")
	require.Equal(t, int64(3000), d.m["a"].until)
	d.note(3000, []string{"a"}, typeErrs{"a": boom}, hung)
	require.Equal(t, int64(4000), d.m["a"].window, "tried again after it, and down: doubled")
}

func TestDownTypesForgetATypeThatAnswers(t *testing.T) {
	var d downTypes
	down := bus.Errorf(bus.CodeUnavailable, "redis read ready jobs: i/o timeout")
	d.note(0, []string{"a"}, typeErrs{"a": down}, hung)
	d.note(2000, []string{"a"}, typeErrs{}, time.Millisecond) // tried after its window, answered
	require.Empty(t, d.m)
	d.note(2000, []string{"a"}, typeErrs{"a": down}, hung)
	require.Equal(t, int64(2000), d.m["a"].window, "the window starts over")
}

func TestDownTypesRememberOnlySlowUnavailableFailures(t *testing.T) {
	var d downTypes
	d.note(0, []string{"a"}, typeErrs{"a": bus.Errorf(bus.CodeUnavailable, "redis read ready jobs: connection refused")}, time.Millisecond)
	require.Empty(t, d.m, "a refused connection costs nothing to try again")
	d.note(0, []string{"a"}, typeErrs{"a": bus.Errorf(bus.CodeInternal, "redis lease: ERR script failed")}, hung)
	require.Empty(t, d.m, "a script error says nothing of the master")
}

func TestDownTypesCostNothingWhenNothingIsDown(t *testing.T) {
	var d downTypes
	types := []string{"a", "b"}
	got, _ := d.skip(5, types, typeErrs{})
	require.Equal(t, &types[0], &got[0], "the caller's slice, not a copy")
	d.note(5, types, typeErrs{}, time.Millisecond)
	require.Nil(t, d.m)
}

package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
)

func TestDownTypesSkipForAWindowThatDoublesUpToItsMax(t *testing.T) {
	var d downTypes
	boom := bus.Errorf(bus.CodeUnavailable, "redis read ready jobs: i/o timeout")
	now := int64(1000)
	for _, window := range []int64{2000, 4000, 8000, 10_000, 10_000} {
		d.note(now, []string{"a", "b"}, typeErrs{"a": boom})
		failed := typeErrs{}
		require.Equal(t, []string{"b"}, d.skip(now+window-1, []string{"a", "b"}, failed), "a is skipped within %d ms", window)
		require.ErrorIs(t, failed["a"], bus.ErrUnavailable)
		require.Contains(t, failed["a"].Error(), "i/o timeout")
		require.Equal(t, []string{"a", "b"}, d.skip(now+window, []string{"a", "b"}, typeErrs{}), "a is tried after %d ms", window)
		now += window
	}
}

func TestDownTypesForgetATypeThatAnswers(t *testing.T) {
	var d downTypes
	down := bus.Errorf(bus.CodeUnavailable, "redis read ready jobs: connection refused")
	d.note(0, []string{"a"}, typeErrs{"a": down})
	d.note(2000, []string{"a"}, typeErrs{}) // tried after its window, answered
	require.Empty(t, d.m)
	d.note(2000, []string{"a"}, typeErrs{"a": down})
	require.Equal(t, int64(2000), d.m["a"].window, "the window starts over")
}

func TestDownTypesCostNothingWhenNothingIsDown(t *testing.T) {
	var d downTypes
	types := []string{"a", "b"}
	got := d.skip(5, types, typeErrs{})
	require.Equal(t, &types[0], &got[0], "the caller's slice, not a copy")
	d.note(5, types, typeErrs{})
	require.Nil(t, d.m)
}

func TestDownTypesPutNoTypeDownForAnInternalError(t *testing.T) {
	var d downTypes
	d.note(0, []string{"a"}, typeErrs{"a": bus.Errorf(bus.CodeInternal, "redis lease: ERR script failed")})
	require.Empty(t, d.m, "a script error is quick and says nothing of the master")
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
)

var t0 = time.Unix(1_800_000_000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// writeRecords writes a worker's record file through the worker's own
// recorder.
func writeRecords(t *testing.T, dir, worker string, recs ...record) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, worker+".records"))
	require.NoError(t, err)
	defer f.Close()
	rec := &recorder{f: f}
	for _, r := range recs {
		r.Worker = worker
		rec.write(r)
	}
}

func start(id int64, lease string, ms int) record {
	return record{Event: "start", ID: id, Lease: lease, At: at(ms).UnixNano()}
}

func end(id int64, lease string, ms int) record {
	return record{Event: "end", ID: id, Lease: lease, At: at(ms).UnixNano(), OK: true}
}

func TestVerdict(t *testing.T) {
	t.Run("two leases of one job running at once are two holders", func(t *testing.T) {
		dir := t.TempDir()
		writeRecords(t, dir, "w1", start(7, "a", 0), end(7, "a", 50))
		writeRecords(t, dir, "w2", start(7, "b", 10), end(7, "b", 60))
		runs, err := readRuns(dir, nil, at(1000))
		require.NoError(t, err)
		require.Equal(t, []int64{7}, holders(runs))
		twice, unexplained := reruns(runs, window{})
		require.Equal(t, 1, twice)
		require.Equal(t, []int64{7}, unexplained)
	})
	t.Run("a second lease granted before the first one's lease_until is a second holder", func(t *testing.T) {
		dir := t.TempDir()
		first := start(7, "a", 0)
		first.Until = at(2000).UnixMilli()
		writeRecords(t, dir, "w1", first, end(7, "a", 50))
		writeRecords(t, dir, "w2", start(7, "b", 100), end(7, "b", 150))
		runs, err := readRuns(dir, nil, at(1000))
		require.NoError(t, err)
		require.Equal(t, []int64{7}, holders(runs))
	})
	t.Run("a job leased again after the first lease ran out has one holder at a time", func(t *testing.T) {
		dir := t.TempDir()
		first := start(7, "a", 0)
		first.Until = at(2000).UnixMilli()
		writeRecords(t, dir, "w1", first, end(7, "a", 50))
		writeRecords(t, dir, "w2", start(7, "b", 2010), end(7, "b", 2060))
		runs, err := readRuns(dir, nil, at(5000))
		require.NoError(t, err)
		require.Empty(t, holders(runs))
	})
	t.Run("a job run again after its worker was killed is explained and held once", func(t *testing.T) {
		dir := t.TempDir()
		writeRecords(t, dir, "w1", start(7, "a", 0)) // killed at 20 ms, no end
		writeRecords(t, dir, "w2", start(7, "b", 2100), end(7, "b", 2150))
		runs, err := readRuns(dir, map[string]time.Time{"w1": at(20)}, at(5000))
		require.NoError(t, err)
		require.Empty(t, holders(runs))
		twice, unexplained := reruns(runs, window{})
		require.Equal(t, 1, twice)
		require.Empty(t, unexplained)
		killed, slowest, stuck := rescued(runs)
		require.Equal(t, 1, killed)
		require.Equal(t, 2080*time.Millisecond, slowest)
		require.Zero(t, stuck)
	})
	t.Run("a killed worker's job run again before its lease_until is held once", func(t *testing.T) {
		dir := t.TempDir()
		first := start(7, "a", 0)
		first.Until = at(60_000).UnixMilli() // a lease of a minute
		writeRecords(t, dir, "w1", first)    // killed at 20 ms, no end
		writeRecords(t, dir, "w2", start(7, "b", 2800), end(7, "b", 2850))
		runs, err := readRuns(dir, map[string]time.Time{"w1": at(20)}, at(5000))
		require.NoError(t, err)
		require.Empty(t, holders(runs), "a dead worker holds nothing")
		waits, stuck := rescueWaits(runs)
		require.Equal(t, []time.Duration{2780 * time.Millisecond}, waits)
		require.Zero(t, stuck)
	})
	t.Run("a job its worker started as it was being killed runs again, held once", func(t *testing.T) {
		dir := t.TempDir()
		first := start(7, "a", 21) // recorded 1 ms after the kill's time: the signal's latency
		first.Until = at(60_000).UnixMilli()
		writeRecords(t, dir, "w1", first) // no end: it died
		writeRecords(t, dir, "w2", start(7, "b", 2800), end(7, "b", 2850))
		runs, err := readRuns(dir, map[string]time.Time{"w1": at(20)}, at(5000))
		require.NoError(t, err)
		require.Empty(t, holders(runs), "a dead worker holds nothing")
		_, unexplained := reruns(runs, window{})
		require.Empty(t, unexplained, "the kill explains the rerun")
	})
	t.Run("a job its worker finished just before it was killed runs again, explained and held once", func(t *testing.T) {
		dir := t.TempDir()
		first := start(7, "a", 0)
		first.Until = at(60_000).UnixMilli()
		writeRecords(t, dir, "w1", first, end(7, "a", 50)) // killed at 100 ms, its acknowledgement unsent
		writeRecords(t, dir, "w2", start(7, "b", 2800), end(7, "b", 2850))
		runs, err := readRuns(dir, map[string]time.Time{"w1": at(100)}, at(5000))
		require.NoError(t, err)
		require.Empty(t, holders(runs), "the dead worker held it until its death")
		twice, unexplained := reruns(runs, window{})
		require.Equal(t, 1, twice)
		require.Empty(t, unexplained, "the acknowledgement died with the worker")
	})
	t.Run("a live worker's job run again before its lease_until is two holders", func(t *testing.T) {
		dir := t.TempDir()
		first := start(7, "a", 0)
		first.Until = at(60_000).UnixMilli()
		writeRecords(t, dir, "w1", first, end(7, "a", 2900)) // stopped, then went on
		writeRecords(t, dir, "w2", start(7, "b", 2800), end(7, "b", 2850))
		runs, err := readRuns(dir, nil, at(5000))
		require.NoError(t, err)
		require.Equal(t, []int64{7}, holders(runs))
	})
	t.Run("a rerun whose first run ended in the fault window is explained", func(t *testing.T) {
		dir := t.TempDir()
		writeRecords(t, dir, "w1", start(7, "a", 0), end(7, "a", 50), start(8, "c", 0), end(8, "c", 50))
		writeRecords(t, dir, "w2", start(7, "b", 3000), end(7, "b", 3050), start(8, "d", 3000), end(8, "d", 3050))
		runs, err := readRuns(dir, nil, at(5000))
		require.NoError(t, err)
		twice, unexplained := reruns(runs, window{from: at(40), to: at(1000)})
		require.Equal(t, 2, twice)
		require.Empty(t, unexplained)
		twice, unexplained = reruns(runs, window{from: at(60), to: at(1000)})
		require.Equal(t, 2, twice)
		require.Equal(t, []int64{7, 8}, unexplained)
	})
	t.Run("a worker that starts nothing after the fault never came back", func(t *testing.T) {
		dir := t.TempDir()
		writeRecords(t, dir, "w1", start(1, "a", 0), end(1, "a", 50), start(2, "b", 900), end(2, "b", 950))
		writeRecords(t, dir, "w2", start(3, "c", 0), end(3, "c", 50))
		runs, err := readRuns(dir, nil, at(5000))
		require.NoError(t, err)
		require.Equal(t, time.Duration(-1), workersBack(runs, at(100), nil))
		require.Equal(t, 800*time.Millisecond, workersBack(runs, at(100), map[string]time.Time{"w2": at(100)}))
	})
	t.Run("one lease that got a job twice is two runs, each ended by its own record", func(t *testing.T) {
		dir := t.TempDir()
		writeRecords(t, dir, "w1", start(7, "a", 0), start(7, "a", 1), end(7, "a", 50), end(7, "a", 51))
		runs, err := readRuns(dir, nil, at(5000))
		require.NoError(t, err)
		require.Len(t, runs[7], 2)
		require.True(t, runs[7][0].ended && runs[7][1].ended)
		require.Equal(t, []int64{7}, holders(runs))
	})
	t.Run("a lease granted with under half its ttl left is short", func(t *testing.T) {
		dir := t.TempDir()
		late, fresh := start(7, "a", 0), start(8, "b", 0)
		late.Until, fresh.Until = at(27).UnixMilli(), at(2000).UnixMilli()
		writeRecords(t, dir, "w1", late, fresh)
		runs, err := readRuns(dir, nil, at(5000))
		require.NoError(t, err)
		require.Equal(t, 1, shortLeases(runs, 2*time.Second))
	})
	t.Run("a line cut short by a kill is skipped", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "w1.records")
		require.NoError(t, os.WriteFile(path, []byte(`{"e":"start","id":1,"lease":"a","w":"w1","t":1}`+"\n"+`{"e":"end","id":1,"le`), 0o644))
		runs, err := readRuns(dir, map[string]time.Time{"w1": time.Unix(0, 5)}, at(0))
		require.NoError(t, err)
		require.Len(t, runs[1], 1)
		require.True(t, runs[1][0].killed)
	})
}

func TestJudge(t *testing.T) {
	acked := map[int64]ack{1: {}, 2: {}, 3: {}, 4: {}, 5: {}, 6: {}}
	states := map[int64]core.State{1: core.StateComplete, 2: core.StateInactive, 3: core.StateFailed, 5: core.StateFailed}
	o := judge(acked, states, map[int64]bool{5: true, 6: true})
	require.Equal(t, 1, o.complete)
	require.Equal(t, 1, o.live)
	require.Equal(t, []int64{3, 4}, o.lost, "failed or gone, and never done")
	require.Equal(t, []int64{4, 6}, o.gone)
	require.Equal(t, []int64{5}, o.failedDone)
}

func TestFirstAfter(t *testing.T) {
	require.Equal(t, time.Duration(-1), firstAfter(at(100), []time.Time{at(50)}))
	require.Equal(t, 20*time.Millisecond, firstAfter(at(100), []time.Time{at(50), at(300), at(120)}))
}

func TestQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	require.Zero(t, quantile(nil, 0.99))
	require.Equal(t, 3*time.Millisecond, quantile(ms(1, 2, 3), 0.99))
	require.Equal(t, 2*time.Millisecond, quantile(ms(1, 2, 3), 0.5))
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	require.Equal(t, 99*time.Millisecond, quantile(ms(hundred...), 0.99))
}

// TestEarlyFindsADependentThatRanBeforeItsDependency: job 3 depends on 1
// and 2; it started after 1 ended but before 2 ended: early. Job 4
// depends on 1 and started after it ended; job 5 never ran.
func TestEarlyFindsADependentThatRanBeforeItsDependency(t *testing.T) {
	runs := map[int64][]*run{
		1: {{id: 1, start: at(0), end: at(10), ok: true}},
		2: {{id: 2, start: at(0), end: at(50), ok: true}},
		3: {{id: 3, start: at(20), end: at(30), ok: true}, {id: 3, start: at(60), end: at(70), ok: true}},
		4: {{id: 4, start: at(11), end: at(12), ok: true}},
	}
	deps := map[int64][]int64{3: {1, 2}, 4: {1}, 5: {1}}
	require.Equal(t, []int64{3}, early(deps, runs))
}

func TestDependentsTwice(t *testing.T) {
	dir := t.TempDir()
	// 2 and 3 depend on 1; 2 ran twice, its first run ending in the fault
	// window; 3 ran twice outside it
	writeRecords(t, dir, "w1", start(1, "a", 0), end(1, "a", 50),
		start(2, "b", 100), end(2, "b", 150), start(3, "c", 60), end(3, "c", 110))
	writeRecords(t, dir, "w2", start(2, "d", 3000), end(2, "d", 3050), start(3, "e", 3000), end(3, "e", 3050))
	runs, err := readRuns(dir, nil, at(5000))
	require.NoError(t, err)
	_, unexplained := reruns(runs, window{from: at(120), to: at(200)})
	require.Equal(t, []int64{3}, unexplained)
	twice, bad := dependentsTwice(map[int64][]int64{2: {1}, 3: {1}}, runs, unexplained)
	require.Equal(t, []int64{2, 3}, twice)
	require.Equal(t, []int64{3}, bad)

	first, last := span([]int64{1, 2}, runs)
	require.Equal(t, at(0), first)
	require.Equal(t, at(3050), last)
	first, _ = span([]int64{9}, runs)
	require.True(t, first.IsZero(), "a job that never ran has no span")
}

func TestSweptHandOversAddsUpTheCoresLogs(t *testing.T) {
	dir := t.TempDir()
	logs := []string{
		"time=x level=INFO msg=\"kuebus node ready\" node=core1\n" +
			"time=x level=INFO msg=\"dependency hand-overs finished by the sweep\" count=3\n",
		"time=x level=INFO msg=\"dependency hand-overs finished by the sweep\" count=4\n" +
			"time=x level=WARN msg=other count=100\n",
	}
	c := &cluster{}
	for i, text := range logs {
		path := filepath.Join(dir, fmt.Sprintf("core%d.log", i+1))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		c.cores = append(c.cores, &node{proc: &proc{log: path}})
	}
	n, err := c.sweptHandOvers()
	require.NoError(t, err)
	require.Equal(t, 7, n)
}

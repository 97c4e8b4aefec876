package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kuebus/kuebus/core"
)

// ackSlack widens a fault window backwards: a handler that finished just
// before the fault had its acknowledgement in flight when the fault hit.
const ackSlack = time.Second

// run is one handler run of one job, from a worker's records.
type run struct {
	id     int64
	lease  string
	worker string
	start  time.Time
	until  time.Time // the lease's lease_until when it was granted
	end    time.Time // the end record; or when its worker was killed; or the run's end
	ended  bool      // an end record exists
	ok     bool      // the handler finished its work
	killed bool      // its worker was killed while it ran
	// death is when its worker was killed, after or while it ran (zero:
	// never): a dead worker holds nothing, and an acknowledgement it had
	// not sent yet dies with it.
	death time.Time
}

// readRuns reads every worker's record file in dir. killed gives the
// workers the fault killed and when; a run without an end record ends
// there, or at runEnd.
func readRuns(dir string, killed map[string]time.Time, runEnd time.Time) (map[int64][]*run, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.records"))
	if err != nil {
		return nil, fmt.Errorf("chaos: records: %w", err)
	}
	type key struct {
		id    int64
		lease string
	}
	// A lease call that got one job twice (a duplicate in the ready queue)
	// starts two runs under one key: ends close them in order.
	open := map[key][]*run{}
	runs := map[int64][]*run{}
	for _, path := range files {
		if err := eachRecord(path, func(rec record) {
			k := key{rec.ID, rec.Lease}
			at := time.Unix(0, rec.At)
			switch rec.Event {
			case "start":
				r := &run{id: rec.ID, lease: rec.Lease, worker: rec.Worker, start: at, until: time.UnixMilli(rec.Until)}
				if death, ok := killed[rec.Worker]; ok && death.After(at) {
					r.death = death
				}
				open[k] = append(open[k], r)
				runs[rec.ID] = append(runs[rec.ID], r)
			case "end":
				if rs := open[k]; len(rs) > 0 {
					rs[0].end, rs[0].ended, rs[0].ok = at, true, rec.OK
					open[k] = rs[1:]
				}
			}
		}); err != nil {
			return nil, err
		}
	}
	for _, rs := range open {
		for _, r := range rs {
			r.end = runEnd
			if at, ok := killed[r.worker]; ok {
				// A run the worker's records start after the kill's own
				// time is the signal's latency (the tool notes the time,
				// then kills; each record file is one process's): it died
				// with the worker as it began.
				r.end, r.killed = at, true
				if at.Before(r.start) {
					r.end = r.start
				}
			}
		}
	}
	for _, rs := range runs {
		slices.SortFunc(rs, func(a, b *run) int { return a.start.Compare(b.start) })
	}
	return runs, nil
}

func eachRecord(path string, fn func(record)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("chaos: records: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec record
		// A kill -9 can cut the last line short; that run has no end.
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			fn(rec)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("chaos: records %s: %w", path, err)
	}
	return nil
}

// window is when a fault could excuse a second run: from the fault (less
// ackSlack) to when creates, completions and promotions all worked again.
type window struct{ from, to time.Time }

func (w window) holds(t time.Time) bool { return !t.Before(w.from) && !t.After(w.to) }

// holders lists the jobs that two live workers held at once: a run started
// while an earlier run of the same job still held it. A run holds its job
// until its handler ends and, whatever the handler does, until the
// lease_until core granted it: core hands a job out again only once that
// has passed (rescue), so a run that starts earlier was given a second
// lease while the first was still valid. A killed worker holds nothing
// once dead: core ends a silent worker's leases early (docs/protocol.md §3.37), so
// its run holds its job until the kill.
func holders(runs map[int64][]*run) (jobs []int64) {
	for id, rs := range runs {
		for i := 1; i < len(rs); i++ {
			if slices.ContainsFunc(rs[:i], func(prev *run) bool { return rs[i].start.Before(prev.heldUntil()) }) {
				jobs = append(jobs, id)
				break
			}
		}
	}
	slices.Sort(jobs)
	return jobs
}

// heldUntil is when the run stopped holding its job: the later of its end
// and its lease's expiry as granted.
func (r *run) heldUntil() time.Time {
	held := r.end
	if !r.killed && r.until.After(r.end) {
		held = r.until
	}
	if !r.death.IsZero() && r.death.Before(held) {
		return r.death
	}
	return held
}

// reruns counts the jobs that ran more than once, and of those the ones
// whose earlier run neither died with its worker nor ended in the fault
// window: work done twice that no fault explains.
func reruns(runs map[int64][]*run, w window) (twice int, unexplained []int64) {
	for id, rs := range runs {
		if len(rs) < 2 {
			continue
		}
		twice++
		for _, prev := range rs[:len(rs)-1] {
			// a run whose worker died within ackSlack of its end may not
			// have sent its acknowledgement: the kill explains the rerun
			ackDied := !prev.death.IsZero() && prev.death.Sub(prev.end) <= ackSlack
			if !prev.killed && !ackDied && !w.holds(prev.end) {
				unexplained = append(unexplained, id)
				break
			}
		}
	}
	slices.Sort(unexplained)
	return twice, unexplained
}

// outcome sorts the acknowledged ids by their state at the end. A job is
// lost when it was never completed (no handler finished its work, and core
// does not hold it as complete) and core does not hold it in a live state
// (delayed, inactive, active) either: gone from Redis, or failed although
// no handler of the suite ever fails. Jobs core failed for good after a
// handler had finished their work are not lost, but counted apart: the
// work was done, the queue reports it failed.
type outcome struct {
	complete, live int
	waiting        []int64 // still waiting for dependencies (also lost)
	lost           []int64
	gone           []int64 // not in Redis, in any state
	failedDone     []int64 // failed, though a handler finished the work
}

// judge sorts acked by states, where done holds the jobs whose handler
// finished its work at least once.
func judge(acked map[int64]ack, states map[int64]core.State, done map[int64]bool) outcome {
	var o outcome
	for id := range acked {
		o.add(id, states[id], done[id])
	}
	o.sort()
	return o
}

// add counts one job in state st ("" when core has none).
func (o *outcome) add(id int64, st core.State, done bool) {
	switch st {
	case core.StateComplete:
		o.complete++
		return
	case core.StateDelayed, core.StateInactive, core.StateActive:
		o.live++
		return
	case core.StateWaiting:
		o.waiting = append(o.waiting, id)
	case "":
		o.gone = append(o.gone, id)
	case core.StateFailed:
		if done {
			o.failedDone = append(o.failedDone, id)
		}
	}
	if !done {
		o.lost = append(o.lost, id)
	}
}

func (o *outcome) sort() {
	slices.Sort(o.lost)
	slices.Sort(o.gone)
	slices.Sort(o.failedDone)
}

// early lists the flow jobs whose first run started before one of their
// dependencies had finished any run (deps: a job → the jobs it depends
// on): a dependency completes only after a run of it finished, so such a
// start ran ahead of it. Jobs sorted.
func early(deps map[int64][]int64, runs map[int64][]*run) []int64 {
	var out []int64
	for id, ds := range deps {
		first := time.Time{}
		for _, r := range runs[id] {
			if first.IsZero() || r.start.Before(first) {
				first = r.start
			}
		}
		if first.IsZero() {
			continue // never ran: counted as lost or waiting
		}
		for _, d := range ds {
			end := time.Time{}
			for _, r := range runs[d] {
				if r.ok && (end.IsZero() || r.end.Before(end)) {
					end = r.end
				}
			}
			if end.IsZero() || first.Before(end) {
				out = append(out, id)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// dependentsTwice lists the flow jobs with dependencies (deps' keys) that
// ran more than once, and of those the ones unexplained lists (reruns):
// ran twice with no fault to explain it. A dependent released twice (two
// hand-overs of one dependency both moving it) would show there. Both
// sorted.
func dependentsTwice(deps map[int64][]int64, runs map[int64][]*run, unexplained []int64) (twice, bad []int64) {
	for id := range deps {
		if len(runs[id]) < 2 {
			continue
		}
		twice = append(twice, id)
		if slices.Contains(unexplained, id) {
			bad = append(bad, id)
		}
	}
	slices.Sort(twice)
	slices.Sort(bad)
	return twice, bad
}

// span is when the first run of any of ids started and when the last run
// that finished its work ended; zero times when none ran.
func span(ids []int64, runs map[int64][]*run) (first, last time.Time) {
	for _, id := range ids {
		for _, r := range runs[id] {
			if first.IsZero() || r.start.Before(first) {
				first = r.start
			}
			if r.ok && r.end.After(last) {
				last = r.end
			}
		}
	}
	return first, last
}

// finished is the set of jobs one of whose runs finished its work.
func finished(runs map[int64][]*run) map[int64]bool {
	done := map[int64]bool{}
	for id, rs := range runs {
		done[id] = slices.ContainsFunc(rs, func(r *run) bool { return r.ok })
	}
	return done
}

// firstAfter is how long after t the first of times at or after t came;
// -1 if none did.
func firstAfter(t time.Time, times []time.Time) time.Duration {
	best := time.Duration(-1)
	for _, at := range times {
		if d := at.Sub(t); d >= 0 && (best < 0 || d < best) {
			best = d
		}
	}
	return best
}

// workersBack is how long after t the slowest worker the fault did not
// kill started a job again: a worker idling after a fault shows here, even
// while the others keep the queue moving. -1 if one never started again.
func workersBack(runs map[int64][]*run, t time.Time, killed map[string]time.Time) time.Duration {
	first := map[string]time.Duration{}
	for _, rs := range runs {
		for _, r := range rs {
			if _, ok := killed[r.worker]; ok {
				continue
			}
			d, seen := first[r.worker]
			if !seen {
				d = -1
				first[r.worker] = d
			}
			if after := r.start.Sub(t); after >= 0 && (d < 0 || after < d) {
				first[r.worker] = after
			}
		}
	}
	slowest := time.Duration(0)
	for _, d := range first {
		if d < 0 {
			return -1
		}
		slowest = max(slowest, d)
	}
	return slowest
}

// rescued counts the runs that died with a killed worker, how long the
// slowest of their jobs took to start again elsewhere, and how many never
// did.
func rescued(runs map[int64][]*run) (killed int, slowest time.Duration, stuck int) {
	waits, stuck := rescueWaits(runs)
	for _, w := range waits {
		slowest = max(slowest, w)
	}
	return len(waits) + stuck, slowest, stuck
}

// rescueWaits lists, for each run that died with its killed worker and ran
// again, how long after the kill the next run started, shortest first;
// stuck counts those that never ran again.
func rescueWaits(runs map[int64][]*run) (waits []time.Duration, stuck int) {
	for _, rs := range runs {
		for i, r := range rs {
			if !r.killed {
				continue
			}
			if i == len(rs)-1 {
				stuck++
				continue
			}
			waits = append(waits, rs[i+1].start.Sub(r.end))
		}
	}
	slices.Sort(waits)
	return waits, stuck
}

// quantile is the q-quantile (0..1) of sorted durations, nearest rank; 0
// for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// shortLeases counts the runs whose lease came with less than half of ttl
// left: a lease script run late (a client retry after a stall) with the
// time of its first attempt grants a lease that is about to run out, and
// rescue takes the job back while its handler runs.
func shortLeases(runs map[int64][]*run, ttl time.Duration) (n int) {
	for _, rs := range runs {
		for _, r := range rs {
			if r.until.UnixMilli() > 0 && r.until.Sub(r.start) < ttl/2 {
				n++
			}
		}
	}
	return n
}

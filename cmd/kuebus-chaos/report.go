package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kuebus/kuebus/core"
)

// result is what one scenario measured.
type result struct {
	name, what, note string
	err              error // the scenario could not run to its end

	acked, createErrors   int
	out                   outcome
	ranTwice              int
	unexplained, twoHeld  []int64
	recCreate, recDone    time.Duration // -1: none after the fault
	recPromote, faultSpan time.Duration
	drain                 time.Duration
	drained               bool
	workersBack           time.Duration // -1: a worker never started a job again
	killedJobs            int           // jobs that died with a killed worker
	rescue                time.Duration // the slowest of those to start again
	rescueP50, rescueP99  time.Duration // of those that did, after the kill
	rescueBound           time.Duration // the scenario's: a p99 past it fails (0: none)
	stuck                 int           // those that never did
	shortLeases           int           // leases granted with less than half the ttl left
	flowJobs              int           // jobs of flows (scenario.flows)
	early                 []int64       // flow jobs that ran before a dependency completed
	depsTwice, depsBad    []int64       // flow jobs with dependencies that ran twice; of those, unexplained ones
	// bigFrom and bigTo are when the 1,000-job flow's first run started and
	// its last ended, relative to the fault; bigRan says it ran at all.
	bigFrom, bigTo time.Duration
	bigRan         bool
	bigAcked       time.Duration // when its create was acknowledged, from the fault
	swept          int           // hand-overs the leader's sweep finished (cores' logs)
}

// judge fills in the result from what the run recorded.
func (r *result) judge(ld *load, f fault, ttl time.Duration, states map[int64]core.State, runs map[int64][]*run) {
	acked, failed, completes, promotions := ld.snapshot()
	r.note = f.note
	r.acked, r.createErrors = len(acked), failed
	r.out = judge(acked, states, finished(runs))

	var created, due []time.Time
	for _, a := range acked {
		if !a.sent.Before(f.at) {
			created = append(created, a.at)
		}
	}
	for _, p := range promotions {
		// Only a job due after the fault needs a promoter alive after it.
		if !p.due.Before(f.at) {
			due = append(due, p.at)
		}
	}
	r.faultSpan = f.back.Sub(f.at)
	r.recCreate, r.recPromote = firstAfter(f.at, created), firstAfter(f.at, due)
	// A complete committed just before the fault can be announced just
	// after it: only completions after the faulty part was back count.
	if d := firstAfter(f.back, completes); d >= 0 {
		r.recDone = r.faultSpan + d
	} else {
		r.recDone = -1
	}
	recovered := f.back
	for _, d := range []time.Duration{r.recCreate, r.recDone, r.recPromote} {
		if t := f.at.Add(d); d >= 0 && t.After(recovered) {
			recovered = t
		}
	}
	r.ranTwice, r.unexplained = reruns(runs, window{from: f.at.Add(-ackSlack), to: recovered})
	r.twoHeld = holders(runs)
	r.workersBack = workersBack(runs, f.at, f.killed)
	r.killedJobs, r.rescue, r.stuck = rescued(runs)
	waits, _ := rescueWaits(runs)
	r.rescueP50, r.rescueP99 = quantile(waits, 0.5), quantile(waits, 0.99)
	r.shortLeases = shortLeases(runs, ttl)
	deps, big, bigAt := ld.flowDeps()
	r.flowJobs, r.early = len(deps), early(deps, runs)
	r.depsTwice, r.depsBad = dependentsTwice(deps, runs, r.unexplained)
	if first, last := span(big, runs); !first.IsZero() {
		r.bigRan, r.bigFrom, r.bigTo = true, first.Sub(f.at), last.Sub(f.at)
	}
	if !bigAt.IsZero() {
		r.bigAcked = bigAt.Sub(f.at)
	}
}

// bad says whether the scenario broke a promise: an acknowledged job lost,
// a job held by two workers at once, or, where the scenario bounds it, a
// killed worker's jobs that took too long to run again (p99) or never did.
func (r *result) bad() bool {
	slow := r.rescueBound > 0 && (r.rescueP99 > r.rescueBound || r.stuck > 0)
	return len(r.out.lost) > 0 || len(r.twoHeld) > 0 || slow || len(r.early) > 0 || len(r.out.waiting) > 0 ||
		len(r.depsBad) > 0
}

// print writes the scenario's own table.
func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "\n== %s: %s\n", r.name, r.what)
	if r.err != nil {
		fmt.Fprintf(w, "   could not run: %v\n", r.err)
		return
	}
	if r.note != "" {
		fmt.Fprintf(w, "   %s\n", r.note)
	}
	rows := [][2]string{
		{"acknowledged creates", fmt.Sprint(r.acked)},
		{"creates refused or timed out", fmt.Sprint(r.createErrors)},
		{"completed", fmt.Sprint(r.out.complete)},
		{"still queued at the end", fmt.Sprint(r.out.live)},
		{"lost", fmt.Sprintf("%d%s", len(r.out.lost), sample(r.out.lost))},
		{"gone from Redis", fmt.Sprintf("%d%s", len(r.out.gone), sample(r.out.gone))},
		{"failed for good after their work was done", fmt.Sprintf("%d%s", len(r.out.failedDone), sample(r.out.failedDone))},
		{"ran twice", fmt.Sprint(r.ranTwice)},
		{"ran twice outside the fault window", fmt.Sprintf("%d%s", len(r.unexplained), sample(r.unexplained))},
		{"held by two workers at once", fmt.Sprintf("%d%s", len(r.twoHeld), sample(r.twoHeld))},
		{"leases granted with under half their ttl", fmt.Sprint(r.shortLeases)},
		{"fault lasted", dur(r.faultSpan)},
		{"first create after the fault", dur(r.recCreate)},
		{"first complete after the fault", dur(r.recDone)},
		{"first promotion of a job due after it", dur(r.recPromote)},
		{"every surviving worker started a job after", dur(r.workersBack)},
		{"drained in", drainText(r.drain, r.drained)},
	}
	if r.flowJobs > 0 {
		rows = append(rows, [2]string{"flow jobs with dependencies", fmt.Sprint(r.flowJobs)},
			[2]string{"  ran before a dependency completed", fmt.Sprintf("%d%s", len(r.early), sample(r.early))},
			[2]string{"  still waiting at the end", fmt.Sprintf("%d%s", len(r.out.waiting), sample(r.out.waiting))},
			[2]string{"  ran twice (no fault explains it)", fmt.Sprintf("%d (%d)%s", len(r.depsTwice), len(r.depsBad), sample(r.depsBad))},
			[2]string{"  hand-overs finished by the leader's sweep", fmt.Sprint(r.swept)})
		if r.bigRan {
			rows = append(rows, [2]string{"  the 1,000-job flow, from the fault",
				fmt.Sprintf("acknowledged %s, ran %s to %s", signed(r.bigAcked), signed(r.bigFrom), signed(r.bigTo))})
		}
	}
	if r.killedJobs > 0 {
		rows = append(rows, [2]string{"jobs running on the killed worker",
			fmt.Sprintf("%d, all started again within %s (%d never)", r.killedJobs, dur(r.rescue), r.stuck)})
		rows = append(rows, [2]string{"  started again after the kill, p50 / p99",
			fmt.Sprintf("%s / %s", dur(r.rescueP50), dur(r.rescueP99))})
	}
	for _, row := range rows {
		fmt.Fprintf(w, "   %-44s %s\n", row[0], row[1])
	}
}

// summary writes one Markdown table of every scenario: the figures
// docs/reliability.md quotes.
func summary(w io.Writer, results []result) {
	fmt.Fprintln(w, "\n| scenario | acked | lost (failed after their work was done) | ran twice (outside window) | two holders | recovery: create / complete / promotion | every worker back | verdict |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---:|---|")
	for _, r := range results {
		if r.err != nil {
			fmt.Fprintf(w, "| %s | - | - | - | - | - | - | could not run |\n", r.name)
			continue
		}
		verdict := "ok"
		if r.bad() {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "| %s | %d | %d (%d) | %d (%d) | %d | %s / %s / %s | %s | %s |\n", r.name, r.acked,
			len(r.out.lost), len(r.out.failedDone), r.ranTwice, len(r.unexplained), len(r.twoHeld),
			dur(r.recCreate), dur(r.recDone), dur(r.recPromote), dur(r.workersBack), verdict)
	}
}

func dur(d time.Duration) string {
	if d < 0 {
		return "none"
	}
	return round(d).String()
}

// signed writes d with its sign: before (-) or after (+) the fault.
func signed(d time.Duration) string {
	if d < 0 {
		return "-" + round(-d).String()
	}
	return "+" + round(d).String()
}

func drainText(d time.Duration, ok bool) string {
	if ok {
		return dur(d)
	}
	return "not drained after " + dur(d)
}

// sample lists a few ids, to look up with kuebus job get.
func sample(ids []int64) string {
	if len(ids) == 0 {
		return ""
	}
	s := make([]string, 0, 5)
	for _, id := range ids[:min(5, len(ids))] {
		s = append(s, fmt.Sprint(id))
	}
	more := ""
	if len(ids) > 5 {
		more = " ..."
	}
	return fmt.Sprintf(": ids %s%s", strings.Join(s, " "), more)
}

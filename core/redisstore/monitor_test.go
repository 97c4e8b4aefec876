package redisstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/redisproc"
)

// TestRedisRunsOnlyTheLinesOfTheFiles: every script text Redis receives
// (MONITOR sees each EVAL and SCRIPT LOAD) is made of lines of the files in
// lua/, and is the text ScriptText gives for one of them: loading resolves
// includes and adds or changes nothing. The store runs its usual calls on
// a Redis of the test's own, whose script cache is flushed first and again
// midway, so that every script goes over the wire as text (EVAL after
// NOSCRIPT) at least once.
func TestRedisRunsOnlyTheLinesOfTheFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv, err := redisproc.Start(ctx, redisproc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	st, err := redisstore.New(redisstore.Config{Client: rdb, Prefix: "mon"})
	require.NoError(t, err)

	mon := monitor(t, srv.Addr())
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	runUsualCalls(t, st, 1_000_000)
	require.NoError(t, rdb.ScriptFlush(ctx).Err())
	runUsualCalls(t, st, 2_000_000)
	sent := mon.scripts(t, rdb)

	fileLines := map[string]bool{}
	require.NoError(t, fs.WalkDir(os.DirFS("lua"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		text, err := os.ReadFile(filepath.Join("lua", p))
		for _, line := range strings.Split(string(text), "\n") {
			fileLines[line] = true
		}
		return err
	}))
	known := map[string]string{}
	for _, name := range redisstore.ScriptNames() {
		text, _ := redisstore.ScriptText(name)
		known[text] = name
	}
	ran := map[string]bool{}
	for _, text := range sent {
		for n, line := range strings.Split(text, "\n") {
			require.True(t, fileLines[line], "line %d of a script Redis ran is in no file of lua/: %q", n+1, line)
		}
		name, ok := known[text]
		require.True(t, ok, "a script Redis ran is no script of lua/ with its includes resolved:\n%s", text)
		ran[name] = true
	}
	for _, name := range []string{"create_jobs.lua", "lease_head.lua", "lease.lua", "complete.lua", "fail.lua",
		"touch.lua", "progress.lua", "release.lua", "rejoin.lua", "rescue_expired.lua", "promote_due.lua",
		"set_state.lua", "set_priority.lua", "add_log.lua", "cancel.lua", "pause.lua", "bulk.lua",
		"remove_job.lua", "clean.lua", "jobs_rescore.lua", "search.lua", "failed_errors.lua", "heartbeat.lua", "history_add.lua", "reserve_ids.lua", "expire_leases.lua", "mark_silent.lua",
		"schedule_set.lua", "fire_schedule.lua", "schedule_remove.lua", "range_after.lua",
		"broadcast_take.lua", "broadcast_sent.lua", "type_set.lua", "aging_rerank.lua", "group_wake.lua",
		"dep_link.lua", "dep_settle.lua", "handover_done.lua"} {
		require.True(t, ran[name], "the usual calls ran %s as text", name)
	}
	require.Len(t, ran, len(redisstore.ScriptNames()), "every script of lua/ ran")
}

// runUsualCalls makes the store run each of its scripts, as a core serving
// producers, workers, the dashboard and the leader would, at now.
func runUsualCalls(t *testing.T, st *redisstore.Store, now int64) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) { t.Helper(); require.NoError(t, err) }
	two := 2
	specs := []core.Spec{
		{Type: "mon", Data: []byte(`{"n":1}`), MaxAttempts: 3, TTL: time.Second, StallLimit: &two},
		{Type: "mon", Data: []byte(`{"n":2}`), MaxAttempts: 1, TTL: time.Second, UniqueKey: fmt.Sprint("u", now)},
		{Type: "mon", Data: []byte(`{"n":3}`), MaxAttempts: 1, TTL: time.Second, UniqueKey: fmt.Sprint("u", now)},
		{Type: "mon", Data: []byte(`{"n":4}`), MaxAttempts: 2, TTL: time.Second, Delay: 10 * time.Millisecond,
			Backoff: &core.Backoff{Type: core.BackoffFixed, Delay: 5 * time.Millisecond}},
		{Type: "other", Data: []byte(`{"n":5}`), MaxAttempts: 2, TTL: time.Second,
			RemoveOnComplete: core.Retention{AtOnce: true}},
	}
	_, existing, err := st.Create(ctx, now, specs)
	must(err)
	require.True(t, existing[2], "the third spec's unique key is the second's")
	jobs2, _, err := st.Create(ctx, now, []core.Spec{{Type: "mon", MaxAttempts: 5, TTL: time.Second}, {Type: "mon", MaxAttempts: 5, TTL: time.Second}})
	must(err)

	leased, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mon"}, Max: 4, Worker: "w1", Token: "L1", TTL: 0}) // one type: lease_head.lua
	must(err)
	require.Len(t, leased, 4)
	more, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mon", "other"}, Max: 1, Worker: "w1", Token: "L2", TTL: 0}) // several: lease.lua
	must(err)
	require.Len(t, more, 1)
	op := func(j core.Job, lease string) service.StoreOp {
		return service.StoreOp{ID: j.ID, Lease: lease, Type: j.Type}
	}
	apply := func(o core.Op, ops ...service.StoreOp) {
		t.Helper()
		_, err := st.Apply(ctx, now, o, ops)
		must(err)
	}
	apply(core.OpTouch, op(leased[0], "L1"))
	p := op(leased[0], "L1")
	p.Percent = 50
	apply(core.OpProgress, p)
	apply(core.OpComplete, op(leased[0], "L1"), op(more[0], "L2"))
	f := op(leased[1], "L1")
	f.Error = "boom"
	apply(core.OpFail, f)
	apply(core.OpRelease, op(leased[2], "L1"))
	r := op(leased[3], "L1")
	d := int64(5)
	r.Delay = &d
	apply(core.OpRejoin, r)

	// a worker that went silent holding a job: the leader ends its lease
	_, _, err = st.Create(ctx, now, []core.Spec{{Type: "mon", MaxAttempts: 1, TTL: time.Minute}})
	must(err)
	must(st.Heartbeat(ctx, now-10_000, &core.Heartbeat{Worker: "w3", Types: []string{"mon"}, Concurrency: 1, StartedAt: now}))
	for at := now - 3000; at <= now; at += 500 { // another worker beats on: the run is unbroken
		must(st.Heartbeat(ctx, at, &core.Heartbeat{Worker: "w4", Types: []string{"mon"}, Concurrency: 1, StartedAt: now}))
	}
	quiet, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mon"}, Max: 1, Worker: "w3", Token: "L4"})
	must(err)
	require.NotEmpty(t, quiet)
	ended, _, err := st.ExpireSilent(ctx, now)
	must(err)
	require.Equal(t, 1, ended)

	// the one left in ready runs past its ttl, and the leader rescues it
	stray, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mon"}, Max: 1, Worker: "w2", Token: "L3", TTL: 1})
	must(err)
	require.NotEmpty(t, stray)
	_, _, err = st.Rescue(ctx, now+100, 100, 1)
	must(err)
	// a broadcast: the promote completes it; a core takes it to publish,
	// then says it went out
	_, _, err = st.Create(ctx, now, []core.Spec{{Type: "mon", Data: []byte(`"all"`), MaxAttempts: 1, TTL: time.Second, Broadcast: true}})
	must(err)
	_, _, err = st.Promote(ctx, now+100, 100)
	must(err)
	taken, _, err := st.TakeBroadcasts(ctx, now+100, now+5100, 100)
	must(err)
	require.Len(t, taken, 1)
	must(st.BroadcastsSent(ctx, taken))

	_, _, err = st.SetState(ctx, now, jobs2[0].ID, core.StateFailed)
	must(err)
	_, err = st.SetPriority(ctx, now, jobs2[1].ID, core.Priority(-5))
	must(err)
	_, err = st.AddLog(ctx, now, jobs2[1].ID, "a line")
	must(err)
	_, _, err = st.Cancel(ctx, now, jobs2[1].ID)
	must(err)
	_, err = st.Pause(ctx, "mon", true)
	must(err)
	_, err = st.Pause(ctx, "mon", false)
	must(err)
	// a type with a policy: the lease scripts' limited path, then none again
	must(st.SetType(ctx, &core.TypePolicy{Type: "mon", Concurrency: 100, Rate: &core.Rate{Limit: 100, Per: time.Second},
		Aging: &core.Aging{Per: time.Second}})) // and aging: aging_rerank.lua
	_, err = st.TypePolicy(ctx, "mon")
	must(err)
	_, _, err = st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mon"}, Max: 1, Worker: "w5", Token: "L5"})
	must(err)
	_, _, err = st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mon", "other"}, Max: 1, Worker: "w5", Token: "L6"})
	must(err)
	must(st.SetType(ctx, &core.TypePolicy{Type: "mon"}))
	// group limits: the lease scripts park a group at its limit, a lease
	// of several types first wakes the parked groups (group_wake.lua)
	must(st.SetType(ctx, &core.TypePolicy{Type: "mongroup", GroupConcurrency: 1}))
	_, _, err = st.Create(ctx, now, []core.Spec{{Type: "mongroup", MaxAttempts: 1, TTL: time.Second, Group: "g"},
		{Type: "mongroup", MaxAttempts: 1, TTL: time.Second, Group: "g"}})
	must(err)
	_, _, err = st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mongroup"}, Max: 2, Worker: "w5", Token: "L7"})
	must(err)
	_, _, err = st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"mongroup", "other"}, Max: 1, Worker: "w5", Token: "L8"})
	must(err)
	_, err = st.Bulk(ctx, now, &service.BulkQuery{Action: core.BulkRetry, State: core.StateFailed, Type: "mon", Limit: 10})
	must(err)
	_, err = st.FailedErrors(ctx, "mon", 10)
	must(err)
	_, err = st.Search(ctx, &service.SearchParams{Query: "n", Type: "mon", State: "", Limit: 10, Budget: 100})
	must(err)
	_, err = st.Range(ctx, &service.RangeParams{Limit: 5, After: &core.RangeCursor{Score: 1, Member: "1"}})
	must(err)
	_, _, err = st.RescoreJobs(ctx, "mon") // the leader's cleaner, beside clean.lua
	must(err)
	_, _, err = st.Clean(ctx, &service.CleanParams{Now: now + time.Hour.Milliseconds(), Type: "mon", State: core.StateComplete, Rule: core.Retention{Age: time.Millisecond}, Limit: 100})
	must(err)
	_, err = st.Remove(ctx, jobs2[1].ID) // cancelled, not cleaned
	must(err)

	must(st.Heartbeat(ctx, now, &core.Heartbeat{Worker: "w1", Types: []string{"mon"}, Concurrency: 1, StartedAt: now}))
	must(st.AddHistory(ctx, "mon", []core.MinuteCounts{{At: now / 60000 * 60000, Created: 1}}))

	name := "s" + strconv.FormatInt(now, 10)
	sc, err := st.SetSchedule(ctx, now, &core.Schedule{Name: name, Every: time.Second, Spec: core.Spec{Type: "mon", MaxAttempts: 1, TTL: time.Second}})
	must(err)
	_, _, err = st.FireSchedule(ctx, &service.FireParams{Now: now + 1000, Schedule: sc, Tick: sc.NextAt, Next: sc.NextAt + 1000, Spec: sc.Spec})
	must(err)
	_, err = st.RemoveSchedule(ctx, name)
	must(err)

	// a job waiting for one of another type: its create links them
	// (dep_link), the complete hands over (dep_settle), each hand-over is
	// forgotten once done (handover_done)
	dep, _, err := st.Create(ctx, now, []core.Spec{{Type: "dep", MaxAttempts: 1, TTL: 1000}})
	must(err)
	_, _, err = st.Create(ctx, now, []core.Spec{{Type: "mon", MaxAttempts: 1, TTL: 1000, DependsOn: []int64{dep[0].ID}}})
	must(err)
	leasedDep, _, err := st.Lease(ctx, &service.LeaseParams{Now: now, Types: []string{"dep"}, Max: 1, Worker: "w1", Token: "L5"})
	must(err)
	require.Len(t, leasedDep, 1)
	apply(core.OpComplete, op(leasedDep[0], "L5"))
}

// monitorTap reads what a MONITOR connection prints.
type monitorTap struct {
	lines chan string
}

// monitor opens a MONITOR connection to addr, which the test closes.
func monitor(t *testing.T, addr string) *monitorTap {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = conn.Write([]byte("MONITOR\r\n"))
	require.NoError(t, err)
	r := bufio.NewReaderSize(conn, 1<<20)
	ok, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", ok)
	tap := &monitorTap{lines: make(chan string, 1<<16)}
	go func() {
		defer close(tap.lines)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			tap.lines <- strings.TrimSuffix(line, "\r\n")
		}
	}()
	return tap
}

// scripts returns the text of every EVAL and SCRIPT LOAD MONITOR printed
// until now: it sends a marker through rdb and reads up to it.
func (m *monitorTap) scripts(t *testing.T, rdb *redis.Client) []string {
	t.Helper()
	const marker = "kuebus-monitor-end"
	require.NoError(t, rdb.Echo(context.Background(), marker).Err())
	var out []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, open := <-m.lines:
			require.True(t, open, "MONITOR connection closed before the marker")
			args := monitorArgs(t, line)
			switch {
			case len(args) >= 2 && strings.EqualFold(args[0], "ECHO") && args[1] == marker:
				return out
			case len(args) >= 2 && strings.EqualFold(args[0], "EVAL"):
				out = append(out, args[1])
			case len(args) >= 3 && strings.EqualFold(args[0], "SCRIPT") && strings.EqualFold(args[1], "LOAD"):
				out = append(out, args[2])
			}
		case <-timeout:
			t.Fatal("MONITOR printed no marker within 30 s")
		}
	}
}

// monitorArgs reads the quoted arguments of a MONITOR line,
// `+<time> [<db> <client>] "ARG" "ARG" ...`, as Redis escapes them
// (sdscatrepr: \\ \" \n \r \t \a \b and \xHH).
func monitorArgs(t *testing.T, line string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(line, "] ")
	if !ok {
		return nil
	}
	var args []string
	for len(rest) > 0 {
		require.Equal(t, byte('"'), rest[0], "a MONITOR argument opens with a quote: %q", rest)
		var b strings.Builder
		i := 1
		for ; rest[i] != '"'; i++ {
			if rest[i] != '\\' {
				b.WriteByte(rest[i])
				continue
			}
			i++
			switch rest[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'x':
				n, err := strconv.ParseUint(rest[i+1:i+3], 16, 8)
				require.NoError(t, err)
				b.WriteByte(byte(n))
				i += 2
			default: // \\ and \"
				b.WriteByte(rest[i])
			}
		}
		args = append(args, b.String())
		rest = strings.TrimPrefix(rest[i+1:], " ")
	}
	return args
}

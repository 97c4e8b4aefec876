package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// runStats prints the counts. With some types' Redis shard down (a Cluster
// master with no replica to take over) it prints the counts of the others,
// then those types with their errors, and fails (exit 1) naming them: a
// script sees that the totals leave a shard out, a person sees the rest.
func runStats(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	return cf.withClient(ctx, func(c *core.Client) error {
		st, err := c.StatsPartial(ctx)
		if err != nil {
			return err
		}
		// First, which deployment the counts are of.
		if _, err := fmt.Fprintf(e.stdout, "deployment  %s\n\n", cf.at); err != nil {
			return err
		}
		if err := printStats(e.stdout, st); err != nil {
			return err
		}
		if len(st.TypeErrors) == 0 {
			return nil
		}
		failed := make([]string, len(st.TypeErrors))
		for i, te := range st.TypeErrors {
			failed[i] = te.Type
		}
		return fmt.Errorf("stats: cannot read %s (Redis shard down); the counts above leave out what cannot be read", strings.Join(failed, ", "))
	})
}

// printStats writes st as tables: totals, work time and paused types, the
// counts per type, and the types that could not be read.
func printStats(w io.Writer, st *core.Stats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATE\tJOBS")
	for _, s := range core.States {
		fmt.Fprintf(tw, "%s\t%d\n", s, st.Get(s))
	}
	fmt.Fprintf(tw, "\nwork time\t%s\n", time.Duration(st.WorkTime)*time.Millisecond)
	if len(st.Paused) > 0 {
		fmt.Fprintf(tw, "paused\t%s\n", strings.Join(st.Paused, " "))
	}
	if len(st.Types) > 0 {
		fmt.Fprint(tw, "\nTYPE")
		for _, s := range core.States {
			fmt.Fprintf(tw, "\t%s", strings.ToUpper(string(s)))
		}
		fmt.Fprintln(tw)
		for _, t := range slices.Sorted(maps.Keys(st.Types)) {
			fmt.Fprint(tw, t)
			for _, s := range core.States {
				fmt.Fprintf(tw, "\t%d", st.Types[t].Get(s))
			}
			fmt.Fprintln(tw)
		}
	}
	if len(st.TypeErrors) > 0 {
		fmt.Fprintln(tw, "\nUNREADABLE TYPE\tERROR")
		for _, te := range st.TypeErrors {
			fmt.Fprintf(tw, "%s\t%s: %s\n", te.Type, te.Code, oneLine(te.Error))
		}
	}
	return tw.Flush()
}

func runPause(ctx context.Context, e *env, args []string) error {
	return withJobType(ctx, e, args, func(c *core.Client, jobType string) error {
		if err := c.Pause(ctx, jobType); err != nil {
			return err
		}
		_, err := fmt.Fprintf(e.stdout, "paused %s\n", jobType)
		return err
	})
}

func runResume(ctx context.Context, e *env, args []string) error {
	return withJobType(ctx, e, args, func(c *core.Client, jobType string) error {
		if err := c.Resume(ctx, jobType); err != nil {
			return err
		}
		_, err := fmt.Fprintf(e.stdout, "resumed %s\n", jobType)
		return err
	})
}

// withJobType runs a command whose one argument is a job type.
func withJobType(ctx context.Context, e *env, args []string, fn func(*core.Client, string) error) error {
	return withArg(ctx, e, args, func(s string) (string, error) {
		if err := bus.ValidToken(s); err != nil {
			return "", usagef("%s: %q is not a job type: %v", e.cmd.path(), s, err)
		}
		return s, nil
	}, fn)
}

// eventBuffer is how many events may wait to be printed; beyond it NATS
// counts the subscriber as slow and drops events.
const eventBuffer = 4096

func runEvents(ctx context.Context, e *env, args []string) error {
	var cf connFlags
	fs := e.flags()
	cf.register(fs)
	since := fs.String("since", "", "first replay the durable events stored since `WHEN`: a duration back from now (10m, 2h) or an RFC 3339 time, then follow live (needs events.durable)")
	fromSeq := fs.Uint64("from-seq", 0, "first replay the durable events from stream sequence `N` on, then follow live (needs events.durable)")
	pos, err := e.parse(fs, args, 0, 1)
	if err != nil {
		return err
	}
	subj, err := cf.check()
	if err != nil {
		return err
	}
	replay := bus.ReplayOptions{FromSeq: *fromSeq}
	if *since != "" {
		if replay.Since, err = parseSince(*since, time.Now()); err != nil {
			return usagef("events: --since: %v", err)
		}
		if *fromSeq > 0 {
			return usagef("events: --since and --from-seq exclude each other: give one start")
		}
	}
	subjects := []string{subj.AllJobEvents(), subj.AllQueueEvents()}
	if len(pos) == 1 {
		s, err := subj.Pattern(pos[0])
		if err != nil {
			return usagef("events: SUBJECT: %v", err)
		}
		subjects = []string{s}
	}
	nc, err := cf.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	if !replay.Since.IsZero() || replay.FromSeq > 0 {
		if len(pos) == 1 {
			replay.Subjects = subjects
		}
		fmt.Fprintf(e.stderr, "replaying %s from %s at %s, then live\n", strings.Join(subjects, ", "), replayStart(replay), redactURL(cf.url))
		err := bus.ReplayEvents(ctx, nc, subj, replay, func(ev bus.StoredEvent) error {
			_, err := fmt.Fprintf(e.stdout, "%s %s\n", ev.Subject, ev.Data)
			return err
		})
		return cf.explain(err)
	}
	// One channel for every subscription, read on this goroutine only, so
	// that output is written by one writer in arrival order.
	msgs := make(chan *nats.Msg, eventBuffer)
	for _, s := range subjects {
		sub, err := nc.ChanSubscribe(s, msgs)
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", s, err)
		}
		defer func() { _ = sub.Unsubscribe() }()
	}
	if err := nc.FlushTimeout(cf.timeout); err != nil {
		return cf.explain(fmt.Errorf("subscribe: %w", err))
	}
	fmt.Fprintf(e.stderr, "listening on %s at %s\n", strings.Join(subjects, ", "), redactURL(cf.url))
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-msgs:
			if _, err := fmt.Fprintf(e.stdout, "%s %s\n", m.Subject, m.Data); err != nil {
				return err
			}
		}
	}
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%s is not a positive duration", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither a duration like 10m nor a time like 2026-01-02T15:04:05Z", s)
	}
	return t, nil
}

func replayStart(r bus.ReplayOptions) string {
	if r.FromSeq > 0 {
		return fmt.Sprintf("sequence %d", r.FromSeq)
	}
	return r.Since.UTC().Format(time.RFC3339)
}

// runWorkers lists the live workers: those heard from lately.
func runWorkers(ctx context.Context, e *env, args []string) error {
	return withClient(ctx, e, args, func(c *core.Client) error {
		list, err := c.Workers(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKER\tHOST\tTYPES\tRUNNING\tSEEN")
		for _, w := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\n", w.Worker, w.Host, strings.Join(w.Types, ","), w.Running, w.Concurrency,
				time.UnixMilli(w.SeenAt).UTC().Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version from the build info is shown.
var version string

func runVersion(_ context.Context, e *env, args []string) error {
	fs := e.flags()
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	_, err := fmt.Fprintf(e.stdout, "kuebus %s %s %s/%s\n", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}

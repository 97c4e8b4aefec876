package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/worker"
)

// record is one line of a worker's record file: a handler starting or
// ending. The driver reads them at the end to find jobs that ran twice or
// had two holders at once.
type record struct {
	Event  string `json:"e"` // "start" or "end"
	ID     int64  `json:"id"`
	Lease  string `json:"lease"`
	Worker string `json:"w"`
	At     int64  `json:"t"`               // unix nanoseconds
	Until  int64  `json:"until,omitempty"` // start: the lease's lease_until, unix ms
	OK     bool   `json:"ok,omitempty"`    // end: the handler finished its work
}

// recorder appends records to a file, one write per line and no buffer,
// so that what was written survives a kill -9 of the process.
type recorder struct {
	mu sync.Mutex // one line at a time
	f  *os.File
}

func (r *recorder) write(rec record) {
	b, _ := json.Marshal(rec) // a struct of strings and ints always marshals
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(append(b, '\n'))
}

// runWorker is `kuebus-chaos worker`: a kuebus worker whose handler
// records its start, works for --work, and records its end.
func runWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("kuebus-chaos worker", flag.ContinueOnError)
	url := fs.String("nats", "", "NATS `URL`")
	id := fs.String("id", "", "worker id")
	path := fs.String("records", "", "record `FILE`")
	types := fs.String("type", jobType, "comma-separated job types")
	concurrency := fs.Int("concurrency", 8, "handlers at once")
	work := fs.Duration("work", 20*time.Millisecond, "how long each job works")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" || *id == "" || *path == "" {
		return errors.New("chaos: worker: --nats, --id and --records are required")
	}
	f, err := os.OpenFile(*path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: worker: %w", err)
	}
	defer f.Close()
	rec := &recorder{f: f}
	nc, err := bus.Connect(*url, "kuebus-chaos-"+*id)
	if err != nil {
		return err
	}
	defer nc.Close()
	// The worker's troubles go to its log file, beside its records.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := worker.New(worker.Config{Conn: nc, ID: *id, Concurrency: *concurrency, Logger: logger})
	if err != nil {
		return err
	}
	h := worker.HandlerFunc(func(ctx context.Context, j *worker.Job) error {
		rec.write(record{Event: "start", ID: j.ID, Lease: j.Lease, Worker: *id, At: time.Now().UnixNano(), Until: j.LeaseUntil})
		ok := false
		defer func() {
			rec.write(record{Event: "end", ID: j.ID, Lease: j.Lease, Worker: *id, At: time.Now().UnixNano(), OK: ok})
		}()
		timer := time.NewTimer(*work) // the work itself, not a wait for anything
		defer timer.Stop()
		select {
		case <-timer.C:
			ok = true
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	for typ := range strings.SplitSeq(*types, ",") {
		w.Handle(typ, h)
	}
	return w.Run(ctx)
}

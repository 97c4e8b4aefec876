package service

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
)

// The per-minute history behind the dashboard's charts: each core counts
// the jobs created, completed and failed for good in the events it
// publishes, per type and minute, in memory, and adds its counts to Redis
// every HistoryFlushDefault; the counts of every core add up there, so
// every dashboard shows the same history. Counting costs a map update per
// event and Redis one script per type per flush, not per job. A core that
// dies loses at most its last seconds of counts: the charts are a picture
// of the load, not a ledger (the job indexes are that).

// HistoryFlushDefault is how often a core adds its counts to Redis.
const HistoryFlushDefault = 5 * time.Second

type minuteKey struct {
	jobType string
	minute  int64
}

// history is a core's counts not yet in Redis.
type history struct {
	mu     sync.Mutex
	counts map[minuteKey]*core.MinuteCounts
	stop   chan struct{}
	done   chan struct{}
}

func newHistory() *history {
	return &history{counts: map[minuteKey]*core.MinuteCounts{}, stop: make(chan struct{}), done: make(chan struct{})}
}

// count notes one event of a job at (unix ms), when it is one the history
// counts: a new job, a start (with how long the job waited, from ready to
// leased), a completion, a failure for good.
func (h *history) count(event string, job *core.Job, at int64, isNew bool) {
	if event == bus.EventWaiting && isNew {
		event = bus.EventEnqueue // created, waiting
	}
	if event != bus.EventComplete && event != bus.EventFailed && event != bus.EventStart && !(event == bus.EventEnqueue && isNew) {
		return
	}
	k := minuteKey{job.Type, at / 60000}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.counts[k]
	if c == nil {
		c = &core.MinuteCounts{At: k.minute * 60000, Waits: make([]int64, len(core.WaitBounds)+1)}
		h.counts[k] = c
	}
	switch event {
	case bus.EventEnqueue:
		c.Created++
	case bus.EventStart:
		c.Started++
		c.Waits[waitBucket(at-max(job.CreatedAt, job.PromoteAt))]++
	case bus.EventComplete:
		c.Completed++
	case bus.EventFailed:
		c.Failed++
	}
}

// waitBucket is the core.WaitBounds bucket of a wait of ms.
func waitBucket(ms int64) int {
	i, _ := slices.BinarySearch(core.WaitBounds, ms)
	return i
}

// take empties the counts and returns them by type.
func (h *history) take() map[string][]core.MinuteCounts {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]core.MinuteCounts{}
	for k, c := range h.counts {
		c.Waiting = -1 // not sampled: FlushHistory samples the current minute
		out[k.jobType] = append(out[k.jobType], *c)
	}
	clear(h.counts)
	return out
}

// FlushHistory adds the counts gathered so far to Redis, with a sample of
// each type's waiting (inactive) jobs in the current minute: the queue's
// depth over time (one stats read per flush; the last sample of a minute
// or an hour is the one kept). The service does it every
// HistoryFlushDefault and when it stops; counts that cannot be written are
// lost (and logged).
func (s *Service) FlushHistory(ctx context.Context) {
	all := s.history.take()
	now := s.now() / 60000 * 60000
	if st, err := s.store.Stats(ctx); err != nil {
		s.log.Warn("history: queue depth not sampled", "err", err)
	} else {
		for jobType, c := range st.Types {
			counts := all[jobType]
			i := slices.IndexFunc(counts, func(m core.MinuteCounts) bool { return m.At == now })
			if i < 0 {
				counts = append(counts, core.MinuteCounts{At: now, Waits: make([]int64, len(core.WaitBounds)+1)})
				i = len(counts) - 1
			}
			counts[i].Waiting = c.Inactive
			all[jobType] = counts
		}
	}
	for jobType, counts := range all {
		if err := s.store.AddHistory(ctx, jobType, counts); err != nil {
			s.log.Warn("history not written", "type", jobType, "err", err)
		}
	}
}

// runHistory flushes until Stop, then once more.
func (s *Service) runHistory(every time.Duration) {
	defer close(s.history.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), every)
			s.FlushHistory(ctx)
			cancel()
		case <-s.history.stop:
			return
		}
	}
}

func checkHistory(req *core.HistoryRequest) error {
	switch {
	case req.Minutes < 0 || req.Minutes > core.MaxHistoryMinutes:
		return core.Invalidf("minutes", "%d is outside 1..%d", req.Minutes, core.MaxHistoryMinutes)
	case req.Hours < 0 || req.Hours > core.MaxHistoryHours:
		return core.Invalidf("hours", "%d is outside 1..%d", req.Hours, core.MaxHistoryHours)
	case req.Minutes > 0 && req.Hours > 0:
		return core.Invalidf("hours", "give minutes or hours, not both")
	}
	return checkType(req.Type)
}

func (s *Service) historyOf(ctx context.Context, req *core.HistoryRequest) (*core.HistoryReply, error) {
	if err := checkHistory(req); err != nil {
		return nil, err
	}
	n, step := int64(cmp.Or(req.Minutes, core.HistoryMinutesDefault)), int64(60000)
	if req.Hours > 0 {
		n, step = int64(req.Hours), 3_600_000
	}
	types := []string{req.Type}
	if req.Type == "" {
		var err error
		if types, err = s.store.Types(ctx); err != nil {
			return nil, err
		}
	}
	now := s.now() / step
	counts, err := s.store.History(ctx, types, step, now-n+1, now)
	if err != nil {
		return nil, err
	}
	for i := range counts {
		counts[i].WaitP95 = core.WaitPercentile(counts[i].Waits, 0.95)
	}
	return &core.HistoryReply{Step: step, Minutes: counts}, nil
}

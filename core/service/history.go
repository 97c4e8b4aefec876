package service

import (
	"context"
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

// count notes one event of a job of jobType at (unix ms), when it is one
// the history counts.
func (h *history) count(event, jobType string, at int64, isNew bool) {
	if event == bus.EventWaiting && isNew {
		event = bus.EventEnqueue // created, waiting
	}
	if event != bus.EventComplete && event != bus.EventFailed && !(event == bus.EventEnqueue && isNew) {
		return
	}
	k := minuteKey{jobType, at / 60000}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.counts[k]
	if c == nil {
		c = &core.MinuteCounts{At: k.minute * 60000}
		h.counts[k] = c
	}
	switch event {
	case bus.EventEnqueue:
		c.Created++
	case bus.EventComplete:
		c.Completed++
	case bus.EventFailed:
		c.Failed++
	}
}

// take empties the counts and returns them by type.
func (h *history) take() map[string][]core.MinuteCounts {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]core.MinuteCounts{}
	for k, c := range h.counts {
		out[k.jobType] = append(out[k.jobType], *c)
	}
	clear(h.counts)
	return out
}

// FlushHistory adds the counts gathered so far to Redis. The service does
// it every HistoryFlushDefault and when it stops; counts that cannot be
// written are lost (and logged).
func (s *Service) FlushHistory(ctx context.Context) {
	for jobType, counts := range s.history.take() {
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
	if req.Minutes < 0 || req.Minutes > core.MaxHistoryMinutes {
		return core.Invalidf("minutes", "%d is outside 1..%d", req.Minutes, core.MaxHistoryMinutes)
	}
	return checkType(req.Type)
}

func (s *Service) historyOf(ctx context.Context, req *core.HistoryRequest) (*core.HistoryReply, error) {
	if err := checkHistory(req); err != nil {
		return nil, err
	}
	minutes := int64(req.Minutes)
	if minutes == 0 {
		minutes = core.HistoryMinutesDefault
	}
	types := []string{req.Type}
	if req.Type == "" {
		var err error
		if types, err = s.store.Types(ctx); err != nil {
			return nil, err
		}
	}
	now := s.now() / 60000
	counts, err := s.store.History(ctx, types, now-minutes+1, now)
	if err != nil {
		return nil, err
	}
	return &core.HistoryReply{Minutes: counts}, nil
}

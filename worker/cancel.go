package worker

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
)

// listenCancels subscribes, once per worker, to the job.cancel events of
// the types it handles (bus.Subjects.JobCancels: one type, or every type
// when it handles several), and cancels the handler's context of each
// cancelled job that runs here, with cause ErrCancelled. Core publishes the
// event after the job is cancelled in Redis, so the handler's
// acknowledgement, whenever it comes, answers conflict and changes nothing.
func (w *Worker) listenCancels(types []string) (*nats.Subscription, error) {
	subject := w.client.Subjects().JobCancels(types)
	sub, err := w.cfg.Conn.Subscribe(subject, func(m *nats.Msg) {
		var ev struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal(m.Data, &ev) != nil || ev.ID <= 0 {
			return
		}
		if w.jobs.cancelRun(ev.ID) {
			w.log.Info("job cancelled; its handler's context is cancelled", "job_id", ev.ID)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("worker: subscribe to %s: %w", subject, err)
	}
	// A burst of cancels (a bulk cancel of a whole state) must not be
	// dropped as a slow consumer: each costs a map look-up.
	_ = sub.SetPendingLimits(1<<20, 256<<20)
	return sub, nil
}

// handledTypes lists every type of the pools.
func handledTypes(pools []*pool) []string {
	var types []string
	for _, p := range pools {
		types = append(types, p.types...)
	}
	return types
}

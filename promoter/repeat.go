package promoter

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kuebus/kuebus/core"
)

// The periodic loops of a leadership term that need no wake-up from events
// (rescue, clean) share their shape: call core, and after each call wait
// what the call's answer says, or RetryDelay after a failure (at once after
// a timeout: the call was lost with its core, and another core answers).

// repeat runs step until ctx ends, then returns. step makes one call and
// says how long to wait before the next; when it fails, repeat logs it as
// what ("rescue failed; retrying") and waits retry instead, or not at all
// when the call timed out.
func repeat(ctx context.Context, log *slog.Logger, what string, retry time.Duration,
	step func(context.Context) (time.Duration, error)) {
	for {
		wait, err := step(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			wait = retryDelay(ctx, err, retry)
			log.WarnContext(ctx, what+" failed; retrying", "err", err, "retry_in", wait)
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

// checkRepeat checks what a repeated loop's config says of its calls: the
// limit per call, the interval and retry delay, and the call timeout.
func checkRepeat(what string, limit int, interval, retry, callTimeout time.Duration) error {
	switch {
	case limit < 0 || limit > core.MaxMoveLimit:
		return fmt.Errorf("promoter: %s limit %d is not in 1..%d", what, limit, core.MaxMoveLimit)
	case interval < 0:
		return fmt.Errorf("promoter: %s interval %v is negative", what, interval)
	case retry < 0:
		return fmt.Errorf("promoter: %s retry delay %v is negative", what, retry)
	}
	return checkCallTimeout(what, callTimeout)
}

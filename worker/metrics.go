package worker

import (
	"errors"
	"time"
)

// Metrics hears what a worker's handlers do, for a metrics backend:
// worker/workerprom has a Prometheus one. Its methods are called on the
// handlers' goroutines and must not block. Default (Config.Metrics nil):
// nothing is measured.
type Metrics interface {
	// Started: a handler of jobType started.
	Started(jobType string)
	// Finished: it returned after took, with an outcome: OutcomeComplete,
	// OutcomeFail (an error or a panic; core retries or fails the job),
	// OutcomeDiscard (failed for good by Discard) or OutcomeRetryAfter (put
	// back by RetryAfter, no attempt used).
	Finished(jobType string, outcome Outcome, took time.Duration)
}

// Outcome is how a handler ended, as Metrics hears it.
type Outcome string

// The outcomes of a handler.
const (
	OutcomeComplete   Outcome = "complete"
	OutcomeFail       Outcome = "fail"
	OutcomeDiscard    Outcome = "discard"
	OutcomeRetryAfter Outcome = "retry_after"
)

// OutcomeOf names how a handler that returned err ended, as Metrics hears
// it: for a middleware that reports outcomes too (worker/workerotel).
func OutcomeOf(err error) Outcome {
	var retry *retryAfter
	var d *discard
	switch {
	case err == nil:
		return OutcomeComplete
	case errors.As(err, &retry):
		return OutcomeRetryAfter
	case errors.As(err, &d):
		return OutcomeDiscard
	}
	return OutcomeFail
}

// noMetrics measures nothing.
type noMetrics struct{}

func (noMetrics) Started(string)                          {}
func (noMetrics) Finished(string, Outcome, time.Duration) {}

package core

import (
	"encoding/json"
	"time"
)

// What a worker sends and gets: docs/protocol.md §3.16's lease, complete, fail, touch,
// release, rejoin, progress and rescue, plus batch, which carries many of
// them in one request.

// LeaseRequest asks for up to Max ready jobs of the given types, by
// priority then first in, first out. With Wait > 0 and nothing ready, core
// holds the request up to Wait ms and answers as soon as a job of one of the
// types becomes ready.
type LeaseRequest struct {
	Types  []string `json:"types"`
	Max    int      `json:"max,omitempty"` // default 1
	Worker string   `json:"worker,omitempty"`
	Wait   int64    `json:"wait,omitempty"` // ms
	// TTL, when set, is how long these leases last (ms), and how far each
	// touch extends them, instead of each job's own ttl: for a client that
	// knows how long it needs (HTTP pop's ?ttl=).
	TTL int64 `json:"ttl,omitempty"`
}

// Limits of a lease request.
const (
	MaxLeaseTypes = 64
	MaxLeaseBatch = 1000
	MaxLeaseWait  = 5 * 60 * 1000 // ms
	MaxWorkerLen  = 256
)

// LeaseReplyMargin is how long past its wait the asker of a waiting lease
// waits for the reply before it gives up and calls again (the Go worker
// does; a core that died never answers). Core answers within the wait plus
// milliseconds; jobs it leased later than the wait plus half this margin
// (a core stalled that long) it releases at once instead of sending them to
// an asker that has most likely given up, where they would sit leased to
// no one until their ttl.
const LeaseReplyMargin = 500 * time.Millisecond

// Op names one operation of a lease holder.
type Op string

// The operations of a lease holder.
const (
	OpComplete Op = "complete"
	OpFail     Op = "fail"
	OpTouch    Op = "touch"
	OpRelease  Op = "release"
	OpRejoin   Op = "rejoin"
	OpProgress Op = "progress"
)

// LeaseOp is one operation by the holder of a lease: the request body of
// complete, fail, touch, release, rejoin and progress, and one element of
// batch. Fields an operation does not use must be left out.
type LeaseOp struct {
	// Op is set inside a batch only; each single method implies its own.
	Op    Op     `json:"op,omitempty"`
	ID    int64  `json:"id"`
	Lease string `json:"lease"`
	// Type is the job's type, when the caller knows it (a worker does): it
	// saves core a lookup. A wrong type reads as not_found.
	Type   string          `json:"type,omitempty"`
	Result json.RawMessage `json:"result,omitempty"` // complete
	Error  string          `json:"error,omitempty"`  // fail
	Final  bool            `json:"final,omitempty"`  // fail: no more attempts
	// Delay is rejoin's wait before the job is due again (ms; absent: 0),
	// and fail's wait before the retry when attempts remain (ms; absent:
	// the job's backoff; 0: at once). 0 … MaxDelay.
	Delay    *int64 `json:"delay,omitempty"`
	Complete *int64 `json:"complete,omitempty"` // progress: done so far
	Total    *int64 `json:"total,omitempty"`    // progress: of this many
	// Stack is fail's: where the handler failed (a panic's stack, or the
	// stack an error carried), at most MaxStackBytes. It goes to the
	// job's error history with the error.
	Stack string `json:"stack,omitempty"`
}

// TouchReply is touch's reply: the lease's new expiry (unix ms).
type TouchReply struct {
	LeaseUntil int64 `json:"lease_until"`
}

// BatchRequest carries several lease operations, applied in one round trip
// per job type; each succeeds or fails on its own.
type BatchRequest struct {
	Ops []LeaseOp `json:"ops"`
	// Lease, when set, also leases up to Lease.Max ready jobs once the ops
	// are applied, answered in the same reply (BatchReply.Jobs).
	// Experimental: see BatchLease.
	Lease *BatchLease `json:"lease,omitempty"`
}

// BatchLease is a batch's lease part: a lease (LeaseRequest) that never
// waits and takes each job's own ttl, run once the batch's ops are applied,
// so that a client that finishes jobs asks for the next ones in the same
// trip (docs/protocol.md §3.24).
//
// Experimental: it may change, or go, in a later version of the protocol.
// The Go worker does not use it: it sends its outcomes with Client.Batch and
// leases with Client.Lease (it was tried, and reverted because it cost
// throughput). Its reply leaves no room for the ops' results when core fits
// the leased jobs into one NATS message, so a batch of many ops whose lease
// part leases large jobs can fail whole as invalid (reply too large), its
// ops applied and the jobs it leased left leased until their ttl.
type BatchLease struct {
	Types  []string `json:"types"`
	Max    int      `json:"max,omitempty"` // default 1
	Worker string   `json:"worker,omitempty"`
}

// MaxBatch bounds the operations of one batch.
const MaxBatch = 1000

// OpError is the error of one failed operation in a batch reply.
type OpError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// OpResult is the outcome of one operation of a batch, in request order.
type OpResult struct {
	ID         int64    `json:"id"`
	Error      *OpError `json:"error,omitempty"`
	State      State    `json:"state,omitempty"`       // the job's state after the op
	LeaseUntil int64    `json:"lease_until,omitempty"` // touch
}

// BatchReply is batch's reply.
type BatchReply struct {
	Results []OpResult `json:"results"`
	// Jobs are the jobs the lease part leased (present, maybe empty, when
	// the request had one), as lease returns them.
	Jobs []Job `json:"jobs,omitzero"`
}

// RescueRequest is rescue's request.
type RescueRequest struct {
	Limit int `json:"limit,omitempty"` // default 1000
	// StallLimit is how often a job may lose its lease and go back before it
	// fails. Default: the core's configured limit (1).
	StallLimit int `json:"stall_limit,omitempty"`
}

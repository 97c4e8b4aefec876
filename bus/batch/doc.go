// Package batch joins concurrent calls into batches without a timer: a
// Joiner hands what arrives while a batch is on its way to the next one,
// and Gather lets the calls about to join a batch do so before it leaves.
// core's client sends concurrent creates as one create_bulk through a
// Joiner, core's service stores them with one script call, and the worker
// gathers its leases and acknowledgements. It knows nothing of the queue;
// of bus it uses only the error codes (a Flush that answers the wrong
// number of results is an internal error).
//
// Files:
//
//	doc.go     this comment
//	joiner.go  Joiner, Config, New: Do, Stop and the gauges
//	gather.go  Gather: yield while the calls about to join keep coming
package batch

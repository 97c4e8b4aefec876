// Package runner runs functions on goroutines that stay for the next one:
// a Pool. bus's RPC server runs each request on it, and a worker each
// handler. A goroutine made per call starts with the smallest stack, which
// the call grows again every time; a kept one keeps its grown stack. It
// knows nothing of NATS or of the queue, and imports nothing of the module.
//
// Files:
//
//	doc.go   this comment
//	pool.go  Pool, NewPool: Run, Close and Stop
package runner

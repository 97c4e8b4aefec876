// Package nodeexample holds no Go code: its test (node_test.go) runs the
// Node.js example client (kuebus.mjs, tour.mjs) against a real core with
// embedded NATS, so that the protocol docs/protocol.md documents is checked
// from another language on every run of the suite.
//
// Files:
//
//	doc.go        this comment
//	kuebus.mjs    the client: calls, error headers, event subscriptions
//	tour.mjs      producer, worker and listener in one script, asserting each answer
//	worker.mjs    a worker as docs/workers.md describes it: lease, touch, ack, cancel, stop
//	package.json  the one dependency, nats.js (package-lock.json pins it)
package nodeexample

// Package bus owns everything kuebus puts on the wire of NATS, and nothing of
// queue semantics:
//
//   - every subject, queue group, service name and header name (subjects.go),
//     with the validation of subject tokens;
//   - the RPC helpers: a server on top of nats.go's micro package that runs
//     each request in its own goroutine, turns errors into micro error
//     headers and a handler's panic into an internal error (logged with its
//     stack: no request can stop the process), and a client that maps those headers back to errors that
//     errors.Is can match (errors.go, rpc.go);
//   - the JSON codec used for request, reply and event bodies (codec.go);
//   - connection options with reconnects (conn.go);
//   - the embedded NATS server used by `kuebus dev`, `kuebus node` and the
//     tests (embedded.go), and the test helper bustest.
//
// The types of the requests and replies themselves live in core, which owns
// what they mean; bus only moves bytes and error codes.
package bus

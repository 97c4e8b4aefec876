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
//   - connection options with reconnects (conn.go), and Auth, which turns
//     a client's credentials and TLS files into options with the user's
//     inbox prefix (auth.go);
//   - the roles a locked server's users have (role.go): their names only.
//
// A locked server's users each get an inbox prefix of their own
// (Subjects.Inbox) and may subscribe only under it, so a reply reaches the
// asker alone; core and the promoter answer through allow_responses.
//
// bus is what every client compiles, so it holds no server and no queue
// helper. Beside it, each in a package of its own:
//
//   - bus/embedded: the NATS server a node runs in its own process, its
//     users, routes and TLS, and each role's NATS permissions; the only
//     package that imports nats-server, for node, the commands and tests;
//   - bus/bustest: a real embedded server for tests, and a throwaway CA;
//   - bus/batch: concurrent calls joined into batches, no timer;
//   - bus/runner: goroutines kept for the next call (a Server's requests
//     run on them).
//
// The types of the requests and replies themselves live in core, which owns
// what they mean; bus only moves bytes and error codes.
//
// Files:
//
//	doc.go            this comment
//	subjects.go       Subjects and every subject, queue group, service and
//	                  header name; ValidToken
//	codec.go          Encode (goccy/go-json, the bytes of encoding/json), DecodeReply
//	                  (lenient, for what core wrote) and Decode (strict, for
//	                  requests): errors naming the field
//	errors.go         Code, Error and the sentinels per code, CodeOf
//	rpc.go            Server, Handle and HandleWaiting; Client and its calls
//	late.go           WithLateReply: a call's reply that comes after it gave up,
//	                  handed to a func instead of dropped
//	header.go         WithHeader, RequestHeader: a request's headers in its context
//	discovery.go      the micro discovery replies ($SRV.PING, INFO, STATS) and their counts
//	conn.go           Connect and its defaults, URLDefault; LoopbackHost
//	redact.go         RedactURL: the passwords of the URLs in a text, masked
//	denied.go         ErrPermissionDenied: a call the server refused ends at
//	                  once instead of at its timeout
//	auth.go           Auth: a client's credentials and TLS files as options
//	role.go           Role, Roles, ParseRole; LocalUserPrefix, the names an
//	                  embedded server keeps for its in-process users
//	stream.go         durable events: EnsureEventStream (the JetStream
//	                  stream on job.> and queue.>, waiting while a
//	                  clustered JetStream has no quorum) and ReplayEvents
package bus

// Package httpapi is kuebus over HTTP: a REST JSON API with Kue's routes, the
// delay-queue style pop/complete/fail/touch for clients that cannot speak
// NATS, a live web dashboard, and a server-sent event stream. Like every
// other client it talks to core over the bus only; it never touches Redis.
//
// It owns:
//
//   - the server's config and lifecycle: New, Start/Handler/Close to mount
//     it, Run or Serve to serve it until a context ends (server.go);
//   - the routes and their JSON shapes (routes.go, read.go, write.go,
//     lease.go, create.go), documented for users in docs/http.md;
//   - mapping core's error codes to HTTP statuses and the error body
//     {"error":{"code","message"}} (respond.go);
//   - access control: bearer token, basic auth, users with NATS roles, or
//     a login cookie; each route's role check (the core methods it calls,
//     bus.Role.MayCall); the rule that a non-loopback address needs auth
//     unless told otherwise (auth.go); the signed, expiring session cookie
//     and logout, revoked on the server and announced to the others
//     (session.go); the failed-login limit, which slows wrong credentials
//     and never refuses right ones (limit.go); TLS (server.go);
//   - the event stream GET /events, which forwards job.> and queue.> from
//     NATS to browsers (events.go);
//   - the dashboard's files, embedded with go:embed (ui.go, ui/);
//   - the Metrics hook through which a metrics backend sees every event and
//     every core call (metrics.go): the handlers call core through one
//     core.Client, which reports each call to it. The Prometheus backend lives in
//     httpapi/prom, so this package does not import Prometheus;
//     the binary wires the two together and passes the /metrics handler in.
//
// Events are at most once (docs/protocol.md §4): the dashboard treats an
// event as "something changed, read again", never as the state itself, so a
// missed event only delays the view until the next one. A stream that falls
// behind gets a "lagged" event telling it to re-read everything.
//
// Files:
//
//	doc.go      this comment
//	server.go   Config, New, Server: Start, Handler, Close, Run, Serve, TLS
//	routes.go   every route with what its caller's role needs, the JSON
//	            404 and 405, cross-origin refusal
//	basepath.go CheckBasePath, and the routes mounted under Config.BasePath
//	read.go     GET /stats, /job/types, /job/{id}, its log, /jobs/... ranges
//	deps.go     GET /job/{id}/deps and POST /flow: dependencies and flows
//	history.go  GET /history (per-minute counts for the charts), GET /workers
//	create.go   POST /job: one job or many, in Kue's body
//	write.go    remove a job, set its state or priority, add a log line
//	pause.go    PUT /types/{type}/pause and resume
//	cancel.go   POST /job/{id}/cancel, POST /jobs/bulk
//	lease.go    POST /pop and a lease holder's complete, fail, touch,
//	            release, rejoin, progress
//	schedules.go GET /schedules, and GET, PUT, DELETE /schedules/{name}
//	policy.go   GET /types/policy, GET and PUT /types/{type}/policy, and
//	            GET /job/{id}/why (explain)
//	search.go   GET /jobs/search (core's pages) and Kue's GET /job/search
//	respond.go  error codes to HTTP statuses, the error body, JSON bodies
//	auth.go     Auth, Users, CheckBind, the check of every request and of
//	            its role, login, logout
//	session.go  the signed, expiring session cookie and ended sessions
//	limit.go    the failed-login limit per client address, and its line
//	events.go   GET /events: NATS events to server-sent events, per stream
//	events_durable.go  GET /events from the durable event stream: SSE ids,
//	            catching up from Last-Event-ID
//	ui.go       the dashboard's files (ui/, go:embed) and security headers
//	metrics.go  Metrics, the hook a metrics backend implements; its no-op
package httpapi

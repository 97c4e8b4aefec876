// Package embedded runs a NATS server inside the kuebus process: the
// server of `kuebus dev`, of a node with the nats role, and of the tests
// (through bus/bustest). Start starts it from a Config and waits until it
// accepts clients; Server gives its URLs, its routes and its interest, and
// the in-process connection options of the node's own parts.
//
// A server is open, or locked with one token (every holder an admin) or
// with users, each of a role (bus.Role) whose NATS permissions Permissions
// builds from the subjects. Each user gets an inbox prefix of its own
// (bus.Subjects.Inbox) and may subscribe only under it, so a reply
// reaches the asker alone; core and the promoter answer through
// allow_responses. The node's own parts log in through in-process-only
// users of their roles (InProcessAs), whose random passwords never leave
// the process. Routes to the other servers of a cluster may ask for a
// user and password, and clients and routes may be served over TLS.
//
// It is the only package of the module that imports nats-server, and
// only node, the commands and the tests import it: a producer, a worker
// or core's service compiles no NATS server. Role names (bus.Role) and the
// reserved prefix of the in-process users (bus.LocalUserPrefix) stay in
// bus, so that a config's check names them without compiling a server.
//
// Files:
//
//	doc.go          this comment
//	server.go       Config, User, TLSFiles, Start, Server: URLs, routes,
//	                interest, in-process options, Shutdown
//	auth.go         a locked server's users, token, routes and TLS; the
//	                in-process users of the node's own parts
//	permissions.go  Permissions: each role's NATS permissions; ResponseWindow
package embedded

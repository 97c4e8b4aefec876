// Package node assembles one kuebus node from its config, with the start
// order and the stop order written once. `kuebus node`, `kuebus dev` (a
// node of one), `kuebus bench` and the test helpers all run their queue
// through it; cmd/kuebus keeps flags, signals, exit codes and ready lines.
//
// A node runs the roles its config gives (cluster-config's Config, as a
// file or a command builds it):
//
//   - nats: an embedded NATS server (bus/embedded), routed to the others;
//     without it, the node reaches external NATS with the config's
//     credentials;
//   - core: the core service (core/service) on a store (core/redisstore)
//     on the Redis the config names (a URL, Sentinel or Cluster), or on a
//     redis-server child the node manages (node/redisproc);
//   - http: the HTTP API, dashboard and /metrics (httpapi, httpapi/prom);
//   - promoter: a member of the memberlist ring, whose leader promotes and
//     rescues (promoter).
//
// Each part has a NATS connection of its own, as it would in a process of
// its own; beside an embedded server it is an in-process pipe. Start
// starts the parts in dependency order (managed Redis, NATS, core, HTTP,
// promoter); Stop stops them in the order stop.go explains (promoter,
// HTTP, core, connections, Redis client, NATS, managed Redis).
//
// Why it takes cluster-config's Config rather than a config of its own:
// that type already is the node's config, with defaults, validation and
// errors that name each field by its YAML path; a second type would copy
// each field and translate it, and its errors would name fields no file
// has. What no file can say (a logger, a managed redis-server, test hooks)
// is in this package's Config beside it.
//
// Files:
//
//	doc.go     this comment
//	config.go  Config, ConfigError, Check (Validate, the HTTP bind rule,
//	           external NATS's files)
//	node.go    Node, Start and the start order (managed Redis first), Info,
//	           Failed and the parts a test may reach
//	nats.go    embedded or external NATS, and the parts' connections
//	core.go    Redis and the core service
//	events.go  the durable event stream (events.durable), made by core,
//	           waiting for a JetStream cluster's quorum; its replicas
//	           raised in the background once the servers are up
//	http.go    the HTTP API, its /metrics (httpapi/prom) and their auth
//	ring.go    the promoter's member of the ring
//	outbox.go  the outbox role: the leader's kuebus-outbox relay child
//	stop.go    Stop and its order
package node

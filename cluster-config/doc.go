// Package clusterconfig is the configuration of one `kuebus node`: its
// types, and Load, which reads a YAML file, applies KUEBUS_* environment
// variables over it, fills in defaults and validates the result. It opens
// no connection: package node assembles what the config describes.
//
// Every listener defaults to loopback, and Validate refuses one that other
// machines reach without authentication (NATS users or token, route
// credentials, the gossip key, the HTTP API's token or basic auth) unless
// its section says insecure: true (insecure_bind for HTTP). The HTTP
// section's rules are written once, in HTTP.Check, which `kuebus dev`
// applies to its --http-* flags too.
//
// The folder also holds the ready-made configs (node-a.yaml ... and
// examples/), which the package's tests load, so they cannot drift from
// the code; README.md describes every field and variable.
//
// Files:
//
//	doc.go       this comment
//	config.go    Config and its sections, the roles, presets and defaults,
//	             FillDefaults, Redacted
//	events.go    Events: durable events (the JetStream stream), its
//	             defaults and checks
//	outbox.go    Outbox: the outbox role's relay (database, binary) and its
//	             checks
//	load.go      Load and Parse: YAML, then KUEBUS_* variables (EnvVars
//	             lists them), with errors that name the line or variable
//	retention.go Retention: the default retention of finished jobs by type,
//	             its variable form and its checks
//	types.go     Types: job types' policies the core role stores at start,
//	             and their checks
//	validate.go  Validate: every problem by YAML path; the loopback-or-auth
//	             rule of each listener; HTTP.Check, shared with kuebus dev
package clusterconfig

// Package httprule holds the two rules of the HTTP API's listener that
// are checked before anything serves: the bind rule (an address other
// machines can reach needs auth, unless allowed on purpose) and the form
// of a base path. httpapi applies them in New, and re-exports them
// (httpapi.CheckBind, CheckBasePath, ErrInsecureBind); cluster-config
// applies them to a node's http section, and `kuebus dev` to its --http-*
// flags, before NATS and Redis start. They live here, not in httpapi, so
// that checking a config compiles no HTTP server, dashboard or core
// client.
//
// Files:
//
//	doc.go       this comment
//	bind.go      Bind and ErrInsecureBind
//	basepath.go  BasePath
package httprule

// Package bustest starts a real embedded NATS server for tests: on a free
// loopback port, with a connection to it, both stopped by the test's
// cleanup; and a throwaway certificate authority for the TLS tests. It
// knows nothing of the queue, as bus does not.
//
// Files:
//
//	doc.go      this comment
//	bustest.go  Server, NewServer, Connect, ConnectInProcess and FreeAddr
//	pki.go      PKI, NewPKI: a CA and a loopback certificate as PEM files
//	locked.go   Locked, StartLocked: a server locked with users, serving
//	            two core methods, for the tests of who may call what
package bustest

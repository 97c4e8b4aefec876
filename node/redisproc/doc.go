// Package redisproc owns the lifecycle of a real redis-server child process
// listening on a loopback port, and nothing of what is stored in it:
//
//   - finding the binary (Options.Binary or redis-server in PATH), with
//     ErrNotInstalled and an install hint when there is none;
//   - the command line: bound to 127.0.0.1, protected mode on, no RDB
//     snapshots, AOF on or off, data under Options.Dir (or a temporary
//     directory that Stop removes), logs on stdout;
//   - a password (Options.Password), given to redis-server on its standard
//     input so that it is on no command line, and LoadOrCreatePassword,
//     which keeps one in a 0600 file of the data folder across restarts;
//   - picking a free port, and retrying on another one when the picked port
//     was taken before redis-server could bind it;
//   - waiting until the server answers PING (over a raw TCP connection, so
//     that this package does not depend on a Redis client library);
//   - keeping the last lines redis-server printed, so that a failed start
//     says why;
//   - stopping (SIGTERM, then SIGKILL), killing and restarting on the same
//     port, and making sure a parent that dies does not leave redis-server
//     running (Linux);
//   - a Redis Cluster of such servers for tests (StartCluster): masters and
//     replicas on loopback, joined by redis-cli, ready once every node says
//     cluster_state:ok;
//   - a Sentinel set for tests (StartSentinel): a master, its replicas and
//     Sentinels (redis-server sentinel.conf --sentinel) on loopback, with
//     short timeouts so that a failover takes a few seconds, ready once the
//     Sentinels agree on the master and every replica is linked to it.
//
// It lives beside package node, which is what runs it: a node's managed
// Redis, which `kuebus dev` keeps with its data and AOF under the dev data
// directory and `kuebus bench` throws away. The test suites use it too,
// directly, to start a throwaway Redis when TEST_REDIS_URL is unset and to
// take it down and bring it back to test outages. Talking to Redis is left
// to the packages that use it.
//
// Files:
//
//	doc.go             this comment
//	redisproc.go       Options, Start, Server (stop, kill, restart), the
//	                   readiness probe and the output tail
//	password.go        LoadOrCreatePassword
//	cluster.go         StartCluster: a Redis Cluster of such servers, made
//	                   with redis-cli --cluster create, its nodes killed
//	                   and restarted one by one; Command, a one-shot RESP
//	                   call for polling a server's state
//	sentinel.go        StartSentinel: a Sentinel set of such servers, its
//	                   master found, its servers killed and restarted
//	procattr_linux.go  the child in a process group of its own, killed
//	                   with its parent (Pdeathsig)
//	procattr_other.go  elsewhere: default attributes, a plain kill
package redisproc

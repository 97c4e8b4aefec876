// Package nodetest gives tests a real Redis and a real core: Main starts one
// redis-server per test binary (unless TEST_REDIS_URL names one), NewStore
// gives each test its own key prefix (Cluster, NewClusterStore and
// NewClusterCore do the same on a Redis Cluster of 3 masters and 3
// replicas, started once per test binary), and NewCore runs a node (package
// node: embedded NATS, store and service) behind a client.
//
// A test helper, it may use go-redis itself, to seed and inspect Redis
// (NewRedis); production code reaches Redis only through core/redisstore.
//
// Files:
//
//	doc.go       this comment
//	nodetest.go  Main and its goroutine-leak check, RedisURL, NewRedis,
//	             Prefix, NewStore, NewCore, Clock, ErrCode
//	cluster.go   Cluster (one Redis Cluster per test binary, started on
//	             first use), NewClusterRedis, ClusterPrefix, ClusterConn,
//	             NewClusterStore, NewClusterCore
package nodetest

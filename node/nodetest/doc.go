// Package nodetest gives tests a real Redis and a real core: Main starts one
// redis-server per test binary (unless TEST_REDIS_URL names one), NewStore
// gives each test its own key prefix (Cluster, NewClusterStore and
// NewClusterCore do the same on a Redis Cluster of 3 masters and 3
// replicas, started once per test binary; Sentinel, NewSentinelStore and
// NewSentinelCore on a Sentinel set of a master, a replica and 3
// Sentinels, likewise), and NewCore runs a node (package
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
//	sentinel.go  Sentinel (one Sentinel set per test binary, started on
//	             first use), SentinelConn, NewSentinelRedis,
//	             NewSentinelStore, NewSentinelCore (and RedisOptions, a
//	             node's WAIT settings)
//	shared.go    shared: servers a test binary starts on first use and
//	             Main stops (the Cluster's, the Sentinel set's)
//	shard.go     NewShardCluster (a Redis Cluster of the test's own, no
//	             replicas, that it may break), ShardTypes, KillMaster: one
//	             master down, its types unreadable, the others served
package nodetest

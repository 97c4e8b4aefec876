// Package nodetest gives tests a real Redis and a real core: Main starts one
// redis-server per test binary (unless TEST_REDIS_URL names one), NewStore
// gives each test its own key prefix, and NewCore runs a node (package
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
package nodetest

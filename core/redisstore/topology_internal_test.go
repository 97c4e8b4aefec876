package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// reply is an error reply of Redis, as go-redis returns one.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// Which errors make the topology reload the slot map: those that may mean
// a failover or a master without scripts, not a script's own error.
func TestStaleMapKnowsWhichErrorsMeanAChangedCluster(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no error is no reason", nil, false},
		{"an empty read is no reason", redis.Nil, false},
		{"the caller's cancel is no reason", context.Canceled, false},
		{"a refused connection may be a dead master", fmt.Errorf("create: %w", refused), true},
		{"a broken connection may be a dead master", io.EOF, true},
		{"a deadline may be a master that went silent", context.DeadlineExceeded, true},
		{"MOVED says the slot lives elsewhere", reply("MOVED 3999 127.0.0.1:6381"), true},
		{"ASK says the slot is moving", reply("ASK 3999 127.0.0.1:6381"), true},
		{"CLUSTERDOWN is a failover under way", reply("CLUSTERDOWN The cluster is down"), true},
		{"TRYAGAIN is a slot in motion", reply("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{"READONLY is a master turned replica", reply("READONLY You can't write against a read only replica."), true},
		{"NOSCRIPT is a master without scripts", reply("NOSCRIPT No matching script. Please use EVAL."), true},
		{"a script's own error is no reason", reply("ERR user_script:1: boom"), false},
		{"out of memory is no reason", reply("OOM command not allowed when used memory > 'maxmemory'."), false},
		{"a wrong type is no reason", reply("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, staleMap(tc.err))
		})
	}
	require.True(t, isReply(fmt.Errorf("wrapped: %w", reply("MOVED 1 a:1")), "MOVED "))
	require.False(t, isReply(errors.New("MOVED 1 a:1"), "MOVED "), "a message is no reply")
}

func TestReplicaAddrsReadsOnlineReplicas(t *testing.T) {
	info := "# Replication\r\nrole:master\r\nconnected_slaves:3\r\n" +
		"slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0\r\n" +
		"slave1:ip=10.0.0.2,port=7002,state=wait_bgsave,offset=0,lag=0\r\n" +
		"slave2:ip=::1,port=7003,state=online,offset=42,lag=1\r\n" +
		"master_failover_state:no-failover\r\n"
	require.Equal(t, []string{"127.0.0.1:7001", "[::1]:7003"}, replicaAddrs(info))
	require.Empty(t, replicaAddrs("# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n"))
}

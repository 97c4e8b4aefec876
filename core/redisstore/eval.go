package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kuebus/kuebus/bus"
)

// How a script runs: the one place that decides when a script may be sent
// again, and that waits for replicas when asked.
//
// A script may be sent again only when Redis said it did not run it:
//
//   - NOSCRIPT: EVALSHA found no script of that hash; EVAL sends the text.
//   - MOVED (Cluster): the node no longer serves the slot and refused the
//     command before running it. Once the slot map has been reloaded (the
//     topology, topology.go), the script goes once more to the master the
//     map now names. A second MOVED answers unavailable: the cluster is
//     still moving.
//
// Anything else (a timeout, a broken connection, a CLUSTERDOWN or
// TRYAGAIN) is returned as it is: after a timeout or a broken connection
// the script may have run, and sending it again could enqueue a job twice
// (ApplyOptions). ASK (a slot being migrated) is not followed either: it
// did not run, the caller gets unavailable and may try again.

// movedWait bounds how long a script that got MOVED waits for the slot
// map's reload before it answers unavailable.
const movedWait = time.Second

// Bounds of Config.WaitTimeout (see validate).
const (
	waitTimeoutMin = time.Millisecond
	waitTimeoutMax = 2 * time.Second
)

// eval runs a script that changes the queue: a job, a type, a schedule,
// the id blocks. With WaitReplicas set it waits for that many replicas to
// have the change before it answers (evalWait). Scripts that only read
// (search) or keep observability data that may be lost in a failover
// (heartbeat, history) call evalNoWait.
func (s *Store) eval(ctx context.Context, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	if s.waitReplicas > 0 {
		return s.evalWait(ctx, sc, keys, args)
	}
	return s.evalNoWait(ctx, sc, keys, args...)
}

// evalNoWait runs a script with EVALSHA, EVAL after NOSCRIPT (Script.Run),
// and once more after MOVED as said above.
func (s *Store) evalNoWait(ctx context.Context, sc *redis.Script, keys []string, args ...any) *redis.Cmd {
	cmd := sc.Run(ctx, s.rdb, keys, args...)
	if s.followMoved(ctx, cmd.Err()) {
		cmd = sc.Run(ctx, s.rdb, keys, args...)
	}
	return cmd
}

// evalWait runs a script and WAIT on the same connection, in one pipeline:
// on a Cluster the connection of the master that owns the script's slot
// (all its keys share it), elsewhere the client's (a standalone server, a
// Sentinel's master), so that WAIT counts the replicas that have this
// script's writes. WAIT answers how many replicas acknowledged every write
// the connection made before it; fewer than WaitReplicas within
// WaitTimeout answers unavailable: the change is made on the master, but a
// failover now may lose it. The caller cannot tell that from a lost reply,
// and does what it does then: a producer sends its create again with its
// unique_key, which finds the job if it was kept.
func (s *Store) evalWait(ctx context.Context, sc *redis.Script, keys []string, args []any) *redis.Cmd {
	for attempt := 0; ; attempt++ {
		pipe, err := s.pipelineFor(ctx, keys)
		if err != nil {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
		cmd, wait := s.pipeWait(ctx, pipe, sc.EvalSha, keys, args)
		if isNoScript(cmd.Err()) {
			// It did not run, so WAIT counted nothing of it; send the text.
			if pipe, err = s.pipelineFor(ctx, keys); err != nil {
				cmd.SetErr(err)
				return cmd
			}
			cmd, wait = s.pipeWait(ctx, pipe, sc.Eval, keys, args)
		}
		if s.topo != nil && staleMap(cmd.Err()) {
			// The pipeline went on a node's own client, which the Cluster
			// client's hook does not see.
			s.topo.want()
		}
		if attempt == 0 && s.followMoved(ctx, cmd.Err()) {
			continue
		}
		if cmd.Err() != nil {
			return cmd
		}
		if err := wait.Err(); err != nil {
			cmd.SetErr(bus.Errorf(bus.CodeUnavailable,
				"redis: the change is made on the master but WAIT failed (%v): it may not survive a failover; try again", err))
		} else if n := wait.Val(); n < int64(s.waitReplicas) {
			cmd.SetErr(bus.Errorf(bus.CodeUnavailable,
				"redis: the change is made on the master but only %d of %d replicas acknowledged it within %s: it may not survive a failover; try again (a create with a unique_key finds its job)",
				n, s.waitReplicas, s.waitTimeout))
		}
		return cmd
	}
}

// pipeWait sends the script (by evalFn: EVALSHA or EVAL) and WAIT in one
// pipeline and returns both commands.
func (s *Store) pipeWait(ctx context.Context, pipe redis.Pipeliner,
	evalFn func(context.Context, redis.Scripter, []string, ...any) *redis.Cmd,
	keys []string, args []any) (*redis.Cmd, *redis.IntCmd) {
	cmd := evalFn(ctx, pipe, keys, args...)
	// Pipeliner has no Wait; this is cmdable.Wait's command. Its read
	// timeout is the pipeline's (the connection's ReadTimeout, 3 s), which
	// waitTimeoutMax stays under.
	wait := redis.NewIntCmd(ctx, "wait", s.waitReplicas, s.waitTimeout.Milliseconds())
	_ = pipe.Process(ctx, wait)
	// Exec's error is the first command's; each command keeps its own.
	_, _ = pipe.Exec(ctx)
	return cmd, wait
}

// pipelineFor returns a pipeline on one connection to the master that
// runs a script of keys.
func (s *Store) pipelineFor(ctx context.Context, keys []string) (redis.Pipeliner, error) {
	cc, ok := s.rdb.(*redis.ClusterClient)
	if !ok {
		// *redis.Client (standalone, Sentinel): a pipeline holds one
		// connection for all its commands.
		return s.rdb.Pipeline(), nil
	}
	if len(keys) == 0 {
		return nil, errors.New("redisstore: a script on a Cluster needs a key to find its master")
	}
	m, err := cc.MasterForKey(ctx, keys[0])
	if err != nil {
		return nil, err
	}
	return m.Pipeline(), nil
}

// followMoved says whether a script that failed with err may be sent once
// more: err is a MOVED reply (it did not run) on a Cluster, and the slot
// map has been reloaded since, within movedWait.
func (s *Store) followMoved(ctx context.Context, err error) bool {
	if s.topo == nil || !isReply(err, "MOVED ") {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, movedWait)
	defer cancel()
	return s.topo.await(wctx)
}

func isNoScript(err error) bool { return isReply(err, "NOSCRIPT") }

// isReply says whether err is an error reply of Redis starting with prefix.
func isReply(err error, prefix string) bool {
	var reply redis.Error
	return errors.As(err, &reply) && strings.HasPrefix(reply.Error(), prefix)
}

// validateWait checks WaitReplicas and WaitTimeout, naming the field.
func validateWait(replicas int, timeout time.Duration) error {
	switch {
	case replicas < 0:
		return fmt.Errorf("redisstore: WaitReplicas %d is negative: 0 waits for no replica", replicas)
	case timeout < 0:
		return fmt.Errorf("redisstore: WaitTimeout %s is negative", timeout)
	case replicas == 0 && timeout > 0:
		return fmt.Errorf("redisstore: WaitTimeout %s is set but WaitReplicas is 0: set WaitReplicas too, or neither", timeout)
	case replicas > 0 && timeout == 0:
		// WAIT n 0 blocks until n replicas answer, forever if they never do.
		return fmt.Errorf("redisstore: WaitTimeout is required with WaitReplicas %d (e.g. 100ms): WAIT without a timeout can block forever", replicas)
	case replicas > 0 && timeout < waitTimeoutMin:
		// WAIT takes milliseconds: less would be sent as 0, forever.
		return fmt.Errorf("redisstore: WaitTimeout %s is under %s: WAIT counts whole milliseconds", timeout, waitTimeoutMin)
	case timeout > waitTimeoutMax:
		// The pipeline's replies are read within the connection's read
		// timeout (3 s); a longer WAIT would end as a read timeout.
		return fmt.Errorf("redisstore: WaitTimeout %s is over %s: the reply must come within the connection's read timeout", timeout, waitTimeoutMax)
	}
	return nil
}

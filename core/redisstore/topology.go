package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// How a Cluster client notices a failover, and how every master (and every
// replica that may become one) gets the scripts before it needs them.
//
// go-redis reloads its slot map on a MOVED or ASK reply and every 60 s
// (ClusterStateReloadInterval), not when a master stops answering: with
// retries off (ApplyOptions), kuebus kept sending a dead master's slots to
// it for 22–48 s after its replica had taken over (issue 15, finding 3).
// A topology watches every command's error through a hook on the Cluster
// client and, on an error that may mean the map is out of date, reloads the
// map at once (a synchronous CLUSTER SLOTS, through ForEachMaster) from a
// goroutine of its own: so the next command goes to the new master as soon
// as the cluster has promoted it, whatever command failed. Nothing is sent
// again here: a command whose outcome is unknown stays failed (see
// ApplyOptions); only the next one benefits.
//
// Each reload also asks every master SCRIPT EXISTS of every script and
// loads the missing ones, and at start (LoadScripts) every replica gets them
// too: Redis does not replicate its script cache (7.0 does not propagate
// SCRIPT LOAD), so a promoted replica would otherwise answer NOSCRIPT to the
// first EVALSHA of each script on the hot path (finding 2).

// refreshGap is the least time between two reloads. While a master is dead
// and not yet replaced (cluster-node-timeout plus an election, seconds),
// every command to its slots fails and asks for a reload; one CLUSTER SLOTS
// per refreshGap per core bounds that load, and 100 ms adds at most that to
// the time a core takes to follow a promotion.
const refreshGap = 100 * time.Millisecond

// refreshEvery reloads the map even when nothing failed: a backstop for a
// change no error told of (go-redis's own interval is 60 s).
const refreshEvery = 30 * time.Second

// refreshTimeout bounds one reload with its script checks. A dead node
// costs a refused dial (go-redis retries a dial a few times, ~0.5 s), so
// this leaves room for that and a slow CLUSTER SLOTS.
const refreshTimeout = 3 * time.Second

// topology keeps a Cluster client's slot map fresh and its masters'
// script caches full. It is owned by the Redis that opened the client:
// Open starts its goroutine, Close stops it and waits.
type topology struct {
	cc   *redis.ClusterClient
	kick chan struct{} // 1-buffered: a reload is wanted
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu sync.Mutex
	// next is closed when the next reload to start has finished; the loop
	// swaps in a new one as it starts a reload, so a waiter that took next
	// before kicking knows the reload that closes it began after its error.
	next chan struct{}
}

func newTopology(cc *redis.ClusterClient) *topology {
	t := &topology{cc: cc, kick: make(chan struct{}, 1), next: make(chan struct{})}
	cc.AddHook(topologyHook{t})
	return t
}

// start runs the loop until close.
func (t *topology) start() {
	ctx, cancel := context.WithCancel(context.Background())
	t.stop = cancel
	t.wg.Go(func() { t.run(ctx) })
}

func (t *topology) close() {
	if t.stop != nil {
		t.stop()
		t.wg.Wait()
	}
}

// want asks for a reload; it never blocks (a reload already asked for
// covers this one too).
func (t *topology) want() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// await asks for a reload and waits until one that started after the call
// has finished, or ctx is done: false then.
func (t *topology) await(ctx context.Context) bool {
	t.mu.Lock()
	next := t.next
	t.mu.Unlock()
	t.want()
	select {
	case <-next:
		return true
	case <-ctx.Done():
		return false
	}
}

func (t *topology) run(ctx context.Context) {
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	gap := time.NewTimer(refreshGap)
	gap.Stop() // armed after each reload
	defer gap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.kick:
		case <-tick.C:
		}
		t.mu.Lock()
		done := t.next
		t.next = make(chan struct{})
		t.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
		_ = t.refresh(rctx) // see refresh
		cancel()
		close(done)
		// Kicks that came meanwhile wait in t.kick for the next turn, at
		// least refreshGap later.
		gap.Reset(refreshGap)
		select {
		case <-ctx.Done():
			return
		case <-gap.C:
		}
	}
}

// refresh reloads the slot map (ForEachMaster reloads it synchronously
// before it visits the masters; the map it stores serves every later
// command) and loads the scripts a master lacks. Its error is dropped: a
// master that cannot be reached now is reached by a later
// reload, and a command that needs a missing script still falls back to
// EVAL (Store.eval).
func (t *topology) refresh(ctx context.Context) error {
	return t.cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		err := ensureScripts(ctx, m)
		_ = ensureReplicaScripts(ctx, m) // best effort, as in LoadScripts
		return err
	})
}

// ensureReplicaScripts loads the scripts on each replica that master m
// lists in INFO replication, on a short-lived connection with m's options
// (password, TLS) but the replica's address. The replicas are found there,
// not in the client's slot map: CLUSTER SLOTS leaves out a replica until
// gossip has told its replication offset (seconds after it attached), and
// go-redis's map knows only what CLUSTER SLOTS says.
func ensureReplicaScripts(ctx context.Context, m *redis.Client) error {
	info, err := m.Info(ctx, "replication").Result()
	if err != nil {
		return fmt.Errorf("%s: info replication: %w", m.Options().Addr, err)
	}
	var errs []error
	for _, addr := range replicaAddrs(info) {
		opts := *m.Options()
		opts.Addr = addr
		c := redis.NewClient(&opts)
		errs = append(errs, ensureScripts(ctx, c), c.Close())
	}
	return errors.Join(errs...)
}

// replicaAddrs reads the HOST:PORT of each online replica from a
// master's INFO replication: lines "slave0:ip=...,port=...,state=online,...".
func replicaAddrs(info string) []string {
	var out []string
	for line := range strings.Lines(info) {
		if !strings.HasPrefix(line, "slave") || !strings.Contains(line, "state=online") {
			continue
		}
		_, fields, _ := strings.Cut(strings.TrimSpace(line), ":")
		var ip, port string
		for _, kv := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "ip":
				ip = v
			case "port":
				port = v
			}
		}
		if ip != "" && port != "" {
			out = append(out, net.JoinHostPort(ip, port))
		}
	}
	return out
}

// ensureScripts loads on c the scripts it does not have: one SCRIPT EXISTS
// of all, then one pipeline of the SCRIPT LOADs needed (none, usually).
func ensureScripts(ctx context.Context, c *redis.Client) error {
	names := ScriptNames()
	hashes := make([]string, len(names))
	for i, n := range names {
		hashes[i] = scripts[n].Hash()
	}
	have, err := c.ScriptExists(ctx, hashes...).Result()
	if err != nil {
		return fmt.Errorf("%s: script exists: %w", c.Options().Addr, err)
	}
	pipe := c.Pipeline()
	for i, ok := range have {
		if !ok {
			pipe.ScriptLoad(ctx, texts[names[i]])
		}
	}
	if pipe.Len() == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("%s: script load: %w", c.Options().Addr, err)
	}
	return nil
}

// LoadScripts loads every script of lua/ into Redis's script cache: on a
// Cluster on every master (an error if one fails) and every replica
// reachable (a replica that is down gets them from the reload that follows
// its promotion), so that a replica promoted later has them already; on a
// standalone server or a Sentinel master on that server. A node calls it
// at start; it is not needed for correctness (a NOSCRIPT reply falls back
// to EVAL), only so that the hot path never pays for one.
func (r *Redis) LoadScripts(ctx context.Context) error {
	cc, ok := r.rdb.(*redis.ClusterClient)
	if !ok {
		c, ok := r.rdb.(*redis.Client)
		if !ok {
			return fmt.Errorf("redisstore: load scripts: %T is no client kuebus builds", r.rdb)
		}
		if err := ensureScripts(ctx, c); err != nil {
			return fmt.Errorf("redisstore: load scripts on %s: %w", r.where, err)
		}
		return nil
	}
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		err := ensureScripts(ctx, m)
		_ = ensureReplicaScripts(ctx, m) // best effort, as said above
		return err
	})
	if err != nil {
		return fmt.Errorf("redisstore: load scripts on %s: %w", r.where, err)
	}
	return nil
}

// staleMap says whether err, from a command on a Cluster, may mean that
// the slot map is out of date or that a master lacks scripts, so that a
// reload is worth its CLUSTER SLOTS:
//
//   - no reply at all (refused or broken connection, a read timeout, a
//     deadline): the master may be dead and its replica promoted;
//   - MOVED, ASK: the slot lives elsewhere now (go-redis reloads on these
//     too, lazily; one reload more costs nothing);
//   - CLUSTERDOWN, TRYAGAIN, MASTERDOWN, READONLY, LOADING: a failover is
//     under way or just done (READONLY: a master became a replica);
//   - NOSCRIPT: the master lost its scripts (a promoted replica, a
//     restart, SCRIPT FLUSH); the reload loads them again.
//
// Other error replies (a script's own error, OOM, WRONGTYPE) say nothing
// of the topology. A cancelled context is the caller's, not the server's.
func staleMap(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return false
	}
	var reply redis.Error
	if !errors.As(err, &reply) {
		return true
	}
	msg := reply.Error()
	for _, p := range []string{"MOVED ", "ASK ", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "READONLY", "LOADING", "NOSCRIPT"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// topologyHook asks its topology for a reload after any command or
// pipeline on the Cluster client that failed as staleMap says. It sees
// the commands of the Cluster client only, not those sent on a node's own
// client (ForEachMaster's, the reload's own CLUSTER SLOTS, Store.eval's
// pipeline with WAIT): those that matter ask for a reload themselves.
type topologyHook struct{ t *topology }

func (h topologyHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h topologyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if staleMap(err) {
			h.t.want()
		}
		return err
	}
}

func (h topologyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err == nil {
			return nil
		}
		for _, c := range cmds {
			if staleMap(c.Err()) {
				h.t.want()
				break
			}
		}
		return err
	}
}

package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kuebus/kuebus/node/redisproc"
)

// clusterMasters is how many masters the Redis Cluster of a scenario has,
// each with one replica: the fewest redis-cli --cluster create takes.
const clusterMasters = 3

// startRedisCluster starts the Redis Cluster (node/redisproc: real
// redis-server processes, each with its data folder, AOF on as for the one
// Redis) and picks one job type per master. Its processes are not in the
// pid file: redis-server rewrites its command line, which then no longer
// names the run's folder, so scripts/chaos.sh could not tell them from a
// reused pid; the kernel kills them with the driver instead (redisproc
// starts them with Pdeathsig), and c.stop stops them.
func (c *cluster) startRedisCluster(ctx context.Context) error {
	rc, err := redisproc.StartCluster(ctx, redisproc.ClusterOptions{
		Masters:   clusterMasters,
		Replicas:  1,
		Binary:    c.cfg.redisServer,
		ExtraArgs: []string{"--appendonly", "yes", "--appendfsync", c.cfg.appendfsync},
	})
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	c.rc = rc
	c.types, err = typesPerMaster(ctx, rc.Addrs()[0])
	return err
}

// typesPerMaster names one job type served by each master: a type's keys
// carry the type as their hash tag ({type}), so its slot is KEYSLOT {type}.
// A flow whose jobs are of these types spans every shard, and a complete
// that releases a dependent of another type is a hand-over between shards.
func typesPerMaster(ctx context.Context, addr string) ([]string, error) {
	masters, err := slotMasters(ctx, addr)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var types []string
	for i := 0; i < 1000 && len(types) < clusterMasters; i++ {
		typ := fmt.Sprint(jobType, i)
		master, err := masterOfType(ctx, addr, masters, typ)
		if err != nil {
			return nil, err
		}
		if !seen[master] {
			seen[master] = true
			types = append(types, typ)
		}
	}
	if len(types) < clusterMasters {
		return nil, fmt.Errorf("chaos: redis cluster: types on %d masters only after 1000 tries", len(types))
	}
	return types, nil
}

// slotRange is a range of slots a master serves.
type slotRange struct {
	from, to int
	master   string // HOST:PORT
}

// slotMasters reads, from the node at addr, which master serves which
// slots (CLUSTER NODES: <id> <addr@bus> <flags> <master> <ping> <pong>
// <epoch> <link> <slot>...).
func slotMasters(ctx context.Context, addr string) ([]slotRange, error) {
	nodes, err := redisproc.Command(ctx, addr, "", "CLUSTER", "NODES")
	if err != nil {
		return nil, fmt.Errorf("chaos: redis cluster: %s: %w", addr, err)
	}
	var out []slotRange
	for line := range strings.Lines(nodes) {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.Contains(f[2], "master") || strings.Contains(f[2], "fail") {
			continue
		}
		master, _, _ := strings.Cut(f[1], "@")
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being migrated
			}
			lo, hi, ok := strings.Cut(r, "-")
			if !ok {
				hi = lo
			}
			from, err1 := strconv.Atoi(lo)
			to, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("chaos: redis cluster: %s: slots %q", addr, r)
			}
			out = append(out, slotRange{from: from, to: to, master: master})
		}
	}
	return out, nil
}

// masterOfType is the master serving typ's slot, as masters says.
func masterOfType(ctx context.Context, addr string, masters []slotRange, typ string) (string, error) {
	s, err := redisproc.Command(ctx, addr, "", "CLUSTER", "KEYSLOT", "{"+typ+"}")
	if err != nil {
		return "", fmt.Errorf("chaos: redis cluster: keyslot of %s: %w", typ, err)
	}
	slot, err := strconv.Atoi(s)
	if err != nil {
		return "", fmt.Errorf("chaos: redis cluster: keyslot of %s: %q", typ, s)
	}
	for _, r := range masters {
		if slot >= r.from && slot <= r.to {
			return r.master, nil
		}
	}
	return "", fmt.Errorf("chaos: redis cluster: no master serves slot %d (%s)", slot, typ)
}

var replicaAddr = regexp.MustCompile(`slave0:ip=([^,]+),port=(\d+)`)

// killMaster kills -9 the master serving typ, waits until its replica has
// taken over, then restarts it, so that it rejoins as the new master's
// replica (WAIT 1 is met again), and waits until the cluster is whole. It
// returns the two addresses and when the replica was master.
func (c *cluster) killMaster(ctx context.Context, typ string) (victim, heir string, tookOver time.Time, err error) {
	addr := c.rc.Addrs()[0]
	masters, err := slotMasters(ctx, addr)
	if err != nil {
		return "", "", time.Time{}, err
	}
	if victim, err = masterOfType(ctx, addr, masters, typ); err != nil {
		return "", "", time.Time{}, err
	}
	info, err := redisproc.Command(ctx, victim, "", "INFO", "replication")
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("chaos: redis cluster: %s: %w", victim, err)
	}
	m := replicaAddr.FindStringSubmatch(info)
	if m == nil {
		return "", "", time.Time{}, fmt.Errorf("chaos: redis cluster: master %s has no replica", victim)
	}
	heir = m[1] + ":" + m[2]
	if err := c.rc.Kill(victim); err != nil {
		return "", "", time.Time{}, fmt.Errorf("chaos: %w", err)
	}
	// The cluster elects the replica after cluster-node-timeout (3 s);
	// its role is the server's state, so it is polled.
	err = retry(ctx, 30*time.Second, func(ctx context.Context) error {
		info, err := redisproc.Command(ctx, heir, "", "INFO", "replication")
		if err != nil {
			return err
		}
		if !strings.Contains(info, "role:master") {
			return fmt.Errorf("%s is not master yet", heir)
		}
		return nil
	})
	if err != nil {
		return "", "", time.Time{}, err
	}
	tookOver = time.Now()
	if err := c.rc.Restart(ctx, victim); err != nil {
		return "", "", time.Time{}, fmt.Errorf("chaos: %w", err)
	}
	if err := c.rc.WaitReady(ctx); err != nil {
		return "", "", time.Time{}, fmt.Errorf("chaos: %w", err)
	}
	return victim, heir, tookOver, nil
}

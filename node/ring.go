package node

import (
	"context"
	"fmt"
	"net"

	"github.com/hashicorp/memberlist"

	"github.com/kuebus/kuebus/bus"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/promoter"
)

// startRing joins the promoter ring; Run leads while this node is the
// leader, until Stop cancels it.
func (n *Node) startRing(ctx context.Context) error {
	var err error
	if n.ringConn, err = n.connect("promoter"); err != nil {
		return err
	}
	m := n.cfg.Memberlist
	cfg := promoter.NodeConfig{
		Name:       n.cfg.Name,
		Bind:       m.Bind,
		Advertise:  m.Advertise,
		Seeds:      m.Seeds,
		Memberlist: memberlistPreset(m),
		SecretKey:  m.Key(),
		Conn:       n.ringConn,
		Subjects:   n.subj,
		Logger:     n.log,
		Clean:      promoter.CleanConfig{Interval: n.cfg.Cleaner.Interval, Limit: n.cfg.Cleaner.Limit},
	}
	if n.cfg.Has(clusterconfig.RoleOutbox) {
		cfg.Tasks = append(cfg.Tasks, n.outboxTask)
	}
	if n.opts.Promoter != nil {
		n.opts.Promoter(&cfg)
	}
	if n.ring, err = promoter.New(cfg); err != nil {
		return fmt.Errorf("node: memberlist: %w", err)
	}
	n.info.RingAddr = n.ring.Addr()
	if host, _, _ := net.SplitHostPort(m.Bind); m.Insecure && m.SecretKey == "" && !bus.LoopbackHost(host) {
		n.log.Warn("the ring takes any member from other machines, which may then lead (memberlist.insecure)", "bind", m.Bind)
	}
	// Not Start's ctx, which may end before Stop: Stop stops the ring
	// first, in its order.
	ringCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	n.stopRing = stop
	ring := n.ring
	n.running.Go(func() {
		if err := ring.Run(ringCtx); err != nil {
			n.fail(fmt.Errorf("node: promoter: %w", err))
		}
	})
	return nil
}

// memberlistPreset is the preset with the config's overrides.
func memberlistPreset(m clusterconfig.Memberlist) *memberlist.Config {
	var mc *memberlist.Config
	switch m.Preset {
	case clusterconfig.PresetLocal:
		mc = memberlist.DefaultLocalConfig()
	case clusterconfig.PresetWAN:
		mc = memberlist.DefaultWANConfig()
	default:
		mc = memberlist.DefaultLANConfig()
	}
	if m.ProbeInterval > 0 {
		mc.ProbeInterval = m.ProbeInterval
	}
	if m.ProbeTimeout > 0 {
		mc.ProbeTimeout = m.ProbeTimeout
	}
	if m.SuspicionMult > 0 {
		mc.SuspicionMult = m.SuspicionMult
	}
	return mc
}

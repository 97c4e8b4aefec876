package promoter

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
)

// Status is a node's view of the ring, the reply of cluster.status.
type Status struct {
	// Leader is the member that runs the promote and rescue loops by the
	// rule (the alive member with the lowest name).
	Leader string `json:"leader"`
	// Self is the node that answered.
	Self string `json:"self"`
	// Members are every member the node has seen, by name.
	Members []Member `json:"members"`
}

// Member is one member of the ring as a node sees it.
type Member struct {
	Name string `json:"name"`
	// Addr is the member's memberlist address, IP:PORT.
	Addr string `json:"addr"`
	// State is MemberAlive or MemberGone.
	State string `json:"state"`
}

// StatusRequest is cluster.status's request: an empty object (an empty
// body is fine too).
type StatusRequest struct{}

// statusEndpoint names the endpoint in $SRV.INFO.
const statusEndpoint = "status"

// serveStatus registers the micro service kuebus-promoter with the one
// endpoint cluster.status. Every node joins the service's queue group, so
// a request gets one answer; all members agree on the leader, so any of
// them may give it. Each node shows in $SRV.INFO with its name in the
// metadata.
func (n *Node) serveStatus() (*bus.Server, error) {
	srv, err := bus.NewServer(n.cfg.Conn, bus.ServerConfig{
		Name:        bus.PromoterServiceName,
		Description: "kuebus promoter ring: cluster.status",
		Logger:      n.log,
		Metadata:    map[string]string{"node": n.cfg.Name, "prefix": n.cfg.Subjects.Prefix()},
	})
	if err != nil {
		return nil, fmt.Errorf("promoter: %w", err)
	}
	err = bus.Handle(srv, statusEndpoint, n.cfg.Subjects.ClusterStatus(), func(context.Context, *StatusRequest) (*Status, error) {
		st := n.Status()
		return &st, nil
	})
	if err == nil {
		err = srv.Ready()
	}
	if err != nil {
		_ = srv.Stop(context.Background())
		return nil, fmt.Errorf("promoter: serve cluster.status: %w", err)
	}
	return srv, nil
}

// FetchStatus asks the ring for its status over NATS: the reply of one
// promoter node. With no node running, the error matches
// nats.ErrNoResponders.
func FetchStatus(ctx context.Context, nc *nats.Conn, subj bus.Subjects) (*Status, error) {
	var st Status
	if err := bus.NewClient(nc, 0).Call(ctx, subj.ClusterStatus(), StatusRequest{}, &st); err != nil {
		return nil, fmt.Errorf("cluster.status: %w", err)
	}
	return &st, nil
}

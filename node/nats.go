package node

import (
	"fmt"
	"net"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/embedded"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
)

// startNATS starts the embedded server (nats role) or prepares the options
// that reach the external one.
func (n *Node) startNATS() error {
	if e := n.cfg.NATS.Embedded; e != nil {
		var err error
		ec := embeddedConfig(n.cfg.Name, e, n.subj)
		if n.cfg.Events.Durable {
			ec.JetStreamDir = n.cfg.Events.StoreDir
		}
		n.nats, err = embedded.Start(ec)
		if err != nil {
			return fmt.Errorf("node: nats.embedded: %w", err)
		}
		n.info.NATSURL = n.nats.ClientURL()
		locked := e.Token != "" || len(e.Users) > 0
		n.log.Info("embedded NATS started", "nats_url", n.info.NATSURL, "cluster_listen", e.ClusterListen, "routes", e.Routes,
			"locked", locked, "tls", e.TLS != nil)
		if host, _, _ := net.SplitHostPort(e.Listen); e.Insecure && !locked && !bus.LoopbackHost(host) {
			n.log.Warn("embedded NATS takes anonymous clients from other machines (nats.embedded.insecure)", "listen", e.Listen)
		}
		return nil
	}
	if !n.cfg.NeedsConn() {
		return nil
	}
	x := n.cfg.NATS.External
	n.info.NATSURL = strings.Join(x.URLs, ",")
	opts, err := externalNATSOptions(x, n.subj)
	if err != nil {
		return err
	}
	n.connOpts = opts
	return nil
}

// embeddedConfig is the embedded server's config from the node's.
func embeddedConfig(name string, e *clusterconfig.EmbeddedNATS, subj bus.Subjects) embedded.Config {
	cfg := embedded.Config{
		Listen:        e.Listen,
		ServerName:    name,
		ClusterName:   e.ClusterName,
		ClusterListen: e.ClusterListen,
		Routes:        e.Routes,
		Token:         e.Token,
		Subjects:      subj,
		RouteUser:     e.RouteUser,
		RoutePassword: e.RoutePassword,
		TLS:           serverTLS(e.TLS),
		ClusterTLS:    serverTLS(e.ClusterTLS),
	}
	for _, u := range e.Users {
		cfg.Users = append(cfg.Users, embedded.User{Name: u.Name, Password: u.Password, Nkey: u.Nkey, Role: bus.Role(u.Role)})
	}
	return cfg
}

func serverTLS(t *clusterconfig.ServerTLS) *embedded.TLSFiles {
	if t == nil {
		return nil
	}
	return &embedded.TLSFiles{Cert: t.Cert, Key: t.Key, CA: t.CA, Verify: t.Verify}
}

// connect opens one of the node's connections; each part has its own, as
// it would in a process of its own.
func (n *Node) connect(part string) (*nats.Conn, error) {
	opts := append([]nats.Option{nats.DrainTimeout(n.cfg.ShutdownTimeout)}, n.connOpts...)
	if part == "core" {
		// Core needs none of what it publishes back: it wakes its own
		// waiting leases directly (service.publish), and other cores'
		// events still reach it. Without NoEcho the server would copy
		// every event core publishes back to core's connection.
		opts = append(opts, nats.NoEcho())
	}
	url := n.info.NATSURL
	if n.nats != nil {
		// Beside the embedded server: an in-process pipe, logged in (on
		// a locked server) as the part's role.
		url = n.nats.InProcessURL()
		opts = append(opts, n.nats.InProcessAs(partRole(part)))
	}
	nc, err := bus.Connect(url, "kuebus-node-"+n.cfg.Name+"-"+part, opts...)
	if err != nil {
		return nil, fmt.Errorf("node: %s: %w", part, err)
	}
	return nc, nil
}

// partRole is the NATS role a part of the node logs in as on its own
// locked server: core and promoter as themselves; the HTTP API as admin,
// since it serves every method, each route only to HTTP users whose role
// may call its methods (httpapi checks, with bus.Role.MayCall).
func partRole(part string) bus.Role {
	switch part {
	case "core":
		return bus.RoleCore
	case "promoter":
		return bus.RolePromoter
	}
	return bus.RoleAdmin
}

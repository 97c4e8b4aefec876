package node

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/httpapi/prom"
)

// web is the node's HTTP API: what startHTTP started, for stopHTTP.
type web struct {
	stop context.CancelFunc
	done sync.WaitGroup // owns the serving goroutine
}

// startHTTP serves the API, dashboard and /metrics on http.listen, with a
// NATS connection of its own. A serving failure after the start fails the
// node.
func (n *Node) startHTTP() error {
	conn, err := n.connect("http")
	if err != nil {
		return err
	}
	n.httpConn = conn
	client, err := core.NewClient(conn, &core.ClientOptions{Prefix: n.cfg.Prefix})
	if err != nil {
		return fmt.Errorf("node: http: %w", err)
	}
	// The leader gauge follows queue.leader events from here on; a node
	// alone in its ring leads from the start.
	metrics, err := prom.New(prom.Config{Stats: client, Node: n.cfg.Name, Leader: n.opts.Alone})
	if err != nil {
		return fmt.Errorf("node: http: %w", err)
	}
	h := n.cfg.HTTP
	var metricsAuth *httpapi.Auth
	switch {
	case h.MetricsToken != "":
		metricsAuth = &httpapi.Auth{Token: h.MetricsToken}
	case h.MetricsOpen:
		metricsAuth = &httpapi.Auth{}
	}
	// Validate checked the key's encoding; "" leaves a random one.
	sessionKey, _ := base64.StdEncoding.DecodeString(h.SessionKey)
	cfg := httpapi.Config{
		Conn: conn, Prefix: n.cfg.Prefix, Addr: h.Listen,
		Auth: httpAuth(n.cfg), MetricsAuth: metricsAuth, InsecureBind: h.InsecureBind,
		TLSCert: h.TLSCert, TLSKey: h.TLSKey, SessionKey: sessionKey, SessionTTL: h.SessionTTL,
		Metrics: metrics, MetricsHandler: metrics.Handler(),
		Logger: n.log, ShutdownTimeout: n.cfg.ShutdownTimeout, BasePath: h.BasePath,
		DurableEvents: n.cfg.Events.Durable,
	}
	if n.opts.HTTP != nil {
		n.opts.HTTP(&cfg)
	}
	srv, err := httpapi.New(cfg)
	if err != nil {
		return fmt.Errorf("node: http: %w", err)
	}
	ln, err := srv.Listen()
	if err != nil {
		return fmt.Errorf("node: http.listen: %w", err)
	}
	// Not Start's context: Stop stops HTTP in its order.
	ctx, stop := context.WithCancel(context.Background())
	n.web.stop = stop
	n.web.done.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil {
			n.fail(fmt.Errorf("node: http: %w", err))
		}
	})
	n.info.HTTPURL = srv.Scheme() + "://" + ln.Addr().String() + strings.TrimSuffix(h.BasePath, "/") + "/"
	return nil
}

// stopHTTP stops serving: requests in flight get shutdown_timeout, event
// streams end at once. Serving errors went to fail already.
func (n *Node) stopHTTP() {
	if n.web.stop == nil {
		return
	}
	n.web.stop()
	n.web.done.Wait()
}

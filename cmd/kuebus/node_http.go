package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/httpapi"
	"github.com/kuebus/kuebus/httpapi/prom"
)

// checkNodeHTTP applies the HTTP API's bind rule to the config, naming
// the fields: an address other machines reach needs credentials.
func checkNodeHTTP(cfg *clusterconfig.Config) error {
	if !cfg.Has(clusterconfig.RoleHTTP) {
		return nil
	}
	auth := nodeHTTPAuth(cfg.HTTP)
	err := httpapi.CheckBind(cfg.HTTP.Listen, auth.Enabled(), cfg.HTTP.InsecureBind)
	if errors.Is(err, httpapi.ErrInsecureBind) {
		return usagef("node: config: http.listen %s: other machines can reach it and there is no auth: set http.token or http.basic, or http.insecure_bind: true", cfg.HTTP.Listen)
	}
	return nil
}

func nodeHTTPAuth(h clusterconfig.HTTP) httpapi.Auth {
	user, pass, _ := strings.Cut(h.Basic, ":")
	return httpapi.Auth{Token: h.Token, User: user, Password: pass}
}

// nodeHTTP is the node's HTTP API: what startHTTP started, for stopHTTP.
type nodeHTTP struct {
	stop context.CancelFunc
	done sync.WaitGroup // owns the serving goroutine
}

// startHTTP serves the API, dashboard and /metrics on http.listen, with a
// NATS connection of its own, and returns the URL it serves. A serving
// failure after the start goes to failed.
func (n *node) startHTTP(failed func(error)) (string, error) {
	conn, err := n.connect("http")
	if err != nil {
		return "", err
	}
	n.httpConn = conn
	client, err := core.NewClient(conn, &core.ClientOptions{Prefix: n.cfg.Prefix})
	if err != nil {
		return "", fmt.Errorf("node: http: %w", err)
	}
	// The leader gauge follows queue.leader events from here on; a node
	// alone in its ring leads from the start.
	metrics, err := prom.New(prom.Config{Stats: client, Node: n.cfg.Name, Leader: n.alone})
	if err != nil {
		return "", fmt.Errorf("node: http: %w", err)
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
	srv, err := httpapi.New(httpapi.Config{
		Conn: conn, Prefix: n.cfg.Prefix, Addr: h.Listen,
		Auth: nodeHTTPAuth(h), MetricsAuth: metricsAuth, InsecureBind: h.InsecureBind,
		TLSCert: h.TLSCert, TLSKey: h.TLSKey, SessionKey: sessionKey, SessionTTL: h.SessionTTL,
		Metrics: metrics, MetricsHandler: metrics.Handler(),
		Logger: n.log, ShutdownTimeout: n.cfg.ShutdownTimeout,
	})
	if err != nil {
		return "", fmt.Errorf("node: http: %w", err)
	}
	ln, err := srv.Listen()
	if err != nil {
		return "", fmt.Errorf("node: http.listen: %w", err)
	}
	// Not the run context: shutdown stops HTTP in its order.
	ctx, stop := context.WithCancel(context.Background())
	n.web.stop = stop
	n.web.done.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil {
			failed(fmt.Errorf("node: http: %w", err))
		}
	})
	return srv.Scheme() + "://" + ln.Addr().String() + "/", nil
}

// stopHTTP stops serving: requests in flight get shutdown_timeout, event
// streams end at once. Serving errors went to failed already.
func (n *node) stopHTTP() error {
	if n.web.stop == nil {
		return nil
	}
	n.web.stop()
	n.web.done.Wait()
	return nil
}

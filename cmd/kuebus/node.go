package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core/redisstore"
	"github.com/kuebus/kuebus/node"
)

// envConfig is the default of `kuebus node --config`.
const envConfig = "KUEBUS_CONFIG"

// nodeInfo is what the ready line reports.
type nodeInfo = node.Info

type nodeReadyHookKey struct{}

// withNodeReadyHook returns a context in which `kuebus node` calls fn once
// it is ready. A test hook: unset in production, where the ready log line
// is the signal.
func withNodeReadyHook(ctx context.Context, fn func(nodeInfo)) context.Context {
	return context.WithValue(ctx, nodeReadyHookKey{}, fn)
}

// runNode runs one cluster member, with the roles its config gives, until
// ctx ends.
func runNode(ctx context.Context, e *env, args []string) error {
	fs := e.flags()
	path := fs.String("config", os.Getenv(envConfig), "YAML `FILE` of the node; KUEBUS_* variables override its fields (default $"+envConfig+"; none: the variables alone)")
	check := fs.Bool("check", false, "check the config, print it with the defaults filled in and secrets hidden, and exit")
	if _, err := e.parse(fs, args, 0, 0); err != nil {
		return err
	}
	cfg, err := clusterconfig.Load(*path, os.LookupEnv)
	if err != nil {
		return usagef("node: %v", err)
	}
	if err := node.Check(cfg); err != nil {
		return usagef("%v", err)
	}
	if *check {
		out, err := yaml.Marshal(cfg.Redacted())
		if err != nil {
			return fmt.Errorf("node: print config: %w", err)
		}
		_, err = e.stdout.Write(out)
		return err
	}

	log := nodeLogger(cfg, e)
	if unused := cfg.Unused(); len(unused) > 0 {
		log.Warn("config sections of roles this node does not run: checked, not used", "sections", strings.Join(unused, ", "))
	}
	redisstore.SetLogger(log.With("component", "go-redis"))
	err = runUntilStopped(ctx, "node", node.Config{Node: cfg, Logger: log}, func(i node.Info) {
		log.Info("kuebus node ready", "roles", strings.Join(cfg.Roles, ","), "nats_url", redactURL(i.NATSURL),
			"memberlist", i.RingAddr, "http_url", i.HTTPURL)
		if hook, ok := ctx.Value(nodeReadyHookKey{}).(func(nodeInfo)); ok {
			hook(i)
		}
	})
	if err != nil {
		return err
	}
	log.Info("kuebus node stopped")
	return nil
}

// runUntilStopped starts a node, reports it ready, runs it until ctx ends
// or a part fails on its own, and stops it. `kuebus node` and `kuebus dev`
// (a node of one) both run through here; cmd names the command in the
// stopping line and in the usage error for a config the node refuses.
func runUntilStopped(ctx context.Context, cmd string, cfg node.Config, ready func(node.Info)) error {
	n, startErr := node.Start(ctx, cfg)
	if startErr == nil {
		ready(n.Info())
		select {
		case <-ctx.Done():
		case <-n.Failed():
		}
		cfg.Logger.Info("kuebus " + cmd + " stopping")
	}
	stopErr := n.Stop()
	switch {
	case startErr != nil && ctx.Err() != nil:
		return stopErr // interrupted while starting
	case startErr != nil:
		if ce, ok := errors.AsType[*node.ConfigError](startErr); ok {
			startErr = usagef("%s: %v", cmd, ce.Err)
		}
		return errors.Join(startErr, stopErr)
	}
	return stopErr
}

func nodeLogger(cfg *clusterconfig.Config, e *env) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Log.Level)) // validated by Load
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(e.stderr, opts)
	if cfg.Log.Format == "text" {
		h = slog.NewTextHandler(e.stderr, opts)
	}
	return newRedactLogger(h).With("node", cfg.Name)
}

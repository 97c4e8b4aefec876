package httpapi_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/httpapi/prom"
	"github.com/kuebus/kuebus/node/nodetest"
)

// The Grafana dashboard and the Prometheus alert rules of deploy/.
const (
	dashboardFile = "../deploy/grafana/kuebus-dashboard.json"
	rulesFile     = "../deploy/prometheus/kuebus-rules.yml"
	rulesTestFile = "../deploy/prometheus/kuebus-rules.test.yml"
)

// promtoolInstall is how to get the rule checker on Debian, as CI does.
const promtoolInstall = "apt-get install -y --no-install-recommends prometheus"

// TestDashboardAndAlertsUseExportedMetrics: every metric the dashboard and
// the alert rules query is one /metrics exports, so neither breaks
// silently when a metric is renamed; the rules pass Prometheus's own
// checker and their unit tests (promtool).
func TestDashboardAndAlertsUseExportedMetrics(t *testing.T) {
	t.Parallel()
	exported := exportedMetrics(t)

	var dash map[string]any
	data, err := os.ReadFile(dashboardFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &dash), "the dashboard is JSON")
	var dashExprs []string
	walkExprs(dash, &dashExprs)
	require.NotEmpty(t, dashExprs)

	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	data, err = os.ReadFile(rulesFile)
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &rules))
	var ruleExprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			ruleExprs = append(ruleExprs, r.Expr)
		}
	}
	require.NotEmpty(t, ruleExprs)

	name := regexp.MustCompile(`kuebus_[a-z_]+`)
	for file, exprs := range map[string][]string{dashboardFile: dashExprs, rulesFile: ruleExprs} {
		for _, expr := range exprs {
			for _, m := range name.FindAllString(expr, -1) {
				base := m
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					if b, ok := strings.CutSuffix(m, suffix); ok && exported[b] {
						base = b
					}
				}
				require.True(t, exported[base], "%s queries %s, which /metrics does not export (in %q)", file, m, expr)
			}
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool is not installed: %v (install it with `%s`, as scripts/install-deps.sh --prom does)", err, promtoolInstall)
	}
	for _, args := range [][]string{{"check", "rules", filepath.Base(rulesFile)}, {"test", "rules", filepath.Base(rulesTestFile)}} {
		cmd := exec.CommandContext(t.Context(), promtool, args...)
		cmd.Dir = filepath.Dir(rulesFile)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// exportedMetrics names every metric family of an exporter fed one event
// of each kind and one core call, with a real core behind its stats.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	c := nodetest.NewCore(t, service.Config{})
	job, err := c.Client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)
	_, err = c.Client.SetType(t.Context(), &core.TypePolicy{Type: "email", Concurrency: 1}) // kuebus_type_limited_jobs
	require.NoError(t, err)
	exp, err := prom.New(prom.Config{Stats: c.Client})
	require.NoError(t, err)
	now := time.Now().UnixMilli()
	head := &core.Job{ID: job.ID, Type: "email", PromoteAt: now - 10, StartedAt: now - 5, Duration: 3}
	for _, ev := range []string{bus.EventEnqueue, bus.EventPromotion, bus.EventStart, bus.EventComplete,
		bus.EventFailedAttempt, bus.EventFailed, bus.EventCancel, bus.EventStalled} {
		exp.Event(&core.Event{Event: ev, ID: job.ID, Type: "email", At: now, Job: head, New: true})
	}
	exp.Event(&core.Event{Event: bus.QueueLeader, Leader: "local", At: now})
	exp.RPC(bus.MethodStats, time.Millisecond, nil)
	families, err := exp.Registry().Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, want := range []string{"kuebus_queue_oldest_job_age_seconds", "kuebus_job_wait_seconds", "kuebus_promotion_lateness_seconds", "kuebus_jobs_stalled_total"} {
		require.True(t, names[want], "%s is exported", want)
	}
	return names
}

// walkExprs collects every "expr" string of a Grafana dashboard's JSON.
func walkExprs(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if s, ok := v[k].(string); ok && k == "expr" {
				*out = append(*out, s)
				continue
			}
			walkExprs(v[k], out)
		}
	case []any:
		for _, x := range v {
			walkExprs(x, out)
		}
	}
}

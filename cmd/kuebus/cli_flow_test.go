package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/core/service"
	"github.com/kuebus/kuebus/node/nodetest"
)

// TestFlowCreateAndJobDeps: kuebus flow create stores a flow from a file
// and prints each job's ref, id and state; kuebus job deps lists a job's
// dependencies and its dependents; a file that is no flow is a usage
// error (exit 2) that stores nothing, and a bad spec is core's invalid
// (exit 1) naming the field.
func TestFlowCreateAndJobDeps(t *testing.T) {
	t.Parallel()
	c := nodetest.NewCore(t, service.Config{})
	url := c.NATS.ClientURL()
	dir := t.TempDir()
	file := filepath.Join(dir, "flow.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"jobs":[
		{"ref":"load","spec":{"type":"load"},"depends_on":["extract"]},
		{"ref":"extract","spec":{"type":"extract","data":{"from":"s3"}}}]}`), 0o600))
	r := kuebus(t, "flow", "create", file, "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	var reply core.FlowReply
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &reply))
	require.Len(t, reply.Jobs, 2)
	require.Equal(t, core.StateWaiting, reply.Jobs[0].State)
	require.Equal(t, core.StateInactive, reply.Jobs[1].State)

	r = kuebus(t, "job", "deps", strconv.FormatInt(reply.IDOf("load"), 10), "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, lineFields(r.stdout), strconv.FormatInt(reply.IDOf("extract"), 10)+" extract inactive")
	r = kuebus(t, "job", "deps", strconv.FormatInt(reply.IDOf("extract"), 10), "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, lineFields(r.stdout), strconv.FormatInt(reply.IDOf("load"), 10)+" load waiting")

	r = kuebus(t, "job", "create", "load", "--depends-on", strconv.FormatInt(reply.IDOf("extract"), 10), "--on-dependency-failure", "ignore", "--nats-url", url)
	require.Equal(t, 0, r.code, r.stderr)
	var waiting core.Job
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &waiting))
	require.Equal(t, core.StateWaiting, waiting.State)
	require.Equal(t, core.DepIgnore, waiting.OnDependencyFailure)
	r = kuebus(t, "job", "create", "load", "--depends-on", "x", "--nats-url", url)
	require.Equal(t, 2, r.code, r.stdout)
	require.Contains(t, r.stderr, "--depends-on")
	r = kuebus(t, "job", "create", "load", "--on-dependency-failure", "shrug", "--nats-url", url)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "on_dependency_failure")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"jobs":[{"ref":"a","spec":{"type":"a"},"after":["b"]}]}`), 0o600))
	r = kuebus(t, "flow", "create", bad, "--nats-url", url)
	require.Equal(t, 2, r.code, r.stdout)
	require.Contains(t, r.stderr, "after")
	require.NoError(t, os.WriteFile(bad, []byte(`{"jobs":[{"ref":"a","spec":{"type":"a b"}}]}`), 0o600))
	r = kuebus(t, "flow", "create", bad, "--nats-url", url)
	require.Equal(t, 1, r.code, r.stdout)
	require.Contains(t, r.stderr, "jobs[0].spec.type")
	n, err := c.Client.Count(t.Context(), "", "")
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "the bad flows and creates stored nothing")
}

// lineFields is out's lines, each with its fields joined by one space.
func lineFields(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

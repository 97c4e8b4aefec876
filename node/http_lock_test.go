package node_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	clusterconfig "github.com/kuebus/kuebus/cluster-config"
	"github.com/kuebus/kuebus/core"
	"github.com/kuebus/kuebus/node"
	"github.com/kuebus/kuebus/node/nodetest"
)

// httpDo sends one request to a node's HTTP API; auth is "user:password"
// for basic auth, "Bearer T", or "" for none.
func httpDo(t *testing.T, method, url, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	if user, pw, ok := strings.Cut(auth, ":"); ok && !strings.HasPrefix(auth, "Bearer ") {
		req.SetBasicAuth(user, pw)
	} else if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	res, err := tr.RoundTrip(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(data)
}

// TestALockedNodeLocksItsHTTPAPI is the tester's case: with NATS users
// and roles on, an anonymous POST /jobs/bulk removed jobs over HTTP on
// loopback. Now the node's HTTP users are its NATS users, with their
// roles.
func TestALockedNodeLocksItsHTTPAPI(t *testing.T) {
	cfg := devLike(t, nodetest.RedisURL(t))
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RoleHTTP}
	cfg.NATS.Embedded.Users = []clusterconfig.NATSUser{
		{Name: "ada", Role: "admin", Password: "admin-pw"},
		{Name: "vic", Role: "viewer", Password: "viewer-pw"},
		{Name: "svc", Role: "core", Password: "core-pw"},
	}
	cfg.HTTP.Users = []clusterconfig.HTTPUser{{Name: "pat", Role: "producer", Password: "producer-pw"}}
	n, err := node.Start(t.Context(), node.Config{Node: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Stop()) })
	base := n.Info().HTTPURL

	admin, err := bus.Auth{User: "ada", Password: "admin-pw"}.Options(bus.Subjects{})
	require.NoError(t, err)
	nc, err := bus.Connect(n.Info().NATSURL, t.Name(), admin...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	client, err := core.NewClient(nc, nil)
	require.NoError(t, err)
	job, err := client.Create(t.Context(), "email", nil, nil)
	require.NoError(t, err)
	id := strconv.FormatInt(job.ID, 10)
	bulkRemove := `{"action":"remove","state":"inactive","type":"email"}`

	for _, r := range [][2]string{
		{"GET", "stats"}, {"GET", ""}, {"GET", "events"}, {"GET", "metrics"}, {"GET", "job/" + id},
		{"POST", "jobs/bulk"}, {"DELETE", "job/" + id}, {"POST", "job"}, {"POST", "pop?type=email"},
	} {
		status, body := httpDo(t, r[0], base+r[1], "", bulkRemove)
		require.Equal(t, http.StatusUnauthorized, status, "%s /%s: %s", r[0], r[1], body)
	}
	status, body := httpDo(t, "GET", base+"login", "", "")
	require.Equal(t, http.StatusOK, status, "the login page is open")
	require.Contains(t, body, `name="password"`)

	status, body = httpDo(t, "POST", base+"jobs/bulk", "vic:viewer-pw", bulkRemove)
	require.Equal(t, http.StatusForbidden, status, body)
	require.Contains(t, body, "user vic (viewer) may not POST /jobs/bulk: it needs core.bulk")
	status, _ = httpDo(t, "DELETE", base+"job/"+id, "vic:viewer-pw", "")
	require.Equal(t, http.StatusForbidden, status)
	status, _ = httpDo(t, "GET", base+"job/"+id, "vic:viewer-pw", "")
	require.Equal(t, http.StatusOK, status, "a viewer looks")
	status, _ = httpDo(t, "POST", base+"job", "pat:producer-pw", `{"type":"email"}`)
	require.Equal(t, http.StatusCreated, status, "http.users sign in too")
	status, _ = httpDo(t, "GET", base+"stats", "svc:core-pw", "")
	require.Equal(t, http.StatusUnauthorized, status, "a core user is no HTTP user")
	status, _ = httpDo(t, "GET", base+"stats", "vic:admin-pw", "")
	require.Equal(t, http.StatusUnauthorized, status, "another user's password")

	_, err = client.Get(t.Context(), job.ID)
	require.NoError(t, err, "the job is still there")
	status, body = httpDo(t, "POST", base+"jobs/bulk", "ada:admin-pw", bulkRemove)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"done":2`)
}

// TestANodeLockedWithATokenTakesItOverHTTP: kuebus dev --nats-token T
// locks HTTP with the same token.
func TestANodeLockedWithATokenTakesItOverHTTP(t *testing.T) {
	cfg := devLike(t, nodetest.RedisURL(t))
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RoleHTTP}
	cfg.NATS.Embedded.Token = "nats-s3cret"
	n, err := node.Start(t.Context(), node.Config{Node: cfg})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Stop()) })
	base := n.Info().HTTPURL
	status, _ := httpDo(t, "GET", base+"stats", "", "")
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = httpDo(t, "GET", base+"stats", "Bearer nats-s3cret", "")
	require.Equal(t, http.StatusOK, status)
	status, _ = httpDo(t, "GET", base+"login", "", "")
	require.Equal(t, http.StatusOK, status)
}

// TestANodeWhoseNATSIsLockedRefusesAnOpenHTTPAPI: NATS locked with nkey
// users alone leaves no one to sign in over HTTP: the config says so.
func TestANodeWhoseNATSIsLockedRefusesAnOpenHTTPAPI(t *testing.T) {
	cfg := devLike(t, nodetest.RedisURL(t))
	cfg.Roles = []string{clusterconfig.RoleNATS, clusterconfig.RoleCore, clusterconfig.RoleHTTP}
	cfg.NATS.Embedded.Users = []clusterconfig.NATSUser{{Name: "w", Role: "worker", Nkey: "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"}}
	_, err := node.Start(t.Context(), node.Config{Node: cfg})
	var ce *node.ConfigError
	require.ErrorAs(t, err, &ce)
	require.ErrorContains(t, err, "config: http: nats.embedded is locked, so the HTTP API must be too")
}

package embedded_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/require"

	"github.com/kuebus/kuebus/bus"
	"github.com/kuebus/kuebus/bus/bustest"
	"github.com/kuebus/kuebus/bus/embedded"
)

// echoReq and echoResp are the bodies of the test's endpoints.
type echoReq struct {
	N int `json:"n"`
}

type echoResp struct {
	Twice int `json:"twice"`
}

func TestLockedServerRefusesAnonymousClients(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t, embedded.User{Name: "p1", Password: "pw", Role: bus.RoleProducer})
	_, err := bus.Connect(ls.ClientURL(), "anonymous")
	require.ErrorIs(t, err, nats.ErrAuthorization)
	_, err = bus.Connect(ls.ClientURL(), "wrong", nats.UserInfo("p1", "nope"))
	require.ErrorIs(t, err, nats.ErrAuthorization)
}

func TestInProcessUsersCannotLogInOverTCP(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t, embedded.User{Name: "p1", Password: "pw", Role: bus.RoleProducer})
	// The in-process users' names are known; their passwords are not, and
	// even with one the TCP listener would refuse them. A guess is refused.
	_, err := bus.Connect(ls.ClientURL(), "guess", nats.UserInfo("_local_admin", ""))
	require.ErrorIs(t, err, nats.ErrAuthorization)
}

func TestProducerCreatesAndTheReplyReachesItsOwnInbox(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t, embedded.User{Name: "p1", Password: "pw", Role: bus.RoleProducer})
	nc := ls.ConnectAs(t, bus.Auth{User: "p1", Password: "pw"})
	var resp echoResp
	err := bus.NewClient(nc, 5*time.Second).Call(context.Background(), ls.Subjects.Core(bus.MethodCreate), echoReq{N: 21}, &resp)
	require.NoError(t, err)
	require.Equal(t, 42, resp.Twice)
}

func TestUserMayNotSubscribeToOtherInboxes(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t,
		embedded.User{Name: "w1", Password: "pw", Role: bus.RoleWorker},
		embedded.User{Name: "w2", Password: "pw", Role: bus.RoleWorker})
	nc := ls.ConnectAs(t, bus.Auth{User: "w1", Password: "pw"}, nats.PermissionErrOnSubscribe(true))
	w2Inbox, err := ls.Subjects.Inbox("w2")
	require.NoError(t, err)
	for _, subject := range []string{"_INBOX.>", "t._INBOX.>", w2Inbox + ".>", "t.core.>", ">"} {
		sub, err := nc.SubscribeSync(subject)
		require.NoError(t, err)
		require.NoError(t, nc.Flush())
		_, err = sub.NextMsg(5 * time.Second)
		require.ErrorIs(t, err, nats.ErrPermissionViolation, subject)
	}
	// Its own inbox and the events are allowed: an admin's messages there
	// arrive.
	admin, err := bus.Connect(ls.ClientURL(), "admin", ls.InProcess())
	require.NoError(t, err)
	t.Cleanup(admin.Close)
	own, err := ls.Subjects.Inbox("w1")
	require.NoError(t, err)
	for _, subject := range []string{own + ".x", ls.Subjects.Job(bus.EventEnqueue, 1, "email")} {
		sub, err := nc.SubscribeSync(subject)
		require.NoError(t, err)
		require.NoError(t, nc.Flush())
		require.NoError(t, admin.Publish(subject, []byte("x")))
		_, err = sub.NextMsg(5 * time.Second)
		require.NoError(t, err, subject)
	}
}

func TestOnlyCorePublishesEvents(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t, embedded.User{Name: "v1", Password: "pw", Role: bus.RoleViewer}, embedded.User{Name: "p1", Password: "pw", Role: bus.RoleProducer})
	viewer := ls.ConnectAs(t, bus.Auth{User: "v1", Password: "pw"})
	got := make(chan *nats.Msg, 1)
	sub, err := viewer.ChanSubscribe(ls.Subjects.AllJobEvents(), got)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, viewer.Flush())

	forger := ls.ConnectAs(t, bus.Auth{User: "p1", Password: "pw"})
	forged := ls.Subjects.Job(bus.EventComplete, 1, "email")
	require.NoError(t, forger.Publish(forged, []byte("{}")))
	require.NoError(t, forger.Flush())
	require.ErrorIs(t, forger.LastError(), nats.ErrPermissionViolation)

	core, err := bus.Connect(ls.ClientURL(), "core", ls.InProcessAs(bus.RoleCore))
	require.NoError(t, err)
	t.Cleanup(core.Close)
	real := ls.Subjects.Job(bus.EventComplete, 2, "email")
	require.NoError(t, core.Publish(real, []byte("{}")))
	require.NoError(t, core.Flush())
	select {
	case m := <-got:
		require.Equal(t, real, m.Subject, "the first event the viewer saw is core's, not the forged one")
	case <-time.After(5 * time.Second):
		t.Fatal("core's event did not arrive")
	}
}

// TestACoreHearsAnotherCoresResume: on a locked server a core may
// subscribe to queue.resume, which another core publishes, so that its
// waiting leases of a resumed type wake.
func TestACoreHearsAnotherCoresResume(t *testing.T) {
	t.Parallel()
	ls := bustest.StartLocked(t, embedded.User{Name: "v1", Password: "pw", Role: bus.RoleViewer}) // locked with users
	conns := make([]*nats.Conn, 2)
	for i := range conns {
		nc, err := bus.Connect(ls.ClientURL(), "core", ls.InProcessAs(bus.RoleCore))
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		conns[i] = nc
	}
	got := make(chan *nats.Msg, 1)
	sub, err := conns[0].ChanSubscribe(ls.Subjects.Queue(bus.QueueResume), got)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, conns[0].Flush())
	require.NoError(t, conns[1].Publish(ls.Subjects.Queue(bus.QueueResume), []byte(`{"event":"resume","type":"email","at":1}`)))
	require.NoError(t, conns[1].Flush())
	select {
	case m := <-got:
		require.Equal(t, "t.queue.resume", m.Subject)
	case <-time.After(5 * time.Second):
		t.Fatal("the other core's queue.resume did not arrive")
	}
	require.NoError(t, conns[0].LastError())
}

func TestNkeyUserAuthenticatesWithItsSeedAndGetsItsInbox(t *testing.T) {
	t.Parallel()
	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	pub, err := kp.PublicKey()
	require.NoError(t, err)
	seed, err := kp.Seed()
	require.NoError(t, err)
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	require.NoError(t, os.WriteFile(seedFile, seed, 0o600))

	ls := bustest.StartLocked(t, embedded.User{Name: "p-nkey", Nkey: pub, Role: bus.RoleProducer})
	auth := bus.Auth{NkeySeedFile: seedFile}
	inbox, err := auth.InboxPrefix(ls.Subjects)
	require.NoError(t, err)
	require.Equal(t, "t._INBOX."+pub, inbox)
	nc := ls.ConnectAs(t, auth)
	var resp echoResp
	require.NoError(t, bus.NewClient(nc, 5*time.Second).Call(context.Background(), ls.Subjects.Core(bus.MethodCreate), echoReq{N: 1}, &resp))
	require.Equal(t, 2, resp.Twice)
}

func TestTokenLockedServer(t *testing.T) {
	t.Parallel()
	e, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", Token: "s3cret"})
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	_, err = bus.Connect(e.ClientURL(), "anonymous")
	require.ErrorIs(t, err, nats.ErrAuthorization)
	opts, err := bus.Auth{Token: "s3cret"}.Options(bus.Subjects{})
	require.NoError(t, err)
	nc, err := bus.Connect(e.ClientURL(), "holder", opts...)
	require.NoError(t, err)
	nc.Close()
	// The process's own connections present the token.
	nc, err = bus.Connect(e.ClientURL(), "in-process", e.InProcessAs(bus.RoleCore))
	require.NoError(t, err)
	nc.Close()
}

func TestAuthConfigErrorsNameTheProblem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  embedded.Config
		want string
	}{
		{"an unknown role", embedded.Config{Users: []embedded.User{{Name: "a", Password: "p", Role: "boss"}}},
			`user 1 ("a"): role: "boss" is not a role`},
		{"a user without password or nkey", embedded.Config{Users: []embedded.User{{Name: "a", Role: bus.RoleViewer}}},
			`user 1 ("a"): needs a password or an nkey`},
		{"a bad nkey", embedded.Config{Users: []embedded.User{{Name: "a", Nkey: "SUABC", Role: bus.RoleViewer}}},
			`is not a public user key`},
		{"a reserved name", embedded.Config{Users: []embedded.User{{Name: "_local_admin", Password: "p", Role: bus.RoleViewer}}},
			`reserved`},
		{"a user twice", embedded.Config{Users: []embedded.User{{Name: "a", Password: "p", Role: bus.RoleViewer}, {Name: "a", Password: "q", Role: bus.RoleAdmin}}},
			`user 2 ("a"): listed twice`},
		{"a token and users", embedded.Config{Token: "t", Users: []embedded.User{{Name: "a", Password: "p", Role: bus.RoleViewer}}},
			`a token and users exclude each other`},
		{"a missing certificate", embedded.Config{TLS: &embedded.TLSFiles{Cert: "/nonexistent/cert.pem", Key: "/nonexistent/key.pem"}},
			`TLS: `},
		{"route user without password", embedded.Config{ClusterListen: "127.0.0.1:-1", RouteUser: "r"},
			`route user and route password go together`},
	}
	for _, tc := range cases {
		t.Run(tc.name+" is refused", func(t *testing.T) {
			tc.cfg.Listen = "127.0.0.1:-1"
			e, err := embedded.Start(tc.cfg)
			if e != nil {
				e.Shutdown()
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestRoutesAuthenticate(t *testing.T) {
	t.Parallel()
	a, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", ClusterListen: "127.0.0.1:-1",
		RouteUser: "route", RoutePassword: "pw", Token: "t"})
	require.NoError(t, err)
	t.Cleanup(a.Shutdown)
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:-1", ClusterListen: "127.0.0.1:-1",
		Routes: []string{"nats-route://" + a.ClusterAddr().String()}, RouteUser: "route", RoutePassword: "pw", Token: "t"})
	require.NoError(t, err)
	t.Cleanup(b.Shutdown)
	require.Eventually(t, func() bool { return a.NumRoutes() > 0 && b.NumRoutes() > 0 }, 10*time.Second, 10*time.Millisecond)
}

// TestARouteWithTheWrongCredentialsIsKeptOut: a server that dials with the
// wrong route password gets no route, while one with the right password,
// started after it, does. That route is the signal that the wrong one had
// its chance: no sleep decides when to look.
func TestARouteWithTheWrongCredentialsIsKeptOut(t *testing.T) {
	t.Parallel()
	start := func(routeTo net.Addr, password string) *embedded.Server {
		t.Helper()
		cfg := embedded.Config{Listen: "127.0.0.1:-1", ClusterListen: "127.0.0.1:-1",
			RouteUser: "route", RoutePassword: password, Token: "t"}
		if routeTo != nil {
			cfg.Routes = []string{"nats-route://" + routeTo.String()}
		}
		e, err := embedded.Start(cfg)
		require.NoError(t, err)
		t.Cleanup(e.Shutdown)
		return e
	}
	a := start(nil, "pw")
	intruder := start(a.ClusterAddr(), "wrong")
	member := start(a.ClusterAddr(), "pw")

	require.Eventually(t, func() bool { return member.NumRoutes() > 0 }, 10*time.Second, 10*time.Millisecond,
		"the server with the right password routes")
	require.Zero(t, intruder.NumRoutes(), "the server with the wrong password has no route")
}

func TestEachRoleCallsItsMethodsOnly(t *testing.T) {
	t.Parallel()
	all := []string{bus.MethodCreate, bus.MethodCreateBulk, bus.MethodGet, bus.MethodExists, bus.MethodRemove,
		bus.MethodLog, bus.MethodAddLog, bus.MethodRange, bus.MethodCount, bus.MethodTypes, bus.MethodIDs,
		bus.MethodStats, bus.MethodSetState, bus.MethodSetPriority, bus.MethodPromote, bus.MethodLease,
		bus.MethodComplete, bus.MethodFail, bus.MethodTouch, bus.MethodRelease, bus.MethodRejoin,
		bus.MethodProgress, bus.MethodRescue, bus.MethodBatch, bus.MethodPause, bus.MethodResume,
		bus.MethodCancel, bus.MethodBulk,
		bus.MethodScheduleSet, bus.MethodScheduleList, bus.MethodScheduleRemove, bus.MethodScheduleFire, bus.MethodScheduleRun, bus.MethodClean,
		bus.MethodSearch, bus.MethodHistory, bus.MethodHeartbeat, bus.MethodWorkers, bus.MethodFailedErrors,
		bus.MethodTypeSet, bus.MethodTypeGet, bus.MethodTypeList, bus.MethodExplain}
	read := []string{bus.MethodGet, bus.MethodExists, bus.MethodLog, bus.MethodRange, bus.MethodCount, bus.MethodTypes, bus.MethodIDs, bus.MethodStats,
		bus.MethodScheduleList, bus.MethodSearch, bus.MethodHistory, bus.MethodWorkers, bus.MethodFailedErrors, bus.MethodTypeGet, bus.MethodTypeList, bus.MethodExplain}
	allowed := map[bus.Role][]string{
		bus.RoleAdmin:    all,
		bus.RoleCore:     nil,
		bus.RolePromoter: {bus.MethodPromote, bus.MethodRescue, bus.MethodScheduleFire, bus.MethodClean},
		bus.RoleWorker: {bus.MethodLease, bus.MethodComplete, bus.MethodFail, bus.MethodTouch, bus.MethodRelease,
			bus.MethodRejoin, bus.MethodProgress, bus.MethodAddLog, bus.MethodBatch, bus.MethodHeartbeat, bus.MethodCreate, bus.MethodCreateBulk, bus.MethodGet},
		bus.RoleProducer: append([]string{bus.MethodCreate, bus.MethodCreateBulk}, read...),
		bus.RoleViewer:   read,
	}
	var users []embedded.User
	for role := range allowed {
		users = append(users, embedded.User{Name: string(role), Password: "pw", Role: role})
	}
	ls := bustest.StartLocked(t, users...)
	for role, methods := range allowed {
		t.Run(string(role)+" calls "+fmt.Sprint(len(methods))+" methods", func(t *testing.T) {
			t.Parallel()
			client := bus.NewClient(ls.ConnectAs(t, bus.Auth{User: string(role), Password: "pw"}), time.Minute)
			for _, m := range all {
				// An allowed call reaches the server: answered, or "no
				// responders" for the methods the test serves not.
				err := client.Call(context.Background(), ls.Subjects.Core(m), echoReq{}, nil)
				if slices.Contains(methods, m) {
					require.NotErrorIs(t, err, bus.ErrPermissionDenied, "%s may call %s", role, m)
				} else {
					require.ErrorIs(t, err, bus.ErrPermissionDenied, "%s may not call %s", role, m)
				}
			}
		})
	}
}

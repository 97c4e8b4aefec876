package bus

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Role is what a NATS user of a locked embedded server may do, as DESIGN
// §8 lists: each role is a set of NATS permissions built by Permissions.
type Role string

// The six roles.
const (
	// RoleAdmin may do everything: the dashboard, the CLI of an operator.
	RoleAdmin Role = "admin"
	// RoleCore serves core.> and publishes the events.
	RoleCore Role = "core"
	// RolePromoter calls promote, rescue and schedule_fire, announces queue.leader and
	// serves cluster.status.
	RolePromoter Role = "promoter"
	// RoleWorker calls the worker methods, create and get, and reads events.
	RoleWorker Role = "worker"
	// RoleProducer creates jobs, calls the read methods and reads events.
	RoleProducer Role = "producer"
	// RoleViewer calls the read methods and reads events.
	RoleViewer Role = "viewer"
)

// Roles lists every role.
var Roles = []Role{RoleAdmin, RoleCore, RolePromoter, RoleWorker, RoleProducer, RoleViewer}

// ParseRole checks a role name from a config file.
func ParseRole(s string) (Role, error) {
	if slices.Contains(Roles, Role(s)) {
		return Role(s), nil
	}
	names := make([]string, len(Roles))
	for i, r := range Roles {
		names[i] = string(r)
	}
	return "", fmt.Errorf("%q is not a role: use %s", s, strings.Join(names, ", "))
}

// ResponseWindow is how long a serving role (core, promoter) may answer a
// request after it arrived: longer than the longest lease wait core allows
// (5 minutes), so a waiting lease's late answer is still let through.
const ResponseWindow = 6 * time.Minute

// Method groups, by who may call them.
var (
	// readMethods change nothing.
	readMethods = []string{MethodGet, MethodExists, MethodLog, MethodRange, MethodCount, MethodTypes, MethodIDs, MethodStats, MethodScheduleList, MethodSearch, MethodHistory, MethodWorkers}
	// createMethods add jobs.
	createMethods = []string{MethodCreate, MethodCreateBulk}
	// workerMethods act on a leased job, under its lease token.
	workerMethods = []string{MethodLease, MethodComplete, MethodFail, MethodTouch, MethodRelease, MethodRejoin, MethodProgress, MethodAddLog, MethodBatch, MethodHeartbeat}
	// leaderMethods are the promoter leader's calls.
	leaderMethods = []string{MethodPromote, MethodRescue, MethodScheduleFire, MethodClean}
	// The methods that change jobs, types or schedules by hand (remove,
	// set_state, set_priority, pause, resume, cancel, bulk, schedule_set,
	// schedule_remove) are in no group: admin's alone.
)

// Permissions are the NATS permissions of role for a user whose inbox
// prefix is inbox (Subjects.Inbox): nil for admin, which may do everything.
// The roles that read events (worker, producer, viewer) may also replay
// them from the durable event stream (EventStreamReadAPI), and core may
// create it and set its limits (EventStreamWriteAPI); only admin may
// delete or purge it.
// Every other role may subscribe under its own inbox only, besides what
// the role reads, so a reply (a lease token, a job) reaches the asker
// alone; the serving roles answer through allow_responses, which lets them
// publish to a request's reply subject, once, within ResponseWindow.
func (s Subjects) Permissions(role Role, inbox string) *server.Permissions {
	if role == RoleAdmin {
		return nil
	}
	events := []string{s.AllJobEvents(), s.AllQueueEvents()}
	own := inbox + ".>"
	var pub, sub []string
	var resp *server.ResponsePermission
	switch role {
	case RoleCore:
		pub = append(slices.Clone(events), s.EventStreamWriteAPI()...)
		// queue.resume: waiting leases of a type resumed through another
		// core wake on it.
		sub = append([]string{s.AllCore(), s.AllJobEvents(), s.Queue(QueueResume), ServiceDiscovery}, own)
		resp = &server.ResponsePermission{MaxMsgs: 1, Expires: ResponseWindow}
	case RolePromoter:
		pub = append(s.methods(leaderMethods), s.Queue(QueueLeader))
		sub = []string{s.AllQueueEvents(), s.ClusterStatus(), ServiceDiscovery, own}
		resp = &server.ResponsePermission{MaxMsgs: 1, Expires: ResponseWindow}
	case RoleWorker:
		pub = slices.Concat(s.methods(slices.Concat(workerMethods, createMethods, []string{MethodGet})), s.EventStreamReadAPI())
		sub = append(events, own)
	case RoleProducer:
		pub = slices.Concat(s.methods(slices.Concat(createMethods, readMethods)), []string{s.ClusterStatus(), ServiceDiscovery}, s.EventStreamReadAPI())
		sub = append(events, own)
	case RoleViewer:
		pub = slices.Concat(s.methods(readMethods), []string{s.ClusterStatus(), ServiceDiscovery}, s.EventStreamReadAPI())
		sub = append(events, own)
	default:
		panic("bus: no permissions for role " + string(role)) // ParseRole checks roles
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: sub},
		Response:  resp,
	}
}

func (s Subjects) methods(names []string) []string {
	out := make([]string, len(names))
	for i, m := range names {
		out[i] = s.Core(m)
	}
	return out
}

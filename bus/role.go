package bus

import (
	"fmt"
	"slices"
	"strings"
)

// Role is what a NATS user of a locked embedded server may do, as
// docs/protocol.md §1 (Authentication and inboxes) lists: each role is a set of NATS permissions, which
// embedded.Permissions (bus/embedded) builds. The names live here, apart
// from the server, so that whatever names a role (a config's check, a
// node's parts) compiles no NATS server.
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

// LocalUserPrefix starts the names of an embedded server's in-process
// users (bus/embedded); configured users may not use it.
const LocalUserPrefix = "_local_"

// Method groups, by who may call them (docs/protocol.md §1). The methods that change
// jobs, types or schedules by hand (remove, set_state, set_priority, pause,
// resume, cancel, bulk, schedule_set, schedule_remove, schedule_run, type_set) are in
// no group: admin's alone.
var (
	// readMethods change nothing.
	readMethods = []string{MethodGet, MethodExists, MethodLog, MethodRange, MethodCount, MethodTypes, MethodIDs, MethodStats, MethodScheduleList, MethodSearch, MethodHistory, MethodWorkers, MethodFailedErrors, MethodTypeGet, MethodTypeList, MethodExplain, MethodDependencies, MethodDependents}
	// createMethods add jobs.
	createMethods = []string{MethodCreate, MethodCreateBulk, MethodCreateFlow}
	// workerMethods act on a leased job, under its lease token.
	workerMethods = []string{MethodLease, MethodComplete, MethodFail, MethodTouch, MethodRelease, MethodRejoin, MethodProgress, MethodAddLog, MethodBatch, MethodHeartbeat}
	// leaderMethods are the promoter leader's calls.
	leaderMethods = []string{MethodPromote, MethodRescue, MethodScheduleFire, MethodClean}
)

// Methods lists the core methods r may call; all is true for admin, which
// may call every method. These are the permissions embedded.Permissions
// gives a NATS user of the role, and the HTTP API asks the same of an HTTP
// user of the role for each route (httpapi), so that a role means one
// thing on both.
func (r Role) Methods() (methods []string, all bool) {
	switch r {
	case RoleAdmin:
		return nil, true
	case RolePromoter:
		return slices.Clone(leaderMethods), false
	case RoleWorker:
		return slices.Concat(workerMethods, createMethods, []string{MethodGet, MethodDependencies}), false
	case RoleProducer:
		return slices.Concat(createMethods, readMethods), false
	case RoleViewer:
		return slices.Clone(readMethods), false
	}
	return nil, false // core serves core.> and calls nothing
}

// MayCall reports whether r may call the core method.
func (r Role) MayCall(method string) bool {
	methods, all := r.Methods()
	return all || slices.Contains(methods, method)
}

// ReadsEvents reports whether r may subscribe to every job and queue event
// (job.>, queue.>): admin, worker, producer and viewer. Core hears job.>
// and the promoter queue.> only, for their own work.
func (r Role) ReadsEvents() bool {
	switch r {
	case RoleAdmin, RoleWorker, RoleProducer, RoleViewer:
		return true
	}
	return false
}

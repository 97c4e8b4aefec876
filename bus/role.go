package bus

import (
	"fmt"
	"slices"
	"strings"
)

// Role is what a NATS user of a locked embedded server may do, as DESIGN
// §8 lists: each role is a set of NATS permissions, which
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

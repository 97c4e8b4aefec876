package embedded

import (
	"slices"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/kuebus/kuebus/bus"
)

// ResponseWindow is how long a serving role (core, promoter) may answer a
// request after it arrived: longer than the longest lease wait core allows
// (5 minutes), so a waiting lease's late answer is still let through.
const ResponseWindow = 6 * time.Minute

// Permissions are the NATS permissions of role, under s's prefix, for a
// user whose inbox prefix is inbox (bus.Subjects.Inbox): nil for admin,
// which may do everything.
// The roles that read events (worker, producer, viewer) may also replay
// them from the durable event stream (bus.Subjects.EventStreamReadAPI),
// and core may create it and set its limits (EventStreamWriteAPI); only
// admin may delete or purge it.
// Every other role may subscribe under its own inbox only, besides what
// the role reads, so a reply (a lease token, a job) reaches the asker
// alone; the serving roles answer through allow_responses, which lets them
// publish to a request's reply subject, once, within ResponseWindow.
func Permissions(s bus.Subjects, role bus.Role, inbox string) *server.Permissions {
	if role == bus.RoleAdmin {
		return nil
	}
	events := []string{s.AllJobEvents(), s.AllQueueEvents()}
	own := inbox + ".>"
	var pub, sub []string
	var resp *server.ResponsePermission
	switch role {
	case bus.RoleCore:
		pub = append(slices.Clone(events), s.EventStreamWriteAPI()...)
		// queue.resume: waiting leases of a type resumed through another
		// core wake on it.
		sub = append([]string{s.AllCore(), s.AllJobEvents(), s.Queue(bus.QueueResume), bus.ServiceDiscovery}, own)
		resp = &server.ResponsePermission{MaxMsgs: 1, Expires: ResponseWindow}
	case bus.RolePromoter:
		pub = append(methods(s, role), s.Queue(bus.QueueLeader))
		sub = []string{s.AllQueueEvents(), s.ClusterStatus(), bus.ServiceDiscovery, own}
		resp = &server.ResponsePermission{MaxMsgs: 1, Expires: ResponseWindow}
	case bus.RoleWorker:
		pub = slices.Concat(methods(s, role), s.EventStreamReadAPI())
		sub = append(events, own)
	case bus.RoleProducer:
		pub = slices.Concat(methods(s, role), []string{s.ClusterStatus(), bus.ServiceDiscovery}, s.EventStreamReadAPI())
		sub = append(events, own)
	case bus.RoleViewer:
		pub = slices.Concat(methods(s, role), []string{s.ClusterStatus(), bus.ServiceDiscovery}, s.EventStreamReadAPI())
		sub = append(events, own)
	default:
		panic("bus: no permissions for role " + string(role)) // bus.ParseRole checks roles
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: sub},
		Response:  resp,
	}
}

// methods are the subjects of the core methods role may call
// (bus.Role.Methods, where the method groups live) under s's prefix.
func methods(s bus.Subjects, role bus.Role) []string {
	names, _ := role.Methods()
	out := make([]string, len(names))
	for i, m := range names {
		out[i] = s.Core(m)
	}
	return out
}

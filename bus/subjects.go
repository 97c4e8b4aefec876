package bus

import (
	"fmt"
	"strconv"
	"strings"
)

// Service names and queue groups. Every core instance joins CoreQueueGroup, so
// one request reaches exactly one of them.
const (
	CoreServiceName     = "kuebus-core"
	CoreQueueGroup      = "kuebus-core"
	PromoterServiceName = "kuebus-promoter"
)

// Header names carried on the reply of a failed call (docs/protocol.md §1,
// "Errors"). The first two are micro's own, so that any micro client sees
// kuebus errors the way it sees every service's: HeaderErrorCode holds the
// number of the code (StatusOf: invalid 400, not_found 404, conflict 409,
// unavailable 503, internal 500), as NATS micro clients in other languages
// expect; HeaderKuebusCode holds the code's word.
const (
	HeaderError      = "Nats-Service-Error"
	HeaderErrorCode  = "Nats-Service-Error-Code"
	HeaderKuebusCode = "Kuebus-Error-Code"
)

// Header names of the W3C trace context (https://www.w3.org/TR/trace-context/),
// lowercase as that spec writes them: a create or create_bulk request may
// carry them, and core keeps the traceparent with each job it makes, for
// the worker's span to continue the creator's trace.
const (
	HeaderTraceparent = "traceparent"
	HeaderTracestate  = "tracestate"
)

// ProtocolVersion is the version of the wire protocol docs/protocol.md
// describes, and the version core's micro service reports in $SRV.INFO and
// PING: a client can check it before it relies on a method. The major
// number changes when a client of the old protocol would misread the new:
// 2 since the error code went from a word to a number in
// Nats-Service-Error-Code.
const ProtocolVersion = "2.0.0"

// SchemaURL is where the JSON Schema of the protocol's bodies is read:
// docs/schema/kuebus.schema.json of the repository, whose $id it is. Core's
// micro service names it in $SRV.INFO's metadata (MetadataSchema), so that
// a client that discovers the service finds how to talk to it.
const SchemaURL = "https://raw.githubusercontent.com/kuebus/kuebus/main/docs/schema/kuebus.schema.json"

// Keys of core's metadata in $SRV.INFO: the subject prefix it serves
// under, and SchemaURL.
const (
	MetadataPrefix = "prefix"
	MetadataSchema = "schema"
)

// Job events, the <event> token of job.<event>.<id>.<type>.
const (
	EventEnqueue       = "enqueue"
	EventPromotion     = "promotion"
	EventStart         = "start"
	EventProgress      = "progress"
	EventLog           = "log"
	EventFailedAttempt = "failed_attempt"
	EventFailed        = "failed"
	EventComplete      = "complete"
	EventRemove        = "remove"
	EventStalled       = "stalled"
	EventRejoin        = "rejoin"
	// EventCancel: a person cancelled the job (core.StateCancelled); the
	// worker running it cancels its handler's context.
	EventCancel = "cancel"
	// EventPriority: set_priority changed a job's priority.
	EventPriority = "priority"
	// EventBroadcast: a broadcast job fell due; the event carries the
	// job with its data, for every listener (DESIGN §10.4).
	EventBroadcast = "broadcast"
	// EventWaiting: a job was created waiting for its dependencies
	// (core.StateWaiting); it leaves waiting with a promotion.
	EventWaiting = "waiting"
)

// Queue events, the <event> token of queue.<event>.
const (
	QueueLeader = "leader"
	// QueueError: core could not do its work (Redis down, a script failing).
	QueueError  = "error"
	QueuePause  = "pause"
	QueueResume = "resume"
	// QueueCleaned reports finished jobs of one type and state that the
	// leader's cleaner removed (their retention was over).
	QueueCleaned = "cleaned"
	// QueueDue announces the earliest due time of a delayed job that was just
	// created or rejoined, so that a sleeping promoter can wake early.
	QueueDue = "due"
)

// Core RPC methods, the <method> token of core.<method>.
const (
	MethodCreate      = "create"
	MethodCreateBulk  = "create_bulk"
	MethodGet         = "get"
	MethodExists      = "exists"
	MethodRemove      = "remove"
	MethodLog         = "log"
	MethodAddLog      = "add_log"
	MethodRange       = "range"
	MethodCount       = "count"
	MethodTypes       = "types"
	MethodIDs         = "ids"
	MethodStats       = "stats"
	MethodSetState    = "set_state"
	MethodSetPriority = "set_priority"
	MethodPromote     = "promote"
	MethodPause       = "pause"
	MethodResume      = "resume"
	MethodCancel      = "cancel"
	MethodBulk        = "bulk"
	MethodClean       = "clean"
	MethodSearch      = "search"
	MethodHistory     = "history"
	MethodHeartbeat   = "heartbeat"
	MethodWorkers     = "workers"
	MethodLease       = "lease"
	MethodComplete    = "complete"
	MethodFail        = "fail"
	MethodTouch       = "touch"
	MethodRelease     = "release"
	MethodRejoin      = "rejoin"
	MethodProgress    = "progress"
	MethodRescue      = "rescue"
	MethodBatch       = "batch"
	// The schedules: set, list and remove are the operator's; fire is the
	// promoter leader's.
	MethodScheduleSet    = "schedule_set"
	MethodScheduleList   = "schedule_list"
	MethodScheduleRemove = "schedule_remove"
	MethodScheduleFire   = "schedule_fire"
	// schedule_run: the operator's "run now" of one schedule.
	MethodScheduleRun = "schedule_run"
	// failed_errors: a type's failed jobs grouped by error (triage).
	MethodFailedErrors = "failed_errors"
	// A job type's policy (DESIGN §10.1): set is admin's, get and list
	// are reads.
	MethodTypeSet  = "type_set"
	MethodTypeGet  = "type_get"
	MethodTypeList = "type_list"
	// MethodExplain says why a job is not running: a read.
	MethodExplain = "explain"
	// Dependencies and flows (DESIGN §10.2).
	MethodCreateFlow   = "create_flow"
	MethodDependencies = "dependencies"
	MethodDependents   = "dependents"
)

// maxTokenLen bounds one subject token (a job type, an event name).
const maxTokenLen = 128

// ValidToken reports why s cannot be one subject token, or nil when it can:
// 1 to 128 characters from [A-Za-z0-9_-]. That is stricter than NATS needs,
// on purpose: a job type is also part of Redis keys and URLs.
func ValidToken(s string) error {
	if s == "" {
		return fmt.Errorf("must not be empty")
	}
	if len(s) > maxTokenLen {
		return fmt.Errorf("%d characters is longer than %d", len(s), maxTokenLen)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return fmt.Errorf("character %q at %d is not one of A-Z a-z 0-9 _ -", rune(c), i)
		}
	}
	return nil
}

// Subjects builds every subject kuebus uses, under an optional prefix. The
// zero value builds unprefixed subjects.
type Subjects struct {
	prefix string // "" or "acme." — always ends with a dot when set
}

// NewSubjects returns the builder for the given prefix, which is one or more
// dot-separated tokens ("acme", "acme.prod"), or "" for none.
func NewSubjects(prefix string) (Subjects, error) {
	prefix = strings.TrimSuffix(prefix, ".")
	if prefix == "" {
		return Subjects{}, nil
	}
	for _, tok := range strings.Split(prefix, ".") {
		if err := ValidToken(tok); err != nil {
			return Subjects{}, fmt.Errorf("bus: subject prefix %q: token %q %v", prefix, tok, err)
		}
	}
	return Subjects{prefix: prefix + "."}, nil
}

// Prefix returns the prefix without its trailing dot.
func (s Subjects) Prefix() string { return strings.TrimSuffix(s.prefix, ".") }

// Core is the subject of one core RPC method: core.<method>.
func (s Subjects) Core(method string) string { return s.prefix + "core." + method }

// Job is the subject of one job's event: job.<event>.<id>.<type>. The caller
// passes a type that has already been validated with ValidToken.
func (s Subjects) Job(event string, id int64, jobType string) string {
	return s.prefix + "job." + event + "." + strconv.FormatInt(id, 10) + "." + jobType
}

// Queue is the subject of a queue-wide event: queue.<event>.
func (s Subjects) Queue(event string) string { return s.prefix + "queue." + event }

// AllJobEvents matches every job event: job.>.
func (s Subjects) AllJobEvents() string { return s.prefix + "job.>" }

// AllQueueEvents matches every queue event: queue.>.
func (s Subjects) AllQueueEvents() string { return s.prefix + "queue.>" }

// JobEvents matches the events of one job, whatever its type: job.*.<id>.*.
func (s Subjects) JobEvents(id int64) string {
	return s.prefix + "job.*." + strconv.FormatInt(id, 10) + ".*"
}

// JobEventsOf matches events of a kind, or of a type, with "" for any:
// JobEventsOf("complete", "") is job.complete.*.*, JobEventsOf("", "email")
// is job.*.*.email.
func (s Subjects) JobEventsOf(event, jobType string) string {
	return s.prefix + "job." + orStar(event) + ".*." + orStar(jobType)
}

// JobCancels matches the cancel events a worker of these types listens to,
// in one subscription: job.cancel.*.<type> for one type, job.cancel.*.*
// for several (NATS has no "one of"), and the worker ignores the ids it is
// not running.
func (s Subjects) JobCancels(types []string) string {
	t := ""
	if len(types) == 1 {
		t = types[0]
	}
	return s.JobEventsOf(EventCancel, t)
}

// EventStream is the name of the JetStream stream that keeps the
// deployment's events when they are durable: KUEBUS_EVENTS, or
// KUEBUS_EVENTS_<prefix> with the prefix's dots as underscores
// (KUEBUS_EVENTS_acme_prod), since a stream name may hold no dot.
func (s Subjects) EventStream() string {
	if s.prefix == "" {
		return eventStreamBase
	}
	return eventStreamBase + "_" + strings.ReplaceAll(s.Prefix(), ".", "_")
}

// eventStreamBase starts the name of every event stream.
const eventStreamBase = "KUEBUS_EVENTS"

// EventSubjects are the subjects the event stream keeps: job.> and
// queue.>, every event core and the promoter publish.
func (s Subjects) EventSubjects() []string { return []string{s.AllJobEvents(), s.AllQueueEvents()} }

// jsAPI starts every subject of the JetStream API. Like $SRV it carries no
// deployment prefix: the server fixes it.
const jsAPI = "$JS.API."

// EventStreamReadAPI are the JetStream API subjects a reader of the event
// stream publishes to, and nothing else: the stream's info, and creating,
// reading (pull requests), inspecting and deleting consumers of this
// stream, which is what an ordered consumer does. Not among them: deleting,
// purging or changing the stream, or its messages.
func (s Subjects) EventStreamReadAPI() []string {
	st := s.EventStream()
	return []string{
		jsAPI + "STREAM.INFO." + st,
		jsAPI + "CONSUMER.CREATE." + st + ".>",
		jsAPI + "CONSUMER.MSG.NEXT." + st + ".>",
		jsAPI + "CONSUMER.INFO." + st + ".>",
		jsAPI + "CONSUMER.DELETE." + st + ".>",
	}
}

// EventStreamWriteAPI are the JetStream API subjects that create the event
// stream and change its limits, core's at start; deleting or purging it
// stays an admin's.
func (s Subjects) EventStreamWriteAPI() []string {
	st := s.EventStream()
	return []string{jsAPI + "STREAM.CREATE." + st, jsAPI + "STREAM.UPDATE." + st, jsAPI + "STREAM.INFO." + st}
}

// ClusterStatus is the subject the promoter nodes serve their view on.
func (s Subjects) ClusterStatus() string { return s.prefix + "cluster.status" }

// HTTPLogout is where an HTTP server announces a session it ended, so that
// every HTTP server of the deployment (they may share a session key)
// refuses its cookie from then on.
func (s Subjects) HTTPLogout() string { return s.prefix + "http.logout" }

// AllCore matches every core method: core.>, the subjects core serves.
func (s Subjects) AllCore() string { return s.prefix + "core.>" }

// inboxToken starts every per-user inbox prefix; NATS's own default inbox
// prefix is "_INBOX", which only an admin may subscribe to on a locked
// server.
const inboxToken = "_INBOX"

// Inbox is the inbox prefix of one NATS user: [prefix.]_INBOX.<id>, where id
// is the user's name or, for an nkey user, its public key. A client passes
// it to nats.CustomInboxPrefix, and on a locked server the user may
// subscribe under it only, so replies reach the asker alone. It returns an
// error when id is not one subject token.
func (s Subjects) Inbox(id string) (string, error) {
	if err := ValidToken(id); err != nil {
		return "", fmt.Errorf("bus: inbox of %q: %v", id, err)
	}
	return s.prefix + inboxToken + "." + id, nil
}

// ServiceDiscovery matches micro's discovery subjects ($SRV.PING, INFO,
// STATS and their per-service forms). They carry no deployment prefix:
// micro fixes them.
const ServiceDiscovery = "$SRV.>"

// Pattern applies the prefix to a subject or wildcard pattern given by a user
// (for example on the command line) after checking that every token is a
// valid token or a wildcard.
func (s Subjects) Pattern(pattern string) (string, error) {
	toks := strings.Split(pattern, ".")
	for i, tok := range toks {
		if tok == "*" || (tok == ">" && i == len(toks)-1) {
			continue
		}
		if err := ValidToken(tok); err != nil {
			return "", fmt.Errorf("bus: subject %q: token %d %q %v", pattern, i+1, tok, err)
		}
	}
	return s.prefix + pattern, nil
}

// ParseJob splits a job event subject built by Job back into its parts.
func (s Subjects) ParseJob(subject string) (event string, id int64, jobType string, err error) {
	rest, ok := strings.CutPrefix(subject, s.prefix+"job.")
	if !ok {
		return "", 0, "", fmt.Errorf("bus: %q is not a job event subject", subject)
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return "", 0, "", fmt.Errorf("bus: %q is not job.<event>.<id>.<type>", subject)
	}
	id, err = strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", 0, "", fmt.Errorf("bus: %q: id %q is not a number", subject, parts[1])
	}
	return parts[0], id, parts[2], nil
}

func orStar(tok string) string {
	if tok == "" {
		return "*"
	}
	return tok
}

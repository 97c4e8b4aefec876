package redisstore

import (
	"strconv"
)

// keys builds every Redis key of one store. All keys of one job type share
// the hash tag {<type>}, so every script, which only ever touches one type,
// runs on Redis Cluster too. The few keys that belong to no type share the
// tag {_}.
//
// Global keys, under <prefix>:{_}:
//
//	ids     STRING  the last job id reserved: the end of the last block
//	blocks  HASH    block number → job type: every id of block b,
//	                b*1000+1 .. (b+1)*1000, belongs to one type (ids.go)
//	types   SET     every job type ever created
//	workers HASH    worker id → its last heartbeat (JSON; lua/heartbeat.lua)
//	workers_seen ZSET worker id, score = when core last heard it (unix ms)
//	workers_silent HASH worker id → the workers_seen score at which the
//	                rescue found it silent and ended its leases (workers.go)
//	workers_instance HASH worker id → the instance token of its last
//	                heartbeat, which its gone must carry (never listed)
//	workers_clock HASH  last: when any heartbeat was stored; since: when
//	                their current unbroken run began (lua/heartbeat.lua)
//
// Keys of type T, under <prefix>:{T}:
//
//	ready     ZSET  inactive jobs; score = priority (with aging: created_at +
//	                priority × aging), member = "<seq, 16 digits>:<id>",
//	                so equal scores run in the order they became ready
//	due       ZSET  delayed jobs; score = promote_at (unix ms), member = the
//	                id zero-padded to 19 digits, so that jobs due at the same
//	                millisecond promote in id (creation) order
//	leases    ZSET  active jobs; score = lease_until (unix ms), member = id
//	jobs      ZSET  every job of the type in creation order; member = id,
//	                score = created_at × 1000 + its place (0..999)
//	                among the jobs its core created in that ms
//	                (lua/includes/jobs_order.lua); a job
//	                an earlier version stored has score = id until the
//	                cleaner moves it (lua/jobs_rescore.lua)
//	complete  ZSET  complete jobs; score = when they finished, member = id
//	failed    ZSET  failed jobs; score = when they failed, member = id
//	cancelled ZSET  cancelled jobs; score = when they were cancelled, member = id
//	unique    HASH  unique_key → id of the unfinished job holding it
//	broadcasts ZSET broadcast jobs complete but not yet published; score =
//	                when a core may take one to publish it (at once, or
//	                when the claim of a core that took it and did not say
//	                it was sent runs out), member = id (lua/broadcast_take.lua)
//	seq       STRING  counter for ready members
//	stats     HASH  work_time (ms spent in handlers of completed jobs);
//	                paused "1" while the type is paused (lua/pause.lua);
//	                dependents "1" once a job of the type had jobs
//	                waiting for it (lua/includes/deps.lua);
//	                own_retention "1" once a job of the type was created
//	                with a retention of its own (create_jobs),
//	                clean_complete, clean_failed: the cleaner's place in
//	                those indexes (lua/clean.lua)
//	                limited "1" while the type's policy has a concurrency
//	                or a rate, which lua/lease.lua then reads (type_set.lua)
//	                aging: the type's aging (ms per step of priority) while
//	                it has one, read by every script that puts a job in
//	                ready (lua/includes/indexes.lua)
//	                glimited "1" once the type's policy had a group limit
//	                (type_set.lua); parked: how many of its ready jobs
//	                their group's limit parks (lua/includes/group_limit.lua)
//	policy    HASH  the type's policy (lua/type_set.lua): json, the policy
//	                as type_get answers it; concurrency, rate_limit,
//	                rate_per, group_concurrency, group_rate_limit,
//	                group_rate_per, the numbers the lease scripts read,
//	                each only when set
//	gactive:<group> SET   the group's active jobs that hold a slot of its
//	                group_concurrency (ids)
//	gstarts:<group> ZSET  the group's log of starts for its group_rate, as
//	                starts
//	parked:<group>  ZSET  the group's ready jobs parked while it is at its
//	                limit: member and score as in ready
//	gwake     ZSET  the groups with parked jobs: score = when a lease is
//	                to take them back (+inf: once a job of the group
//	                leaves active); lua/includes/group_limit.lua says how
//	starts    ZSET  the log of the type's starts while it has a rate: score
//	                = when the job was leased (unix ms), member =
//	                "<lease token>:<id>"; trimmed to the rate's window by
//	                each lease (lua/includes/lease_limit.lua)
//	schedules ZSET  the type's schedules; score = next_at (+inf while
//	                paused), member = the schedule's name
//	schedule:<name> HASH  a schedule whose jobs are of the type
//	                (scheduleFields in schedule.go lists its fields)
//	schedule_rev STRING  counter of the sets of the type's schedules: each
//	                set's rev (lua/schedule_set.lua)
//	waiting   ZSET  jobs waiting for their dependencies; score = member = id
//	handover  ZSET  dependency steps to finish in another slot (deps.go,
//	                lua/includes/deps.lua); score = when recorded (ms),
//	                member = "l:<dep type>:<dep id>:<id>,<dep id>:<id>..."
//	                (link each job <id> of this type to its dependency:
//	                a create's links to one type, in one member) or
//	                "s:<type>:<id>:<dep id>:<c|f>" (settle job <id> of
//	                <type>: its dependency <dep id>, of this type,
//	                completed or failed)
//	pending:<id>  SET  the dependencies of waiting job <id> not done yet
//	dependents:<id>  SET  the jobs waiting for job <id>: "<id>" of this
//	                type, "<type>:<id>" of another
//	job:<id>  HASH  the job's fields (jobFields in fields.go lists them)
//	log:<id>  LIST  the job's log lines
//	errors:<id>  LIST  the job's last failed attempts, newest last, each a
//	                JSON object (lua/includes/errors.lua)
type keys struct {
	prefix string
}

func (k keys) global(name string) string { return k.prefix + ":{_}:" + name }

func (k keys) ids() string    { return k.global("ids") }
func (k keys) blocks() string { return k.global("blocks") }
func (k keys) types() string  { return k.global("types") }

func (k keys) ofType(t string) typeKeys { return typeKeys{base: k.prefix + ":{" + t + "}:"} }

// typeKeys are the keys of one job type.
type typeKeys struct {
	base string
}

// fixed is the per-type part of every script's KEYS, in the order
// lua/includes/type_keys.lua names them (KEYS[1]..KEYS[10]).
func (t typeKeys) fixed() []string {
	return []string{t.ready(), t.due(), t.leases(), t.jobs(), t.complete(), t.failed(), t.unique(), t.seq(), t.stats(), t.cancelled()}
}

func (t typeKeys) ready() string     { return t.base + "ready" }
func (t typeKeys) due() string       { return t.base + "due" }
func (t typeKeys) leases() string    { return t.base + "leases" }
func (t typeKeys) jobs() string      { return t.base + "jobs" }
func (t typeKeys) complete() string  { return t.base + "complete" }
func (t typeKeys) failed() string    { return t.base + "failed" }
func (t typeKeys) unique() string    { return t.base + "unique" }
func (t typeKeys) seq() string       { return t.base + "seq" }
func (t typeKeys) stats() string     { return t.base + "stats" }
func (t typeKeys) cancelled() string { return t.base + "cancelled" }

// The keys of dependencies (issue 26). The scripts derive them from
// ready's name (lua/includes/type_keys.lua) rather than take them in KEYS:
// each has the type's hash tag, so it is in the slot of the declared keys.
func (t typeKeys) waiting() string  { return t.base + "waiting" }
func (t typeKeys) handover() string { return t.base + "handover" }
func (t typeKeys) pending(id int64) string {
	return t.base + "pending:" + strconv.FormatInt(id, 10)
}
func (t typeKeys) dependents(id int64) string {
	return t.base + "dependents:" + strconv.FormatInt(id, 10)
}

func (t typeKeys) schedules() string { return t.base + "schedules" }
func (t typeKeys) policy() string    { return t.base + "policy" }
func (t typeKeys) starts() string    { return t.base + "starts" }

// a group's keys (lua/includes/group_limit.lua builds the same)
func (t typeKeys) groupActive(g string) string { return t.base + "gactive:" + g }
func (t typeKeys) groupStarts(g string) string { return t.base + "gstarts:" + g }
func (t typeKeys) parked(g string) string      { return t.base + "parked:" + g }

func (t typeKeys) broadcasts() string { return t.base + "broadcasts" }

func (t typeKeys) schedule(name string) string { return t.base + "schedule:" + name }

func (t typeKeys) scheduleRev() string { return t.base + "schedule_rev" }

func (t typeKeys) job(id int64) string    { return t.base + "job:" + strconv.FormatInt(id, 10) }
func (t typeKeys) log(id int64) string    { return t.base + "log:" + strconv.FormatInt(id, 10) }
func (t typeKeys) errors(id int64) string { return t.base + "errors:" + strconv.FormatInt(id, 10) }

// history is a minute of the type's history (unix minute): HASH created,
// completed, failed, started, waiting and w0..w15 (started jobs per wait
// bucket, core.WaitBounds); it expires after a day (lua/history_add.lua).
func (t typeKeys) history(minute int64) string {
	return t.base + "history:" + strconv.FormatInt(minute, 10)
}

// historyHour is an hour of the type's history (unix hour), the same
// fields as a minute's; it expires after eight days.
func (t typeKeys) historyHour(hour int64) string {
	return t.base + "history:h" + strconv.FormatInt(hour, 10)
}

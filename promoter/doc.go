// Package promoter moves delayed jobs to the queue on time and rescues jobs
// whose worker died, and elects the one node of a cluster that does so.
//
// # The loops
//
// RunLoop, the promote loop, asks core over the bus to promote the delayed
// jobs that are due (core.promote), then sleeps until the next one falls
// due, as core reports it in next_due. It never sleeps longer than
// LoopConfig.MaxSleep, and it wakes early when core announces on queue.due a
// job due before the time it sleeps until. When more jobs are due than one
// call moves, it calls again at once. When core cannot be reached it logs,
// waits LoopConfig.RetryDelay and tries again; it only stops when its
// context ends.
//
// RunRescueLoop asks core, on a short interval (sooner when a lease is due
// to expire), to send jobs whose lease ran out back to the queue.
//
// RunScheduleLoop is the promote loop with core.schedule_fire for
// core.promote: core fires every schedule whose tick has come and answers
// the next tick as next_due; a schedule set with an earlier tick is
// announced on queue.due like a delayed job, and wakes it. A tick fires
// once however many leaders call (one script checks the schedule's last
// tick), and ticks missed while no member led fire once, as the latest.
//
// RunCleanLoop, the cleaner, asks core to remove finished jobs past their
// retention (core.clean: remove_on_complete / remove_on_fail {age, count},
// or their type's default), at most CleanConfig.Limit (1000) per type and
// state per call, again at once while a call says more, else every
// CleanConfig.Interval (5s). Removing a job twice is not possible: the
// second finds it gone.
//
// All bound each call by CallTimeout (default 1s), far under the client's
// 10s default. Core's queue group hands a call to any core; when that core
// is killed before it answers (its NATS server lives on elsewhere, so the
// caller hears nothing), the call is lost, not slow: promote and rescue
// never wait at core, they move at most Limit jobs and answer in
// milliseconds. The loop then calls again at once, without RetryDelay,
// since it has waited CallTimeout already, and the next call reaches a core
// that answers. Calling twice is safe for the reason two leaders are (see
// below): the first call, if it ran after all, moved its jobs, and the
// second skips them.
//
// None builds Redis keys or runs scripts: they need only the small Core,
// Rescuer and Cleaner interfaces, which *core.Client satisfies.
//
// # Leadership
//
// Every node that runs the promoter role is a Node: one member of a
// hashicorp/memberlist ring, joined through a seed list. The rule is
//
//	the leader is the alive member with the lowest name (byte-wise)
//
// Every member computes it from its own member list, so members that see
// the same ring agree without a vote, and a member that joins with a higher
// name changes nothing. "Alive" is memberlist's: a member that stops
// answering is first suspected and stays in the list; it drops out when
// declared dead (after the failure-detection time, see below) or at once
// when it leaves gracefully.
//
// Memberlist's callbacks only put a token on a 1-buffered channel; they do
// no I/O and never block memberlist. One goroutine, the leader loop, takes
// the token, reads Members(), applies the rule, and starts or ends a term.
// A term is the promote, rescue, schedule and clean loops under a context of their
// own, and the NodeConfig's Tasks beside them (a node's outbox relay); there
// is at most one per node:
//
//	            leader == self
//	follower ───────────────────▶ leading ── publish queue.leader,
//	   ▲                             │        start the loops
//	   │ all loops have returned     │ leader != self, or Run's ctx ends
//	   └──────── stepping down ◀─────┘ ── cancel the term's ctx
//
// Stepping down waits for every loop to return before the leader loop does
// anything else, so a node never runs two terms at once. On a graceful stop
// Run steps down, then leaves the ring (Leave), which tells the others at
// once: the next leader starts within a gossip round, well under a second.
// A node that is killed does not leave; the others see it as dead after
// memberlist's failure detection: the probe interval to notice, then the
// suspicion timeout, SuspicionMult × max(1, log10 N) × ProbeInterval. With
// memberlist.DefaultLocalConfig (1 s probes, 200 ms probe timeout,
// multiplier 3) a new leader starts 4 to 6 s after a kill; with
// DefaultLANConfig (500 ms probe timeout, multiplier 4) a little later.
// Delayed jobs that fell due meanwhile wait in Redis and are promoted by
// the new leader's first call.
//
// A joining node tries its seeds once before it first applies the rule, so
// it does not lead a ring of its own for a moment; it keeps retrying until
// a seed answers, then joins the seeds again every NodeConfig.Rejoin, which
// merges a ring that a long partition split in two.
//
// # Two leaders at once
//
// Leadership only saves work; nothing depends on there being one leader.
// There can be two: for the failure-detection time after a network
// partition (each side declares the other dead and elects its own), a
// split ring until it merges, or a node that was declared dead but is still
// running its loops. Then two promote loops call core.promote at the same
// time, and two rescue loops call core.rescue. Each call is one Lua script
// that selects the due jobs and moves each one only if it is still in the
// delayed set with a due score (or still active with an expired lease): a
// script runs alone in Redis, so the second of two racing calls finds the
// jobs already moved and skips them. Every job is promoted exactly once,
// never before its promote_at, and published once as a promotion event;
// the cost of a second leader is its empty calls. The cluster tests check
// this with two leaders over 10,000 jobs due at the same moment.
//
// queue.leader is published when a term starts; like every event it is at
// most once. cluster.status (micro service kuebus-promoter, one queue group)
// answers with the answering node's view: the leader, itself, and every
// member it has seen with its state.
//
// # Who may join
//
// The leader rule trusts every member: a node named "aaa" that joins would
// lead. So a ring reachable from other machines is keyed: with
// NodeConfig.SecretKey every gossip message is encrypted and
// authenticated (memberlist's AES-GCM keyring), and a member without the
// key is refused at its first push-pull, so it is never a member and never
// leads. Bind defaults to loopback for the same reason.
//
// Files:
//
//	doc.go         this comment: the loops, the leader rule, two leaders
//	loop.go        Core, LoopConfig, RunLoop: the promote loop and its sleep
//	rescue.go      Rescuer, RescueConfig, RunRescueLoop
//	schedule.go    Scheduler, ScheduleConfig, RunScheduleLoop: the promote
//	               loop's shape with schedule_fire
//	clean.go       Cleaner, CleanConfig, RunCleanLoop: the cleaner
//	repeat.go      the shape rescue and clean share: call, wait what the call says, retry
//	node.go        NodeConfig, New, Node: Run, the leader loop, terms,
//	               queue.leader, leaving the ring
//	membership.go  the leader rule, memberlist's config and callbacks,
//	               joining the seeds and rejoining
//	logbridge.go   memberlist's log lines to slog at a bounded rate: the
//	               first of each kind per interval, then a count
//	status.go      Status, the cluster.status endpoint, FetchStatus
package promoter

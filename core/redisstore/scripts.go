package redisstore

import (
	"bufio"
	"embed"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every state change of a job is one Lua script, one file per script in
// lua/, each opening with a header that names its KEYS, ARGV, reply and the
// events the service publishes after it. Rules they share:
//
//   - Every key comes in through KEYS. Scripts of one type get the ten keys
//     of typeKeys.fixed as KEYS[1..10] (lua/includes/type_keys.lua names
//     them) followed by the keys of the jobs they touch, or by the keys of
//     the type's job 0 (job:0, and log:0 and errors:0 where it needs
//     them), from which a script that handles many jobs builds each job's
//     keys with its id (create_jobs, lease_head, the lease holder's
//     operations): such a key has the type's hash tag, so it is in the
//     slot of the declared keys on Redis Cluster, and no other key is
//     built but the keys of dependencies (waiting, handover, pending:<id>,
//     dependents:<id>), which type_keys.lua derives the same way from
//     ready's name rather than shift every script's KEYS for them.
//   - "Now" comes in through ARGV; no script reads the clock or randomness.
//   - A script that moves jobs it did not choose itself (promote, lease,
//     rescue) is given candidates read just before and re-checks each one,
//     so running it twice, or from two cores at once, moves each job once.
//
// Helpers scripts share live in lua/includes/. A line "--@include x.lua"
// stands for that file's text, included once per script however many
// files ask for it, before the first file that asks. Resolving includes is
// all loading does: no other line is added or changed, so every line Redis
// runs is a line of a file in lua/ (TestRedisRunsOnlyTheLinesOfTheFiles).
// What Go and the scripts must agree on (a job's fields, reply codes) is
// in the includes named *_gen.lua, which `go generate` writes from Go's
// tables (luagen.go). Includes are resolved once, when the package loads,
// so the text Redis runs is fixed for the life of the process; ScriptText
// returns it, and
//
//	go test ./core/redisstore -run TestScriptsLoad -lua.dir=/tmp/lua
//
// writes every script's final text to a folder, for redis-cli --eval.

//go:embed lua/*.lua lua/includes/*.lua
var luaFiles embed.FS

// scripts are the loaded scripts by file name ("lease.lua"), and texts
// their final text.
var (
	scripts = map[string]*redis.Script{}
	texts   = map[string]string{}
)

// The scripts, one per file of lua/; calls.go holds the typed wrapper of each.
var (
	reserveBlocks = loadScript("reserve_ids.lua")
	createJobs    = loadScript("create_jobs.lua")
	promoteDue    = loadScript("promote_due.lua")
	removeJob     = loadScript("remove_job.lua")
	addLog        = loadScript("add_log.lua")
	setState      = loadScript("set_state.lua")
	setPriority   = loadScript("set_priority.lua")
	leaseJobs     = loadScript("lease.lua")
	leaseHead     = loadScript("lease_head.lua")
	rescueExpired = loadScript("rescue_expired.lua")
	completeJobs  = loadScript("complete.lua")
	failJobs      = loadScript("fail.lua")
	touchJobs     = loadScript("touch.lua")
	releaseJobs   = loadScript("release.lua")
	rejoinJobs    = loadScript("rejoin.lua")
	progressJobs  = loadScript("progress.lua")
	pauseType     = loadScript("pause.lua")
	typeSet       = loadScript("type_set.lua")
	agingRerank   = loadScript("aging_rerank.lua")
	groupWake     = loadScript("group_wake.lua")
	cancelJob     = loadScript("cancel.lua")
	bulkJobs      = loadScript("bulk.lua")
	failedErrors  = loadScript("failed_errors.lua")
	setSchedule   = loadScript("schedule_set.lua")
	removeSched   = loadScript("schedule_remove.lua")
	fireSchedule  = loadScript("fire_schedule.lua")
	cleanJobs     = loadScript("clean.lua")
	jobsRescore   = loadScript("jobs_rescore.lua")
	searchJobs    = loadScript("search.lua")
	rangeAfter    = loadScript("range_after.lua")
	addHistory    = loadScript("history_add.lua")
	heartbeat     = loadScript("heartbeat.lua")
	expireLeases  = loadScript("expire_leases.lua")
	markSilent    = loadScript("mark_silent.lua")
	broadcastTake = loadScript("broadcast_take.lua")
	broadcastSent = loadScript("broadcast_sent.lua")
	depSettle     = loadScript("dep_settle.lua")
	depLink       = loadScript("dep_link.lua")
	handoverDone  = loadScript("handover_done.lua")
)

// loadScript reads lua/<name> with its includes resolved. A script that
// cannot be read is a bug of the build: the package does not load.
func loadScript(name string) *redis.Script {
	text, err := resolve(path.Join("lua", name))
	if err != nil {
		panic(fmt.Sprintf("redisstore: script %s: %v", name, err))
	}
	sc := redis.NewScript(text)
	scripts[name], texts[name] = sc, text
	return sc
}

// ScriptText is the text Redis runs for a script of lua/ (by file name,
// "lease.lua"), its includes resolved; false when there is no such script.
func ScriptText(name string) (string, bool) {
	text, ok := texts[name]
	return text, ok
}

// ScriptNames lists the scripts of lua/ by file name, sorted.
func ScriptNames() []string {
	return slices.Sorted(maps.Keys(texts))
}

// resolve returns a Lua file with its includes in place of their lines.
func resolve(file string) (string, error) {
	var b strings.Builder
	if err := include(&b, file, map[string]bool{}, map[string]bool{}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// include writes file to b, each "--@include x.lua" line replaced by
// lua/includes/x.lua (itself resolved) unless done holds it already.
// open holds the files being written, to refuse a cycle.
func include(b *strings.Builder, file string, done, open map[string]bool) error {
	text, err := luaFiles.ReadFile(file)
	if err != nil {
		return err
	}
	open[file] = true
	defer delete(open, file)
	lines := bufio.NewScanner(strings.NewReader(string(text)))
	for lines.Scan() {
		line := lines.Text()
		name, ok := strings.CutPrefix(line, "--@include ")
		if !ok {
			b.WriteString(line)
			b.WriteByte('\n')
			continue
		}
		inc := path.Join("lua/includes", strings.TrimSpace(name))
		if open[inc] {
			return fmt.Errorf("%s: include cycle through %s", file, inc)
		}
		if done[inc] {
			continue
		}
		done[inc] = true
		if err := include(b, inc, done, open); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	return lines.Err()
}

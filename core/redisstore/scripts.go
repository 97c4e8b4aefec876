package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every state change of a job is one of the scripts below. Rules they share:
//
//   - Every key comes in through KEYS; nothing is built from ARGV. Scripts of
//     one type get the nine keys of typeKeys.fixed as KEYS[1..9] (named in the
//     prelude) followed by the keys of the jobs they touch.
//   - "Now" comes in through ARGV; no script reads the clock or randomness.
//   - A script that moves jobs it did not choose itself (promote) is given
//     candidates read just before and re-checks each one, so running it twice,
//     or from two cores at once, moves each job once.
//
// Job hashes hold these fields: id type data priority state delay
// max_attempts attempts backoff ttl roc unique_key progress result error
// created_at promote_at started_at updated_at failed_at duration worker_id
// stalls stall_limit lease lease_until lease_ttl rmember (the job's member
// in ready) last_lease (the lease its last operation was made with, kept on
// a finished job so that a retried acknowledgement can be recognised).

// rowFields are the job fields scripts read in one HMGET and return as a
// row (values in this order): every field but data and result, which a
// reply or event either does not carry or carries on its own. Reading a
// row is much cheaper in Redis's Lua than HGETALL filtered in a loop.
var rowFields = []string{"id", "type", "priority", "state", "delay", "max_attempts", "attempts",
	"backoff", "ttl", "roc", "unique_key", "progress", "error", "created_at", "promote_at",
	"started_at", "updated_at", "failed_at", "duration", "worker_id", "stalls", "lease_until",
	"lease", "lease_ttl", "rmember", "stall_limit", "last_lease"}

// rowLua declares ROW (the field list) and R_<FIELD> (each field's index)
// for the scripts.
func rowLua() string {
	var b strings.Builder
	b.WriteString("local ROW = {")
	for i, f := range rowFields {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "'%s'", f)
	}
	b.WriteString("}\n")
	for i, f := range rowFields {
		fmt.Fprintf(&b, "local R_%s = %d\n", strings.ToUpper(f), i+1)
	}
	return b.String()
}

// prelude names the fixed keys and holds the helpers every per-type script
// shares.
var prelude = `
local K_READY, K_DUE, K_LEASES, K_JOBS = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_COMPLETE, K_FAILED, K_UNIQUE, K_SEQ, K_STATS = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
` + rowLua() + `
-- the job's row (see rowFields); row[R_ID] is false when there is no job
local function snapshot(jobkey)
  return redis.call('HMGET', jobkey, unpack(ROW))
end

-- put a job at the back of its priority in ready, returning its member
-- "<seq, 16 digits>:<id>" (the one place that builds it; readyID reads it)
local function ready_member(id, priority)
  local member = string.format('%016d', redis.call('INCR', K_SEQ)) .. ':' .. id
  redis.call('ZADD', K_READY, priority, member)
  return member
end
local function enter_ready(jobkey, id, priority)
  redis.call('HSET', jobkey, 'state', 'inactive', 'rmember', ready_member(id, priority))
end

-- a job's member in due: its id zero-padded to 19 digits (the width of the
-- largest int64), so that jobs due at the same millisecond sort by id, which
-- is their creation order, not by the text of their ids ("10" < "2").
-- The one place that builds it; parseIDs and memberID read it.
local function due_member(id)
  id = tostring(id)
  return string.rep('0', 19 - #id) .. id
end
local function enter_due(id, at)
  redis.call('ZADD', K_DUE, at, due_member(id))
end

-- take a job out of the index of the state it is in
local function leave(jobkey, id, state)
  if state == 'inactive' then
    redis.call('ZREM', K_READY, redis.call('HGET', jobkey, 'rmember'))
  elseif state == 'delayed' then
    -- the bare id is the member stored before due_member existed
    redis.call('ZREM', K_DUE, due_member(id), id)
  elseif state == 'active' then
    redis.call('ZREM', K_LEASES, id)
  elseif state == 'complete' then
    redis.call('ZREM', K_COMPLETE, id)
  elseif state == 'failed' then
    redis.call('ZREM', K_FAILED, id)
  end
end

-- a finished job gives up its unique key; a job that runs again takes it back
-- unless another job holds it by now
local function release_key(uk, id)
  if uk and uk ~= '' and redis.call('HGET', K_UNIQUE, uk) == id then
    redis.call('HDEL', K_UNIQUE, uk)
  end
end
local function release_unique(jobkey, id)
  release_key(redis.call('HGET', jobkey, 'unique_key'), id)
end
local function retake_unique(jobkey, id)
  local uk = redis.call('HGET', jobkey, 'unique_key')
  if uk and uk ~= '' then redis.call('HSETNX', K_UNIQUE, uk, id) end
end

-- the wait before retrying after a failed attempt: the job's backoff
-- ("<type>:<delay>", Kue's formula, as core.Backoff.After), capped
local function retry_wait(backoff, attempts)
  if not backoff or backoff == '' then return 0 end
  local kind, delay = string.match(backoff, '^(%a+):(%d+)$')
  delay = tonumber(delay)
  local wait
  if kind == 'fixed' then
    wait = delay
  else
    wait = math.floor(delay * 0.5 * (2 ^ attempts - 1) + 0.5)
  end
  return math.min(wait, ` + maxDelayLua + `)
end

-- a failed attempt of a job that has left active (out of leases already):
-- count it, then retry with the job's backoff (to delayed, or to inactive
-- at once) while attempts remain, else fail for good (final: whatever
-- remains). row is the job's row (see rowFields); this stores the changes
-- and sets them in row. mark is the job's new last_lease. Returns 1 (will
-- retry) or 3 (failed).
local function attempt_failed(jobkey, id, row, err, final, now, mark)
  local attempts = (tonumber(row[R_ATTEMPTS]) or 0) + 1
  row[R_ATTEMPTS], row[R_ERROR], row[R_UPDATED_AT] = attempts, err, now
  row[R_LEASE], row[R_LEASE_UNTIL], row[R_LAST_LEASE] = '', '', mark
  if attempts >= tonumber(row[R_MAX_ATTEMPTS]) or final then
    redis.call('ZADD', K_FAILED, now, id)
    release_key(row[R_UNIQUE_KEY], id)
    row[R_STATE], row[R_FAILED_AT] = 'failed', now
    redis.call('HSET', jobkey, 'state', 'failed', 'failed_at', now, 'attempts', attempts, 'error', err,
      'updated_at', now, 'lease', '', 'lease_until', '', 'last_lease', mark)
    return 3
  end
  local wait = retry_wait(row[R_BACKOFF], attempts)
  if wait > 0 then
    enter_due(id, now + wait)
    row[R_STATE], row[R_PROMOTE_AT] = 'delayed', now + wait
  else
    row[R_STATE], row[R_RMEMBER] = 'inactive', ready_member(id, row[R_PRIORITY])
  end
  redis.call('HSET', jobkey, 'state', row[R_STATE], 'promote_at', row[R_PROMOTE_AT], 'rmember', row[R_RMEMBER] or '',
    'attempts', attempts, 'error', err, 'updated_at', now, 'lease', '', 'lease_until', '', 'last_lease', mark)
  return 1
end
`

// script is a Lua script with the prelude when it works on one type.
func script(body string, withPrelude bool) *redis.Script {
	if withPrelude {
		return redis.NewScript(prelude + body)
	}
	return redis.NewScript(body)
}

// indexIDs records the type of new job ids (the id → type index, which
// lets a request that names only an id find the job's keys) and the type.
// It runs in the same pipeline as createJobs, before it.
//
//	KEYS[1] idtype hash   KEYS[2] types set
//	ARGV[1] type          ARGV[2..] ids
//	returns how many ids it recorded
var indexIDs = script(`
local args = {}
for i = 2, #ARGV do
  args[#args+1] = ARGV[i]
  args[#args+1] = ARGV[1]
end
redis.call('HSET', KEYS[1], unpack(args))
redis.call('SADD', KEYS[2], ARGV[1])
return #ARGV - 1
`, false)

// createJobs stores new jobs of one type, delayed or ready. It is
// idempotent: a job whose id is in the type's jobs index already is
// skipped, so a create that runs twice (a client retry after a Redis stall,
// a pipeline sent again after NOSCRIPT) never enqueues an id twice.
//
//	KEYS[1..9] fixed      KEYS[9+i] job:<id_i>
//	ARGV[1] now  ARGV[2] type
//	ARGV[3+10(i-1) ..] id data priority delay max_attempts backoff ttl roc unique_key stall_limit
//	returns, per job, 0 when it is stored (now, or by an earlier run of this
//	create), or the id of the unfinished job that holds its unique key
var createJobs = script(`
local now = tonumber(ARGV[1])
local out = {}
local n = (#ARGV - 2) / 10
for i = 1, n do
  local a = 3 + (i - 1) * 10
  local id, uk = ARGV[a], ARGV[a + 8]
  local jobkey = KEYS[9 + i]
  local holder = false
  if uk ~= '' then holder = redis.call('HGET', K_UNIQUE, uk) end
  if holder and holder ~= id then
    out[i] = tonumber(holder)
  elseif redis.call('ZADD', K_JOBS, id, id) == 0 then
    -- stored by an earlier run of this very create: its id is in jobs
    -- already (and holds its own unique key). The index write doubles as
    -- the check, so idempotence costs no call of its own.
    out[i] = 0
  else
    local delay = tonumber(ARGV[a + 3])
    local fields = {'id', id, 'type', ARGV[2], 'data', ARGV[a + 1],
      'priority', ARGV[a + 2], 'delay', delay, 'max_attempts', ARGV[a + 4], 'attempts', 0,
      'backoff', ARGV[a + 5], 'ttl', ARGV[a + 6], 'roc', ARGV[a + 7], 'unique_key', uk,
      'stall_limit', ARGV[a + 9], 'progress', 0, 'created_at', now, 'updated_at', now,
      'promote_at', now + delay}
    -- state and the ready member go into the one HSET
    if delay > 0 then
      enter_due(id, now + delay)
      fields[#fields + 1], fields[#fields + 2] = 'state', 'delayed'
    else
      fields[#fields + 1], fields[#fields + 2] = 'state', 'inactive'
      fields[#fields + 1], fields[#fields + 2] = 'rmember', ready_member(id, ARGV[a + 2])
    end
    redis.call('HSET', jobkey, unpack(fields))
    if uk ~= '' then redis.call('HSET', K_UNIQUE, uk, id) end
    out[i] = 0
  end
end
return out
`, true)

// runCreateJobs stores jobs and indexes their ids in one round trip: a
// pipeline of indexIDs then createJobs. A crash between the two leaves ids
// that read as "not found", never a stored job that cannot be found.
func (s *Store) runCreateJobs(ctx context.Context, jobType string, ids []int64, args []any) ([]int64, error) {
	tk := s.keys.ofType(jobType)
	keys := tk.fixed()
	index := make([]any, 0, 1+len(ids))
	index = append(index, jobType)
	for _, id := range ids {
		keys = append(keys, tk.job(id))
		index = append(index, id)
	}
	var created *redis.Cmd
	err := s.pipelined(ctx, func(pipe redis.Pipeliner) {
		indexIDs.EvalSha(ctx, pipe, []string{s.keys.idType(), s.keys.types()}, index...)
		created = createJobs.EvalSha(ctx, pipe, keys, args...)
	})
	if err != nil {
		return nil, err
	}
	return created.Int64Slice()
}

// pipelined runs scripts in one pipeline. EVALSHA inside a pipeline cannot
// fall back to EVAL, so on NOSCRIPT (a Redis that restarted or flushed its
// script cache) it loads every script and tries once more.
func (s *Store) pipelined(ctx context.Context, fill func(redis.Pipeliner)) error {
	for try := 0; ; try++ {
		pipe := s.rdb.Pipeline()
		fill(pipe)
		_, err := pipe.Exec(ctx)
		if err == nil || try > 0 || !redis.HasErrorPrefix(err, "NOSCRIPT") {
			return err
		}
		for _, sc := range allScripts {
			if err := sc.Load(ctx, s.rdb).Err(); err != nil {
				return err
			}
		}
	}
}

// promoteDue moves delayed jobs of one type whose time has come to ready.
// The candidates were read from due just before; each is checked again here,
// so a job another promoter moved meanwhile is skipped, never moved twice.
//
//	KEYS[1..9] fixed      KEYS[9+i] job:<id_i>
//	ARGV[1] now           ARGV[1+i] id_i
//	returns {next_due or 0, row of each moved job...}
var promoteDue = script(`
local now = tonumber(ARGV[1])
local out = {0}
for i = 2, #ARGV do
  local id = ARGV[i]
  local member = due_member(id)
  local due = redis.call('ZSCORE', K_DUE, member)
  if not due then -- a member stored before due_member existed
    member = id
    due = redis.call('ZSCORE', K_DUE, member)
  end
  if due and tonumber(due) <= now then
    local jobkey = KEYS[8 + i]
    redis.call('ZREM', K_DUE, member)
    enter_ready(jobkey, id, redis.call('HGET', jobkey, 'priority'))
    redis.call('HSET', jobkey, 'updated_at', now)
    out[#out+1] = snapshot(jobkey)
  end
end
local head = redis.call('ZRANGE', K_DUE, 0, 0, 'WITHSCORES')
if head[2] then out[1] = tonumber(head[2]) end
return out
`, true)

func (s *Store) runPromoteDue(ctx context.Context, tk typeKeys, ids []int64, now int64) (nextDue int64, moved []map[string]string, err error) {
	keys := tk.fixed()
	args := []any{now}
	for _, id := range ids {
		keys = append(keys, tk.job(id))
		args = append(args, id)
	}
	res, err := promoteDue.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return 0, nil, err
	}
	return toInt64(res[0]), rows(res[1:]), nil
}

// removeJob deletes a job, its log and every index entry.
//
//	KEYS[1..9] fixed   KEYS[10] job:<id>   KEYS[11] log:<id>
//	ARGV[1] id
//	returns the job's row (see rowFields), or an empty list when there is no such job
var removeJob = script(`
local jobkey, id = KEYS[10], ARGV[1]
local snap = snapshot(jobkey)
if not snap[R_ID] then return {} end
leave(jobkey, id, redis.call('HGET', jobkey, 'state'))
redis.call('ZREM', K_JOBS, id)
release_unique(jobkey, id)
redis.call('DEL', jobkey, KEYS[11])
return snap
`, true)

func (s *Store) runRemoveJob(ctx context.Context, tk typeKeys, id int64) (map[string]string, error) {
	res, err := removeJob.Run(ctx, s.rdb, append(tk.fixed(), tk.job(id), tk.log(id)), id).Slice()
	return row(res), err
}

// addLog appends a line to a job's log, keeping the newest maxLines.
//
//	KEYS[1..9] fixed   KEYS[10] job:<id>   KEYS[11] log:<id>
//	ARGV[1] line       ARGV[2] maxLines
//	returns the job's row, or an empty list when there is no such job
var addLog = script(`
local snap = snapshot(KEYS[10])
if not snap[R_ID] then return {} end
redis.call('RPUSH', KEYS[11], ARGV[1])
redis.call('LTRIM', KEYS[11], -tonumber(ARGV[2]), -1)
return snap
`, true)

func (s *Store) runAddLog(ctx context.Context, tk typeKeys, id int64, line string) (map[string]string, error) {
	res, err := addLog.Run(ctx, s.rdb, append(tk.fixed(), tk.job(id), tk.log(id)), line, s.maxLogLines).Slice()
	return row(res), err
}

// setState moves a job to another state by hand (a person's retry from the
// UI or CLI). Leaving active drops the lease, so the worker that held it gets
// conflict. Leaving failed or complete for a state that runs again resets
// attempts and takes the unique key back.
//
//	KEYS[1..9] fixed   KEYS[10] job:<id>
//	ARGV[1] now        ARGV[2] new state
//	returns {changed 0|1, row}, or an empty list when there is no such job
var setState = script(`
local jobkey, now, new = KEYS[10], tonumber(ARGV[1]), ARGV[2]
local id = redis.call('HGET', jobkey, 'id')
if not id then return {} end
local cur = redis.call('HGET', jobkey, 'state')
if cur == new then return {0, snapshot(jobkey)} end
leave(jobkey, id, cur)
-- a person moved the job: no earlier lease may act on it, nor be answered
-- as a retry of what it did
redis.call('HDEL', jobkey, 'lease', 'lease_until', 'last_lease')
local finished = (cur == 'complete' or cur == 'failed')
if new == 'inactive' then
  enter_ready(jobkey, id, redis.call('HGET', jobkey, 'priority'))
elseif new == 'delayed' then
  local at = now + tonumber(redis.call('HGET', jobkey, 'delay'))
  enter_due(id, at)
  redis.call('HSET', jobkey, 'promote_at', at)
elseif new == 'active' then
  local until_ = now + tonumber(redis.call('HGET', jobkey, 'ttl'))
  redis.call('ZADD', K_LEASES, until_, id)
  redis.call('HSET', jobkey, 'started_at', now, 'lease_until', until_)
elseif new == 'complete' then
  redis.call('ZADD', K_COMPLETE, now, id)
  release_unique(jobkey, id)
elseif new == 'failed' then
  redis.call('ZADD', K_FAILED, now, id)
  redis.call('HSET', jobkey, 'failed_at', now)
  release_unique(jobkey, id)
end
if finished and (new == 'inactive' or new == 'delayed' or new == 'active') then
  redis.call('HSET', jobkey, 'attempts', 0, 'stalls', 0, 'failed_at', '')
  retake_unique(jobkey, id)
end
redis.call('HSET', jobkey, 'state', new, 'updated_at', now)
return {1, snapshot(jobkey)}
`, true)

func (s *Store) runSetState(ctx context.Context, tk typeKeys, id, now int64, state string) (changed bool, job map[string]string, err error) {
	res, err := setState.Run(ctx, s.rdb, append(tk.fixed(), tk.job(id)), now, state).Slice()
	if err != nil || len(res) == 0 {
		return false, nil, err
	}
	return toInt64(res[0]) == 1, row(res[1].([]any)), nil
}

// setPriority changes a job's priority; an inactive job moves within ready
// but keeps its place among jobs of the new priority.
//
//	KEYS[1..9] fixed   KEYS[10] job:<id>
//	ARGV[1] now        ARGV[2] priority
//	returns the job's row, or an empty list when there is no such job
var setPriority = script(`
local jobkey = KEYS[10]
if redis.call('EXISTS', jobkey) == 0 then return {} end
if redis.call('HGET', jobkey, 'state') == 'inactive' then
  redis.call('ZADD', K_READY, ARGV[2], redis.call('HGET', jobkey, 'rmember'))
end
redis.call('HSET', jobkey, 'priority', ARGV[2], 'updated_at', ARGV[1])
return snapshot(jobkey)
`, true)

func (s *Store) runSetPriority(ctx context.Context, tk typeKeys, id, now, priority int64) (map[string]string, error) {
	res, err := setPriority.Run(ctx, s.rdb, append(tk.fixed(), tk.job(id)), now, priority).Slice()
	return row(res), err
}

// allScripts are loaded at start so that pipelined EVALSHAs find them.
var allScripts = []*redis.Script{indexIDs, createJobs, promoteDue, removeJob, addLog, setState, setPriority}

// row turns a script's row (values in rowFields order) into a map; nil for
// an empty reply or a row of a job that does not exist.
func row(vals []any) map[string]string {
	if len(vals) == 0 || vals[0] == nil {
		return nil
	}
	m := make(map[string]string, len(rowFields))
	for i, f := range rowFields {
		if i < len(vals) && vals[i] != nil {
			m[f] = toString(vals[i])
		}
	}
	return m
}

func rows(list []any) []map[string]string {
	out := make([]map[string]string, 0, len(list))
	for _, r := range list {
		out = append(out, row(r.([]any)))
	}
	return out
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

func toInt64(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

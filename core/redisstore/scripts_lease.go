package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// The scripts of jobs held by a worker. Every one takes a batch, so that a
// worker acknowledging 64 jobs pays one round trip and one script call.
// They share a layout:
//
//	KEYS[1..9] fixed      KEYS[10 + 2(i-1)] job:<id_i>   KEYS[11 + 2(i-1)] log:<id_i>
//	ARGV[1] now           ARGV[2 + 4(i-1) ..] id_i, lease_i, arg_i, flag_i
//	returns, per job, {code, row}: code 1 done, 0 no such job, -1 the
//	lease is not (or no longer) the job's current one, 4 this very
//	operation was done before with this lease (a retry: nothing changed);
//	the row (see rowFields) is the job after the change.
//
// each reads a job's whole row in one HMGET, checks the lease, and hands
// the row to the operation, which writes its changes in one HSET and sets
// them in the row it returns: one read per job, whatever the operation.
//
// The operations that end a lease (complete, fail, release, rejoin) store
// "<op>:<lease>" as the job's last_lease. A worker that did not hear the
// answer sends the same operation again; finding its own mark, each answers
// 4 and changes nothing, so acknowledgements can be retried safely. Any
// other operation with a lease that is not the current one stays a conflict.
const leasePrelude = `
local now = tonumber(ARGV[1])
local work_time = 0 -- complete adds to it; each writes it once at the end
local mark -- "<op>:<lease>" of the job at hand: its last_lease once the lease ends
local function each(op, fn)
  local out = {}
  for i = 1, (#ARGV - 1) / 4 do
    local a = 2 + (i - 1) * 4
    local jobkey, logkey = KEYS[10 + 2 * (i - 1)], KEYS[11 + 2 * (i - 1)]
    local id, lease, arg, flag = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
    local row = snapshot(jobkey)
    mark = op .. ':' .. lease
    if not row[R_ID] then
      out[i] = {0, {}}
    elseif lease == '' then
      out[i] = {-1, {}}
    elseif row[R_LEASE] ~= lease then
      if row[R_LAST_LEASE] == mark then out[i] = {4, row} else out[i] = {-1, {}} end
    else
      out[i] = fn(jobkey, logkey, id, arg, flag, row)
    end
  end
  if work_time > 0 then redis.call('HINCRBY', K_STATS, 'work_time', work_time) end
  return out
end
-- leave active: the lease is gone (fields set empty, which reads as none)
local function unlease(id, row)
  redis.call('ZREM', K_LEASES, id)
  row[R_LEASE], row[R_LEASE_UNTIL], row[R_UPDATED_AT], row[R_LAST_LEASE] = '', '', now, mark
end
-- back to ready at the end of its priority; the caller's HSET stores it
local function requeue(id, row)
  row[R_STATE], row[R_RMEMBER] = 'inactive', ready_member(id, row[R_PRIORITY])
end
`

func leaseScript(body string) *redis.Script { return script(leasePrelude+body, true) }

// completeJobs: the handler succeeded. arg = result JSON ("" for none).
// The attempt counts; its duration is added to the type's work time; a job
// with roc=1 is deleted with its log (code 2 tells the caller to drop its
// id from the id index, which lives in another slot; a retry of it then
// finds no job and answers not_found).
var completeJobs = leaseScript(`
return each('complete', function(jobkey, logkey, id, result, flag, row)
  unlease(id, row)
  local duration = now - (tonumber(row[R_STARTED_AT]) or now)
  work_time = work_time + duration
  release_key(row[R_UNIQUE_KEY], id)
  row[R_STATE], row[R_PROGRESS], row[R_DURATION] = 'complete', 100, duration
  row[R_ATTEMPTS] = (tonumber(row[R_ATTEMPTS]) or 0) + 1
  if row[R_ROC] == '1' then
    redis.call('ZREM', K_JOBS, id)
    redis.call('DEL', jobkey, logkey)
    return {2, row}
  end
  redis.call('HSET', jobkey, 'state', 'complete', 'result', result, 'progress', 100,
    'duration', duration, 'attempts', row[R_ATTEMPTS], 'updated_at', now, 'lease', '', 'lease_until', '',
    'last_lease', mark)
  redis.call('ZADD', K_COMPLETE, now, id)
  return {1, row}
end)
`)

// failJobs: the handler failed. arg = the error; flag = 1 fails the job for
// good whatever attempts remain (a handler that knows retrying is useless).
// While attempts remain the job goes back to inactive, or to delayed for its
// backoff; otherwise it is failed (attempt_failed in the prelude).
// Code 1 = will retry, 3 = failed for good.
var failJobs = leaseScript(`
return each('fail', function(jobkey, logkey, id, err, final, row)
  unlease(id, row)
  return {attempt_failed(jobkey, id, row, err, final == '1', now, mark), row}
end)
`)

// touchJobs extends leases: lease_until = now + the lease's ttl (the job's,
// unless the lease was taken with one of its own). arg unused.
var touchJobs = leaseScript(`
return each('touch', function(jobkey, logkey, id, arg, flag, row)
  local until_ = now + (tonumber(row[R_LEASE_TTL]) or tonumber(row[R_TTL]))
  redis.call('ZADD', K_LEASES, until_, id)
  redis.call('HSET', jobkey, 'lease_until', until_)
  row[R_LEASE_UNTIL] = until_
  return {1, row}
end)
`)

// releaseJobs gives jobs back to inactive without using an attempt (a
// worker stopping before or during its handlers). arg unused.
var releaseJobs = leaseScript(`
return each('release', function(jobkey, logkey, id, arg, flag, row)
  unlease(id, row)
  requeue(id, row)
  redis.call('HSET', jobkey, 'state', 'inactive', 'rmember', row[R_RMEMBER], 'updated_at', now,
    'lease', '', 'lease_until', '', 'last_lease', mark)
  return {1, row}
end)
`)

// rejoinJobs puts jobs back to delayed for arg ms without using an attempt.
var rejoinJobs = leaseScript(`
return each('rejoin', function(jobkey, logkey, id, delay, flag, row)
  unlease(id, row)
  local at = now + tonumber(delay)
  enter_due(id, at)
  row[R_STATE], row[R_PROMOTE_AT] = 'delayed', at
  redis.call('HSET', jobkey, 'state', 'delayed', 'promote_at', at, 'updated_at', now, 'lease', '', 'lease_until', '',
    'last_lease', mark)
  return {1, row}
end)
`)

// progressJobs records progress: arg = percent 0..100.
var progressJobs = leaseScript(`
return each('progress', function(jobkey, logkey, id, pct, flag, row)
  redis.call('HSET', jobkey, 'progress', pct, 'updated_at', now)
  row[R_PROGRESS], row[R_UPDATED_AT] = pct, now
  return {1, row}
end)
`)

// maxDelayLua is core.MaxDelay, which bounds a backoff.
const maxDelayLua = "315360000000"

// runLeased runs one of the scripts above over jobs of one type.
func (s *Store) runLeased(ctx context.Context, sc *redis.Script, tk typeKeys, now int64, ops []leasedArg) ([]any, error) {
	keys := tk.fixed()
	args := make([]any, 0, 1+4*len(ops))
	args = append(args, now)
	for _, op := range ops {
		keys = append(keys, tk.job(op.id), tk.log(op.id))
		flag := 0
		if op.flag {
			flag = 1
		}
		args = append(args, op.id, op.lease, op.arg, flag)
	}
	return sc.Run(ctx, s.rdb, keys, args...).Slice()
}

type leasedArg struct {
	id    int64
	lease string
	arg   string
	flag  bool
}

// leaseJobs hands ready jobs to a worker. The candidates (ready members)
// were read just before; a member another lease took meanwhile is skipped,
// so no job is ever handed out twice.
//
//	KEYS[1..9] fixed      KEYS[9+i] job:<id_i>
//	ARGV[1] now  ARGV[2] worker  ARGV[3] lease token
//	ARGV[4] lease ttl (ms; 0: each job's ttl)   ARGV[4+i] member_i
//	returns, per job leased, its row (see rowFields) followed by its data
var leaseJobs = script(`
local now = tonumber(ARGV[1])
local out = {}
local lease_ttl = tonumber(ARGV[4])
for i = 5, #ARGV do
  if redis.call('ZREM', K_READY, ARGV[i]) == 1 then
    local jobkey = KEYS[5 + i]
    local id = string.match(ARGV[i], ':(%d+)$')
    local ttl = lease_ttl
    if ttl == 0 then ttl = tonumber(redis.call('HGET', jobkey, 'ttl')) end
    local until_ = now + ttl
    redis.call('ZADD', K_LEASES, until_, id)
    redis.call('HSET', jobkey, 'state', 'active', 'lease', ARGV[3], 'lease_until', until_, 'lease_ttl', ttl,
      'started_at', now, 'updated_at', now, 'worker_id', ARGV[2], 'progress', 0)
    local row = snapshot(jobkey)
    row[#ROW + 1] = redis.call('HGET', jobkey, 'data') or ''
    out[#out+1] = row
  end
end
return out
`, true)

func (s *Store) runLeaseJobs(ctx context.Context, tk typeKeys, now int64, worker, token string, ttl int64, members []string) ([]map[string]string, error) {
	keys := tk.fixed()
	args := make([]any, 0, 4+len(members))
	args = append(args, now, worker, token, ttl)
	for _, m := range members {
		keys = append(keys, tk.job(readyID(m)))
		args = append(args, m)
	}
	res, err := leaseJobs.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(res))
	for i, r := range res {
		vals := r.([]any)
		out[i] = row(vals)
		out[i]["data"] = toString(vals[len(rowFields)])
	}
	return out, nil
}

// rescueExpired takes back active jobs whose lease ran out. The first
// stall_limit stalls of a job (its own limit, or the node's for a job stored
// without one) put it back to inactive without using an attempt; every later
// stall is a failed attempt, retried with the job's backoff while attempts
// remain (attempt_failed). Candidates were read just before and are
// re-checked, so running it twice moves each job once.
//
//	KEYS[1..9] fixed      KEYS[9+i] job:<id_i>
//	ARGV[1] now  ARGV[2] the node's stall limit  ARGV[2+i] id_i
//	returns {next expiry or 0, {code, row}...}: code 1 back to inactive
//	(a stall), 2 a failed attempt that will retry, 3 failed for good;
//	row[R_STALL_LIMIT] is the limit the job was judged by
var rescueExpired = script(`
local now, node_limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {0}
for i = 3, #ARGV do
  local id = ARGV[i]
  local until_ = redis.call('ZSCORE', K_LEASES, id)
  if until_ and tonumber(until_) <= now then
    local jobkey = KEYS[7 + i]
    redis.call('ZREM', K_LEASES, id)
    local row = snapshot(jobkey)
    if row[R_ID] then
      local limit = tonumber(row[R_STALL_LIMIT]) or node_limit
      local stalls = (tonumber(row[R_STALLS]) or 0) + 1
      row[R_STALLS], row[R_STALL_LIMIT] = stalls, limit
      redis.call('HSET', jobkey, 'stalls', stalls)
      if stalls > limit then
        local ttl = tonumber(row[R_LEASE_TTL]) or tonumber(row[R_TTL])
        local msg = 'lease expired: ran past its ttl of ' .. ttl .. ' ms'
        local code = attempt_failed(jobkey, id, row, msg, false, now, '')
        if code == 1 then code = 2 end
        out[#out+1] = {code, row}
      else
        redis.call('HSET', jobkey, 'lease', '', 'lease_until', '', 'updated_at', now)
        enter_ready(jobkey, id, row[R_PRIORITY])
        row = snapshot(jobkey)
        row[R_STALL_LIMIT] = limit
        out[#out+1] = {1, row}
      end
    end
  end
end
local head = redis.call('ZRANGE', K_LEASES, 0, 0, 'WITHSCORES')
if head[2] then out[1] = tonumber(head[2]) end
return out
`, true)

func (s *Store) runRescueExpired(ctx context.Context, tk typeKeys, now int64, stallLimit int, ids []int64) (int64, []any, error) {
	keys := tk.fixed()
	args := []any{now, stallLimit}
	for _, id := range ids {
		keys = append(keys, tk.job(id))
		args = append(args, id)
	}
	res, err := rescueExpired.Run(ctx, s.rdb, keys, args...).Slice()
	if err != nil {
		return 0, nil, err
	}
	return toInt64(res[0]), res[1:], nil
}

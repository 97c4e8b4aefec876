-- rescue_expired: take back active jobs whose lease ran out. The first
-- stall_limit stalls of a job (its own limit, or the node's for a job
-- stored without one) put it back to inactive without using an attempt;
-- every later stall is a failed attempt, retried with the job's backoff
-- while attempts remain (includes/attempt_failed.lua) and joins the job's
-- error history (includes/errors.lua), with no stack. The candidates were
-- read just before and are re-checked, so running it twice moves each job
-- once.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[9+2i]      job:<id_i>
-- KEYS[10+2i]     errors:<id_i>
--
-- ARGV[1]    now          unix ms
-- ARGV[2]    stall_limit  the node's stall limit, for jobs stored without one
-- ARGV[3]    max_delay    ms, the cap of a backoff (core.MaxDelay)
-- ARGV[3+i]  id_i         a candidate's id
--
-- Reply: {next, {code, row}...}: the earliest lease_until still in leases
-- (unix ms, 0 when none), then per job taken back: code 1 back to inactive
-- (a stall), 2 a failed attempt that will retry, 3 failed for good; the
-- row's stall_limit is the limit the job was judged by.
-- Events: the service publishes job.stalled.<id>.<type> for code 1,
-- job.failed_attempt.<id>.<type> for 2 (and queue.due when it went to
-- delayed), job.failed.<id>.<type> for 3.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua
--@include attempt_failed.lua

local now, node_limit, max_delay = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {0}
for i = 4, #ARGV do
  local id = ARGV[i]
  local until_ = redis.call('ZSCORE', K_LEASES, id)
  if until_ and tonumber(until_) <= now then
    local jobkey, errkey = KEYS[3 + 2 * i], KEYS[4 + 2 * i] -- KEYS[9+2j], j = i-3
    redis.call('ZREM', K_LEASES, id)
    local row = snapshot(jobkey)
    if row[R.id] then
      local limit = tonumber(row[R.stall_limit]) or node_limit
      local stalls = (tonumber(row[R.stalls]) or 0) + 1
      row[R.stalls], row[R.stall_limit] = stalls, limit
      redis.call('HSET', jobkey, 'stalls', stalls)
      if stalls > limit then
        local ttl = tonumber(row[R.lease_ttl]) or tonumber(row[R.ttl])
        local msg = 'lease expired: ran past its ttl of ' .. ttl .. ' ms'
        local code = attempt_failed(jobkey, errkey, id, row, msg, '', false, now, '', max_delay)
        if code == 1 then code = 2 end
        out[#out + 1] = {code, row}
      else
        redis.call('HSET', jobkey, 'lease', '', 'lease_until', '', 'updated_at', now)
        enter_ready(jobkey, id, row[R.priority])
        row = snapshot(jobkey)
        row[R.stall_limit] = limit
        out[#out + 1] = {1, row}
      end
    end
  end
end
local head = redis.call('ZRANGE', K_LEASES, 0, 0, 'WITHSCORES')
if head[2] then out[1] = tonumber(head[2]) end
return out

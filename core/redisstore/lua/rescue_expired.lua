-- rescue_expired: take back active jobs whose lease ran out. The first
-- stall_limit stalls of a job (its own limit, or the node's for a job
-- stored without one) put it back to inactive without using an attempt,
-- at the place in ready it had when it was leased (ahead of the jobs that
-- became ready after it);
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
-- Reply: {next, row...}, as promote_due's: the earliest lease_until still
-- in leases (unix ms, 0 when none), then the row of each job taken back,
-- whose stall_limit is the limit the job was judged by: a stall when its
-- stalls are within it (back to inactive), else a failed attempt (state
-- inactive or delayed: it runs again; failed: for good).
-- Events: the service publishes job.stalled.<id>.<type> for a stall,
-- job.failed_attempt.<id>.<type> for a failed attempt that runs again (and
-- queue.due when it went to delayed), job.failed.<id>.<type> for good.
--@include type_keys.lua
--@include row_gen.lua
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
    group_left(jobkey, id)
    local row = snapshot(jobkey)
    if row[ROW_ID] then
      local limit = tonumber(row[ROW_STALL_LIMIT]) or node_limit
      local stalls = (tonumber(row[ROW_STALLS]) or 0) + 1
      row[ROW_STALLS], row[ROW_STALL_LIMIT] = stalls, limit
      redis.call('HSET', jobkey, 'stalls', stalls)
      if stalls > limit then
        local ttl = tonumber(row[ROW_LEASE_TTL]) or tonumber(row[ROW_TTL])
        local msg = 'lease expired: ran past its ttl of ' .. ttl .. ' ms'
        attempt_failed(jobkey, errkey, id, row, msg, '', false, now, '', max_delay)
        out[#out + 1] = row
      else
        redis.call('HSET', jobkey, 'lease', '', 'lease_until', '', 'updated_at', now)
        reenter_ready(jobkey, id, row[ROW_PRIORITY], row[ROW_RMEMBER])
        row = snapshot(jobkey)
        row[ROW_STALL_LIMIT] = limit
        out[#out + 1] = row
      end
    end
  end
end
local head = redis.call('ZRANGE', K_LEASES, 0, 0, 'WITHSCORES')
if head[2] then out[1] = tonumber(head[2]) end
return out

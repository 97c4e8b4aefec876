-- promote_due: move delayed jobs of one type whose time has come to ready,
-- at the back of their priority. The candidates were read from due just
-- before; each is checked again here, so a job another promoter moved
-- meanwhile is skipped, never moved twice (two leaders for a moment).
-- A broadcast job (broadcast "1") never enters ready, where workers lease:
-- its promotion is its broadcast. It ends complete here, and waits in
-- broadcasts, due at once, until a core has published it
-- (broadcast_take.lua, broadcast_sent.lua); it enters the complete index
-- only then, so the cleaner cannot remove it before it went out.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        broadcasts
-- KEYS[11+i]      job:<id_i>
--
-- ARGV[1]    now   unix ms
-- ARGV[1+i]  id_i  a candidate's id
--
-- Reply: {next_due, row...}: the earliest promote_at still in due (unix ms,
-- 0 when none), then the row of each job moved (a broadcast's state is
-- complete).
-- Events: the service publishes job.promotion.<id>.<type> for each job
-- moved to ready; a broadcast's events come after broadcast_take.
--@include type_keys.lua
--@include row_gen.lua
--@include indexes.lua
--@include unique.lua

local K_BROADCASTS = KEYS[11]
local now = tonumber(ARGV[1])
local out = {0}
for i = 2, #ARGV do
  local id = ARGV[i]
  local member = due_member(id)
  local due = redis.call('ZSCORE', K_DUE, member)
  if due and tonumber(due) <= now then
    local jobkey = KEYS[10 + i]
    redis.call('ZREM', K_DUE, member)
    if redis.call('HGET', jobkey, 'broadcast') == '1' then
      redis.call('HSET', jobkey, 'state', 'complete', 'progress', 100, 'updated_at', now)
      redis.call('ZADD', K_BROADCASTS, now, id)
      give_up_unique(jobkey, id)
    else
      enter_ready(jobkey, id, redis.call('HGET', jobkey, 'priority'))
      redis.call('HSET', jobkey, 'updated_at', now)
    end
    out[#out + 1] = snapshot(jobkey)
  end
end
local head = redis.call('ZRANGE', K_DUE, 0, 0, 'WITHSCORES')
if head[2] then out[1] = tonumber(head[2]) end
return out

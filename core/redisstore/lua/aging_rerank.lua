-- aging_rerank: give the ready jobs of one type the score the type's
-- aging gives them now (includes/indexes.lua), after type_set changed it:
-- at most limit jobs a call, walking the type's jobs index by id from a
-- cursor, which re-scoring does not move (ready would: its ranks change as
-- its scores do). A job that enters ready meanwhile is scored by the new
-- aging already; running it twice changes nothing.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, the template of each job's key (key_base)
--
-- ARGV[1]  after  the id to go on after (0: from the first)
-- ARGV[2]  limit  how many jobs to look at, >= 1
--
-- Reply: the last id looked at, to go on after; 0 when the walk is done.
-- Events: none.
--@include type_keys.lua
--@include indexes.lua

local base = key_base(KEYS[11])
local ids = redis.call('ZRANGEBYSCORE', K_JOBS, '(' .. ARGV[1], '+inf', 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  local jobkey = base .. id
  local f = redis.call('HMGET', jobkey, 'state', 'priority', 'created_at', 'rmember')
  if f[1] == 'inactive' and f[4] then
    redis.call('ZADD', K_READY, 'XX', ready_score(f[2], f[3]), f[4])
  end
end
if #ids < tonumber(ARGV[2]) then return 0 end
return tonumber(ids[#ids])

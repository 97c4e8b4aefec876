-- aging_rerank: give the inactive jobs of one type (in ready, or parked
-- by their group's limit) the score the type's aging gives them now (includes/indexes.lua), after type_set changed it:
-- at most limit jobs a call, walking the type's jobs index (creation
-- order, includes/jobs_order.lua) from a place (a score and a member:
-- includes/place.lua), which re-scoring ready does not move (ready would:
-- its ranks change as its scores do), and which many jobs of one score
-- do not blur. A job that enters ready meanwhile is scored by the new
-- aging already; running it twice changes nothing.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, the template of each job's key (key_base)
--
-- ARGV[1]  score   the place to go on after: its score in jobs ("": from
--                  the first job)
-- ARGV[2]  member  the place's member (a job id)
-- ARGV[3]  limit   how many jobs to look at, >= 1
--
-- Reply: the place of the last job looked at, {score, member}, to go on
-- after; {} when the walk is done.
-- Events: none.
--@include type_keys.lua
--@include indexes.lua
--@include place.lua

local base, limit = key_base(KEYS[11]), tonumber(ARGV[3])
local start = 0
if ARGV[1] ~= '' then
  local lt, at = place_in(K_JOBS, ARGV[1], ARGV[2])
  start = lt + at
end
local got = redis.call('ZRANGE', K_JOBS, start, start + limit - 1, 'WITHSCORES')
for i = 1, #got, 2 do
  local jobkey = base .. got[i]
  local f = redis.call('HMGET', jobkey, 'state', 'priority', 'created_at', 'rmember')
  if f[1] == 'inactive' and f[4] then
    rescore_inactive(jobkey, f[4], ready_score(f[2], f[3]))
  end
end
if #got < 2 * limit then return {} end
return {got[#got], got[#got - 1]}

-- set_priority: change a job's priority. An inactive job moves within
-- ready to the new priority (its score: includes/indexes.lua, aging
-- included) but keeps its member, so among jobs of the new priority it
-- keeps its place in time.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:<id>
--
-- ARGV[1]  now       unix ms
-- ARGV[2]  priority  integer, lower runs first
--
-- Reply: the job's row, or {} when there is no such job.
-- Events: none.
--@include type_keys.lua
--@include row_gen.lua
--@include indexes.lua

local jobkey = KEYS[11]
if redis.call('EXISTS', jobkey) == 0 then return {} end
if redis.call('HGET', jobkey, 'state') == 'inactive' then
  rescore_inactive(jobkey, redis.call('HGET', jobkey, 'rmember'), ready_score(ARGV[2], created_of(jobkey)))
end
redis.call('HSET', jobkey, 'priority', ARGV[2], 'updated_at', ARGV[1])
return snapshot(jobkey)

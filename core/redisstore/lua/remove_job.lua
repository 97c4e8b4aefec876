-- remove_job: delete a job, its log, its error history and every index
-- entry of its type; a unique key it holds becomes free. (Its id → type
-- entry lives in another slot: the store deletes it after this script.)
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
--                 the type's keys (includes/type_keys.lua)
-- KEYS[10]        job:<id>
-- KEYS[11]        log:<id>
-- KEYS[12]        errors:<id>
--
-- ARGV[1]  id  the job's id
--
-- Reply: the job's row as it was, or {} when there is no such job.
-- Events: the service publishes job.remove.<id>.<type>.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua
--@include unique.lua

local jobkey, id = KEYS[10], ARGV[1]
local row = snapshot(jobkey)
if not row[R.id] then return {} end
leave(jobkey, id, row[R.state])
redis.call('ZREM', K_JOBS, id)
release_key(row[R.unique_key], id)
redis.call('DEL', jobkey, KEYS[11], KEYS[12])
return row

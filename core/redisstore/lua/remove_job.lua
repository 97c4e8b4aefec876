-- remove_job: delete a job, its log, its error history and every index
-- entry of its type; a unique key it holds becomes free.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:<id>
-- KEYS[12]        log:<id>
-- KEYS[13]        errors:<id>
--
-- ARGV[1]  id  the job's id
--
-- Reply: the job's row as it was, or {} when there is no such job.
-- Events: the service publishes job.remove.<id>.<type>.
--@include type_keys.lua
--@include row_gen.lua
--@include remove.lua

local jobkey, id = KEYS[11], ARGV[1]
local row = snapshot(jobkey)
if not row[ROW_ID] then return {} end
remove_job(jobkey, KEYS[12], KEYS[13], id, row)
return row

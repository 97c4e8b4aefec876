-- complete: the handler of each job succeeded. The attempt counts; the
-- job's progress becomes 100; its duration (since its lease began) is added
-- to the type's work time; a job with roc 1 (remove_on_complete true) is
-- deleted with its log and its error history (includes/remove.lua).
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[8+3i]      job:<id_i>
-- KEYS[9+3i]      log:<id_i>
-- KEYS[10+3i]     errors:<id_i>
--
-- ARGV[1]  now  unix ms
-- then 3 values per job i, from ARGV[2 + 3(i-1)]:
--   id      the job's id
--   lease   the lease token the worker holds
--   result  the handler's result, JSON; "" for none
--
-- Reply, per job: {code, row} (includes/lease_holder.lua): 1 complete, 2
-- complete and deleted (roc: the caller drops its id from the id index,
-- which lives in another slot; a retry then finds no job and answers
-- not_found), or 0, -1, 4.
-- Events: the service publishes job.complete.<id>.<type> with the result.
--@include type_keys.lua
--@include row.lua
--@include unique.lua
--@include lease_holder.lua
--@include remove.lua

local work_time = 0
local out = each('complete', 2, 3, function(jobkey, logkey, errkey, id, row, result)
  unlease(id, row)
  local duration = now - (tonumber(row[R.started_at]) or now)
  work_time = work_time + duration
  release_key(row[R.unique_key], id)
  row[R.state], row[R.progress], row[R.duration] = 'complete', 100, duration
  row[R.attempts] = (tonumber(row[R.attempts]) or 0) + 1
  if row[R.roc] == '1' then
    delete_job(jobkey, logkey, errkey, id)
    return {2, row}
  end
  redis.call('HSET', jobkey, 'state', 'complete', 'result', result, 'progress', 100,
    'duration', duration, 'attempts', row[R.attempts], 'updated_at', now, 'lease', '', 'lease_until', '',
    'last_lease', mark)
  redis.call('ZADD', K_COMPLETE, now, id)
  return {1, row}
end)
if work_time > 0 then redis.call('HINCRBY', K_STATS, 'work_time', work_time) end
return out

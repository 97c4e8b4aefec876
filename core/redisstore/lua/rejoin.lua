-- rejoin: put jobs back to delayed for a while, without using an attempt.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11..13]    job:0, log:0, errors:0: templates of each job's keys
--                 (includes/lease_holder.lua)
--
-- ARGV[1]  now  unix ms
-- then 3 values per job i, from ARGV[2 + 3(i-1)]:
--   id     the job's id
--   lease  the lease token the worker holds
--   delay  ms from now until the job is due again
--
-- Reply, per job: {code, row} (includes/lease_holder.lua): DONE (delayed),
-- or NO_JOB, NOT_HOLDER, REPEATED.
-- Events: the service publishes job.rejoin.<id>.<type> and queue.due.
--@include type_keys.lua
--@include row_gen.lua
--@include indexes.lua
--@include lease_holder.lua

return each('rejoin', 2, 3, function(jobkey, logkey, errkey, id, row, delay)
  unlease(id, row)
  local at = now + tonumber(delay)
  enter_due(id, at)
  row[ROW_STATE], row[ROW_PROMOTE_AT] = 'delayed', at
  redis.call('HSET', jobkey, 'state', 'delayed', 'promote_at', at, 'updated_at', now, 'lease', '', 'lease_until', '',
    'last_lease', mark)
  return {DONE, row}
end)

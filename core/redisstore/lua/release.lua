-- release: give jobs back to inactive, at the back of their priority,
-- without using an attempt (a worker stopping before or during its
-- handlers; core giving back jobs no reply could carry).
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11..13]    job:0, log:0, errors:0: templates of each job's keys
--                 (includes/lease_holder.lua)
--
-- ARGV[1]  now  unix ms
-- then 2 values per job i, from ARGV[2 + 2(i-1)]:
--   id     the job's id
--   lease  the lease token the worker holds
--
-- Reply, per job: {code, row} (includes/lease_holder.lua): DONE (released),
-- or NO_JOB, NOT_HOLDER, REPEATED.
-- Events: the service publishes job.enqueue.<id>.<type>.
--@include type_keys.lua
--@include row_gen.lua
--@include lease_holder.lua

return each('release', 2, 2, function(jobkey, logkey, errkey, id, row)
  unlease(id, row)
  requeue(id, row)
  redis.call('HSET', jobkey, 'state', 'inactive', 'rmember', row[ROW_RMEMBER], 'updated_at', now,
    'lease', '', 'lease_until', '', 'last_lease', mark)
  return {DONE, row}
end)

-- progress: record how far each handler has come.
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
--   id       the job's id
--   lease    the lease token the worker holds
--   percent  0..100 (the service computes it from complete and total)
--
-- Reply, per job: {code, row} (includes/lease_holder.lua): DONE (recorded),
-- or NO_JOB, NOT_HOLDER.
-- Events: the service publishes job.progress.<id>.<type> with the percent.
--@include type_keys.lua
--@include row_gen.lua
--@include lease_holder.lua

return each('progress', 2, 3, function(jobkey, logkey, errkey, id, row, percent)
  redis.call('HSET', jobkey, 'progress', percent, 'updated_at', now)
  row[ROW_PROGRESS], row[ROW_UPDATED_AT] = percent, now
  return {DONE, row}
end)

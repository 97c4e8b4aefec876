-- touch: extend leases: lease_until = now + the lease's ttl (the one it
-- was taken with, else the job's).
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
-- Reply, per job: {code, row} (includes/lease_holder.lua): DONE (extended),
-- or NO_JOB, NOT_HOLDER (a touch is never a retry: REPEATED cannot happen).
-- Events: none.
--@include type_keys.lua
--@include row_gen.lua
--@include lease_holder.lua

return each('touch', 2, 2, function(jobkey, logkey, errkey, id, row)
  local until_ = now + (tonumber(row[ROW_LEASE_TTL]) or tonumber(row[ROW_TTL]))
  redis.call('ZADD', K_LEASES, until_, id)
  redis.call('HSET', jobkey, 'lease_until', until_)
  row[ROW_LEASE_UNTIL] = until_
  return {DONE, row}
end)

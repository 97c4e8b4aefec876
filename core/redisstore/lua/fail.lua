-- fail: the handler of each job failed. The attempt counts; while
-- attempts remain the job goes back to inactive, or to delayed for the
-- delay the worker gave, else for its backoff (capped at max_delay);
-- otherwise, or when final, it is failed
-- for good (includes/attempt_failed.lua), and then deleted with its log
-- and error history when its rof is 1 (remove_on_fail true;
-- includes/remove.lua). Each failed attempt joins the job's error history
-- (includes/errors.lua), with its stack.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11..13]    job:0, log:0, errors:0: templates of each job's keys
--                 (includes/lease_holder.lua)
--
-- ARGV[1]  now        unix ms
-- ARGV[2]  max_delay  ms, the cap of a backoff (core.MaxDelay)
-- then 6 values per job i, from ARGV[3 + 6(i-1)]:
--   id     the job's id
--   lease  the lease token the worker holds
--   error  the handler's error message
--   final  1: fail for good whatever attempts remain, else 0
--   stack  the handler's stack, "" for none
--   delay  ms before the retry, "" for the job's backoff (0: at once;
--          the service checked 0..max_delay)
--
-- Reply, per job: {code, row} (includes/lease_holder.lua): 1 will retry,
-- 3 failed for good, 5 failed for good and deleted (rof: as for
-- complete's 2), or 0, -1, 4.
-- Events: the service publishes job.failed_attempt.<id>.<type> (and
-- queue.due when the job went to delayed) or job.failed.<id>.<type>, with
-- the error and attempts.
--@include type_keys.lua
--@include row.lua
--@include lease_holder.lua
--@include attempt_failed.lua
--@include remove.lua

local max_delay = tonumber(ARGV[2])
return each('fail', 3, 6, function(jobkey, logkey, errkey, id, row, err, final, stack, delay)
  unlease(id, row)
  local code = attempt_failed(jobkey, errkey, id, row, err, stack, final == '1', now, mark, max_delay, tonumber(delay))
  if code == 3 and row[R.rof] == '1' then
    redis.call('ZREM', K_FAILED, id)
    delete_job(jobkey, logkey, errkey, id)
    return {5, row}
  end
  return {code, row}
end)

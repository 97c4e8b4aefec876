-- cancel: end a job that has not finished, by hand. A delayed, inactive or
-- active job moves to cancelled (includes/cancel_job.lua): terminal, never
-- leased again; the lease of an active job is gone, so its worker's later
-- complete, fail, touch, release or rejoin answers conflict and changes
-- nothing. A finished job (complete, failed, cancelled) is left as it is.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:<id>
--
-- ARGV[1]  now  unix ms
--
-- Reply: {code, row}: code 1 cancelled, 2 finished already (nothing
-- changed; the row says in which state); {} when there is no such job.
-- Events: for 1, the service publishes job.cancel.<id>.<type> with the
-- reason; the worker running the job cancels its handler's context on it.
--@include type_keys.lua
--@include row.lua
--@include cancel_job.lua

local jobkey, now = KEYS[11], tonumber(ARGV[1])
local row = snapshot(jobkey)
if not row[R.id] then return {} end
if not cancellable(row[R.state]) then return {2, row} end
cancel_job(jobkey, row[R.id], row[R.state], now)
return {1, snapshot(jobkey)}

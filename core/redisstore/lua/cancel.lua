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
-- Reply: {code, row} (includes/codes_gen.lua): DONE (cancelled), or
-- UNCHANGED (finished already; the row says in which state); {} when there
-- is no such job.
-- Events: for DONE, the service publishes job.cancel.<id>.<type> with the
-- reason; the worker running the job cancels its handler's context on it.
--@include type_keys.lua
--@include row_gen.lua
--@include codes_gen.lua
--@include cancel_job.lua

local jobkey, now = KEYS[11], tonumber(ARGV[1])
local row = snapshot(jobkey)
if not row[ROW_ID] then return {} end
if not cancellable(row[ROW_STATE]) then return {UNCHANGED, row} end
cancel_job(jobkey, row[ROW_ID], row[ROW_STATE], now)
return {DONE, snapshot(jobkey)}

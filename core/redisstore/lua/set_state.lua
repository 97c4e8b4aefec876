-- set_state: move a job to another state by hand (a person's retry from the
-- UI or CLI), through includes/move_state.lua, the move bulk.lua shares.
-- Leaving active drops the lease, so the worker that held it gets
-- conflict; no earlier lease is answered as a retry either. Leaving
-- failed, complete or cancelled for a state that runs again resets
-- attempts and stalls and takes the unique key back unless another job
-- holds it by now.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:<id>
--
-- ARGV[1]  now    unix ms
-- ARGV[2]  state  the new state: delayed, inactive, active, complete, failed
--                 (not cancelled: the service refuses it; cancel.lua cancels)
--
-- Reply: {code, row} (includes/codes_gen.lua): DONE, or UNCHANGED when
-- the job was in that state already; {} when there is no such job.
-- Events: for DONE, the service publishes the new state's event:
-- job.enqueue.<id>.<type> for inactive and delayed (and queue.due for
-- delayed), job.start, job.complete or job.failed for the others.
--@include type_keys.lua
--@include row_gen.lua
--@include codes_gen.lua
--@include move_state.lua

local jobkey, now, new = KEYS[11], tonumber(ARGV[1]), ARGV[2]
local id = redis.call('HGET', jobkey, 'id')
if not id then return {} end
local cur = redis.call('HGET', jobkey, 'state')
if cur == new then return {UNCHANGED, snapshot(jobkey)} end
move_state(jobkey, id, cur, new, now)
return {DONE, snapshot(jobkey)}

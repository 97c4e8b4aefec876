-- dep_settle: the second step of a dependency's hand-over (includes/deps.lua),
-- in the dependent's slot: waiting job id takes note that its dependency
-- dep completed or failed. Applied twice it changes nothing.
--
-- KEYS[1..10]  the dependent's type's keys (includes/type_keys.lua); the
--              job's own keys are derived from them (keys.go)
--
-- ARGV[1] now  unix ms
-- ARGV[2] id   the waiting job
-- ARGV[3] dep  the dependency's id
-- ARGV[4] outcome  "c": it completed; "f": it failed for good, was
--              cancelled or removed
--
-- Reply: {code, row, handed}: DONE with the job's row when it left waiting
-- (released to inactive or delayed, or failed or cancelled by its rule),
-- else UNCHANGED and {}; handed, how many hand-overs it recorded for the
-- job's own dependents (a failure carries down the graph).
-- Events: the service publishes job.promotion for a released job,
-- job.failed or job.cancel for one its rule ended.
--@include deps.lua

local id = ARGV[2]
local left, handed = settle(id, ARGV[3], ARGV[4], tonumber(ARGV[1]))
if not left then return {UNCHANGED, {}, 0} end
return {DONE, snapshot(job_key(id)), handed}

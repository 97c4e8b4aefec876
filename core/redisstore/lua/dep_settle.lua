-- dep_settle: the second step of dependencies' hand-overs
-- (includes/deps.lua), in the dependents' slot: each waiting job takes
-- note that a dependency completed or failed. Applied twice it changes
-- nothing.
--
-- KEYS[1..10]  the dependents' type's keys (includes/type_keys.lua); each
--              job's own keys are derived from them (keys.go)
--
-- ARGV[1] now  unix ms
-- then 3 values per hand-over:
--   id       the waiting job
--   dep      the dependency's id
--   outcome  "c": it completed; "f": it failed for good, was cancelled or
--            removed
--
-- Reply: {handed, row...}: how many hand-overs it recorded for the jobs'
-- own dependents (a failure carries down the graph), then the row of each
-- job that left waiting (released to inactive or delayed, or failed or
-- cancelled by its rule).
-- Events: the service publishes job.promotion for a released job,
-- job.failed or job.cancel for one its rule ended.
--@include deps.lua

local now = tonumber(ARGV[1])
local out = {0}
for i = 2, #ARGV, 3 do
  local id = ARGV[i]
  local left, handed = settle(id, ARGV[i + 1], ARGV[i + 2], now)
  out[1] = out[1] + handed
  if left then out[#out + 1] = snapshot(job_key(id)) end
end
return out

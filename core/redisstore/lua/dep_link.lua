-- dep_link: the second step of a create whose job depends on a job of
-- another type (includes/deps.lua), in the dependency's slot: enter the
-- dependent in the dependency's dependents unless it has finished.
-- Applied twice it changes nothing.
--
-- KEYS[1..10]  the dependency's type's keys (includes/type_keys.lua)
--
-- ARGV[1] dep   the dependency's id
-- ARGV[2] member  the dependent as dependents lists it: "<type>:<id>"
--
-- Reply: the dependency's state: "" when it is gone; when it is complete,
-- failed or cancelled it was not entered, and Go settles the dependent
-- (dep_settle.lua).
-- Events: none.
--@include deps.lua

local dep = ARGV[1]
local jobkey = job_key(dep)
local state = redis.call('HGET', jobkey, 'state')
if not state then return '' end
if state ~= 'complete' and state ~= 'failed' and state ~= 'cancelled' then
  local dset = dependents_key(dep)
  redis.call('SADD', dset, ARGV[2])
  redis.call('HSET', jobkey, 'dependents', redis.call('SCARD', dset))
end
return state

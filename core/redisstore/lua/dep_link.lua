-- dep_link: the second step of creates whose jobs depend on jobs of
-- another type (includes/deps.lua), in the dependencies' slot: enter each
-- dependent in its dependency's dependents unless that has finished.
-- Applied twice it changes nothing.
--
-- KEYS[1..10]  the dependencies' type's keys (includes/type_keys.lua)
--
-- 2 values per link:
--   dep     the dependency's id
--   member  the dependent as dependents lists it: "<type>:<id>"
--
-- Reply: per link, the dependency's state: "" when it is gone; when it is
-- complete, failed or cancelled the dependent was not entered, and Go
-- settles it (dep_settle.lua).
-- Events: none.
--@include deps.lua

local out = {}
for i = 1, #ARGV, 2 do
  local dep = ARGV[i]
  local jobkey = job_key(dep)
  local state = redis.call('HGET', jobkey, 'state')
  if not state then
    state = ''
  elseif state ~= 'complete' and state ~= 'failed' and state ~= 'cancelled' then
    local dset = dependents_key(dep)
    redis.call('SADD', dset, ARGV[i + 1])
    redis.call('HSET', jobkey, 'dependents', redis.call('SCARD', dset))
    redis.call('HSET', K_STATS, 'dependents', '1') -- complete.lua reads dependents
  end
  out[#out + 1] = state
end
return out

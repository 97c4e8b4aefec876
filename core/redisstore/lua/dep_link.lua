-- dep_link: the second step of creates whose jobs depend on jobs of
-- another type (includes/deps.lua), in the dependencies' slot: enter each
-- dependent in its dependency's dependents unless that has finished.
-- Applied twice it changes nothing.
--
-- KEYS[1..10]  the dependencies' type's keys (includes/type_keys.lua)
--
-- per dependency (Go gathers a batch's links by dependency, so that a
-- fan-out's root is read and written once):
--   dep      the dependency's id
--   n        how many dependents follow
--   members  n dependents, each as dependents lists it: "<type>:<id>"
--
-- Reply: per dependency, its state: "" when it is gone; when it is
-- complete, failed or cancelled its dependents were not entered, and Go
-- settles them (dep_settle.lua).
-- Events: none.
--@include deps.lua

local out, i, linked = {}, 1, false
while i <= #ARGV do
  local dep, n = ARGV[i], tonumber(ARGV[i + 1])
  local jobkey = job_key(dep)
  local state = redis.call('HGET', jobkey, 'state')
  if not state then
    state = ''
  elseif state ~= 'complete' and state ~= 'failed' and state ~= 'cancelled' then
    -- at most linkChunk members (calls.go): within what unpack takes
    local added = redis.call('SADD', dependents_key(dep), unpack(ARGV, i + 2, i + 1 + n))
    if added > 0 then redis.call('HINCRBY', jobkey, 'dependents', added) end
    linked = true
  end
  out[#out + 1] = state
  i = i + 2 + n
end
if linked then redis.call('HSET', K_STATS, 'dependents', '1') end -- complete.lua reads dependents
return out

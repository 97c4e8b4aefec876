-- The state indexes of a type: how a job enters ready or due, and leaves
-- the index of the state it is in (ready_order.lua: its member and score
-- there).
--@include type_keys.lua
--@include ready_order.lua
--@include group_limit.lua

-- order_number is the number a job's member in ready starts with: group
-- is its group ("", false or a function returning it; called only for a
-- type that has had groups)
local function order_number(group)
  type_aging()
  if type(group) == 'function' then
    if not grouped then return redis.call('INCR', K_SEQ) end
    group = group()
  end
  if group and group ~= '' then return group_tag(group) end
  return redis.call('INCR', K_SEQ)
end
-- created_of returns a function that reads a job's created_at, for
-- ready_score: read only for a type with aging
local function created_of(jobkey)
  return function() return redis.call('HGET', jobkey, 'created_at') end
end

-- put a job at the back of its priority in ready (of its group's turns,
-- for a job of a group), returning its member
local function ready_member(id, priority, created_at, group)
  local member = ready_member_at(order_number(group), id)
  redis.call('ZADD', K_READY, ready_score(priority, created_at), member)
  return member
end
local function enter_ready(jobkey, id, priority)
  local group = function() return redis.call('HGET', jobkey, 'group') end
  redis.call('HSET', jobkey, 'state', 'inactive', 'rmember', ready_member(id, priority, created_of(jobkey), group))
end
-- put a job that stalled back in ready at the place it had (its member
-- rmember, from when it last entered ready, "" for none: then at the back),
-- ahead of the jobs that entered after it: it was leased before them
local function reenter_ready(jobkey, id, priority, rmember)
  if not rmember or rmember == '' then return enter_ready(jobkey, id, priority) end
  redis.call('ZADD', K_READY, ready_score(priority, created_of(jobkey)), rmember)
  redis.call('HSET', jobkey, 'state', 'inactive')
end
-- put a job in due, to be promoted at at (unix ms)
local function enter_due(id, at)
  redis.call('ZADD', K_DUE, at, due_member(id))
end

-- take a job out of the index of the state it is in
local function leave(jobkey, id, state)
  if state == 'inactive' then
    local member = redis.call('HGET', jobkey, 'rmember')
    -- not in ready: parked by its group's limit (group_limit.lua)
    if redis.call('ZREM', K_READY, member) == 0 then unpark_job(jobkey, member) end
  elseif state == 'delayed' then
    redis.call('ZREM', K_DUE, due_member(id))
  elseif state == 'active' then
    redis.call('ZREM', K_LEASES, id)
    group_left(jobkey, id)
  elseif state == 'complete' then
    redis.call('ZREM', K_COMPLETE, id)
  elseif state == 'failed' then
    redis.call('ZREM', K_FAILED, id)
  elseif state == 'cancelled' then
    redis.call('ZREM', K_CANCELLED, id)
  elseif state == 'waiting' then
    redis.call('ZREM', K_WAITING, id)
  end
end

-- The state indexes of a type: how a job enters ready or due, and leaves
-- the index of the state it is in.
--@include type_keys.lua

-- a job's member in ready: "<seq, 16 digits>:<id>", seq a number of the
-- type's seq counter, so that jobs of one priority sort in the order they
-- entered ready (the one place that builds it; readyID in Go reads it)
local function ready_member_at(seq, id)
  return string.format('%016d', seq) .. ':' .. id
end
-- put a job at the back of its priority in ready, returning its member
local function ready_member(id, priority)
  local member = ready_member_at(redis.call('INCR', K_SEQ), id)
  redis.call('ZADD', K_READY, priority, member)
  return member
end
local function enter_ready(jobkey, id, priority)
  redis.call('HSET', jobkey, 'state', 'inactive', 'rmember', ready_member(id, priority))
end
-- put a job that stalled back in ready at the place it had (its member
-- rmember, from when it last entered ready, "" for none: then at the back),
-- ahead of the jobs that entered after it: it was leased before them
local function reenter_ready(jobkey, id, priority, rmember)
  if not rmember or rmember == '' then return enter_ready(jobkey, id, priority) end
  redis.call('ZADD', K_READY, priority, rmember)
  redis.call('HSET', jobkey, 'state', 'inactive')
end

-- a job's member in due: its id zero-padded to 19 digits (the width of the
-- largest int64), so that jobs due at the same millisecond sort by id, which
-- is their creation order, not by the text of their ids ("10" < "2").
-- The one place that builds it; parseIDs and memberID in Go read it.
local function due_member(id)
  id = tostring(id)
  return string.rep('0', 19 - #id) .. id
end
local function enter_due(id, at)
  redis.call('ZADD', K_DUE, at, due_member(id))
end

-- take a job out of the index of the state it is in
local function leave(jobkey, id, state)
  if state == 'inactive' then
    redis.call('ZREM', K_READY, redis.call('HGET', jobkey, 'rmember'))
  elseif state == 'delayed' then
    redis.call('ZREM', K_DUE, due_member(id))
  elseif state == 'active' then
    redis.call('ZREM', K_LEASES, id)
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

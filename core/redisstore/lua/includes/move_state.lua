-- A move by hand from one state to another: what set_state does to one job
-- and bulk.lua's retry and promote to each of theirs, written once.
--@include type_keys.lua
--@include indexes.lua
--@include unique.lua
--@include deps.lua

-- move the job at jobkey from state cur to new (not cancelled: that is
-- cancel_job's). Leaving active drops the lease, so the worker that held
-- it gets conflict; no earlier lease is answered as a retry either.
-- Leaving complete, failed or cancelled for a state that runs again resets
-- attempts and stalls and takes the unique key back unless another job
-- holds it by now.
local function move_state(jobkey, id, cur, new, now)
  -- a broadcast job is never leased: a move that would let a worker have
  -- it (to inactive or active) makes it due at once instead, and the next
  -- promote broadcasts it
  local due_now = false
  if (new == 'inactive' or new == 'active') and redis.call('HGET', jobkey, 'broadcast') == '1' then
    new, due_now = 'delayed', true
  end
  leave(jobkey, id, cur)
  -- a person moved the job: no earlier lease may act on it, nor be
  -- answered as a retry of what it did
  redis.call('HDEL', jobkey, 'lease', 'lease_until', 'last_lease')
  local finished = (cur == 'complete' or cur == 'failed' or cur == 'cancelled')
  if new == 'inactive' then
    enter_ready(jobkey, id, redis.call('HGET', jobkey, 'priority'))
  elseif new == 'delayed' then
    local at = now
    if not due_now then at = now + (tonumber(redis.call('HGET', jobkey, 'delay')) or 0) end
    enter_due(id, at)
    redis.call('HSET', jobkey, 'promote_at', at)
  elseif new == 'active' then
    local until_ = now + tonumber(redis.call('HGET', jobkey, 'ttl'))
    redis.call('ZADD', K_LEASES, until_, id)
    redis.call('HSET', jobkey, 'started_at', now, 'lease_until', until_)
  elseif new == 'complete' then
    redis.call('ZADD', K_COMPLETE, now, id)
    give_up_unique(jobkey, id)
  elseif new == 'failed' then
    redis.call('ZADD', K_FAILED, now, id)
    redis.call('HSET', jobkey, 'failed_at', now)
    give_up_unique(jobkey, id)
  end
  if finished and (new == 'inactive' or new == 'delayed' or new == 'active') then
    redis.call('HSET', jobkey, 'attempts', 0, 'stalls', 0, 'failed_at', '')
    retake_unique(jobkey, id)
  end
  redis.call('HSET', jobkey, 'state', new, 'updated_at', now)
  -- moved to complete or failed by hand: those waiting take it as such
  if new == 'complete' then tell_dependents(jobkey, id, 'c', now) end
  if new == 'failed' then tell_dependents(jobkey, id, 'f', now) end
end

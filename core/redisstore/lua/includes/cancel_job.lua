-- Cancelling one job: the move cancel.lua makes for one job and bulk.lua
-- for each job it cancels, written once.
--@include type_keys.lua
--@include indexes.lua
--@include unique.lua
--@include deps.lua

-- cancel the job at jobkey, in state (delayed, inactive or active; the
-- caller checked): out of its state's index into cancelled, its lease gone
-- (so no earlier lease may act on it, nor be answered as a retry of what it
-- did: a worker's later acknowledgement answers conflict), its unique key
-- free as any finished job's.
local function cancel_job(jobkey, id, state, now)
  leave(jobkey, id, state)
  redis.call('ZADD', K_CANCELLED, now, id)
  give_up_unique(jobkey, id)
  redis.call('HDEL', jobkey, 'lease', 'lease_until', 'last_lease')
  redis.call('HSET', jobkey, 'state', 'cancelled', 'updated_at', now)
  tell_dependents(jobkey, id, 'f', now) -- cancelled counts as failed
end

-- whether a job in state may be cancelled: one that may still run
local function cancellable(state)
  return state == 'delayed' or state == 'inactive' or state == 'active' or state == 'waiting'
end

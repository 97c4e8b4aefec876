-- Dependencies (issue 26; keys.go names the keys, deps.go the Go half):
-- how a waiting job takes note of a dependency that completed or failed,
-- and how a finished job tells the jobs that wait for it.
--
-- A dependent X waits in its type's waiting index with pending:<X>, the
-- set of its dependencies not done yet, and their count in its pending
-- field; a job of one dependency alone (its depends_on one id, as each
-- job of a fan-out) has no set: while it is waiting, that one is pending
-- (lua/includes/deps_create.lua). Each dependency D lists X in
-- dependents:<D> (as "<X>" when of the same type, "<type>:<X>" when of
-- another) and counts them in its hash's dependents field, the one field
-- a completion reads to know whether anyone waits.
--
-- A dependency of the same type (the same slot) settles its dependents
-- in the script that completes it. One of another type may be on another
-- Redis Cluster shard: the completion records a hand-over in its own slot
-- (handover), and Go finishes it with dep_settle.lua in the dependent's
-- slot, right after, or in the leader's sweep after a crash. A settle
-- applied twice changes nothing: it acts only while the dependency is
-- pending. Failures always go through hand-overs (they are rare, and
-- carry down the graph step by step, each step bounded).
--@include type_keys.lua
--@include row_gen.lua
--@include codes_gen.lua
--@include indexes.lua
--@include unique.lua

-- whether jobs wait (or waited) for the job at jobkey: its dependents
-- field. Scripts on a hot path read it only when the type's stats field
-- dependents is "1": some job of the type had dependents (set with the
-- first, never unset).
local function has_dependents(jobkey)
  local n = redis.call('HGET', jobkey, 'dependents')
  return n ~= false and n ~= '0'
end

-- release a waiting job whose last dependency completed: to ready, or to
-- due when it has a delay, which runs from now; a broadcast to due even
-- without one, as it is created (never to ready: no worker leases it, the
-- promote that finds it due broadcasts it)
local function release_waiting(jobkey, id, now)
  redis.call('ZREM', K_WAITING, id)
  local v = redis.call('HMGET', jobkey, 'delay', 'priority', 'broadcast')
  local delay = tonumber(v[1]) or 0
  if delay > 0 or v[3] == '1' then
    enter_due(id, now + delay)
    redis.call('HSET', jobkey, 'state', 'delayed', 'promote_at', now + delay, 'pending', 0, 'updated_at', now)
  else
    enter_ready(jobkey, id, v[2])
    redis.call('HSET', jobkey, 'pending', 0, 'promote_at', now, 'updated_at', now)
  end
end

-- record that every job waiting for job id (at jobkey, of this type) must
-- settle its outcome ('c' completed, 'f' failed for good, cancelled or
-- removed) in its own slot: how many hand-overs were recorded
local function hand_over_all(jobkey, id, outcome, now, members)
  local own_type = false
  for _, m in ipairs(members) do
    local t, x = string.match(m, '^([^:]+):(%d+)$')
    if not t then
      own_type = own_type or redis.call('HGET', jobkey, 'type')
      t, x = own_type, m
    end
    redis.call('ZADD', K_HANDOVER, now, 's:' .. t .. ':' .. x .. ':' .. id .. ':' .. outcome)
  end
  return #members
end

-- settle takes note, for waiting job id of this type, that its dependency
-- dep completed ('c') or failed ('f'). It returns true when the job left
-- waiting (released, failed or cancelled by its rule), and how many
-- hand-overs it recorded for its own dependents. Idempotent: a dependency
-- no longer pending, or a job no longer waiting, changes nothing; so a
-- dependency retried successfully after failing a job by its rule does
-- not revive it. A job of one dependency has no pending set: its one is
-- pending as long as it is waiting, which any settle of it ends (nothing
-- moves a job back to waiting).
local function settle(id, dep, outcome, now)
  local pkey = pending_key(id)
  local removed = redis.call('SREM', pkey, dep)
  local jobkey = job_key(id)
  local v = redis.call('HMGET', jobkey, 'state', 'on_dep_fail')
  if v[1] ~= 'waiting' then return false, 0 end
  local left = 0
  if removed == 1 then
    left = redis.call('SCARD', pkey)
  elseif redis.call('HGET', jobkey, 'depends_on') ~= tostring(dep) then
    return false, 0 -- not pending: settled before
  end
  if outcome == 'c' or v[2] == 'ignore' then
    if left > 0 then
      redis.call('HSET', jobkey, 'pending', left)
      return false, 0
    end
    release_waiting(jobkey, id, now)
    return true, 0
  end
  redis.call('DEL', pkey)
  redis.call('ZREM', K_WAITING, id)
  local err = 'dependency ' .. dep .. ' failed, was cancelled or removed'
  if v[2] == 'cancel' then
    redis.call('ZADD', K_CANCELLED, now, id)
    redis.call('HSET', jobkey, 'state', 'cancelled', 'error', err, 'pending', left, 'updated_at', now)
  else
    redis.call('ZADD', K_FAILED, now, id)
    redis.call('HSET', jobkey, 'state', 'failed', 'error', err, 'pending', left, 'failed_at', now, 'updated_at', now)
  end
  give_up_unique(jobkey, id)
  local handed = 0
  if redis.call('EXISTS', dependents_key(id)) == 1 then
    handed = hand_over_all(jobkey, id, 'f', now, redis.call('SMEMBERS', dependents_key(id)))
  end
  return true, handed
end

-- tell_dependents records, for each job waiting for job id (at jobkey)
-- that just ended otherwise than complete ('f': failed for good,
-- cancelled, removed) or was marked complete by hand ('c'), a hand-over
-- that settles it: how many (0 for a job nobody waits for, the one HGET
-- such a job pays)
local function tell_dependents(jobkey, id, outcome, now)
  if not has_dependents(jobkey) then return 0 end
  return hand_over_all(jobkey, id, outcome, now, redis.call('SMEMBERS', dependents_key(id)))
end

-- dependents_done settles the dependents of job id (at jobkey), which just
-- completed ('c') or failed for good ('f'): those of its type at once when
-- it completed, the others by hand-over. It returns the rows of the jobs
-- it released, and how many hand-overs it recorded.
local function dependents_done(jobkey, id, outcome, now)
  local members = redis.call('SMEMBERS', dependents_key(id))
  if outcome ~= 'c' then return {}, hand_over_all(jobkey, id, outcome, now, members) end
  local rows, others = {}, {}
  for _, m in ipairs(members) do
    if string.find(m, ':', 1, true) then
      others[#others + 1] = m
    elseif settle(m, id, 'c', now) then
      rows[#rows + 1] = snapshot(job_key(m))
    end
  end
  return rows, hand_over_all(jobkey, id, 'c', now, others)
end

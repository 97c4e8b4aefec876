-- How a lease honours its type's policy (DESIGN §10.1): the one copy,
-- shared by lease and lease_head. A type without a concurrency or a rate
-- costs a lease nothing here beyond the field limited, which the lease
-- reads in the same HMGET as paused (lease_flags).
--@include type_keys.lua
--@include many.lua
--@include group_limit.lua

-- lease_flags reads whether the type is paused, whether it is limited, and
-- whether it has had group limits (then group_lease), in one call.
local function lease_flags()
  local f = redis.call('HMGET', K_STATS, 'paused', 'limited', 'glimited')
  glimited = f[3] == '1'
  return f[1] == '1', f[2] == '1', glimited
end

-- lease_room says how many of max jobs a lease of a limited type may start
-- at now; when its rate holds some back, when the next start may be (unix
-- ms; else 0); and whether the type has a rate (then note_starts logs the
-- starts). Concurrency counts the type's leases, which are its
-- active jobs (an expired lease is active until rescue takes it back).
-- Rate keeps a log of starts (starts) trimmed to the window: a start at
-- now counts while now - start < per, so no window of per ms ever holds
-- more than limit starts.
local function lease_room(k_policy, k_starts, now, max)
  local p = redis.call('HMGET', k_policy, 'concurrency', 'rate_limit', 'rate_per')
  local room, until_ = max, 0
  local concurrency, rate_limit = tonumber(p[1]), tonumber(p[2])
  if concurrency then
    room = math.min(room, concurrency - redis.call('ZCARD', K_LEASES))
  end
  if rate_limit then
    local per = tonumber(p[3])
    redis.call('ZREMRANGEBYSCORE', k_starts, '-inf', now - per)
    local used = redis.call('ZCARD', k_starts)
    if rate_limit - used < room then
      -- the rate binds: once this lease's starts fill the window, the
      -- next opens as the oldest start in it leaves
      until_ = now + per
      if used > 0 then until_ = tonumber(redis.call('ZRANGE', k_starts, 0, 0, 'WITHSCORES')[2]) + per end
      room = rate_limit - used
    end
  end
  return math.max(room, 0), until_, rate_limit ~= nil
end

-- note_starts logs the starts of the jobs new_leases holds ({until, id,
-- ...}, from lease_job) under lease: the token makes each start a member
-- of its own, also for a job leased twice in one ms.
local function note_starts(k_starts, now, lease, new_leases)
  local log = {}
  for i = 2, #new_leases, 2 do
    log[#log + 1], log[#log + 2] = now, lease .. ':' .. new_leases[i]
  end
  call_many('ZADD', k_starts, log)
end

-- group_lease starts a lease of a type that has had group limits: parked
-- groups whose wait ended come back to ready (wake_groups), and it says
-- whether the type's policy limits groups now (then each job goes through
-- take_grouped).
local group_room_of, group_until_of, parked_now = {}, {}, false
local function group_lease(now)
  local G = group_helpers()
  G.wake_groups(now)
  return G.group_limits()
end

-- take_grouped decides on a job that just left ready (member, of score):
-- a job of a group at its limit is parked (false), any other may be
-- leased (true, and its start is counted for its group).
local function take_grouped(jobkey, id, member, score, now, lease)
  local g = redis.call('HGET', jobkey, 'group')
  if not g or g == '' then return true end
  local room = group_room_of[g]
  local G = group_helpers()
  if room == nil then room, group_until_of[g] = G.group_room(g, now) end
  if room == 0 then
    group_room_of[g] = 0
    G.park(g, member, score, group_until_of[g])
    parked_now = true
    return false
  end
  G.group_started(g, id, now, lease)
  -- the group's last slot: read again for its next job, to learn when
  -- its rate lets it start again (this start now in its log)
  if room > 1 then group_room_of[g] = room - 1 else group_room_of[g] = nil end
  return true
end

-- group_held turns out, the reply of a lease that leased fewer than max
-- jobs, into LIMITED when groups at their limit hold jobs back, with the
-- earliest time one's rate lets it start (or the type's until, when
-- earlier).
local function group_held(out, now)
  local at, any = group_helpers().group_wait(now)
  if not any and not parked_now then return out end
  if out[1] ~= LIMITED then
    table.insert(out, 1, LIMITED)
    table.insert(out, 2, at)
  elseif at > 0 and (out[2] == 0 or at < out[2]) then
    out[2] = at
  end
  return out
end

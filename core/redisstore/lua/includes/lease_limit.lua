-- How a lease honours its type's policy (DESIGN §10.1): the one copy,
-- shared by lease and lease_head. A type without a concurrency or a rate
-- costs a lease nothing here beyond the field limited, which the lease
-- reads in the same HMGET as paused (lease_flags).
--@include type_keys.lua
--@include many.lua

-- lease_flags reads whether the type is paused and whether it is limited,
-- in one call.
local function lease_flags()
  local f = redis.call('HMGET', K_STATS, 'paused', 'limited')
  return f[1] == '1', f[2] == '1'
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

-- How a type's group limits hold (DESIGN §10.1, docs/policy.md): at most
-- group_concurrency active jobs of one group, at most group_rate_limit
-- starts of one group in any window of group_rate_per ms. The one copy,
-- shared by the lease scripts (which park a limited group's jobs) and by
-- every path by which a job leaves active (which frees its group's slot).
--
-- A limited group's ready jobs leave ready for its parked set when a lease
-- meets them at the head, so that no lease scans past them: a lease costs
-- O(log n) per job it leases or parks, whatever the number of groups. The
-- keys, siblings of ready with its hash tag (so in the type's slot):
--   gactive:<g>  SET   ids of the group's active jobs that hold a slot
--   gstarts:<g>  ZSET  the group's log of starts (score: unix ms), for group_rate
--   parked:<g>   ZSET  the group's parked ready jobs: their member and score of ready
--   gwake        ZSET  the groups with parked jobs: score, when a lease is to
--                      try to take them back (unix ms; +inf: when a job of
--                      the group leaves active)
-- The type's stats hash gets the flag glimited once it has had group
-- limits (type_set.lua; it stays, so that the slots and parked jobs of a
-- limit since dropped are still freed and taken back), and the field
-- parked, how many of its jobs are parked. A type that never had group
-- limits pays one HGET of that flag per script run on the paths that
-- leave active, and nothing in a lease: the lease reads the flag in the
-- HMGET of paused (lease_flags).
--@include type_keys.lua

-- type_grouplimited says whether the type has had group limits (its
-- flag glimited), read once per script run
local glimited = nil
local function type_grouplimited()
  if glimited == nil then glimited = redis.call('HGET', K_STATS, 'glimited') == '1' end
  return glimited
end

-- group_helpers gives the helpers of a type with group limits: its
-- leases (lease_limit.lua, group_wake.lua) and its jobs leaving active or
-- parked (below). They are made at their first use in a script run, not
-- at every run of every script that includes this file: each Lua function
-- is a closure made again per run, and these eleven cost a lone create,
-- which uses none, 13 000 of its 198 000 instructions
-- (docs/benchmarks-log.md).
local helpers = nil
local function group_helpers()
  if helpers then return helpers end
  local K_GWAKE = TYPE_BASE .. 'gwake'
  local function gactive_key(g) return TYPE_BASE .. 'gactive:' .. g end
  local function gstarts_key(g) return TYPE_BASE .. 'gstarts:' .. g end
  local function parked_key(g) return TYPE_BASE .. 'parked:' .. g end

  -- group_policy reads the type's group limits once per script run:
  -- {concurrency, rate_limit, rate_per}, each false when not set
  local gpolicy = nil
  local function group_policy()
    if gpolicy == nil then
      local p = redis.call('HMGET', TYPE_BASE .. 'policy', 'group_concurrency', 'group_rate_limit', 'group_rate_per')
      gpolicy = {tonumber(p[1]) or false, tonumber(p[2]) or false, tonumber(p[3]) or false}
    end
    return gpolicy
  end

  -- group_room says how many more jobs group g may start at now, and, when
  -- its rate binds, when its next start may be (unix ms; else 0).
  local function group_room(g, now)
    local p = group_policy()
    local room, until_ = math.huge, 0
    if p[1] then room = p[1] - redis.call('SCARD', gactive_key(g)) end
    if p[2] then
      local k = gstarts_key(g)
      redis.call('ZREMRANGEBYSCORE', k, '-inf', now - p[3])
      local used = redis.call('ZCARD', k)
      if p[2] - used <= room then
        room = p[2] - used
        if room <= 0 then
          until_ = tonumber(redis.call('ZRANGE', k, 0, 0, 'WITHSCORES')[2]) + p[3]
        end
      end
    end
    return math.max(room, 0), until_
  end

  -- group_limits says whether the type's policy has a group limit now.
  local function group_limits()
    local p = group_policy()
    return p[1] ~= false or p[2] ~= false
  end

  -- group_started counts a start of job id of group g under lease: a slot of
  -- its concurrency (a member of gactive:<g> until it leaves active), an
  -- entry in its log of starts.
  local function group_started(g, id, now, lease)
    local p = group_policy()
    if p[1] then redis.call('SADD', gactive_key(g), id) end
    if p[2] then redis.call('ZADD', gstarts_key(g), now, lease .. ':' .. id) end
  end

  -- park takes member (score score, already out of ready) of group g into
  -- the group's parked set; the group waits in gwake until at (0: until a
  -- job of it leaves active).
  local function park(g, member, score, at)
    redis.call('ZADD', parked_key(g), score, member)
    redis.call('HINCRBY', K_STATS, 'parked', 1)
    if at > 0 then
      redis.call('ZADD', K_GWAKE, 'LT', at, g)
    else
      redis.call('ZADD', K_GWAKE, 'NX', '+inf', g)
    end
  end

  -- unpark moves up to n of group g's parked jobs back into ready, with
  -- the member and score they had there (so at the place they held), and
  -- says whether any stay parked.
  local function unpark(g, n)
    local k = parked_key(g)
    local back = redis.call('ZRANGE', k, 0, n - 1, 'WITHSCORES')
    if #back > 0 then
      local add = {}
      for i = 1, #back, 2 do add[#add + 1], add[#add + 2] = back[i + 1], back[i] end
      redis.call('ZADD', K_READY, unpack(add))
      redis.call('ZREMRANGEBYRANK', k, 0, #back / 2 - 1)
      redis.call('HINCRBY', K_STATS, 'parked', -#back / 2)
    end
    if redis.call('EXISTS', k) == 0 then
      redis.call('ZREM', K_GWAKE, g)
      return false
    end
    return true
  end

  -- wake_groups, at the start of a lease: the groups whose wait ended by
  -- now (their rate's window moved, or a job of theirs left active) get as
  -- many parked jobs back in ready as they may start (at most 1000 each: a
  -- group of a limit since dropped comes back over several leases); a group
  -- that may start none waits on. At most 64 groups a lease: the next lease
  -- takes the rest.
  local function wake_groups(now)
    local due = redis.call('ZRANGEBYSCORE', K_GWAKE, '-inf', now, 'LIMIT', 0, 64)
    for _, g in ipairs(due) do
      local room, until_ = group_room(g, now)
      room = math.min(room, 1000)
      if room > 0 and unpark(g, room) then
        -- some stay parked: the next lease looks again, once those taken
        -- back had their chance to start (it then finds when to wait till)
        redis.call('ZADD', K_GWAKE, now, g)
      elseif room == 0 then
        if until_ > 0 then redis.call('ZADD', K_GWAKE, until_, g) else redis.call('ZADD', K_GWAKE, '+inf', g) end
      end
    end
  end

  -- group_wait says when the earliest parked group's rate lets it start
  -- again (unix ms; 0 when none waits on a rate), and whether any group
  -- waits at all: for a lease that leased fewer than asked.
  local function group_wait(now)
    local first = redis.call('ZRANGE', K_GWAKE, 0, 0, 'WITHSCORES')
    if not first[1] then return 0, false end
    local at = tonumber(first[2])
    if at == math.huge then return 0, true end
    return math.max(at, now + 1), true
  end

  helpers = {K_GWAKE = K_GWAKE, gactive_key = gactive_key, parked_key = parked_key, group_room = group_room,
    group_limits = group_limits, group_started = group_started, park = park, wake_groups = wake_groups,
    group_wait = group_wait}
  return helpers
end

-- group_left frees the slot the job at jobkey held in its group, as it
-- leaves active: the group is due in gwake, for the next lease to take
-- its parked jobs back.
local function group_left(jobkey, id)
  if not type_grouplimited() then return end
  local g = redis.call('HGET', jobkey, 'group')
  if not g or g == '' then return end
  local G = group_helpers()
  if redis.call('SREM', G.gactive_key(g), id) == 1 then
    redis.call('ZADD', G.K_GWAKE, 'XX', 0, g)
  end
end

-- unpark_job takes an inactive job that is not in ready (member) out of
-- its group's parked set, as it leaves inactive (indexes.lua leave).
local function unpark_job(jobkey, member)
  if not type_grouplimited() then return end
  local g = redis.call('HGET', jobkey, 'group')
  if not g or g == '' then return end
  local G = group_helpers()
  local k = G.parked_key(g)
  if redis.call('ZREM', k, member) == 1 then
    redis.call('HINCRBY', K_STATS, 'parked', -1)
    if redis.call('EXISTS', k) == 0 then redis.call('ZREM', G.K_GWAKE, g) end
  end
end

-- rescore_inactive gives an inactive job (its member in ready) a new
-- score: in ready, or in its group's parked set when its group's limit
-- parked it (set_priority.lua, aging_rerank.lua). XX: the job stays
-- where it is.
local function rescore_inactive(jobkey, member, score)
  if redis.call('ZADD', K_READY, 'XX', 'CH', score, member) == 1 or not type_grouplimited() then return end
  local g = redis.call('HGET', jobkey, 'group')
  if g and g ~= '' then redis.call('ZADD', group_helpers().parked_key(g), 'XX', score, member) end
end

-- The order of a type's ready and due indexes: a job's member and score
-- in each, as a new job takes them (includes/new_job.lua) and as
-- indexes.lua's moves do. Apart from indexes.lua so that a create makes
-- only these helpers per run: each Lua function is a closure made again
-- at every run of a script (docs/benchmarks-log.md).
--@include type_keys.lua

-- a job's member in ready: "<seq, 16 digits>:<id>", seq a number of the
-- type's seq counter, so that jobs of one priority sort in the order they
-- entered ready (the one place that builds it; readyID in Go reads it)
local function ready_member_at(seq, id)
  return string.format('%016d', seq) .. ':' .. id
end
-- A job's score in ready is its priority; for a type with aging (its
-- stats field aging, ms of credit per step of priority, which
-- type_set.lua keeps), it is created_at + priority × aging: the job ranks
-- as if created priority × aging ms later (DESIGN §10.1). Whether the
-- type has aging, and whether it ever had a job with a group (its stats
-- field grouped, see group_tag), is read once per run of a script, when a
-- job first enters ready: a type with neither pays that one HMGET.
-- aging_per false: no aging.
local aging_per, grouped = nil, false
local function type_aging()
  if aging_per == nil then
    local f = redis.call('HMGET', K_STATS, 'aging', 'grouped')
    aging_per, grouped = tonumber(f[1]) or false, f[2] == '1'
  end
  return aging_per
end

-- Groups (DESIGN §10.1): a job's member in ready starts with a number,
-- the order among jobs of one score. A job without a group takes the
-- type's next seq: the back of the line. A job of group g takes, as in
-- start-time fair queuing, max(V, last_g) + 1, where V is the number of
-- the job at the head of ready less one (how far the line has moved) and
-- last_g the number the group's previous job took (the stats field
-- "g:<group>"): a group's first job goes near the head, each next one of
-- the same group one turn later, so among the ready jobs of one score the
-- groups take turns, and a group's backlog never starves another. It
-- costs a create or a re-entry of a grouped job one ZRANGE and one HGET
-- and HSET; a lease pays nothing (it takes the head of ready as always).
local function group_tag(group)
  local head = redis.call('ZRANGE', K_READY, 0, 0)[1]
  local v = 0
  if head then v = (tonumber(string.match(head, '^(%d+):')) or 1) - 1 end
  local field = 'g:' .. group
  local tag = math.max(v, tonumber(redis.call('HGET', K_STATS, field)) or 0) + 1
  redis.call('HSET', K_STATS, field, tag)
  if not grouped then
    redis.call('HSET', K_STATS, 'grouped', '1')
    grouped = true
  end
  return tag
end
-- ready_score is the score of a job of priority created at created_at (a
-- function returning it, called only for a type with aging)
local function ready_score(priority, created_at)
  local per = type_aging()
  if not per then return priority end
  if type(created_at) == 'function' then created_at = created_at() end
  return (tonumber(created_at) or 0) + tonumber(priority) * per
end
-- a job's member in due: its id zero-padded to 19 digits (the width of the
-- largest int64), so that jobs due at the same millisecond sort by id, which
-- is their creation order, not by the text of their ids ("10" < "2").
-- The one place that builds it; parseIDs and memberID in Go read it.
local function due_member(id)
  id = tostring(id)
  return string.rep('0', 19 - #id) .. id
end

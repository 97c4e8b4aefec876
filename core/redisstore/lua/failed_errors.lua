-- failed_errors: the failed jobs of one type grouped by error (their last
-- attempt's error, grouped by includes/error_group.lua), the newest
-- failures first, at most limit of them. It writes nothing: a read, in Lua
-- so that the errors are grouped inside Redis and only the groups come
-- back, however many jobs were read.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, the template of a job's key
--
-- ARGV[1]    limit  how many of the newest failed jobs to read
--
-- Reply: {failed, read, group...}: how many jobs the failed index holds,
-- how many were read (at most limit), then per group, in the order its
-- newest job was read, {group, sample, count, first, last, id}: sample is
-- the error of the group's newest job (its first SAMPLE_MAX bytes), first and last the oldest and
-- newest failed_at (unix ms) among its jobs, id the newest job's id.
-- Events: none.
--@include type_keys.lua
--@include error_group.lua

local SAMPLE_MAX = 1024
local limit = tonumber(ARGV[1])
local base = key_base(KEYS[11])
local ids = redis.call('ZREVRANGE', K_FAILED, 0, limit - 1)
local groups, order = {}, {}
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', base .. id, 'error', 'failed_at', 'updated_at')
  local at = tonumber(f[2] or f[3]) or 0
  local name = error_group(f[1] or '')
  local g = groups[name]
  if not g then
    g = {name, cut_utf8(f[1] or '', SAMPLE_MAX), 0, at, at, tonumber(id)}
    groups[name] = g
    order[#order + 1] = g
  end
  g[3] = g[3] + 1
  if at < g[4] then g[4] = at end
  if at > g[5] then g[5] = at end
end
local out = {redis.call('ZCARD', K_FAILED), #ids}
for _, g in ipairs(order) do out[#out + 1] = g end
return out

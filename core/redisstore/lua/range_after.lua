-- range_after: the members of one index that come after a place in its
-- order, for a range by cursor (query.go). It writes nothing: a read, in
-- Lua so that finding the place costs one round trip whatever the index
-- holds.
--
-- The place is a score and a member (includes/place.lua finds it, in
-- O(log² n)).
--
-- KEYS[1]  the index (a ZSET of one type: ready, due, leases, jobs,
--          complete, failed or cancelled)
--
-- ARGV[1]  score   the place's score, as Go formats a float64
-- ARGV[2]  member  the place's member
-- ARGV[3]  desc    "1": after in the reversed order (lower places)
-- ARGV[4]  limit   how many members at most
--
-- Reply: {member, score, member, score, ...}, up to limit, in the order
-- asked, nearest the place first.
-- Events: none.
--@include place.lua

local key, score, member = KEYS[1], ARGV[1], ARGV[2]
local desc, limit = ARGV[3] == '1', tonumber(ARGV[4])

local lt, at = place_in(key, score, member)

if desc then
  -- The members before the place, from the nearest: reversed ranks
  -- card-lt on.
  if lt == 0 then return {} end
  local start = redis.call('ZCARD', key) - lt
  return redis.call('ZREVRANGE', key, start, start + limit - 1, 'WITHSCORES')
end
local start = lt + at
return redis.call('ZRANGE', key, start, start + limit - 1, 'WITHSCORES')

-- range_after: the members of one index that come after a place in its
-- order, for a range by cursor (query.go). It writes nothing: a read, in
-- Lua so that finding the place costs one round trip whatever the index
-- holds.
--
-- An index orders by score, then by member as bytes. The place is a score
-- and a member, which need not be in this index (the cursor's job may be
-- of another type, or may have moved): it is found by counting the
-- members of lower score (ZCOUNT) and, among those of equal score, by a
-- binary search over ranks, O(log² n) in all.
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

local key, score, member = KEYS[1], ARGV[1], ARGV[2]
local desc, limit = ARGV[3] == '1', tonumber(ARGV[4])

-- less tells whether a sorts before b as bytes, as Redis orders the
-- members of equal score (Lua's < follows the locale).
local function less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- lt: how many members come before the place. The members of equal score
-- hold ranks lo .. hi-1.
local lo = redis.call('ZCOUNT', key, '-inf', '(' .. score)
local hi = redis.call('ZCOUNT', key, '-inf', score)
local a, b = lo, hi
while a < b do
  local mid = math.floor((a + b) / 2)
  local m = redis.call('ZRANGE', key, mid, mid)[1]
  if less(m, member) then a = mid + 1 else b = mid end
end
local lt = a
local at = 0 -- 1 when the place's own member is at rank lt
if lt < hi and redis.call('ZRANGE', key, lt, lt)[1] == member then at = 1 end

if desc then
  -- The members before the place, from the nearest: reversed ranks
  -- card-lt on.
  if lt == 0 then return {} end
  local start = redis.call('ZCARD', key) - lt
  return redis.call('ZREVRANGE', key, start, start + limit - 1, 'WITHSCORES')
end
local start = lt + at
return redis.call('ZRANGE', key, start, start + limit - 1, 'WITHSCORES')

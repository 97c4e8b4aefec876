-- Where a place falls in an index: a score and a member, as a cursor holds
-- them (core.RangeCursor, core.SearchCursor, the aging walk's). An index
-- orders by score, then by member as bytes. The place need not be in the
-- index (the cursor's job may be of another type, or may have moved): it
-- is found by counting the members of lower score (ZCOUNT) and, among
-- those of equal score, by a binary search over ranks, O(log² n) in all.
-- So a walk by place neither skips nor repeats a member when many share a
-- score, where a walk by score alone would.

-- bytes_less tells whether a sorts before b as bytes, as Redis orders the
-- members of equal score (Lua's < follows the locale).
local function bytes_less(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- place_in returns lt, how many members of key come before the place
-- (score, member), and at, 1 when the place's own member is at rank lt
-- (else 0): the members after the place start at rank lt + at.
local function place_in(key, score, member)
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. score)
  local hi = redis.call('ZCOUNT', key, '-inf', score)
  local a, b = lo, hi
  while a < b do
    local mid = math.floor((a + b) / 2)
    local m = redis.call('ZRANGE', key, mid, mid)[1]
    if bytes_less(m, member) then a = mid + 1 else b = mid end
  end
  local at = 0
  if a < hi and redis.call('ZRANGE', key, a, a)[1] == member then at = 1 end
  return a, at
end

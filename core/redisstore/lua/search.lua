-- search: which of the given jobs of one type match a text. It writes
-- nothing: a read, in Lua so that the jobs' data is matched inside Redis
-- and only the rows that match come back. The store picks the candidates
-- (ids of the type's jobs index, in id order, from a cursor on) and bounds
-- how many one call looks at.
--
-- A job matches when its id, its unique key or its data (the JSON text as
-- stored) contains q, ASCII letters compared without case (any job when q
-- is ""), and its error passes the error filters, as bulk.lua's.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[10+i]      job:<id_i>
--
-- ARGV[1]    q      the text; "" any
-- ARGV[2]    state  only jobs in this state; "" any
-- ARGV[3]    limit  stop after this many matches
-- ARGV[4]    error  "" or a text the job's error must contain (as is)
-- ARGV[5]    group  "" or the group (includes/error_group.lua) the job's
--                   error must be in
-- ARGV[5+i]  id_i   a candidate's id, ascending
--
-- Reply: {last, row...}: the id of the last candidate looked at (the
-- search goes on after it), then the row of each match, without data.
-- Events: none.
--@include type_keys.lua
--@include row_gen.lua
--@include error_group.lua

local q, state, limit = string.lower(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local err, group = ARGV[4], ARGV[5]
local function has(s)
  return s and s ~= '' and string.find(string.lower(s), q, 1, true) ~= nil
end
local out = {0}
for i = 6, #ARGV do
  local id, jobkey = ARGV[i], KEYS[5 + i] -- KEYS[10+j], j = i-5
  out[1] = tonumber(id)
  local row = snapshot(jobkey)
  if row[ROW_ID] and (state == '' or row[ROW_STATE] == state)
    and (err == '' or string.find(row[ROW_ERROR] or '', err, 1, true))
    and (group == '' or error_group(row[ROW_ERROR] or '') == group) then
    if q == '' or has(id) or has(row[ROW_UNIQUE_KEY]) or has(redis.call('HGET', jobkey, 'data')) then
      out[#out + 1] = row
      if #out - 1 >= limit then break end
    end
  end
end
return out

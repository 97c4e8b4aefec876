-- search: which jobs of one type match a text, among those that come after
-- a place in the type's jobs index (creation order,
-- includes/jobs_order.lua). It writes nothing: a read, in Lua so that the
-- candidates are picked and their data matched inside Redis, in one round
-- trip, and only the rows that match come back. The store bounds how many
-- one call looks at (the budget) and goes on from the place of the last.
--
-- A job matches when its id, its unique key or its data (the JSON text as
-- stored) contains q, ASCII letters compared without case (any job when q
-- is ""), and its error passes the error filters, as bulk.lua's.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, the template of each job's key (key_base)
--
-- ARGV[1]  q       the text; "" any
-- ARGV[2]  state   only jobs in this state; "" any
-- ARGV[3]  limit   stop after this many matches, >= 1
-- ARGV[4]  error   "" or a text the job's error must contain (as is)
-- ARGV[5]  group   "" or the group (includes/error_group.lua) the job's
--                  error must be in
-- ARGV[6]  score   the place to go on after: its score in jobs ("": from
--                  the first job; includes/place.lua finds it)
-- ARGV[7]  member  the place's member (a job id)
-- ARGV[8]  budget  how many jobs to look at, at most, >= 1
--
-- Reply: {done, looked, member, score, score_1, row_1, score_2, row_2...}:
-- done 1 when no job of the type is left after the last one looked at;
-- looked, how many were; member and score, the place of the last one
-- (false when none was); then each match's score in jobs and its row,
-- without data.
-- Events: none.
--@include type_keys.lua
--@include row_gen.lua
--@include error_group.lua
--@include place.lua

local q, state, limit = string.lower(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local err, group, budget = ARGV[4], ARGV[5], tonumber(ARGV[8])
local base = key_base(KEYS[11])
local function has(s)
  return s and s ~= '' and string.find(string.lower(s), q, 1, true) ~= nil
end
local start = 0
if ARGV[6] ~= '' then
  local lt, at = place_in(K_JOBS, ARGV[6], ARGV[7])
  start = lt + at
end
local got = redis.call('ZRANGE', K_JOBS, start, start + budget - 1, 'WITHSCORES')
local out, looked, matched = {1, 0, false, false}, 0, 0
for i = 1, #got, 2 do
  local id, jobkey = got[i], base .. got[i]
  looked = looked + 1
  out[3], out[4] = id, got[i + 1]
  local row = snapshot(jobkey)
  if row[ROW_ID] and (state == '' or row[ROW_STATE] == state)
    and (err == '' or string.find(row[ROW_ERROR] or '', err, 1, true))
    and (group == '' or error_group(row[ROW_ERROR] or '') == group) then
    if q == '' or has(id) or has(row[ROW_UNIQUE_KEY]) or has(redis.call('HGET', jobkey, 'data')) then
      out[#out + 1], out[#out + 2] = got[i + 1], row
      matched = matched + 1
      if matched >= limit then break end
    end
  end
end
out[2] = looked
-- done: every job after the place was looked at
if looked == budget or (matched >= limit and 2 * looked < #got) then out[1] = 0 end
return out

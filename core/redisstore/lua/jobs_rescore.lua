-- jobs_rescore: give the jobs of one type that an earlier version entered
-- in its jobs index by id (score = member = id) their place in creation
-- order (includes/jobs_order.lua): score created_at × 1000 + k, k the
-- id's last three digits (id mod 1000), which orders the jobs of one
-- call of one type as their place did (a call's ids rise). At most limit
-- jobs a call: the leader's cleaner runs it beside each clean, until a
-- call finds none. Such a job's score is below JOBS_ORDER_OLD, and any
-- new job's is above it, so the read finds only the old ones. A job whose
-- hash is gone (it should not be: remove.lua drops both) takes the score
-- JOBS_ORDER_OLD: older than any job with a time. A job created with a
-- clock before 2001-09-09 (a test's made-up clock) has a score below
-- JOBS_ORDER_OLD too, but not its id: it is looked at and left as it is.
-- Running it twice changes nothing.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, the template of each job's key (key_base)
--
-- ARGV[1]  limit  how many jobs to look at, at most, >= 1
--
-- Reply: {moved, looked}: how many jobs took their creation score, and
-- how many were looked at (limit: more may be left).
-- Events: none.
--@include type_keys.lua
--@include jobs_order.lua

local base, limit = key_base(KEYS[11]), tonumber(ARGV[1])
local old = redis.call('ZRANGEBYSCORE', K_JOBS, '-inf', '(' .. JOBS_ORDER_OLD, 'WITHSCORES', 'LIMIT', 0, limit)
local moves = {}
for i = 1, #old, 2 do
  local id = old[i]
  if tonumber(old[i + 1]) == tonumber(id) then -- as an earlier version entered it
    local created = redis.call('HGET', base .. id, 'created_at')
    moves[#moves + 1] = created and jobs_score(created, tonumber(id) % 1000) or JOBS_ORDER_OLD
    moves[#moves + 1] = id
  end
end
if #moves > 0 then redis.call('ZADD', K_JOBS, 'XX', unpack(moves)) end
return {#moves / 2, #old / 2}

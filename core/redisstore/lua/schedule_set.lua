-- schedule_set: create or replace a schedule of job type T. A schedule
-- whose timing (cron, every, tz) and pause are unchanged keeps its next
-- tick, so that setting the same schedules again (a deploy) shifts
-- nothing; otherwise its next tick is the one given. last_at is kept
-- either way: it guards against firing a tick twice. rev is the next
-- value of the type's schedule_rev counter, so a fire that read the
-- schedule before this set does nothing, also when the schedule was
-- removed and set again in between (the counter is not removed).
--
-- KEYS[1] schedules       ZSET of type T: name → next_at (+inf while paused)
-- KEYS[2] schedule:<name> HASH of type T: the schedule (includes/schedule_gen.lua)
-- KEYS[3] schedule_rev    STRING of type T: the revs of its schedules' sets
--
-- ARGV[1] name  ARGV[2] type  ARGV[3] cron  ARGV[4] every  ARGV[5] tz
-- ARGV[6] spec (JSON)  ARGV[7] paused ("1" or "0")
-- ARGV[8] next_at: the first tick after now (0 when paused)  ARGV[9] now
--
-- Reply: the schedule's row (includes/schedule_gen.lua).
-- Events: the service publishes queue.due with next_at, so that a
-- sleeping leader wakes for a tick earlier than it knew of.
--@include schedule_gen.lua

local old = redis.call('HMGET', KEYS[2], 'cron', 'every', 'tz', 'paused', 'next_at', 'created_at')
local next_at, created = ARGV[8], ARGV[9]
if old[6] then
  created = old[6]
  local same = old[1] == ARGV[3] and old[2] == ARGV[4] and old[3] == ARGV[5]
  if same and old[4] ~= '1' and ARGV[7] ~= '1' and old[5] then next_at = old[5] end
end
redis.call('HSET', KEYS[2], 'name', ARGV[1], 'type', ARGV[2], 'cron', ARGV[3], 'every', ARGV[4],
  'tz', ARGV[5], 'spec', ARGV[6], 'paused', ARGV[7], 'next_at', next_at, 'created_at', created,
  'updated_at', ARGV[9])
redis.call('HSET', KEYS[2], 'rev', redis.call('INCR', KEYS[3]))
if ARGV[7] == '1' then
  redis.call('ZADD', KEYS[1], '+inf', ARGV[1])
else
  redis.call('ZADD', KEYS[1], next_at, ARGV[1])
end
return schedule_row(KEYS[2])

-- fire_schedule: fire one tick of a schedule of job type T, at most once
-- and never early. The tick fires only when it is not after now, the
-- schedule still exists, is not paused, has the rev it was read with (no
-- set came in between), and its last fired tick is before this one.
-- Then, in this one script, the tick's job is written by new_job
-- (includes/new_job.lua, the one copy of how a job is written; Go marks it
-- with the schedule and the tick, its schedule and schedule_at fields),
-- and the schedule's last_at and next_at move on. So two leaders firing the same tick, or a leader that
-- fires again after losing the reply, create one job.
--
-- KEYS[1..10] the type's keys (includes/type_keys.lua)
-- KEYS[11]    schedules        ZSET of type T: name → next_at
-- KEYS[12]    schedule:<name>  HASH of type T: the schedule
-- KEYS[13]    job:<id>         the new job's hash
--
-- ARGV[1] name  ARGV[2] rev  ARGV[3] tick (unix ms)
-- ARGV[4] next_at: the first tick after now  ARGV[5] now (unix ms)
-- ARGV[6] the job's place among the jobs its core created in that ms,
--         which orders it in jobs (includes/jobs_order.lua)
-- ARGV[7..] the new job: the SHARED values, then its OWN and SPARSE
--           values (includes/new_job_gen.lua), as create_jobs takes them
--
-- Reply (codes: includes/codes_gen.lua): SKIPPED when the tick did not
-- fire (not come yet, gone, paused, changed, or fired already); DONE when
-- it fired and stored the job as given; DUPLICATE when it fired but made
-- no job: an unfinished job has the spec's unique key.
-- Events: the service publishes job.enqueue.<id>.<type> for a stored job
-- (and queue.due when it is delayed).
--@include new_job.lua
--@include jobs_order.lua

local name, tick = ARGV[1], tonumber(ARGV[3])
-- A tick read as due may be one another leader has fired since: its
-- schedule then says the next tick, which is not due yet.
if tick > tonumber(ARGV[5]) then return SKIPPED end
local s = redis.call('HMGET', KEYS[12], 'rev', 'paused', 'last_at')
if s[1] ~= ARGV[2] or s[2] == '1' or tonumber(s[3] or '0') >= tick then
  return SKIPPED
end
local id = ARGV[6 + SHARED_COUNT + OWN_ID]
-- created_at is the second SHARED value (new_job_gen.lua's list)
local b = new_jobs({jobs_score(ARGV[6 + 2], tonumber(ARGV[6])), id})
local code = new_job(b, 1, KEYS[13], 6, 6 + SHARED_COUNT)
store_new_jobs(b)
if code == REPEATED then
  return redis.error_reply('fire_schedule: job ' .. id .. ' exists already')
end
redis.call('HSET', KEYS[12], 'last_at', ARGV[3], 'next_at', ARGV[4])
redis.call('ZADD', KEYS[11], ARGV[4], name)
return code

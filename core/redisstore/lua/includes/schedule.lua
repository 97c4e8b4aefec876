-- A schedule's row: its hash fields in the order of SCHED, what the
-- schedule scripts reply and Go decodes by position (scheduleFields in
-- schedule.go reads this list from this file when the package loads).
--
-- spec is the job spec as JSON; paused is "1" while paused; next_at and
-- last_at are unix ms (next_at "0" while paused); rev is new with each set
-- (schedule_set.lua), so a tick read before a set is not fired after it
-- (fire_schedule.lua).
local SCHED = {'name', 'type', 'cron', 'every', 'tz', 'spec', 'paused', 'next_at', 'last_at',
  'created_at', 'updated_at', 'rev'}

local function schedule_row(key)
  return redis.call('HMGET', key, unpack(SCHED))
end

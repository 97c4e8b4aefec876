-- schedule_remove: delete a schedule of job type T. The jobs it made stay.
--
-- KEYS[1] schedules       ZSET of type T: name → next_at
-- KEYS[2] schedule:<name> HASH of type T: the schedule
--
-- ARGV[1] name
--
-- Reply: 1 when it was there, 0 when not.
-- Events: none.
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('DEL', KEYS[2])

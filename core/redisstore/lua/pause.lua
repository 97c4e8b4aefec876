-- pause: pause or resume one job type. A paused type keeps its jobs and
-- takes new ones, but lease.lua hands none out until it is resumed. The
-- flag lives in the type's own stats hash, so that lease.lua reads it
-- without a key of another slot.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
--
-- ARGV[1]  paused  "1" to pause, "0" to resume
--
-- Reply (includes/codes_gen.lua): DONE when the type changed, UNCHANGED
-- when it was so already.
-- Events: the service publishes queue.pause or queue.resume when it
-- changed, and nothing when it did not.
--@include type_keys.lua
--@include codes_gen.lua

local want = ARGV[1] == '1'
local was = redis.call('HGET', K_STATS, 'paused') == '1'
if want == was then return UNCHANGED end
if want then
  redis.call('HSET', K_STATS, 'paused', '1')
else
  redis.call('HDEL', K_STATS, 'paused')
end
return DONE

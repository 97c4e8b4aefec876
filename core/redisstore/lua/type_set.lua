-- type_set: store a job type's policy, replacing the one it had (DESIGN
-- §10.1). The whole policy is kept as JSON for type_get; the numbers the
-- lease scripts act on are kept as fields of their own, each only when
-- set, and the type's stats hash gets the flag limited while a
-- concurrency or a rate is set: a lease of a type without one reads that
-- flag alone, in the HMGET that reads paused (includes/lease_limit.lua).
-- A type whose rate is dropped loses its log of starts.
--
-- KEYS[1] stats   HASH of type T (keys.go): limited "1" or absent; aging
-- KEYS[2] policy  HASH of type T: the policy
-- KEYS[3] starts  ZSET of type T: the log of starts for the rate
--
-- ARGV[1] json         the policy as type_get answers it; "" for none
-- ARGV[2] concurrency  ARGV[3] rate_limit  ARGV[4] rate_per (ms)
-- ARGV[5] aging        ms of credit per step of priority
-- ARGV[6] group_concurrency  ARGV[7] group_rate_limit
-- ARGV[8] group_rate_per (ms)
--                      each "0" when not set
--
-- Group limits (includes/group_limit.lua) set the stats flag glimited,
-- which stays once set, and every group that has parked jobs is due in
-- gwake (a sibling of policy), so that the next lease takes back what the
-- new limits allow.
--
-- The type's aging goes into its stats hash too (aging), where every
-- script that puts a job in ready reads it (includes/indexes.lua).
--
-- Reply (includes/codes_gen.lua): DONE when the type's aging changed (the
-- caller then re-ranks its ready jobs: aging_rerank.lua), UNCHANGED when
-- it did not.
-- Events: none.
--@include codes_gen.lua

local concurrency, rate_limit = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('DEL', KEYS[2])
if ARGV[1] ~= '' then redis.call('HSET', KEYS[2], 'json', ARGV[1]) end
if concurrency > 0 then redis.call('HSET', KEYS[2], 'concurrency', concurrency) end
if rate_limit > 0 then
  redis.call('HSET', KEYS[2], 'rate_limit', rate_limit, 'rate_per', ARGV[4])
else
  redis.call('DEL', KEYS[3])
end
local gconcurrency, grate_limit = tonumber(ARGV[6]), tonumber(ARGV[7])
if gconcurrency > 0 then redis.call('HSET', KEYS[2], 'group_concurrency', gconcurrency) end
if grate_limit > 0 then redis.call('HSET', KEYS[2], 'group_rate_limit', grate_limit, 'group_rate_per', ARGV[8]) end
if gconcurrency > 0 or grate_limit > 0 then redis.call('HSET', KEYS[1], 'glimited', '1') end
local k_gwake = string.sub(KEYS[2], 1, -7) .. 'gwake' -- "policy" -> "gwake"
local parked = redis.call('ZRANGE', k_gwake, 0, -1)
for _, g in ipairs(parked) do redis.call('ZADD', k_gwake, 0, g) end
if concurrency > 0 or rate_limit > 0 then
  redis.call('HSET', KEYS[1], 'limited', '1')
else
  redis.call('HDEL', KEYS[1], 'limited')
end
local aging = tonumber(ARGV[5])
local was = tonumber(redis.call('HGET', KEYS[1], 'aging')) or 0
if aging == was then return UNCHANGED end
if aging > 0 then
  redis.call('HSET', KEYS[1], 'aging', aging)
else
  redis.call('HDEL', KEYS[1], 'aging')
end
return DONE

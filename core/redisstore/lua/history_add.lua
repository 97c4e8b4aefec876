-- history_add: add one core's counts of one job type to the per-minute
-- history, kept a day. Each minute is a hash of its own in the type's slot.
--
-- KEYS[i]   history:<minute_i>  HASH of type T: created, completed, failed
--
-- ARGV[1]        ttl   seconds the minutes are kept
-- ARGV[2 + 3(i-1) .. 4 + 3(i-1)]  created_i, completed_i, failed_i: what to add
--
-- Reply: the number of minutes written.
-- Events: none.
local ttl = tonumber(ARGV[1])
for i = 1, #KEYS do
  local a = 2 + 3 * (i - 1)
  local key = KEYS[i]
  if ARGV[a] ~= '0' then redis.call('HINCRBY', key, 'created', ARGV[a]) end
  if ARGV[a + 1] ~= '0' then redis.call('HINCRBY', key, 'completed', ARGV[a + 1]) end
  if ARGV[a + 2] ~= '0' then redis.call('HINCRBY', key, 'failed', ARGV[a + 2]) end
  redis.call('EXPIRE', key, ttl)
end
return #KEYS

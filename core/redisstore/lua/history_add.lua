-- history_add: add one core's counts of one job type to the per-minute
-- history, kept a day, and to the per-hour history, kept eight days. Each
-- minute and each hour is a hash of its own in the type's slot. Counts add
-- up (HINCRBY), so every core's add to the same hash; waiting is a sample
-- of the queue's depth, not a count: the last one written stays (HSET).
--
-- KEYS[2i-1]  history:<minute_i>   HASH of type T (fields below)
-- KEYS[2i]    history:h<hour_i>    HASH of type T, the hour of minute_i
--
-- ARGV[1]  ttl_minute  seconds a minute is kept
-- ARGV[2]  ttl_hour    seconds an hour is kept
-- ARGV[3]  buckets     how many wait buckets each entry gives (n)
-- then per entry i, 5 + n values: created, completed, failed, started,
--          waiting (-1: no sample), and w0 .. w(n-1), the started jobs per
--          wait bucket (core.WaitBounds)
--
-- Fields written: created, completed, failed, started, waiting, w0..w(n-1);
-- a count of 0 is not written.
-- Reply: the number of minutes written.
-- Events: none.
local ttl_minute, ttl_hour, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local names = {'created', 'completed', 'failed', 'started'}
local stride = 5 + n
local entries = #KEYS / 2
for i = 1, entries do
  local a = 4 + stride * (i - 1)
  for _, key in ipairs({KEYS[2 * i - 1], KEYS[2 * i]}) do
    for f = 1, 4 do
      if ARGV[a + f - 1] ~= '0' then redis.call('HINCRBY', key, names[f], ARGV[a + f - 1]) end
    end
    if ARGV[a + 4] ~= '-1' then redis.call('HSET', key, 'waiting', ARGV[a + 4]) end
    for b = 0, n - 1 do
      if ARGV[a + 5 + b] ~= '0' then redis.call('HINCRBY', key, 'w' .. b, ARGV[a + 5 + b]) end
    end
  end
  redis.call('EXPIRE', KEYS[2 * i - 1], ttl_minute)
  redis.call('EXPIRE', KEYS[2 * i], ttl_hour)
end
return entries

-- heartbeat: note that a worker is alive, with what it says of itself, or
-- that it is gone; and forget the workers not heard from in a long while.
--
-- KEYS[1]  workers         HASH   worker id → its last heartbeat (JSON)
-- KEYS[2]  workers_seen    ZSET   worker id, score = when it was last heard
-- KEYS[3]  workers_silent  HASH   worker id → the seen score at which the
--                                 rescue found it silent (expire_leases.lua)
--
-- ARGV[1]  worker   its id
-- ARGV[2]  body     its heartbeat, JSON ("" when gone)
-- ARGV[3]  now      unix ms
-- ARGV[4]  forget   unix ms: workers last heard before it are dropped
--
-- Reply: the number of workers dropped as forgotten.
-- Events: none.
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
end
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4], 'LIMIT', 0, 100)
if #old > 0 then
  redis.call('HDEL', KEYS[1], unpack(old))
  redis.call('ZREM', KEYS[2], unpack(old))
  redis.call('HDEL', KEYS[3], unpack(old))
end
return #old

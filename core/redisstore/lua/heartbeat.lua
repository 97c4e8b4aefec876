-- heartbeat: note that a worker is alive, with what it says of itself, or
-- that it is gone; and forget the workers not heard from in a long while.
--
-- KEYS[1]  workers         HASH   worker id → its last heartbeat (JSON)
-- KEYS[2]  workers_seen    ZSET   worker id, score = when it was last heard
-- KEYS[3]  workers_silent  HASH   worker id → the seen score at which the
--                                 rescue found it silent (expire_leases.lua)
-- KEYS[4]  workers_instance HASH  worker id → the instance token of its
--                                 last heartbeat (never listed)
-- KEYS[5]  workers_clock   HASH   last: when any heartbeat was stored;
--                                 since: when the current unbroken run of
--                                 them began (no gap over ARGV[6])
--
-- ARGV[1]  worker    its id
-- ARGV[2]  body      its heartbeat, JSON without its instance ("" when gone)
-- ARGV[3]  now       unix ms
-- ARGV[4]  forget    unix ms: workers last heard before it are dropped
-- ARGV[5]  instance  the worker process's token, "" for none
-- ARGV[6]  gap       ms: a longer pause between any two heartbeats stored
--                    breaks the run (core or Redis could not store them)
--
-- Reply: the number of workers dropped as forgotten, or -1 (and nothing
-- changed) for a gone whose instance is not the one the worker's last
-- heartbeat gave: another process's.
-- Events: none.
local forget = {KEYS[1], KEYS[3], KEYS[4]} -- the hashes of a worker
if ARGV[2] == '' then
  local had = redis.call('HGET', KEYS[4], ARGV[1])
  if had and had ~= '' and had ~= ARGV[5] then return -1 end
  for _, k in ipairs(forget) do redis.call('HDEL', k, ARGV[1]) end
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[5])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  -- The run of heartbeats: a silence judged over a time in which none
  -- could be stored (Redis stalled, core down) would be everyone's.
  local now, clock = tonumber(ARGV[3]), redis.call('HMGET', KEYS[5], 'last', 'since')
  local last = tonumber(clock[1]) or 0
  if now - last > tonumber(ARGV[6]) then
    redis.call('HSET', KEYS[5], 'last', now, 'since', now)
  elseif now > last then
    redis.call('HSET', KEYS[5], 'last', now)
  end
end
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4], 'LIMIT', 0, 100)
if #old > 0 then
  for _, k in ipairs(forget) do redis.call('HDEL', k, unpack(old)) end
  redis.call('ZREM', KEYS[2], unpack(old))
end
return #old

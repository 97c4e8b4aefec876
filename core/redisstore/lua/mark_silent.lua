-- mark_silent: remember that the rescue found these workers silent at
-- their last heartbeat (ExpireSilent in workers.go), so that the next
-- rescue does not end their leases again for the same silence. A worker
-- heard from since (another seen score), or gone or forgotten meanwhile
-- (no seen score), is not marked: a mark for a heartbeat that is no longer
-- its last means nothing, and one for a worker heartbeat.lua has forgotten
-- would never be removed.
--
-- KEYS[1]  workers_seen    ZSET  worker id, score = when it was last heard
-- KEYS[2]  workers_silent  HASH  worker id → the seen score at which the
--                                rescue found it silent
--
-- ARGV[2i-1]  worker  a worker id
-- ARGV[2i]    seen    the seen score at which it was found silent, as
--                     ZSCORE gives it
--
-- Reply: how many workers were marked.
-- Events: none.
local marked = 0
for i = 1, #ARGV, 2 do
  local worker, seen = ARGV[i], ARGV[i + 1]
  if redis.call('ZSCORE', KEYS[1], worker) == seen then
    redis.call('HSET', KEYS[2], worker, seen)
    marked = marked + 1
  end
end
return marked

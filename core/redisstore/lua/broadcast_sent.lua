-- broadcast_sent: a core published these broadcast jobs of one type
-- (broadcast_take.lua): each leaves broadcasts and enters the complete
-- index at the time it completed (its updated_at), where retention and
-- the cleaner find it; one whose remove_on_complete is true (roc "1") is
-- deleted instead, with its log and error history, as complete.lua deletes
-- such a job. Running it twice changes nothing more: a job no longer in
-- broadcasts is skipped.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        broadcasts
-- KEYS[12..14]    job:0, log:0, errors:0: templates of each job's keys
--                 (key_base)
--
-- ARGV[i]  id_i  a published job's id
--
-- Reply: how many jobs left broadcasts.
-- Events: none (the service published them before).
--@include type_keys.lua
--@include remove.lua

local K_BROADCASTS = KEYS[11]
local jobs, logs, errs = key_base(KEYS[12]), key_base(KEYS[13]), key_base(KEYS[14])
local d, n = new_deletions(), 0
for _, id in ipairs(ARGV) do
  if redis.call('ZREM', K_BROADCASTS, id) == 1 then
    n = n + 1
    local jobkey = jobs .. id
    local v = redis.call('HMGET', jobkey, 'state', 'roc', 'updated_at')
    if v[1] == 'complete' then
      if v[2] == '1' then
        delete_later(d, jobkey, logs .. id, errs .. id, id)
      else
        redis.call('ZADD', K_COMPLETE, v[3], id)
      end
    end
  end
end
flush_deletions(d)
return n

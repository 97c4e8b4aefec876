-- broadcast_take: claim broadcast jobs of one type for a core to publish.
-- promote_due made them complete and put them in broadcasts, due at once;
-- a core takes them, publishes each on job.broadcast.<id>.<type>, then
-- says so (broadcast_sent.lua). Taking one moves its score to the end of
-- the claim (`until`): a core that dies before it said "sent" leaves it
-- there, and the next take after the claim ran out publishes it again (at
-- least once). The candidates were read from broadcasts just before; each
-- is checked again, so two cores never take one broadcast while its claim
-- holds. A candidate whose job is gone (removed) or no longer complete (a
-- person moved it) leaves broadcasts unpublished.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        broadcasts
-- KEYS[12]        job:0, the template of each job's key (key_base)
--
-- ARGV[1]    now    unix ms
-- ARGV[2]    until  unix ms: the end of the claim
-- ARGV[2+i]  id_i   a candidate's id
--
-- Reply: {next, row...}: the earliest score still in broadcasts after the
-- call (unix ms, 0 when none), then, for each job taken, its row followed
-- by its data and result (snapshot_with_data).
-- Events: the service publishes job.broadcast.<id>.<type> with the data,
-- then job.complete.<id>.<type>, for each job taken.
--@include type_keys.lua
--@include row_gen.lua

local K_BROADCASTS = KEYS[11]
local base = key_base(KEYS[12])
local now, until_ = tonumber(ARGV[1]), ARGV[2]
local out = {0}
for i = 3, #ARGV do
  local id = ARGV[i]
  local at = redis.call('ZSCORE', K_BROADCASTS, id)
  if at and tonumber(at) <= now then
    local jobkey = base .. id
    if redis.call('HGET', jobkey, 'state') == 'complete' then
      redis.call('ZADD', K_BROADCASTS, until_, id)
      out[#out + 1] = snapshot_with_data(jobkey)
    else
      redis.call('ZREM', K_BROADCASTS, id)
    end
  end
end
local head = redis.call('ZRANGE', K_BROADCASTS, 0, 0, 'WITHSCORES')
if head[2] then out[1] = tonumber(head[2]) end
return out

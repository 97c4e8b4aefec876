-- expire_leases: end now the leases of the active jobs of one type that
-- silent workers hold (DESIGN §10.5): a worker not heard from for
-- core.WorkerSilentAfter was killed, hung or cut off, and its jobs are not
-- left to wait for their ttl. A lease ended here is one that ran out: the
-- rescue (rescue_expired.lua), which runs right after, takes the job back
-- as a stall. The candidates were read from leases just before; each is
-- checked again, so a job leased anew or finished meanwhile is left alone.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, from which each job's key is built with its id
--                 (as lease_head.lua builds them)
--
-- ARGV[1]      now        unix ms
-- ARGV[2]      k          how many silent workers follow
-- ARGV[3..2+k] worker_i   the silent workers' ids
-- ARGV[3+k..]  id_j       a candidate: an active job's id
--
-- Reply: how many leases it ended.
-- Events: none; the rescue publishes job.stalled for each job it takes back.
--@include type_keys.lua

local now, k = tonumber(ARGV[1]), tonumber(ARGV[2])
local silent = {}
for i = 3, 2 + k do silent[ARGV[i]] = true end
local base = key_base(KEYS[11])
local ended = 0
for i = 3 + k, #ARGV do
  local id = ARGV[i]
  local until_ = redis.call('ZSCORE', K_LEASES, id)
  if until_ and tonumber(until_) > now then
    local jobkey = base .. id
    if silent[redis.call('HGET', jobkey, 'worker_id')] then
      redis.call('ZADD', K_LEASES, now, id)
      redis.call('HSET', jobkey, 'lease_until', now)
      ended = ended + 1
    end
  end
end
return ended

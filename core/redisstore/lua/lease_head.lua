-- lease_head: hand the first ready jobs of one type to a worker under one
-- lease token, reading the head of ready in the script itself: a lease of
-- one type is then one round trip to Redis (lease.lua is given candidates
-- that a read merged across several types first). A paused type hands out
-- nothing; a type with a concurrency or a rate hands out no more than its
-- policy allows (includes/lease_limit.lua). Running it twice, or on two
-- cores at once, leases each job once: a member is leased as it leaves
-- ready, in the same script.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, the key a job of the type with id 0 would have:
--                 each leased job's key is this key with the job's id for
--                 the final "0". The jobs are chosen here, so their keys
--                 cannot come in through KEYS; built from this one, each
--                 has the type's hash tag, so on Redis Cluster they are in
--                 the slot of the declared keys, where a script may reach
--                 them.
-- KEYS[12] policy  KEYS[13] starts   the type's policy and log of starts
--
-- ARGV[1]  now        unix ms
-- ARGV[2]  worker     the worker's id, "" for none
-- ARGV[3]  lease      the lease token
-- ARGV[4]  lease_ttl  ms each lease lasts; 0: each job's own ttl
-- ARGV[5]  max        how many jobs at most, >= 1
--
-- Reply: {code, job_1, ...} (codes: includes/codes_gen.lua): PAUSED (and
-- nothing else) when the type is paused; LIMITED, until, then the jobs
-- leased, when the type's policy held back some of max (until: when its
-- rate allows the next start, unix ms, or 0); else DONE followed by each
-- job leased, best priority first, FIFO within one: the name-value pairs
-- of its hash as it was before the lease (includes/lease_job.lua; Go
-- applies the lease's writes: leased in calls.go).
-- Events: the service publishes job.start.<id>.<type> for each job it
-- hands out.
--@include lease_job.lua
--@include lease_limit.lua

local paused, limited, grouped_ = lease_flags()
if paused then return {PAUSED} end

local now, worker, lease = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local lease_ttl, max = tonumber(ARGV[4]), tonumber(ARGV[5])
local base = key_base(KEYS[11])
local out, new_leases = {DONE}, {}
local room, until_, rate = max, 0, false
if limited then
  room, until_, rate = lease_room(KEYS[12], KEYS[13], now, max)
  if room < max then out = {LIMITED, until_} end
  if room == 0 then return out end
end
if grouped_ and group_lease(now) then
  -- group limits: each job of the head is leased or parked
  -- (includes/group_limit.lua), and the head read again for what was
  -- parked, until room jobs are leased or ready is empty
  local got = 0
  while got < room do
    local head = redis.call('ZRANGE', K_READY, 0, room - got - 1, 'WITHSCORES')
    if #head == 0 then break end
    redis.call('ZREMRANGEBYRANK', K_READY, 0, #head / 2 - 1)
    for i = 1, #head, 2 do
      local member = head[i]
      local id = string.match(member, ':(%d+)$')
      if take_grouped(base .. id, id, member, head[i + 1], now, lease) then
        out[#out + 1] = lease_job(base .. id, id, now, worker, lease, lease_ttl, new_leases)
        got = got + 1
      end
    end
  end
  add_leases(new_leases)
  if rate then note_starts(KEYS[13], now, lease, new_leases) end
  if got < max then out = group_held(out, now) end
  return out
end
-- the head leaves ready in one call: the members just read are its first
local head = redis.call('ZRANGE', K_READY, 0, room - 1)
if #head > 0 then redis.call('ZREMRANGEBYRANK', K_READY, 0, #head - 1) end
for _, member in ipairs(head) do
  local id = string.match(member, ':(%d+)$')
  out[#out + 1] = lease_job(base .. id, id, now, worker, lease, lease_ttl, new_leases)
end
add_leases(new_leases)
if rate then note_starts(KEYS[13], now, lease, new_leases) end
return out

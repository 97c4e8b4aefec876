-- lease: hand ready jobs of one type to a worker under one lease token.
-- The candidates (ready members) were read just before; a member another
-- lease took meanwhile is skipped, so no job is ever handed out twice, a
-- type paused meanwhile (pause.lua) hands out nothing, and a type with a
-- concurrency or a rate hands out no more than its policy allows
-- (includes/lease_limit.lua): the first candidates, in the order given.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11] policy  KEYS[12] starts   the type's policy and log of starts
-- KEYS[12+i]      job:<id_i>, the job of member_i
--
-- ARGV[1]    now        unix ms
-- ARGV[2]    worker     the worker's id, "" for none
-- ARGV[3]    lease      the lease token
-- ARGV[4]    lease_ttl  ms each lease lasts; 0: each job's own ttl
-- ARGV[4+i]  member_i   a candidate's member in ready ("<seq>:<id>")
--
-- Reply: as lease_head.lua's, {code, ...}: PAUSED when the type is
-- paused; LIMITED, until, then the jobs, when its policy held back some of
-- the candidates; else DONE followed by each job leased: the name-value
-- pairs of its hash as it was before the lease (includes/lease_job.lua;
-- Go applies the lease's writes: leased in calls.go).
-- Events: the service publishes job.start.<id>.<type> for each job it
-- hands out.
--@include lease_job.lua
--@include lease_limit.lua

local paused, limited, grouped_ = lease_flags()
if paused then return {PAUSED} end

local now, worker, lease = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local lease_ttl = tonumber(ARGV[4])
local out, new_leases = {DONE}, {}
local room, until_, rate = #ARGV - 4, 0, false
if limited then
  room, until_, rate = lease_room(KEYS[11], KEYS[12], now, room)
  if room < #ARGV - 4 then out = {LIMITED, until_} end
end
local by_group = grouped_ and group_lease(now)
local got = 0
for i = 5, #ARGV do
  if room == 0 then break end
  -- with group limits, a candidate of a group at its limit is parked
  -- (includes/group_limit.lua) with the score it had in ready
  local score = by_group and redis.call('ZSCORE', K_READY, ARGV[i])
  if redis.call('ZREM', K_READY, ARGV[i]) == 1 and
    (not by_group or take_grouped(KEYS[8 + i], string.match(ARGV[i], ':(%d+)$'), ARGV[i], score, now, lease)) then
    local id = string.match(ARGV[i], ':(%d+)$')
    out[#out + 1] = lease_job(KEYS[8 + i], id, now, worker, lease, lease_ttl, new_leases)
    room = room - 1
    got = got + 1
  end
end
add_leases(new_leases)
if rate then note_starts(KEYS[12], now, lease, new_leases) end
if grouped_ and got < #ARGV - 4 then out = group_held(out, now) end
return out

-- create_jobs: store new jobs of one type, delayed or ready. What a new job
-- looks like is decided once, in Go (newJob in row.go): this script writes
-- the hash fields it is given verbatim, so the job Go returns is the job
-- stored, and it places each job in ready or due. Idempotent: a job whose
-- id is in the type's jobs index already is not stored again, so a create
-- that runs twice (a client retry after a Redis stall, a pipeline sent
-- again after NOSCRIPT) never enqueues an id twice. A job whose unique key
-- an unfinished job of another id holds is not stored either.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
--                 the type's keys (includes/type_keys.lua)
-- KEYS[9+i]       job:<id_i>
--
-- ARGV[1..#SHARED]  the values of the SHARED fields below: the same for
--                    every job of the call (one type, one now, constants)
-- then #OWN values per job i, of the OWN fields below, in that order
--
-- Reply, per job: 0 when it is stored as given; the id of the unfinished
-- job that holds its unique key (an integer > 0: it was not stored); or
-- its row (includes/row.lua) when an earlier run of this create stored it.
-- Events: the service publishes job.enqueue.<id>.<type> for each job
-- stored, and queue.due with the earliest due time of the delayed ones.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua

-- The hash fields of a new job. Go reads both lists from this file when
-- the package loads (newJobFields in row.go) and sends the values in
-- this order; it has an encoder for every name, or the package stops.
local SHARED = {'type', 'attempts', 'progress', 'created_at', 'updated_at'}
local OWN = {'id', 'data', 'priority', 'state', 'delay', 'max_attempts', 'backoff', 'ttl', 'roc',
  'unique_key', 'promote_at', 'stall_limit', 'roc_limit', 'rof', 'rof_limit'}
local O = {}
for f = 1, #OWN do O[OWN[f]] = f end

local ns, no = #SHARED, #OWN
local out, n = {}, 0
local own_retention = false -- a job stored brings a retention of its own
for base = ns, #ARGV - 1, no do
  n = n + 1
  local id, unique_key = ARGV[base + O.id], ARGV[base + O.unique_key]
  local jobkey = KEYS[9 + n]
  local holder = false
  if unique_key ~= '' then holder = redis.call('HGET', K_UNIQUE, unique_key) end
  if holder and holder ~= id then
    out[n] = tonumber(holder)
  elseif redis.call('ZADD', K_JOBS, id, id) == 0 then
    -- stored by an earlier run of this very create: its id is in jobs
    -- already (and holds its own unique key). The index write doubles as
    -- the check, so idempotence costs no call of its own.
    out[n] = snapshot(jobkey)
  else
    local hash = {}
    for f = 1, ns do hash[2 * f - 1], hash[2 * f] = SHARED[f], ARGV[f] end
    for f = 1, no do hash[2 * (ns + f) - 1], hash[2 * (ns + f)] = OWN[f], ARGV[base + f] end
    if ARGV[base + O.state] == 'delayed' then
      enter_due(id, tonumber(ARGV[base + O.promote_at]))
    else
      hash[#hash + 1] = 'rmember'
      hash[#hash + 1] = ready_member(id, ARGV[base + O.priority])
    end
    redis.call('HSET', jobkey, unpack(hash))
    if unique_key ~= '' then redis.call('HSET', K_UNIQUE, unique_key, id) end
    if ARGV[base + O.roc] == '1' or ARGV[base + O.roc_limit] ~= '' or ARGV[base + O.rof] == '1'
      or ARGV[base + O.rof_limit] ~= '' then
      own_retention = true
    end
    out[n] = 0
  end
end
-- clean.lua walks the finished jobs of a type only while the type has a
-- default retention or this flag: the type's jobs may have their own (true
-- too: such a job reaches complete or failed by set_state or a stall
-- without being deleted, and the cleaner removes it).
if own_retention then redis.call('HSET', K_STATS, 'own_retention', '1') end
return out

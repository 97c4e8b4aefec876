-- How one ready job is leased: the one copy, shared by lease (candidates a
-- read chose) and lease_head (the head of one type's ready, read in the
-- script).
--@include type_keys.lua
--@include codes_gen.lua
--@include many.lua

-- lease_job hands the job at jobkey (member of ready, already removed from
-- it) to worker under lease until now + its ttl (lease_ttl, when not 0),
-- and returns it as it was before the lease: the name-value pairs of its
-- hash (HGETALL: data and the scripts' bookkeeping included, no missing
-- field), which Go decodes by name (decodePairsInto in row.go) and to which
-- it applies what this HSET writes (leased in calls.go: the one other
-- copy, and TestLeaseTakesTheBestReadyJob compares the two). One HGETALL
-- reads a job in one walk of its hash, where an HMGET of the row's fields
-- walks it once per field, to its end for each field the job lacks; and
-- the written fields cost the reply nothing. Its place in leases goes into
-- new_leases, {until, id, ...}, for the caller's one ZADD of them all
-- (add_leases): one call per lease instead of one per job.
local function lease_job(jobkey, id, now, worker, lease, lease_ttl, new_leases)
  local pairs_ = redis.call('HGETALL', jobkey)
  local ttl = lease_ttl
  if ttl == 0 then
    for i = 1, #pairs_, 2 do
      if pairs_[i] == 'ttl' then ttl = tonumber(pairs_[i + 1]); break end
    end
  end
  local until_ = now + ttl
  new_leases[#new_leases + 1], new_leases[#new_leases + 2] = until_, id
  redis.call('HSET', jobkey, 'state', 'active', 'lease', lease, 'lease_until', until_, 'lease_ttl', ttl,
    'started_at', now, 'updated_at', now, 'worker_id', worker, 'progress', 0)
  return pairs_
end

-- add_leases enters what lease_job put in new_leases into the type's leases.
local function add_leases(new_leases)
  call_many('ZADD', K_LEASES, new_leases)
end

-- How one ready job is leased: the one copy, shared by lease (candidates a
-- read chose) and lease_head (the head of one type's ready, read in the
-- script).
--@include type_keys.lua
--@include row.lua

-- lease_job hands the job at jobkey (member of ready, already removed from
-- it) to worker under lease until now + its ttl (lease_ttl, when not 0),
-- and returns its row followed by its data ("" for none). Its place in
-- leases goes into held, {until, id, ...}, for the caller's one ZADD of
-- them all (add_leases): one call per lease instead of one per job.
local function lease_job(jobkey, id, now, worker, lease, lease_ttl, held)
  -- the row and data in one read, before the write: the fields lease
  -- writes are not read (ROW_BUT, scripts.go) but set in the row below,
  -- nor the scripts' bookkeeping that no reply carries (rmember,
  -- last_lease: Go has no decoder for them), which go back as none
  local row = redis.call('HMGET', jobkey, ROW_BUT('state', 'lease', 'lease_until', 'lease_ttl',
    'started_at', 'updated_at', 'worker_id', 'progress', 'rmember', 'last_lease'), 'data')
  row[R.rmember], row[R.last_lease] = false, false
  local ttl = lease_ttl
  if ttl == 0 then ttl = tonumber(row[R.ttl]) end
  local until_ = now + ttl
  held[#held + 1], held[#held + 2] = until_, id
  redis.call('HSET', jobkey, 'state', 'active', 'lease', lease, 'lease_until', until_, 'lease_ttl', ttl,
    'started_at', now, 'updated_at', now, 'worker_id', worker, 'progress', 0)
  row[R.state], row[R.lease], row[R.lease_until], row[R.lease_ttl] = 'active', lease, until_, ttl
  row[R.started_at], row[R.updated_at], row[R.worker_id], row[R.progress] = now, now, worker, 0
  row[#ROW + 1] = row[#ROW + 1] or ''
  return row
end

-- add_leases enters what lease_job put in held into the type's leases.
local function add_leases(held)
  if #held > 0 then redis.call('ZADD', K_LEASES, unpack(held)) end
end

-- How a new job is written: the one copy, shared by create_jobs (a
-- producer's create) and fire_schedule (a schedule's tick). What a new job
-- looks like is decided once, in Go (newJob in row.go): this writes the
-- hash fields it is given verbatim, so the job Go returns is the job
-- stored, and places the job in ready or due.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua

-- The hash fields of a new job. Go reads both lists from this file when
-- the package loads (newJobFields in row.go) and sends the values in
-- this order; it has an encoder for every name, or the package stops.
-- SHARED are the same for every job of one call (one type, one now,
-- constants), OWN are each job's own.
local SHARED = {'type', 'attempts', 'progress', 'created_at', 'updated_at'}
local OWN = {'id', 'data', 'priority', 'state', 'delay', 'max_attempts', 'backoff', 'ttl', 'roc',
  'unique_key', 'promote_at', 'stall_limit', 'roc_limit', 'rof', 'rof_limit', 'trace'}
-- OPTIONAL are fields of either list that are written only when they are
-- not their zero value (newJobZero in row.go: '' or '0'): a field a hash
-- lacks reads as that value, in Go (decodeRow) and in every script, and a
-- new job most often has no delay, backoff, unique key or retention of its
-- own, so its HSET is 9 fields shorter (each field an HSET writes costs
-- Redis a scan of the hash).
local OPTIONAL = {'attempts', 'progress', 'delay', 'backoff', 'roc', 'unique_key', 'roc_limit', 'rof',
  'rof_limit', 'trace'}
-- O.<field> is a field's position in OWN, written into the text as a
-- constant when Go loads the script, as R.<field> is (includes/row.lua).

-- new_job stores one job at jobkey from ARGV: the SHARED values at
-- ARGV[shared+1..], its OWN values at ARGV[own+1..]. Idempotent: a job
-- whose id is in the type's jobs index already is not stored again, and a
-- job whose unique key an unfinished job of another id holds is not stored
-- either. Returns 0 when it stored the job as given; the id of the
-- unfinished job that holds its unique key (an integer > 0: not stored);
-- or its row (includes/row.lua) when an earlier run stored it.
local function new_job(jobkey, shared, own)
  local id, unique_key = ARGV[own + O.id], ARGV[own + O.unique_key]
  local holder = false
  if unique_key ~= '' then holder = redis.call('HGET', K_UNIQUE, unique_key) end
  if holder and holder ~= id then
    return tonumber(holder)
  end
  if redis.call('ZADD', K_JOBS, id, id) == 0 then
    -- stored by an earlier run of this very call: its id is in jobs
    -- already (and holds its own unique key). The index write doubles as
    -- the check, so idempotence costs no call of its own.
    return snapshot(jobkey)
  end
  -- NEW_JOB_FIELDS is the HSET's arguments, each SHARED and OWN field
  -- but the OPTIONAL ones by name and ARGV value, written out by Go at load
  -- (scripts.go): no table is built per job; NEW_JOB_OPTIONAL writes those
  -- OPTIONAL fields that are not zero, in one more HSET when there are any
  if ARGV[own + O.state] == 'delayed' then
    enter_due(id, tonumber(ARGV[own + O.promote_at]))
    redis.call('HSET', jobkey, NEW_JOB_FIELDS(shared, own))
  else
    redis.call('HSET', jobkey, NEW_JOB_FIELDS(shared, own), 'rmember', ready_member(id, ARGV[own + O.priority]))
  end
  NEW_JOB_OPTIONAL(jobkey, shared, own)
  if unique_key ~= '' then redis.call('HSET', K_UNIQUE, unique_key, id) end
  if ARGV[own + O.roc] == '1' or ARGV[own + O.roc_limit] ~= '' or ARGV[own + O.rof] == '1'
    or ARGV[own + O.rof_limit] ~= '' then
    -- clean.lua walks the finished jobs of a type only while the type has
    -- a default retention or this flag: the type's jobs may have their own
    -- (true too: such a job reaches complete or failed by set_state or a
    -- stall without being deleted, and the cleaner removes it).
    redis.call('HSET', K_STATS, 'own_retention', '1')
  end
  return 0
end

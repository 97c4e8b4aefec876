-- What the scripts of a lease holder's operations share (complete, fail,
-- touch, release, rejoin, progress). Each takes a batch, so that a worker
-- acknowledging 64 jobs pays one round trip and one script call, and lays
-- out its KEYS and ARGV alike:
--
--   KEYS[1..10]  the type's keys (type_keys.lua)
--   KEYS[11]     job:0    KEYS[12]  log:0    KEYS[13]  errors:0
--                the keys of the type's job 0, from which each job's keys
--                are built with its id for the final "0" (as lease_head.lua
--                builds job keys): three keys per job that need not cross
--                the wire, each with the type's hash tag, so in the slot of
--                the declared keys on Redis Cluster (errors: errors.lua)
--   ARGV[1]      now (unix ms)
--   then, from ARGV[first] on, width values per job: id_i, lease_i, and
--   the operation's own arguments (named in each script's header)
--
-- and replies, per job, {code, row} (codes: codes_gen.lua): NO_JOB,
-- NOT_HOLDER, REPEATED (this very operation was done before with this
-- lease: a retry; nothing changed), or the operation's own; the row is the
-- job after the change ({} for NO_JOB and NOT_HOLDER).
--
-- The operations that end a lease (complete, fail, release, rejoin) store
-- "<op>:<lease>" as the job's last_lease. A worker that did not hear the
-- answer sends the same operation again; finding its own mark, each answers
-- REPEATED and changes nothing, so acknowledgements can be retried safely. Any
-- other operation with a lease that is not the current one stays a conflict.
--@include type_keys.lua
--@include row_gen.lua
--@include codes_gen.lua
--@include indexes.lua
--@include many.lua

local now = tonumber(ARGV[1])
local mark -- "<op>:<lease>" of the job at hand: its last_lease once the lease ends

-- run fn(jobkey, logkey, errkey, id, row, args...) for each job whose lease the
-- caller holds, with the job's row (one HMGET) and its arguments after id
-- and lease; fn writes its changes in one HSET, sets them in the row, and
-- returns {code, row}. read(jobkey, a), when given, reads the row instead
-- of snapshot, from the job's arguments at ARGV[a..]: an operation whose
-- reply needs no row reads only what it decides by (complete.lua, bare);
-- the row it returns must hold at least id, lease and last_lease.
local function each(op, first, width, fn, read)
  local out = {}
  local job0, log0, err0 = key_base(KEYS[11]), key_base(KEYS[12]), key_base(KEYS[13])
  for i = 1, (#ARGV - first + 1) / width do
    local a = first + (i - 1) * width
    local id, lease = ARGV[a], ARGV[a + 1]
    local jobkey, logkey, errkey = job0 .. id, log0 .. id, err0 .. id
    local row
    if read then row = read(jobkey, a) else row = snapshot(jobkey) end
    mark = op .. ':' .. lease
    if not row[ROW_ID] then
      out[i] = {NO_JOB, {}}
    elseif lease == '' then
      out[i] = {NOT_HOLDER, {}}
    elseif row[ROW_LEASE] ~= lease then
      if row[ROW_LAST_LEASE] == mark then out[i] = {REPEATED, row} else out[i] = {NOT_HOLDER, {}} end
    else
      out[i] = fn(jobkey, logkey, errkey, id, row, unpack(ARGV, a + 2, a + width - 1))
    end
  end
  return out
end

-- leave active: the lease is gone (fields set empty, which reads as none).
-- With unleased, the id goes there for the caller's one ZREM of them all
-- (unlease_all) instead of a call of its own.
local function unlease(id, row, unleased)
  if unleased then unleased[#unleased + 1] = id else redis.call('ZREM', K_LEASES, id) end
  group_left(job_key(id), id)
  row[ROW_LEASE], row[ROW_LEASE_UNTIL], row[ROW_UPDATED_AT], row[ROW_LAST_LEASE] = '', '', now, mark
end

-- back to ready at the end of its priority; the caller's HSET stores it
local function requeue(id, row)
  row[ROW_STATE], row[ROW_RMEMBER] = 'inactive', ready_member(id, row[ROW_PRIORITY], row[ROW_CREATED_AT], row[ROW_GROUP])
end

local function unlease_all(unleased)
  call_many('ZREM', K_LEASES, unleased)
end

-- A row is a job's fields in the order of ROW: what scripts read in one
-- HMGET and what they reply, and what Go decodes by position. This list is
-- the only place the order is written: Go reads it from this file when the
-- package loads (rowFields in row.go), so a field added here without a Go
-- decoder stops the package at start-up, not in production.
--
-- Every field of a job hash is in the row but data and result, which a
-- reply or event either does not carry or carries on its own. Reading a
-- row is much cheaper in Redis's Lua than HGETALL filtered in a loop. A
-- field a job does not have reads as false (nil on the wire).
--
-- rmember is the job's member in ready; last_lease is "<op>:<lease>" of
-- the operation that ended its last lease (see includes/lease_holder.lua);
-- lease_ttl is how long that lease lasts per touch.
local ROW = {'id', 'type', 'priority', 'state', 'delay', 'max_attempts', 'attempts',
  'backoff', 'ttl', 'roc', 'unique_key', 'progress', 'error', 'created_at', 'promote_at',
  'started_at', 'updated_at', 'failed_at', 'duration', 'worker_id', 'stalls', 'lease_until',
  'lease', 'lease_ttl', 'rmember', 'stall_limit', 'last_lease'}

-- R.<field> is the field's position in a row: row[R.attempts]. A name that
-- is not a field is an error, not a silent nil. BLANK is a row of a job
-- that has no field yet. (Numeric loops, not ipairs: every script call
-- builds these, and ipairs costs a function call per field.)
local R, BLANK = {}, {}
for i = 1, #ROW do R[ROW[i]], BLANK[i] = i, false end
setmetatable(R, {__index = function(_, f) error('row has no field ' .. tostring(f)) end})

-- the job's row; row[R.id] is false when there is no such job
local function snapshot(jobkey)
  return redis.call('HMGET', jobkey, unpack(ROW))
end

-- a row of a job that has no field yet (unpack runs in C: cheaper than a
-- loop, and than filling an empty table, which rehashes as it grows)
local function blank_row()
  return {unpack(BLANK)}
end

-- store every field the row has, with data beside them: the job written is
-- the row the script replies
local function write_row(jobkey, row, data)
  local args, n = {'data', data}, 2
  for i = 1, #ROW do
    local v = row[i]
    if v then args[n + 1], args[n + 2], n = ROW[i], v, n + 2 end
  end
  redis.call('HSET', jobkey, unpack(args))
end

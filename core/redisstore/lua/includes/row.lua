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
-- lease_ttl is how long that lease lasts per touch; schedule and
-- schedule_at are set on a job a schedule made (lua/fire_schedule.lua).
-- roc and rof are "1" when the job goes as it completes, as it fails for
-- good (retention true); roc_limit and rof_limit its own retention {age,
-- count} in either state, "<age ms>:<count>" ("" or missing: none;
-- clean.lua reads them). trace is the W3C traceparent of the create that
-- made the job (missing: none), for the worker's span to continue.
local ROW = {'id', 'type', 'priority', 'state', 'delay', 'max_attempts', 'attempts',
  'backoff', 'ttl', 'roc', 'unique_key', 'progress', 'error', 'created_at', 'promote_at',
  'started_at', 'updated_at', 'failed_at', 'duration', 'worker_id', 'stalls', 'lease_until',
  'lease', 'lease_ttl', 'rmember', 'stall_limit', 'last_lease', 'schedule', 'schedule_at',
  'roc_limit', 'rof', 'rof_limit', 'trace'}

-- R.<field> is the field's position in a row: row[R.attempts]. Go writes
-- each position into the script's text as a constant when it loads it
-- (positions in scripts.go), and unpack(ROW) as the list of names, so no
-- call builds an index table; a name that is not a field stops the package
-- at load.

-- the job's row; row[R.id] is false when there is no such job
local function snapshot(jobkey)
  return redis.call('HMGET', jobkey, unpack(ROW))
end

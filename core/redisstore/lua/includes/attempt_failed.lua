-- A failed attempt, and the backoff before the next. This is the only
-- place the backoff formula is written (DESIGN §2): the wait depends on the
-- attempts a job has made, which only the script reads, so computing it here
-- costs no round trip. Go passes the cap (core.MaxDelay) in ARGV.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua
--@include unique.lua
--@include errors.lua

-- the wait in ms before retrying after the attempts-th failed attempt, for
-- a job's backoff "<type>:<delay ms>" ("" for none: retry at once): fixed
-- waits delay; exponential waits delay × 0.5 × (2^attempts − 1), Kue's
-- formula, rounded; both capped at max_delay ms
local function retry_wait(backoff, attempts, max_delay)
  if not backoff or backoff == '' then return 0 end
  local kind, delay = string.match(backoff, '^(%a+):(%d+)$')
  delay = tonumber(delay)
  local wait = delay
  if kind ~= 'fixed' then
    -- 0 × 2^1024 would be 0 × inf = nan
    if delay <= 0 or attempts <= 0 then return 0 end
    wait = math.floor(delay * 0.5 * (2 ^ attempts - 1) + 0.5)
  end
  return math.min(wait, max_delay)
end

-- a failed attempt of a job that has left active (out of leases already):
-- count it, then retry after delay ms (the worker's retry delay; nil: the
-- job's backoff) — to delayed, or to inactive at once — while attempts
-- remain, else fail for good (final: whatever remains). row is the job's
-- row; this stores the changes and sets them in row, and adds the attempt
-- to the job's error history errkey (with stack, "" for none). mark is the
-- job's new last_lease; max_delay caps the backoff and the delay (ms).
-- Returns 1 (will retry) or 3 (failed).
local function attempt_failed(jobkey, errkey, id, row, err, stack, final, now, mark, max_delay, delay)
  local attempts = (tonumber(row[R.attempts]) or 0) + 1
  record_error(errkey, attempts, now, err, stack)
  row[R.attempts], row[R.error], row[R.updated_at] = attempts, err, now
  row[R.lease], row[R.lease_until], row[R.last_lease] = '', '', mark
  if attempts >= tonumber(row[R.max_attempts]) or final then
    redis.call('ZADD', K_FAILED, now, id)
    release_key(row[R.unique_key], id)
    row[R.state], row[R.failed_at] = 'failed', now
    redis.call('HSET', jobkey, 'state', 'failed', 'failed_at', now, 'attempts', attempts, 'error', err,
      'updated_at', now, 'lease', '', 'lease_until', '', 'last_lease', mark)
    return 3
  end
  local wait
  if delay then
    wait = math.min(math.max(math.floor(delay), 0), max_delay)
  else
    wait = retry_wait(row[R.backoff], attempts, max_delay)
  end
  if wait > 0 then
    enter_due(id, now + wait)
    row[R.state], row[R.promote_at] = 'delayed', now + wait
  else
    row[R.state], row[R.rmember] = 'inactive', ready_member(id, row[R.priority])
  end
  redis.call('HSET', jobkey, 'state', row[R.state], 'promote_at', row[R.promote_at], 'rmember', row[R.rmember] or '',
    'attempts', attempts, 'error', err, 'updated_at', now, 'lease', '', 'lease_until', '', 'last_lease', mark)
  return 1
end

-- A failed attempt, and the backoff before the next. This is the only
-- place the backoff formula is written (DESIGN §2): the wait depends on the
-- attempts a job has made, which only the script reads, so computing it here
-- costs no round trip. Go passes the cap (core.MaxDelay) in ARGV.
--@include type_keys.lua
--@include row_gen.lua
--@include codes_gen.lua
--@include indexes.lua
--@include unique.lua
--@include errors.lua
--@include deps.lua

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
-- Returns RETRYING or FAILED.
local function attempt_failed(jobkey, errkey, id, row, err, stack, final, now, mark, max_delay, delay)
  local attempts = (tonumber(row[ROW_ATTEMPTS]) or 0) + 1
  record_error(errkey, attempts, now, err, stack)
  row[ROW_ATTEMPTS], row[ROW_ERROR], row[ROW_UPDATED_AT] = attempts, err, now
  row[ROW_LEASE], row[ROW_LEASE_UNTIL], row[ROW_LAST_LEASE] = '', '', mark
  if attempts >= tonumber(row[ROW_MAX_ATTEMPTS]) or final then
    redis.call('ZADD', K_FAILED, now, id)
    give_up_key(row[ROW_UNIQUE_KEY], id)
    row[ROW_STATE], row[ROW_FAILED_AT] = 'failed', now
    redis.call('HSET', jobkey, 'state', 'failed', 'failed_at', now, 'attempts', attempts, 'error', err,
      'updated_at', now, 'lease', '', 'lease_until', '', 'last_lease', mark)
    -- failed for good: the jobs waiting for it apply their rule (a failed
    -- attempt that retries is no failure yet)
    tell_dependents(jobkey, id, 'f', now)
    return FAILED
  end
  local wait
  if delay then
    wait = math.min(math.max(math.floor(delay), 0), max_delay)
  else
    wait = retry_wait(row[ROW_BACKOFF], attempts, max_delay)
  end
  if wait > 0 then
    enter_due(id, now + wait)
    row[ROW_STATE], row[ROW_PROMOTE_AT] = 'delayed', now + wait
  else
    row[ROW_STATE], row[ROW_RMEMBER] = 'inactive', ready_member(id, row[ROW_PRIORITY], row[ROW_CREATED_AT], row[ROW_GROUP])
  end
  redis.call('HSET', jobkey, 'state', row[ROW_STATE], 'promote_at', row[ROW_PROMOTE_AT], 'rmember', row[ROW_RMEMBER] or '',
    'attempts', attempts, 'error', err, 'updated_at', now, 'lease', '', 'lease_until', '', 'last_lease', mark)
  return RETRYING
end

-- complete: the handler of each job succeeded. The attempt counts; the
-- job's progress becomes 100; its duration (since its lease began) is added
-- to the type's work time; a job with roc 1 (remove_on_complete true) is
-- deleted with its log and its error history (includes/remove.lua).
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11..13]    job:0, log:0, errors:0: templates of each job's keys
--                 (includes/lease_holder.lua)
--
-- ARGV[1]  now  unix ms
-- then 4 values per job i, from ARGV[2 + 4(i-1)]:
--   id      the job's id
--   lease   the lease token the worker holds
--   result  the handler's result, JSON; "" for none
--   bare    "1": reply no row for this job when it completes now (nobody
--           would receive its event, which is all the row is for); "0"
--
-- Reply, per job: {code, row} (includes/lease_holder.lua): 1 complete, 2
-- complete and deleted (roc: a retry then finds no job and answers
-- not_found), or 0, -1, 4. A bare job's row is {} for 1 and 2, and holds
-- only what decided its outcome for 4: its complete reads the 7 fields it
-- decides by instead of the 33 of a row (turning a row into a reply, and
-- Go reading it, was a fifth of core's work per processed job).
-- Events: the service publishes job.complete.<id>.<type> with the result.
--@include type_keys.lua
--@include row.lua
--@include unique.lua
--@include lease_holder.lua
--@include remove.lua

-- The index writes of the whole call are made at its end, one call each
-- (leases, complete, and the deletions of removed jobs), not one per job.
local unleased, completed, deletions = {}, {}, new_deletions()

-- the row of a job: none for one this call deleted already (a second op
-- on it finds no job), only the fields complete and each() read for a bare
-- job
local function read(jobkey, a)
  if deletions.gone[ARGV[a]] then return {} end
  if ARGV[a + 3] ~= '1' then return snapshot(jobkey) end
  local v = redis.call('HMGET', jobkey, 'id', 'lease', 'last_lease', 'started_at', 'unique_key', 'attempts', 'roc')
  local row = {}
  row[R.id], row[R.lease], row[R.last_lease], row[R.started_at] = v[1], v[2], v[3], v[4]
  row[R.unique_key], row[R.attempts], row[R.roc] = v[5], v[6], v[7]
  return row
end

local work_time = 0
local out = each('complete', 2, 4, function(jobkey, logkey, errkey, id, row, result, bare)
  unlease(id, row, unleased)
  local duration = now - (tonumber(row[R.started_at]) or now)
  work_time = work_time + duration
  release_key(row[R.unique_key], id)
  row[R.state], row[R.progress], row[R.duration] = 'complete', 100, duration
  row[R.attempts] = (tonumber(row[R.attempts]) or 0) + 1
  if row[R.roc] == '1' then
    delete_later(deletions, jobkey, logkey, errkey, id)
    if bare == '1' then return {2, {}} end
    return {2, row}
  end
  redis.call('HSET', jobkey, 'state', 'complete', 'result', result, 'progress', 100,
    'duration', duration, 'attempts', row[R.attempts], 'updated_at', now, 'lease', '', 'lease_until', '',
    'last_lease', mark)
  completed[#completed + 1], completed[#completed + 2] = now, id
  if bare == '1' then return {1, {}} end
  return {1, row}
end, read)
unlease_all(unleased)
call_many('ZADD', K_COMPLETE, completed)
flush_deletions(deletions)
if work_time > 0 then redis.call('HINCRBY', K_STATS, 'work_time', work_time) end
return out

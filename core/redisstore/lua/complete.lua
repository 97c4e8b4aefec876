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
-- Reply, per job: {code, row} (includes/lease_holder.lua): DONE, or
-- COMPLETED_REMOVED (roc: deleted; a retry then finds no job and answers
-- not_found), or NO_JOB, NOT_HOLDER, REPEATED. A bare job's row is always
-- {} (Go makes the job of it: completedBare in mirrors.go), and its
-- complete reads the 7 fields it decides by instead of the whole row
-- (turning a row into a reply, and Go reading it, was a fifth of core's
-- work per processed job).
-- A job others wait for (its dependents field, read only when the type's
-- stats say some job of it had dependents: includes/deps.lua) adds
-- to its {code, row} the rows of the jobs of its type it released, and how
-- many hand-overs it recorded for those of other types, which Go finishes
-- (deps.go); it is kept whatever its remove_on_complete.
-- Events: the service publishes job.complete.<id>.<type> with the result,
-- and job.promotion for each job released.
--@include type_keys.lua
--@include row_gen.lua
--@include unique.lua
--@include lease_holder.lua
--@include remove.lua
--@include deps.lua

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
  row[ROW_ID], row[ROW_LEASE], row[ROW_LAST_LEASE], row[ROW_STARTED_AT] = v[1], v[2], v[3], v[4]
  row[ROW_UNIQUE_KEY], row[ROW_ATTEMPTS], row[ROW_ROC] = v[5], v[6], v[7]
  return row
end

-- whether any job of the type ever had dependents (includes/deps.lua):
-- one read per call, and a type without any reads nothing more per job
local deps_on = redis.call('HGET', K_STATS, 'dependents') == '1'

local work_time = 0
local out = each('complete', 2, 4, function(jobkey, logkey, errkey, id, row, result, bare)
  unlease(id, row, unleased)
  local duration = now - (tonumber(row[ROW_STARTED_AT]) or now)
  work_time = work_time + duration
  give_up_key(row[ROW_UNIQUE_KEY], id)
  row[ROW_STATE], row[ROW_PROGRESS], row[ROW_DURATION] = 'complete', 100, duration
  row[ROW_ATTEMPTS] = (tonumber(row[ROW_ATTEMPTS]) or 0) + 1
  local waited = deps_on and has_dependents(jobkey)
  -- a job others wait for is kept whatever its retention: they read its
  -- result (dependencies)
  if row[ROW_ROC] == '1' and not waited then
    delete_later(deletions, jobkey, logkey, errkey, id)
    if bare == '1' then return {COMPLETED_REMOVED, {}} end
    return {COMPLETED_REMOVED, row}
  end
  redis.call('HSET', jobkey, 'state', 'complete', 'result', result, 'progress', 100,
    'duration', duration, 'attempts', row[ROW_ATTEMPTS], 'updated_at', now, 'lease', '', 'lease_until', '',
    'last_lease', mark)
  completed[#completed + 1], completed[#completed + 2] = now, id
  local reply = {DONE, row}
  if bare == '1' then reply[2] = {} end
  if waited then
    -- its dependents: of this type released here, of others handed over
    reply[3], reply[4] = dependents_done(jobkey, id, 'c', now)
  end
  return reply
end, read)
unlease_all(unleased)
call_many('ZADD', K_COMPLETE, completed)
flush_deletions(deletions)
if work_time > 0 then redis.call('HINCRBY', K_STATS, 'work_time', work_time) end
-- a bare repeat's row is the few fields read() read: none goes back
for i, reply in ipairs(out) do
  if reply[1] == REPEATED and ARGV[2 + 4 * (i - 1) + 3] == '1' then reply[2] = {} end
end
return out

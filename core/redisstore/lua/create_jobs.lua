-- create_jobs: store new jobs of one type, delayed (delay > 0) or ready.
-- Idempotent: a job whose id is in the type's jobs index already is not
-- stored again, so a create that runs twice (a client retry after a Redis
-- stall, a pipeline sent again after NOSCRIPT) never enqueues an id twice.
-- A job whose unique key an unfinished job of another id holds is not
-- stored either.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
--                 the type's keys (includes/type_keys.lua)
-- KEYS[9+i]       job:<id_i>
--
-- ARGV[1]  now   unix ms
-- ARGV[2]  type  the jobs' type
-- then 10 values per job i, from ARGV[3 + 10(i-1)]:
--   id            the new job's id
--   data          JSON, "" for none
--   priority      integer, lower runs first
--   delay         ms before it may run; > 0 makes it delayed
--   max_attempts  integer >= 1
--   backoff       "<fixed|exponential>:<delay ms>", "" for none
--   ttl           ms one attempt may hold its lease
--   roc           1: remove the job once complete, else 0
--   unique_key    "" for none
--   stall_limit   stalls that go back without using an attempt
--
-- Reply, per job: its row when it is stored, now or by an earlier run of
-- this create (the job as stored, see includes/row.lua), or the id of the
-- unfinished job that holds its unique key (an integer: it was not stored).
-- Events: the service publishes job.enqueue.<id>.<type> for each job
-- stored, and queue.due with the earliest promote_at of the delayed ones.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua

local now, jobtype = tonumber(ARGV[1]), ARGV[2]
local out = {}
for i = 1, (#ARGV - 2) / 10 do
  local a = 3 + (i - 1) * 10
  local id, unique_key = ARGV[a], ARGV[a + 8]
  local jobkey = KEYS[9 + i]
  local holder = false
  if unique_key ~= '' then holder = redis.call('HGET', K_UNIQUE, unique_key) end
  if holder and holder ~= id then
    out[i] = tonumber(holder)
  elseif redis.call('ZADD', K_JOBS, id, id) == 0 then
    -- stored by an earlier run of this very create: its id is in jobs
    -- already (and holds its own unique key). The index write doubles as
    -- the check, so idempotence costs no call of its own.
    out[i] = snapshot(jobkey)
  else
    local priority, delay = ARGV[a + 2], tonumber(ARGV[a + 3])
    local row = blank_row()
    row[R.id], row[R.type], row[R.priority], row[R.delay] = id, jobtype, priority, delay
    row[R.max_attempts], row[R.attempts], row[R.backoff] = ARGV[a + 4], 0, ARGV[a + 5]
    row[R.ttl], row[R.roc], row[R.unique_key], row[R.stall_limit] = ARGV[a + 6], ARGV[a + 7], unique_key, ARGV[a + 9]
    row[R.progress], row[R.created_at], row[R.updated_at], row[R.promote_at] = 0, now, now, now + delay
    if delay > 0 then
      row[R.state] = 'delayed'
      enter_due(id, now + delay)
    else
      row[R.state], row[R.rmember] = 'inactive', ready_member(id, priority)
    end
    write_row(jobkey, row, ARGV[a + 1])
    if unique_key ~= '' then redis.call('HSET', K_UNIQUE, unique_key, id) end
    out[i] = row
  end
end
return out

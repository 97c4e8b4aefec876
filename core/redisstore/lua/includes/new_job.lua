-- How a new job is written: the one copy, shared by create_jobs (a
-- producer's create) and fire_schedule (a schedule's tick). What a new job
-- looks like is decided once, in Go (core.Spec.NewJob): this writes the
-- hash fields it is given verbatim, so the job Go returns is the job
-- stored, and places the job in ready or due.
--@include type_keys.lua
--@include row_gen.lua
--@include new_job_gen.lua
--@include codes_gen.lua
--@include ready_order.lua
--@include many.lua
--@include deps_create.lua

-- The hash fields of a new job, and how ARGV holds them, are in
-- new_job_gen.lua, written from Go's table (jobFields in fields.go). A
-- field a hash lacks reads as its zero, in Go (decodeRow) and in every
-- script, so a new job's HSET is shorter by what it lacks (each field an
-- HSET writes costs Redis a scan of the hash), and its ARGV too (each
-- costs Redis a string to parse, and Lua one to make).

-- next_own is the own of the job after the one at own: the position of
-- this job's last value, after which the next job's OWN values start.
local function next_own(own)
  return own + OWN_COUNT + 1 + 2 * tonumber(ARGV[own + OWN_COUNT + 1])
end

-- A script's new jobs are written in two steps: new_job writes each job's
-- hash and gathers its index entries, and store_new_jobs makes them in one
-- call per index (ready, due) at the end, rather than two calls per job: a
-- redis.call costs about as much as the work of a small one
-- (docs/benchmarks-log.md, issue 12 step 6). Until then the jobs gathered are
-- written but not in ready or due, which no one can see: the script is
-- atomic.
--
-- new_jobs(members) starts a script's gathering for the jobs whose ids
-- members lists each after its score in jobs, {score_1, id_1, score_2,
-- id_2, ...}, as ZADD takes them (ids distinct, in the order new_job is
-- called for them; scores by jobs_score, includes/jobs_order.lua). It enters
-- them all into the type's jobs index in one call, whose count is the
-- idempotence check: ids are reserved for one call, and a script stores
-- all its jobs or none, so when every id is new none of its jobs exists
-- (the call's first run), and when one was in jobs already the call ran
-- before and new_job looks its job up. NX: a run again of the call (a
-- later ms, a later place) leaves the score its first run gave.
local function new_jobs(members)
  local n = #members / 2
  return {n = n, all_new = call_many('ZADD', K_JOBS, members, 'NX') == n, unstored = {},
    ready = {}, due = {}, waiting = {}, seq = false, own_retention = false, seen = false}
end

-- new_job stores the n-th job of b at jobkey from ARGV: the SHARED values
-- at ARGV[shared+1..], its OWN values at ARGV[own+1..] followed by its
-- SPARSE ones. Idempotent: a job stored by an earlier run of the call is
-- not stored again, and a new job whose unique key an unfinished job of
-- another id has is not stored either (its id leaves jobs again in
-- store_new_jobs). Returns DONE when it stored the job as given;
-- DUPLICATE and the id of the unfinished job that has its unique key (not
-- stored); or REPEATED when an earlier run of this call stored it.
local function new_job(b, n, jobkey, shared, own)
  if not b.all_new and redis.call('EXISTS', jobkey) == 1 then
    -- stored by an earlier run of this very call: answered as that run
    -- stored it, whoever has its unique key now
    return REPEATED
  end
  local id, unique_key, retention, group, deps, one_dep = ARGV[own + OWN_ID], '', false, false, false, false
  local first, last = own + OWN_COUNT + 2, next_own(own) -- its SPARSE pairs
  for i = first, last, 2 do
    local f = ARGV[i]
    if f == 'unique_key' then
      unique_key = ARGV[i + 1]
    elseif f == 'roc' or f == 'rof' or f == 'roc_limit' or f == 'rof_limit' then
      retention = true -- present: not its zero
    elseif f == 'group' then
      group = ARGV[i + 1]
    elseif f == 'deps_check' then
      deps = ARGV[i + 1] -- the dependencies to wait for (includes/deps_create.lua)
    elseif f == 'depends_on' then
      -- all its dependencies, "5,7": one alone needs no pending set
      -- (wait_for)
      one_dep = not string.find(ARGV[i + 1], ',', 1, true)
    elseif f == 'dependents' then
      -- its dependents of the call, counted by Go
      b.seen = b.seen or new_seen()
      b.seen.counted[id] = true
    end
  end
  -- deps_check, what wait_for reads, is not stored: Go sends it last
  -- (newJobDeps.pairs in calls.go)
  if deps then last = last - 2 end
  if group then type_aging() end -- reads grouped, once per run
  if group and not grouped then
    -- also for a delayed job: its promotion must find the type grouped
    -- (order_number) to give it its group's turn; written once per type,
    -- not again at every create of a grouped job
    redis.call('HSET', K_STATS, 'grouped', '1')
    grouped = true
  end
  local owner = false
  if unique_key ~= '' then owner = redis.call('HGET', K_UNIQUE, unique_key) end
  if owner and owner ~= id then
    b.unstored[#b.unstored + 1] = id -- new_jobs entered it in jobs
    return DUPLICATE, owner
  end
  -- the SPARSE pairs go in one more HSET when there are any, straight
  -- from ARGV
  local pending = 0
  if deps then
    b.seen = b.seen or new_seen()
    pending = wait_for(id, ARGV[shared + 1], deps, ARGV[shared + 2], b.seen, one_dep)
  end
  -- a later job of the call that depends on this one knows its state
  -- without reading it (from the first job of the call that has
  -- dependencies or dependents on: a call without any makes no table)
  if b.seen then b.seen.state[id] = pending > 0 and 'waiting' or ARGV[own + OWN_STATE] end
  if pending > 0 then
    -- one HSET, in state waiting, with its SPARSE pairs; a fan-out's
    -- count as a string, which Redis takes as it is (a number it formats
    -- with printf: about 2.5% of a flow's create)
    write_new_job(jobkey, shared, own, 'waiting', 'pending', pending == 1 and '1' or pending, unpack(ARGV, first, last))
    first = last -- written
    local waiting = b.waiting
    waiting[#waiting + 1], waiting[#waiting + 2] = id, id
  elseif ARGV[own + OWN_STATE] == 'delayed' then
    local due = b.due
    due[#due + 1], due[#due + 2] = ARGV[own + OWN_PROMOTE_AT], due_member(id)
    write_new_job(jobkey, shared, own, ARGV[own + OWN_STATE])
  else
    -- one INCRBY numbers every job of b: job n takes number seq + n, so
    -- the jobs of one priority keep the order of the call in ready; a job
    -- of a group takes its group's next turn instead (group_tag)
    local number
    if group then
      number = group_tag(group)
    else
      if not b.seq then b.seq = redis.call('INCRBY', K_SEQ, b.n) - b.n end
      number = b.seq + n
    end
    local member, ready = ready_member_at(number, id), b.ready
    -- created_at is the second SHARED value (new_job_gen.lua's list)
    ready[#ready + 1], ready[#ready + 2] = ready_score(ARGV[own + OWN_PRIORITY], ARGV[shared + 2]), member
    write_new_job(jobkey, shared, own, ARGV[own + OWN_STATE], 'rmember', member)
  end
  if last > first then redis.call('HSET', jobkey, unpack(ARGV, first, last)) end
  if unique_key ~= '' then redis.call('HSET', K_UNIQUE, unique_key, id) end
  if retention then b.own_retention = true end
  if pending > 0 then return WAITING end
  return DONE
end

-- store_new_jobs enters the jobs new_job wrote into the type's indexes.
local function store_new_jobs(b)
  if b.seen then count_dependents(b.seen) end
  call_many('ZREM', K_JOBS, b.unstored)
  call_many('ZADD', K_READY, b.ready)
  call_many('ZADD', K_DUE, b.due)
  call_many('ZADD', K_WAITING, b.waiting)
  if b.own_retention then
    -- clean.lua walks the finished jobs of a type only while the type has
    -- a default retention or this flag: the type's jobs may have their own
    -- (true too: such a job reaches complete or failed by set_state or a
    -- stall without being deleted, and the cleaner removes it).
    redis.call('HSET', K_STATS, 'own_retention', '1')
  end
end

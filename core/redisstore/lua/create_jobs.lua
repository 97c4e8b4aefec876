-- create_jobs: store new jobs of one type, delayed or ready, each written
-- by new_job (includes/new_job.lua). Idempotent: a job whose id is in the
-- type's jobs index already is not stored again, so a create that runs
-- twice (a client retry after a Redis stall, a pipeline sent again after
-- NOSCRIPT) never enqueues an id twice. A job whose unique key an
-- unfinished job of another id holds is not stored either.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:0, the key a job of the type with id 0 would have:
--                 each job's key is this key with its id for the final
--                 "0" (as lease_head.lua builds them), which spares a key
--                 per job on the wire; each has the type's hash tag, so on
--                 Redis Cluster it is in the slot of the declared keys
-- KEYS[12]        errors:0, the template of a job's error history
--                 (includes/errors.lua), built from the same way
--
-- ARGV[1]            the jobs' places among the jobs their core created in
--                    that ms (their call's first, then the call's order),
--                    which order them in the jobs index
--                    (includes/jobs_order.lua): "p", the place of the
--                    first job, the others' following it one by one (a
--                    call of one type); or "p1,p2,...", each job's (a call
--                    of several types, whose places interleave)
-- ARGV[2..SHARED_COUNT+1]  the values of the SHARED fields
--                    (includes/new_job_gen.lua): the same for every job
--                    of the call
-- then per job: its OWN_COUNT values of the OWN fields, in that order; k,
-- how many of its SPARSE fields are not zero; and those k, each by name
-- and value
--
-- Reply: {code_1, ..., code_n, existing...}: per job, in the order of
-- ARGV, a code (includes/codes_gen.lua):
--   DONE        stored as given
--   WAITING     stored, in state waiting: it waits for dependencies
--               (its deps_check field, includes/deps.lua)
--   DUPLICATE   not stored: an unfinished job of another id has its
--               unique key
--   REPEATED    stored by an earlier run of this create
-- then, for each job whose code is DUPLICATE or REPEATED, in that order,
-- the job that stands for it (the one that has its unique key, or itself):
-- its row followed by its data and result (snapshot_with_data,
-- includes/row_gen.lua), and its error history. A code per job and no
-- table spares Redis a reply array per job of a bulk.
-- Hand-overs: a job with dependencies of other types records a link of
-- each in handover, which Go finishes (deps.go).
-- Events: the service publishes job.enqueue.<id>.<type> for each job
-- stored (job.waiting for a waiting one), and queue.due with the earliest due time of the delayed ones.
--@include new_job.lua
--@include jobs_order.lua

-- place(n) is the place of the n-th job of ARGV
local place
if string.find(ARGV[1], ',', 1, true) then
  local places = {}
  for p in string.gmatch(ARGV[1], '%d+') do places[#places + 1] = tonumber(p) end
  place = function(n) return places[n] end
else
  local first = tonumber(ARGV[1]) - 1
  place = function(n) return first + n end
end
-- created_at is the second SHARED value (new_job_gen.lua's list), after
-- ARGV[1]
local members, owns, own, created = {}, {}, 1 + SHARED_COUNT, ARGV[1 + 2]
while own < #ARGV do
  local id = ARGV[own + OWN_ID]
  owns[#owns + 1] = own
  members[#members + 1], members[#members + 2] = jobs_score(created, place(#owns)), id
  own = next_own(own)
end
local base, errors_base = key_base(KEYS[11]), key_base(KEYS[12])
local b, out, existing = new_jobs(members), {}, {}
for n = 1, b.n do
  local id = ARGV[owns[n] + OWN_ID]
  local code, owner = new_job(b, n, base .. id, 1, owns[n])
  out[n] = code
  if code ~= DONE and code ~= WAITING then existing[#existing + 1] = owner or id end
end
store_new_jobs(b)
for _, id in ipairs(existing) do
  out[#out + 1] = snapshot_with_data(base .. id)
  out[#out + 1] = redis.call('LRANGE', errors_base .. id, 0, -1)
end
return out

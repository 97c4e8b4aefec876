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
--
-- ARGV[1..#SHARED]  the values of the SHARED fields (includes/new_job.lua):
--                    the same for every job of the call
-- then per job: its #OWN values of the OWN fields, in that order; k, how
-- many of its SPARSE fields are not zero; and those k, each by name and
-- value
--
-- Reply, per job: 0 when it is stored as given; the id of the unfinished
-- job that holds its unique key (an integer > 0: it was not stored); or
-- its row (includes/row.lua) when an earlier run of this create stored it.
-- Events: the service publishes job.enqueue.<id>.<type> for each job
-- stored, and queue.due with the earliest due time of the delayed ones.
--@include new_job.lua

local members, owns, own = {}, {}, #SHARED
while own < #ARGV do
  local id = ARGV[own + O.id]
  members[#members + 1], members[#members + 2] = id, id
  owns[#owns + 1] = own
  own = next_own(own)
end
local base = key_base(KEYS[11])
local b, out = new_jobs(members), {}
for n = 1, b.n do
  out[n] = new_job(b, n, base .. ARGV[owns[n] + O.id], 0, owns[n])
end
store_new_jobs(b)
return out

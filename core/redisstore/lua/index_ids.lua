-- index_ids: record the type of new job ids in the id → type index, which
-- lets a request that names only an id find the job's keys, and the type in
-- the set of types. Create sends it in one pipeline with create_jobs, before
-- it: a crash between the two leaves ids that read as "not found", never a
-- stored job that cannot be found. Running it twice changes nothing.
--
-- KEYS[1] idtype   HASH  job id → job type (global slot {_})
-- KEYS[2] types    SET   every job type
--
-- ARGV[1]    type  the jobs' type
-- ARGV[1+i]  id_i  a new job id
--
-- Reply: how many ids it recorded.
-- Events: none of its own (see create_jobs).
local args = {}
for i = 2, #ARGV do
  args[#args + 1] = ARGV[i]
  args[#args + 1] = ARGV[1]
end
redis.call('HSET', KEYS[1], unpack(args))
redis.call('SADD', KEYS[2], ARGV[1])
return #ARGV - 1

-- reserve_ids: reserve blocks of job ids for one type and record, once per
-- block, the type its ids belong to. A request that names only an id finds
-- the job's keys from its block ((id - 1) // size), so creating a job writes
-- nothing per job outside its type's slot: the job itself is one script on
-- {<type>} (create_jobs). Ids of a block not used (a duplicate, a core that
-- stopped) read as "not found".
--
-- The counter is left at the end of the last block reserved; the first
-- block taken is the first whole block after the counter.
--
-- KEYS[1] ids     STRING  the last job id reserved (global slot {_})
-- KEYS[2] blocks  HASH    block number → job type (global slot {_})
-- KEYS[3] types   SET     every job type
--
-- ARGV[1] type   the jobs' type
-- ARGV[2] count  how many blocks, >= 1
-- ARGV[3] size   ids per block (the store's idBlock; never changes)
--
-- Reply: the first id of the first block; the blocks are consecutive.
-- Events: none.
local count, size = tonumber(ARGV[2]), tonumber(ARGV[3])
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local block = math.floor((last + size - 1) / size) -- the first free whole block
local args = {}
for b = block, block + count - 1 do
  args[#args + 1] = string.format('%d', b) -- plain digits: tostring turns 1e14 into "1e+14"
  args[#args + 1] = ARGV[1]
end
redis.call('HSET', KEYS[2], unpack(args))
redis.call('SET', KEYS[1], string.format('%d', (block + count) * size))
redis.call('SADD', KEYS[3], ARGV[1])
return block * size + 1

-- Deleting a job: what remove_job.lua does to one job and bulk.lua's remove
-- to each of its, written once.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua
--@include unique.lua

-- delete the job at jobkey (row: its row) with its log at logkey, from
-- every index of its type; a unique key it holds becomes free. Its id →
-- type entry lives in another slot: the caller's store deletes it after.
local function remove(jobkey, logkey, id, row)
  leave(jobkey, id, row[R.state])
  redis.call('ZREM', K_JOBS, id)
  release_key(row[R.unique_key], id)
  redis.call('DEL', jobkey, logkey)
end

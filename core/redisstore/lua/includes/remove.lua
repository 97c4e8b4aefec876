-- Deleting a job: what remove_job, bulk's remove, clean, and complete and
-- fail (for a job whose retention is true) share, so that a job goes the
-- same way whoever removes it. Its id → type entry lives in another slot:
-- the store deletes it after the script, from the ids the script replies.
--@include type_keys.lua
--@include row.lua
--@include indexes.lua
--@include unique.lua

-- delete the hash, log and error history of a job that is in no state
-- index any more, and drop it from the type's jobs
local function delete_job(jobkey, logkey, errkey, id)
  redis.call('ZREM', K_JOBS, id)
  redis.call('DEL', jobkey, logkey, errkey)
end

-- remove a job, row its row: out of the index of its state, its unique key
-- free, then deleted
local function remove_job(jobkey, logkey, errkey, id, row)
  leave(jobkey, id, row[R.state])
  release_key(row[R.unique_key], id)
  delete_job(jobkey, logkey, errkey, id)
end

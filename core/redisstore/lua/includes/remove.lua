-- Deleting a job: what remove_job, bulk's remove, clean, and complete and
-- fail (for a job whose retention is true) share, so that a job goes the
-- same way whoever removes it.
--@include type_keys.lua
--@include row_gen.lua
--@include indexes.lua
--@include unique.lua
--@include many.lua
--@include deps.lua

-- Deletions gathered over a batch (new_deletions, delete_later), made in
-- two calls at its end (flush_deletions) rather than two per job: a
-- redis.call costs about as much as the work of a small one. Until the
-- flush a gathered job is still stored: d.gone[id] says it is deleted, for
-- the caller to treat it so (complete.lua answers a second op on it as on
-- a deleted job).
local function new_deletions()
  return {ids = {}, keys = {}, gone = {}}
end
local function delete_later(d, jobkey, logkey, errkey, id)
  local keys = d.keys
  d.ids[#d.ids + 1], d.gone[id] = id, true
  keys[#keys + 1], keys[#keys + 2], keys[#keys + 3] = jobkey, logkey, errkey
end
local function flush_deletions(d)
  call_many('ZREM', K_JOBS, d.ids)
  call_many('DEL', nil, d.keys)
end

-- delete the hash, log and error history of a job that is in no state
-- index any more, and drop it from the type's jobs
local function delete_job(jobkey, logkey, errkey, id)
  local d = new_deletions()
  delete_later(d, jobkey, logkey, errkey, id)
  flush_deletions(d)
end

-- remove a job, row its row: out of the index of its state, its unique key
-- free, then deleted
local function remove_job(jobkey, logkey, errkey, id, row)
  leave(jobkey, id, row[ROW_STATE])
  -- removed before it completed: counts as failed for those waiting
  -- (recorded at 0, no now here: the sweep may take it at once)
  if row[ROW_STATE] ~= 'complete' then tell_dependents(jobkey, id, 'f', 0) end
  give_up_key(row[ROW_UNIQUE_KEY], id)
  -- its dependency sets, if it had any, go in the same DEL as its hash
  local d = new_deletions()
  delete_later(d, jobkey, logkey, errkey, id)
  d.keys[#d.keys + 1], d.keys[#d.keys + 2] = pending_key(id), dependents_key(id)
  flush_deletions(d)
end

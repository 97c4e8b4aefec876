-- bulk: one action on the jobs of one state of one type that pass the
-- filters, bounded by the candidates the caller read just before from the
-- state's index (at most the call's limit). Each candidate is checked
-- again: a job that left the state meanwhile is skipped. Each action is the
-- single-job move, from the include that move's own script uses:
--
--   retry    failed or cancelled → inactive   move_state   (set_state)
--   promote  delayed → inactive now           move_state   (set_state)
--   remove   any state → deleted              remove       (remove_job)
--   cancel   delayed, inactive, active → cancelled  cancel_job  (cancel)
--
-- The service checked that the action is valid from the state.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[8+3i]      job:<id_i>
-- KEYS[9+3i]      log:<id_i>
-- KEYS[10+3i]     errors:<id_i>
--
-- ARGV[1]    now     unix ms
-- ARGV[2]    action  retry, promote, remove or cancel
-- ARGV[3]    state   the state the candidates were read from
-- ARGV[4]    error   "" or a text the job's error must contain
-- ARGV[5]    before  0 or unix ms: only jobs updated before it
-- ARGV[6]    group   "" or the group (includes/error_group.lua) the
--                    job's error must be in
-- ARGV[6+i]  id_i    a candidate
--
-- Reply: {matched, row...}: how many candidates were still in the state
-- and passed the filters, and the row of each job the action was applied
-- to (for remove: as it was), in the order of the candidates.
-- Events: the service publishes, per job, what the single-job method
-- does: job.enqueue (retry), job.promotion (promote), job.remove
-- (remove), job.cancel (cancel).
--@include type_keys.lua
--@include row_gen.lua
--@include move_state.lua
--@include remove.lua
--@include cancel_job.lua
--@include error_group.lua

local now, action, state = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local err, before, group = ARGV[4], tonumber(ARGV[5]), ARGV[6]
local out = {0}
for i = 1, #ARGV - 6 do
  local id = ARGV[6 + i]
  local jobkey, logkey, errkey = KEYS[8 + 3 * i], KEYS[9 + 3 * i], KEYS[10 + 3 * i]
  local row = snapshot(jobkey)
  if row[ROW_ID] and row[ROW_STATE] == state
    and (err == '' or string.find(row[ROW_ERROR] or '', err, 1, true))
    and (group == '' or error_group(row[ROW_ERROR] or '') == group)
    and (before == 0 or (tonumber(row[ROW_UPDATED_AT]) or 0) < before) then
    out[1] = out[1] + 1
    if action == 'remove' then
      remove_job(jobkey, logkey, errkey, id, row)
      out[#out + 1] = row
    else
      if action == 'cancel' then
        cancel_job(jobkey, id, state, now)
      else -- retry, promote
        move_state(jobkey, id, state, 'inactive', now)
      end
      out[#out + 1] = snapshot(jobkey)
    end
  end
end
return out

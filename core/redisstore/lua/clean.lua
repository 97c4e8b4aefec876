-- clean: remove the finished jobs of one type, in one state, that their
-- retention no longer keeps (remove_on_complete / remove_on_fail, or the
-- type's default; a cancelled job has only the default). The candidates were read just before, oldest first,
-- from the state's index starting at the type's clean cursor; each is
-- checked again here, so a job removed, retried or moved meanwhile is
-- skipped. A job's own rule wins over the default (as in BullMQ); a job
-- with neither is kept. Bounded: at most the candidates given.
--
-- A job goes when
--   its rule is true (a job that got to the state without complete.lua or
--     fail.lua deleting it: set_state, or a stall that failed it), or
--   age > 0 and it finished at or before now - age, or
--   count > 0 and count or more jobs of the index are newer (ZREVRANK).
-- It goes as remove_job.lua removes a job (includes/remove.lua).
--
-- The cursor is the rank in the index where the next call starts reading:
-- the jobs before it were kept by the calls that read them. It moves on by
-- the jobs this call kept, and back to 0 once the read reached the newest,
-- so jobs kept for now (their age not reached) are looked at again on the
-- next round, and a run of kept jobs never stops the cleaner short of the
-- jobs behind it.
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
-- ARGV[2]    state   complete, failed or cancelled
-- ARGV[3]    rule    the type's default for the state: "<age ms>:<count>",
--                    "" for none
-- ARGV[4]    cursor  the rank the candidates were read from
-- ARGV[5]    at_end  1 when the candidates reach the newest job
-- ARGV[5+i]  id_i    a candidate's id, oldest first
--
-- Reply: the ids of the jobs removed.
-- Events: the service publishes queue.cleaned {type, state, removed} when
-- it removed some.
--@include type_keys.lua
--@include row_gen.lua
--@include remove.lua

local now, state, default = tonumber(ARGV[1]), ARGV[2], ARGV[3]
-- whether a job of the type had dependents (includes/deps.lua): then each
-- candidate's own field says whether jobs wait for it
local deps_on = redis.call('HGET', K_STATS, 'dependents') == '1'
local cursor, at_end = tonumber(ARGV[4]), ARGV[5] == '1'
-- the state's index, and the fields of a job's own rule (none for
-- cancelled: the default alone decides)
local index, at_once, limit = K_COMPLETE, ROW_ROC, ROW_ROC_LIMIT
if state == 'failed' then index, at_once, limit = K_FAILED, ROW_ROF, ROW_ROF_LIMIT end
if state == 'cancelled' then index, at_once, limit = K_CANCELLED, nil, nil end
local cursor_field = 'clean_' .. state

-- "<age>:<count>" as two numbers (0: no limit); nil for ""
local function rule_of(s)
  if not s or s == '' then return nil end
  local age, count = string.match(s, '^(%d+):(%d+)$')
  return tonumber(age), tonumber(count)
end

local removed = {}
local kept = 0
for i = 6, #ARGV do
  local id = ARGV[i]
  local n = i - 5
  local jobkey, logkey, errkey = KEYS[8 + 3 * n], KEYS[9 + 3 * n], KEYS[10 + 3 * n]
  local finished = redis.call('ZSCORE', index, id)
  if finished then
    local row = snapshot(jobkey)
    local go = false
    -- a job others depend on is kept: they may not have read its result
    -- yet (dependencies), and whether they did is in their slots
    local waited = deps_on and has_dependents(jobkey)
    if row[ROW_ID] and row[ROW_STATE] == state and not waited then
      if at_once and row[at_once] == '1' then
        go = true
      else
        local age, count
        if limit then age, count = rule_of(row[limit]) end
        if not age then age, count = rule_of(default) end
        if age then
          go = (age > 0 and tonumber(finished) <= now - age)
            or (count > 0 and redis.call('ZREVRANK', index, id) >= count)
        end
      end
    end
    if go then
      remove_job(jobkey, logkey, errkey, id, row)
      removed[#removed + 1] = id
    else
      kept = kept + 1
    end
  end
end

if at_end or cursor + kept == 0 then
  redis.call('HDEL', K_STATS, cursor_field)
else
  redis.call('HSET', K_STATS, cursor_field, cursor + kept)
end
return removed

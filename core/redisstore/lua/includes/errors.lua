-- A job's error history: the last ERRORS_KEPT failed attempts, newest
-- last, in the job's own list errors:<id> (keys.go), not in its row: every
-- script reads and replies the row, and every event carries it, where 25
-- errors with stacks of up to 16 KiB would weigh on each. Only get reads
-- the list. Each entry is a JSON object, written here and nowhere else:
-- {"attempt":n,"at":ms,"error":"...","stack":"..."} (stack left out when
-- there is none). core.ErrorsKept says the same number to Go.

local ERRORS_KEPT = 25

-- add the attempts-th failed attempt to the list errkey
local function record_error(errkey, attempts, now, err, stack)
  local entry = '{"attempt":' .. attempts .. ',"at":' .. now .. ',"error":' .. cjson.encode(err)
  if stack and stack ~= '' then entry = entry .. ',"stack":' .. cjson.encode(stack) end
  redis.call('RPUSH', errkey, entry .. '}')
  redis.call('LTRIM', errkey, -ERRORS_KEPT, -1)
end

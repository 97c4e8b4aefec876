-- Calls with many arguments. Lua's unpack refuses more values than its C
-- stack holds (about 8000), so a script that writes the members of a whole
-- batch in one call (a bulk of up to MaxBulk jobs, which core's config may
-- raise past that) splits the call.

-- MANY_CHUNK is how many arguments one call takes at most: even, so that
-- ZADD's score-member pairs never split.
local MANY_CHUNK = 4000

-- call_many runs cmd on key with args, MANY_CHUNK at a time (none when
-- args is empty), and returns the replies that are lists joined into one,
-- in order (ZMSCORE's scores).
local function call_many(cmd, key, args)
  local out = {}
  for i = 1, #args, MANY_CHUNK do
    local r = redis.call(cmd, key, unpack(args, i, math.min(i + MANY_CHUNK - 1, #args)))
    if type(r) == 'table' then
      for k = 1, #r do out[#out + 1] = r[k] end
    end
  end
  return out
end

-- Calls with many arguments. Lua's unpack refuses more values than its C
-- stack holds (about 8000), so a script that writes the members of a whole
-- batch in one call (a bulk of up to MaxBulk jobs, which core's config may
-- raise past that) splits the call.

-- MANY_CHUNK is how many arguments one call takes at most: even, so that
-- ZADD's score-member pairs never split.
local MANY_CHUNK = 4000

-- call_part runs cmd on key (nil for a command of keys alone, as DEL)
-- with its option opt (nil: none; ZADD's NX) and args[i..j].
local function call_part(cmd, key, args, i, j, opt)
  if opt then return redis.call(cmd, key, opt, unpack(args, i, j)) end
  if key then return redis.call(cmd, key, unpack(args, i, j)) end
  return redis.call(cmd, unpack(args, i, j))
end

-- call_many runs cmd on key (nil: see call_part), with the option opt
-- (nil: none) in every call, and args, MANY_CHUNK at a time (none when
-- args is empty), and returns the sum of the replies (ZADD's count of
-- members added). Every write a script gathers over its batch goes
-- through it.
local function call_many(cmd, key, args, opt)
  if #args <= MANY_CHUNK then -- most calls: no loop
    if #args == 0 then return 0 end
    return call_part(cmd, key, args, 1, #args, opt)
  end
  local sum = 0
  for i = 1, #args, MANY_CHUNK do
    sum = sum + call_part(cmd, key, args, i, math.min(i + MANY_CHUNK - 1, #args), opt)
  end
  return sum
end

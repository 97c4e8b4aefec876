-- Unique keys: an unfinished job has its key in K_UNIQUE (key → id); a
-- finished job gives it up; a job that runs again takes it back unless
-- another job has it by now.
--@include type_keys.lua

local function give_up_key(uk, id)
  if uk and uk ~= '' and redis.call('HGET', K_UNIQUE, uk) == id then
    redis.call('HDEL', K_UNIQUE, uk)
  end
end
local function give_up_unique(jobkey, id)
  give_up_key(redis.call('HGET', jobkey, 'unique_key'), id)
end
local function retake_unique(jobkey, id)
  local uk = redis.call('HGET', jobkey, 'unique_key')
  if uk and uk ~= '' then redis.call('HSETNX', K_UNIQUE, uk, id) end
end

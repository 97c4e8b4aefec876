-- A create's half of dependencies (deps.lua has the rest): a new job
-- that waits enters what it waits for, and the jobs it waits for learn of
-- it. Apart from deps.lua so that a create pays for these helpers alone.
--@include type_keys.lua
--@include many.lua

-- new_seen is a create call's cache for wait_for (below), made at the
-- call's first job with dependencies or dependents
local function new_seen() return {state = {}, linked = {}, counted = {}, handover = {}, links = {}, now = false} end

-- wait_for enters new job id's dependencies, deps as create sends them
-- ("5,7:email": an id of this type, or an id and its other type), and
-- returns how many it waits for: none when every one of this type is
-- complete and there are no others (which a link settles, lua/dep_link.lua).
-- A dependency of this type that failed, was cancelled or is gone is
-- pending, and settled as failed by a hand-over.
--
-- The dependencies pending go in the job's pending set, but for a job of
-- one dependency alone (one_dep: its depends_on holds one id, as each job
-- of a fan-out): its pending count and depends_on say all a set would,
-- and settle (deps.lua) takes them so; a fan-out's create spares an SADD
-- and a key per job.
--
-- seen caches, over one create call, each dependency's state (a fan-out
-- reads its root once) and gathers each one's new dependents, the
-- hand-overs the call records (score and member pairs, as ZADD takes
-- them), and its links, "<dep>:<id>" per dependency of another type, by
-- that type (links[t], and links in order), which count_dependents enters
-- at the call's end (the script is atomic: no one sees the jobs before):
-- one hand-over holds all the links of the call to one type, the record
-- of a flow's edges across types cheapest to write, read and forget
-- (docs/benchmarks-log.md).
local function wait_for(id, own_type, deps, now, seen, one_dep)
  local pending = {}
  for tok in string.gmatch(deps, '[^,]+') do
    local dep, t = string.match(tok, '^(%d+):?(.*)$')
    if t == '' then
      local st = seen.state[dep]
      if st == nil then
        st = redis.call('HGET', job_key(dep), 'state') or false
        seen.state[dep] = st
      end
      if st ~= 'complete' then
        pending[#pending + 1] = dep
        if st and st ~= 'failed' and st ~= 'cancelled' then
          local members = seen.linked[dep]
          if not members then
            members = {}
            seen.linked[dep] = members
            seen.linked[#seen.linked + 1] = dep
          end
          members[#members + 1] = id
        else
          local h = seen.handover
          h[#h + 1], h[#h + 2] = now, 's:' .. own_type .. ':' .. id .. ':' .. dep .. ':f'
        end
      end
    else
      pending[#pending + 1] = dep
      local l = seen.links[t]
      if not l then
        l = {}
        seen.links[t] = l
        seen.links[#seen.links + 1] = t
        seen.now = now
      end
      l[#l + 1] = dep .. ':' .. id
    end
  end
  if #pending > 1 or (#pending == 1 and not one_dep) then call_many('SADD', pending_key(id), pending) end
  return #pending
end

-- count_dependents enters the dependents wait_for found over the call
-- (seen.linked: each dependency, in order, and its new dependents) in one
-- call per dependency, and counts those it added in its dependents field;
-- and records the call's hand-overs, a link of each type among them:
-- "l:<type>:<dep>:<id>,<dep>:<id>..." (keys.go)
local function count_dependents(seen)
  local h = seen.handover
  for _, t in ipairs(seen.links) do
    h[#h + 1], h[#h + 2] = seen.now, 'l:' .. t .. ':' .. table.concat(seen.links[t], ',')
  end
  call_many('ZADD', K_HANDOVER, h)
  if #seen.linked > 0 or next(seen.counted) then redis.call('HSET', K_STATS, 'dependents', '1') end
  for _, dep in ipairs(seen.linked) do
    local added = call_many('SADD', dependents_key(dep), seen.linked[dep])
    -- a job of the call has them counted already (its dependents field,
    -- from Go, written with it)
    if added > 0 and not seen.counted[dep] then redis.call('HINCRBY', job_key(dep), 'dependents', added) end
  end
end

-- The keys of one job type that every per-type script gets first, as
-- KEYS[1..10], in this order (typeKeys.fixed in keys.go builds them; keys.go
-- says what each holds). Every key shares the type's hash tag, so a script
-- runs on Redis Cluster too.
local K_READY, K_DUE, K_LEASES = KEYS[1], KEYS[2], KEYS[3]
local K_JOBS, K_COMPLETE, K_FAILED = KEYS[4], KEYS[5], KEYS[6]
local K_UNIQUE, K_SEQ, K_STATS = KEYS[7], KEYS[8], KEYS[9]
local K_CANCELLED = KEYS[10]

-- key_base is a key template of the type's job 0 (job:0, log:0, errors:0,
-- given in KEYS after the ten) without its final "0": a script that
-- handles many jobs appends each job's id to it, rather than getting a
-- key per job. Such a key has the type's hash tag, so on Redis Cluster it
-- is in the slot of the declared keys.
local function key_base(template)
  return string.sub(template, 1, -2)
end

-- The keys of dependencies (keys.go): siblings of ready, with its hash
-- tag, so in the slot of the declared keys. Taking them in KEYS would shift
-- every per-job template of every script for what few jobs use.
local TYPE_BASE = string.sub(K_READY, 1, -6) -- without "ready"
local K_WAITING, K_HANDOVER = TYPE_BASE .. 'waiting', TYPE_BASE .. 'handover'
local function job_key(id) return TYPE_BASE .. 'job:' .. id end
local function pending_key(id) return TYPE_BASE .. 'pending:' .. id end
local function dependents_key(id) return TYPE_BASE .. 'dependents:' .. id end

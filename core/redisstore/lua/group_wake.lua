-- group_wake: take back into ready the parked jobs of a type's groups
-- whose wait ended by now (includes/group_limit.lua wake_groups), as many
-- as each group may start. The lease scripts do the same first thing; a
-- lease of several types runs this for a type with group limits before
-- it reads the types' ready heads (lease.go), since a type whose ready
-- jobs are all parked has no head to lease from, so no lease script runs
-- for it.
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
--
-- ARGV[1] now  unix ms
--
-- Reply: how many jobs came back into ready.
-- Events: none.
--@include group_limit.lua

local before = redis.call('ZCARD', K_READY)
group_helpers().wake_groups(tonumber(ARGV[1]))
return redis.call('ZCARD', K_READY) - before

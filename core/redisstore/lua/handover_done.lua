-- handover_done: a hand-over recorded in this slot is finished (deps.go
-- ran its second step): forget it.
--
-- KEYS[1..10]  the type's keys (includes/type_keys.lua)
--
-- ARGV[1] the hand-over, as handover holds it (keys.go)
--
-- Reply: 1 when it was there, else 0.
-- Events: none.
--@include type_keys.lua

return redis.call('ZREM', K_HANDOVER, ARGV[1])

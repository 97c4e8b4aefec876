-- handover_done: hand-overs recorded in this slot are finished (deps.go
-- ran their second step): forget them.
--
-- KEYS[1..10]  the type's keys (includes/type_keys.lua)
--
-- ARGV  the hand-overs, as handover holds them (keys.go)
--
-- Reply: how many were there.
-- Events: none.
--@include type_keys.lua
--@include many.lua

return call_many('ZREM', K_HANDOVER, ARGV)

-- add_log: append a line to a job's log, keeping the newest max_lines.
-- Each line is stored with its time: "\255<now> <line>". A byte 255 never
-- occurs in UTF-8, and every line core takes is UTF-8 (the JSON decoder
-- sees to it), so a line stored before times were (no mark) reads as a
-- line without a time, never as a time (logEntry in store.go reads both).
--
-- KEYS[1] ready  KEYS[2] due  KEYS[3] leases  KEYS[4] jobs  KEYS[5] complete
-- KEYS[6] failed  KEYS[7] unique  KEYS[8] seq  KEYS[9] stats
-- KEYS[10] cancelled
--                 the type's keys (includes/type_keys.lua)
-- KEYS[11]        job:<id>
-- KEYS[12]        log:<id>
--
-- ARGV[1]  line       the log line
-- ARGV[2]  max_lines  how many lines a log keeps, the newest
-- ARGV[3]  now        unix ms, the line's time
--
-- Reply: the job's row, or {} when there is no such job (nothing stored).
-- Events: the service publishes job.log.<id>.<type> with the line.
--@include row_gen.lua

local row = snapshot(KEYS[11])
if not row[ROW_ID] then return {} end
redis.call('RPUSH', KEYS[12], string.char(255) .. ARGV[3] .. ' ' .. ARGV[1])
redis.call('LTRIM', KEYS[12], -tonumber(ARGV[2]), -1)
return row

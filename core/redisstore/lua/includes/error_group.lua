-- error_group: the group a job's error belongs to, its message with what
-- varies from one failure to the next taken out, so that "dial tcp
-- 10.0.0.7:6379: connection refused" and "dial tcp 10.0.0.9:6379:
-- connection refused" are one group. The steps, in order (docs/triage.md
-- says the same to users; failed_errors.lua groups by it, bulk.lua
-- filters by it):
--
--   1. only the first line counts (a Go error's stack is in errors:<id>);
--   2. a quoted value becomes <str>: "…" and `…` whatever they hold, '…'
--      when it holds no blank (so the apostrophes of "can't … won't" stay);
--   3. a UUID becomes <id>;
--   4. an address becomes <addr>: an IPv4 address with or without its
--      port, a bracketed IPv6 address with its port, name:port, 0x…;
--   5. a run of 8 or more hex digits holding a digit becomes <id>;
--   6. every other run of digits (with its decimals) becomes <n>;
--   7. blanks collapse to one space, the ends are trimmed, and the group
--      is cut to ERROR_GROUP_MAX bytes (before a character the cut would
--      split: a group goes to clients as JSON and comes back to bulk, so
--      it must stay valid UTF-8).
--
-- An empty error is the group "".
local ERROR_GROUP_MAX = 200

-- cut_utf8 is the first n bytes of s, less the bytes of a UTF-8 sequence
-- the cut would leave incomplete.
local function cut_utf8(s, n)
  if #s <= n then return s end
  s = string.sub(s, 1, n)
  local i = #s
  while i > 0 and string.byte(s, i) >= 0x80 and string.byte(s, i) < 0xC0 do i = i - 1 end
  local lead = i > 0 and string.byte(s, i) or 0
  if lead >= 0xC0 then
    local need = (lead >= 0xF0 and 4) or (lead >= 0xE0 and 3) or 2
    if #s - i + 1 < need then s = string.sub(s, 1, i - 1) end
  end
  return s
end

local function error_group(msg)
  if not msg or msg == '' then return '' end
  local s = string.match(msg, '^[^\n]*')
  s = string.gsub(s, '"[^"]*"', '<str>')
  s = string.gsub(s, '`[^`]*`', '<str>')
  s = string.gsub(s, "'[^'%s]*'", '<str>')
  local h4 = '%x%x%x%x'
  s = string.gsub(s, h4 .. h4 .. '%-' .. h4 .. '%-' .. h4 .. '%-' .. h4 .. '%-' .. h4 .. h4 .. h4, '<id>')
  s = string.gsub(s, '%d+%.%d+%.%d+%.%d+:%d+', '<addr>')
  s = string.gsub(s, '%d+%.%d+%.%d+%.%d+', '<addr>')
  s = string.gsub(s, '%[[%x:%.]*%]:%d+', '<addr>')
  s = string.gsub(s, '[%w%.%-_]+:%d+', '<addr>')
  s = string.gsub(s, '0[xX]%x+', '<addr>')
  s = string.gsub(s, '%x+', function(run)
    if #run >= 8 and string.find(run, '%d') then return '<id>' end
    return run
  end)
  s = string.gsub(s, '%d+%.%d+', '<n>')
  s = string.gsub(s, '%d+', '<n>')
  s = string.gsub(s, '%s+', ' ')
  s = string.match(s, '^ ?(.-) ?$')
  return cut_utf8(s, ERROR_GROUP_MAX)
end

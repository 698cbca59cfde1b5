--- The request target as the client sent it: path segments split on "/" and
-- percent-decoded one by one, so that "a%2Fb" stays one segment "a/b".
local char, gmatch, gsub, match, tonumber = string.char, string.gmatch, string.gsub,
    string.match, tonumber

local _M = {}

local function hex_byte(hex)
  return char(tonumber(hex, 16))
end

--- Percent-decode one path segment; "+" stays "+", a stray "%" stays "%".
function _M.unescape(segment)
  return (gsub(segment, "%%(%x%x)", hex_byte))
end

--- Decoded path segments of the raw request target `raw` (ngx.var.request_uri);
-- the query string is left to ngx.req.get_uri_args.
function _M.segments(raw)
  local segments = {}
  for segment in gmatch(match(raw, "^[^?]*"), "/([^/]*)") do
    segments[#segments + 1] = _M.unescape(segment)
  end
  return segments
end

return _M

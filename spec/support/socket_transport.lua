--- A merchantapi transport over LuaSocket, for the specs: it shows that any
-- HTTP client can carry the calls (merchantapi.dispatch), and lets the
-- endpoint specs run over something that is not libcurl.
--
-- Plain HTTP only (the sandbox's port); one connection per request.
local socket_http = require "socket.http"
local ltn12 = require "ltn12"

local pairs, tostring, concat = pairs, tostring, table.concat

--- Performs `request` (see merchantapi.dispatch) with socket.http.
-- @treturn table|nil `{ status, headers, body }`, or nil and `{ message, sent }`.
return function(request)
  local headers = {}
  for name, value in pairs(request.headers) do
    headers[name:lower()] = value
  end
  local body = request.body
  if request.method ~= "GET" and request.method ~= "HEAD" then
    body = body or ""
    headers["content-length"] = tostring(#body)
  end
  local chunks = {}
  socket_http.TIMEOUT = request.timeout
  local ok, status, response_headers = socket_http.request({
    url = request.url,
    method = request.method,
    headers = headers,
    source = body and ltn12.source.string(body) or nil,
    sink = ltn12.sink.table(chunks),
    redirect = false,
  })
  if not ok then
    -- only a refused connection provably sent nothing
    return nil, { message = tostring(status), sent = status ~= "connection refused" }
  end
  return { status = status, headers = response_headers, body = concat(chunks) }
end

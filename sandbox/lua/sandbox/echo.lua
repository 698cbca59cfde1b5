--- Echo: any method on /api/public/v1/echo and /api/public/v1/echo/<anything>
-- answers with what it received, so that specs can compare the bytes a client
-- sent. The body is written as a JSON string of its raw bytes: never decoded.
local jsontext = require "sandbox.jsontext"
local respond = require "sandbox.respond"

local concat = table.concat
local match = string.match
local quote = jsontext.quote

local _M = {}

-- The request body as received; "" for an empty one the client announced
-- (Content-Length: 0, chunked), nil when the request has no body at all.
local function raw_body()
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  if body then
    return body
  end
  local path = ngx.req.get_body_file() -- only past client_body_buffer_size
  if path then
    local file = assert(io.open(path, "rb"))
    body = file:read("*a")
    file:close()
    return body
  end
  if ngx.var.http_content_length or ngx.var.http_transfer_encoding then
    return ""
  end
  return nil
end

local function string_or_null(s)
  return s and quote(s) or "null"
end

--- Answer the echo request (the method is not checked). Two paths answer
-- without primary data: `/echo/data-null` (`"data":null`, the echo in `meta`)
-- and `/echo/no-content` (204, no body); `/echo/error` answers 422 with an
-- error document that has top-level meta, jsonapi and links, and a detail
-- that is an array.
function _M.handle(method)
  local raw = ngx.var.request_uri
  local path = match(raw, "^[^?]*")
  local body = raw_body()
  if path == "/api/public/v1/echo/no-content" then
    ngx.status = 204
    return ngx.exit(204)
  end
  if path == "/api/public/v1/echo/error" then
    return respond.send(422, concat({
      '{"errors":[{"status":"422","code":"validation_failed","title":"Invalid attributes",',
      '"detail":[{"field":"amount","message":"is too low"}],',
      '"source":{"pointer":"/data/attributes/amount"},"meta":{"rule":"minimum"}}],',
      '"meta":{"method":', quote(method), ',"request_id":', quote(ngx.var.request_id), '},',
      '"jsonapi":{"version":"1.1"},"links":{"self":', quote(path), '}}',
    }))
  end
  local echo = concat({
    '{"method":', quote(method),
    ',"path":', quote(path),
    ',"query":', string_or_null(match(raw, "%?(.*)$")),
    ',"contentType":', string_or_null(ngx.var.http_content_type),
    ',"body":', string_or_null(body),
    '}',
  })
  local doc
  if path == "/api/public/v1/echo/data-null" then
    doc = concat({ '{"data":null,"meta":', echo, ',"jsonapi":{"version":"1.0"}}' })
  else
    doc = concat({
      '{"data":{"type":"echoes","id":', quote(ngx.var.request_id), ',"attributes":', echo,
      -- nginx's serial number of the connection: one per kept-alive connection
      '},"meta":{"connection":', ngx.var.connection, '},"jsonapi":{"version":"1.0"}}',
    })
  end
  return respond.send(method == "POST" and 201 or 200, doc)
end

return _M

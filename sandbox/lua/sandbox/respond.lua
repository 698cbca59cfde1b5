--- Writing responses: documents, JSON:API error documents, control answers.
local jsontext = require "sandbox.jsontext"

local concat = table.concat
local quote = jsontext.quote

local _M = {}

_M.JSONAPI = "application/vnd.api+json"

--- Send `body` with `status` and `content_type` (default JSON:API) and end
-- the request.
function _M.send(status, body, content_type)
  ngx.status = status
  ngx.header["Content-Type"] = content_type or _M.JSONAPI
  ngx.header["Content-Length"] = #body
  ngx.print(body)
  return ngx.exit(status)
end

--- The text of a JSON:API error document with one error. `source` is the raw
-- JSON text of the error's `source` member, if any.
function _M.error_doc(status, code, title, detail, source)
  local echo = ngx.get_phase() ~= "init" and ngx.ctx.echo_authorization -- echo_key mode
  if echo then
    title = title .. " for " .. echo
    detail = (detail or "") .. " (authorization: " .. echo .. ")"
  end
  local parts = { '{"errors":[{"status":', status, ',"code":', quote(code), ',"title":', quote(title) }
  if detail then
    parts[#parts + 1] = ',"detail":'
    parts[#parts + 1] = quote(detail)
  end
  if source then
    parts[#parts + 1] = ',"source":'
    parts[#parts + 1] = source
  end
  parts[#parts + 1] = "}]}"
  return concat(parts)
end

--- Send a JSON:API error document.
function _M.error(status, code, title, detail, source)
  return _M.send(status, _M.error_doc(status, code, title, detail, source))
end

function _M.not_found(detail)
  return _M.error(404, "not_found", "Not found", detail)
end

function _M.method_not_allowed(allowed)
  ngx.header["Allow"] = allowed
  return _M.error(405, "method_not_allowed", "Method not allowed",
    ngx.req.get_method() .. " is not allowed here; allowed: " .. allowed)
end

--- Send a plain JSON answer of a control route.
function _M.control(status, body)
  return _M.send(status, body, "application/json")
end

return _M

--- The test-control routes under /__sandbox/ (no api key needed).
local cjson = require "cjson.safe"
local respond = require "sandbox.respond"
local state = require "sandbox.state"

local format, type = string.format, type
local floor = math.floor

local _M = {}

local MAX_LATENCY_MS = 60000

local function bad_request(detail)
  return respond.control(400, format('{"error":%s}', cjson.encode(detail)))
end

local ROUTES = {}

ROUTES["health"] = { GET = function()
  return respond.control(200, '{"ok":true}')
end }

ROUTES["reset"] = { POST = function()
  state.reset()
  return respond.control(200, '{"reset":true}')
end }

ROUTES["count"] = { GET = function()
  local id = ngx.req.get_uri_args().id
  if type(id) ~= "string" then
    return bad_request("give the resource id as ?id=")
  end
  return respond.control(200, format('{"count":%d}', state.count(id)))
end }

ROUTES["config"] = {
  GET = function()
    return respond.control(200, format('{"latency_ms":%d}', state.latency(nil)))
  end,
  POST = function()
    ngx.req.read_body()
    local config = cjson.decode(ngx.req.get_body_data() or "")
    if type(config) ~= "table" then
      return bad_request('send a JSON object such as {"latency_ms":200}')
    end
    local ms, id = config.latency_ms, config.id
    if type(ms) ~= "number" or ms < 0 or ms > MAX_LATENCY_MS or ms ~= floor(ms) then
      return bad_request("latency_ms must be an integer from 0 to " .. MAX_LATENCY_MS)
    end
    if id ~= nil and type(id) ~= "string" then
      return bad_request("id must be a string")
    end
    state.set_latency(ms, id)
    return respond.control(200, format('{"latency_ms":%d}', ms))
  end,
}

--- Answer control route `name` (the segment after /__sandbox/).
function _M.handle(method, name)
  local route = ROUTES[name]
  if not route then
    return respond.control(404, format('{"error":"no control route /__sandbox/%s"}', (name:gsub('[^%w%-_]', ''))))
  end
  local handler = route[method]
  if not handler then
    local allowed = {}
    for m in pairs(route) do allowed[#allowed + 1] = m end
    ngx.header["Allow"] = table.concat(allowed, ", ")
    return respond.control(405, '{"error":"method not allowed"}')
  end
  return handler()
end

return _M

--- The test-control routes under /__sandbox/ (no api key needed).
local cjson = require "cjson.safe"
local payouts = require "sandbox.payouts"
local respond = require "sandbox.respond"
local state = require "sandbox.state"

local format, tostring, type = string.format, tostring, type
local floor = math.floor

local _M = {}

local MAX_LATENCY_MS = 60000
local MAX_TXID_AFTER_MS = 3600000

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

ROUTES["headers"] = { GET = function()
  local id = ngx.req.get_uri_args().id
  if type(id) ~= "string" then
    return bad_request("give the resource id as ?id=")
  end
  return respond.control(200, '{"headers":' .. (state.headers(id) or "null") .. "}")
end }

-- {"traceparents":[...]}: the traceparent header of each request for ?id=
-- since the last reset, in order ("-" for one without): W3C Trace Context.
ROUTES["traceparents"] = { GET = function()
  local id = ngx.req.get_uri_args().id
  if type(id) ~= "string" then
    return bad_request("give the resource id as ?id=")
  end
  local list = state.traceparents(id)
  return respond.control(200, '{"traceparents":' .. (#list == 0 and "[]" or cjson.encode(list)) .. "}")
end }

-- An integer number in [low, high], or nil.
local function integer_in(value, low, high)
  if type(value) == "number" and value >= low and value <= high and value == floor(value) then
    return value
  end
end

ROUTES["config"] = {
  GET = function()
    local txid_after = state.txid_after(nil) or payouts.DEFAULT_TXID_AFTER_MS
    return respond.control(200,
      format('{"latency_ms":%d,"txid_after_ms":%d,"echo_key":%s}', state.latency(nil), txid_after,
        tostring(state.echo_key())))
  end,
  -- {"latency_ms":N} and/or {"txid_after_ms":N}, with "id" for one resource only;
  -- {"echo_key":true|false} for every API answer
  POST = function()
    ngx.req.read_body()
    local config = cjson.decode(ngx.req.get_body_data() or "")
    if type(config) ~= "table" or (config.latency_ms == nil and config.txid_after_ms == nil
        and config.echo_key == nil) then
      return bad_request('send a JSON object such as {"latency_ms":200}'
        .. ' or {"id":"<payout id>","txid_after_ms":500} or {"echo_key":true}')
    end
    if config.echo_key ~= nil and type(config.echo_key) ~= "boolean" then
      return bad_request("echo_key must be true or false")
    end
    local id, latency, txid_after = config.id, nil, nil
    if id ~= nil and type(id) ~= "string" then
      return bad_request("id must be a string")
    end
    if config.latency_ms ~= nil then
      latency = integer_in(config.latency_ms, 0, MAX_LATENCY_MS)
      if not latency then
        return bad_request("latency_ms must be an integer from 0 to " .. MAX_LATENCY_MS)
      end
    end
    if config.txid_after_ms ~= nil then
      txid_after = integer_in(config.txid_after_ms, -1, MAX_TXID_AFTER_MS)
      if not txid_after then
        return bad_request("txid_after_ms must be an integer from -1 (never) to " .. MAX_TXID_AFTER_MS)
      end
    end
    local answer = {}
    if config.echo_key ~= nil then
      state.set_echo_key(config.echo_key)
      answer[#answer + 1] = format('"echo_key":%s', tostring(config.echo_key))
    end
    if latency then
      state.set_latency(latency, id)
      answer[#answer + 1] = format('"latency_ms":%d', latency)
    end
    if txid_after then
      state.set_txid_after(txid_after, id)
      answer[#answer + 1] = format('"txid_after_ms":%d', txid_after)
    end
    return respond.control(200, "{" .. table.concat(answer, ",") .. "}")
  end,
}

--- Answer control route `name` (the segment after /__sandbox/).
function _M.handle(method, name)
  local route = ROUTES[name]
  if not route then
    local shown = name:gsub('[^%w%-_]', '')
    return respond.control(404, format('{"error":"no control route /__sandbox/%s"}', shown))
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

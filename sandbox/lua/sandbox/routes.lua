--- Entry point: reads the raw request target, counts, delays, checks the key
-- and hands the request to the resource it names.
--
--   PUT|GET /api/public/v1/payouts/:id           sandbox.payouts
--   GET     /api/public/v1/channels/:id          sandbox.channels
--   GET     /api/public/v1/accounts/:id/addresses sandbox.addresses
--   any     /api/public/v1/echo[/<anything>]     sandbox.echo (counted as id "echo")
--           /__sandbox/<route>                   sandbox.control (no key)
local addresses = require "sandbox.addresses"
local channels = require "sandbox.channels"
local control = require "sandbox.control"
local echo = require "sandbox.echo"
local faults = require "sandbox.faults"
local fixtures = require "sandbox.fixtures"
local payouts = require "sandbox.payouts"
local respond = require "sandbox.respond"
local state = require "sandbox.state"
local uri = require "sandbox.uri"

local match, tonumber, type = string.match, tonumber, type

local _M = {}

_M.API_KEY = "sk_test_sandbox_4f9a2c"
local MAX_DELAY_MS = 60000

--- Load the fixtures from `fixtures_dir` and build every document that does
-- not depend on the request; write the static files that come from the Lua
-- routes into `static_dir`. Runs once, in init_by_lua.
function _M.init(fixtures_dir, static_dir)
  fixtures.load(fixtures_dir)
  payouts.prepare()
  channels.prepare()
  addresses.prepare()
  if static_dir then
    addresses.write_page(static_dir .. "/addresses-1000.json", "acct-25000", 1, 1000)
  end
end

local function authorized()
  local header = ngx.var.http_authorization
  local token = header and match(header, "^[Bb][Ee][Aa][Rr][Ee][Rr] +(.-) *$")
  return token == _M.API_KEY, header, token
end

-- The echo_key mode (/__sandbox/config {"echo_key":true}): a server that
-- hands the client's key back everywhere it can.  The Authorization value
-- goes into X-Request-Id (through X-Sandbox-Request-Id: nginx.conf's map),
-- X-Echo-Authorization, Warning, a second value of X-Echo-Multi, and the
-- token alone into Link, Set-Cookie and the name of a header X-Key-<token>;
-- sandbox.respond writes it into error documents' title and detail.
local function echo_key(header, token)
  ngx.ctx.echo_authorization = header
  ngx.header["X-Sandbox-Request-Id"] = header
  ngx.header["X-Echo-Authorization"] = header
  ngx.header["Warning"] = '199 sandbox "' .. header .. '"'
  ngx.header["X-Echo-Multi"] = { "plain", header }
  ngx.header["Link"] = "<http://127.0.0.1/echo?key=" .. token .. '>; rel="self"'
  ngx.header["Set-Cookie"] = "sandbox_echo=" .. token
  if match(token, "^[%w%-_.]+$") then
    ngx.header["X-Key-" .. token] = "1"
  end
end

-- X-Sandbox-Delay-Ms as a number of ms, or nil when absent or not a number.
local function delay_header_ms()
  local value = ngx.var.http_x_sandbox_delay_ms
  local ms = type(value) == "string" and match(value, "^%s*(%d+)%s*$") and tonumber(value)
  return ms and (ms > MAX_DELAY_MS and MAX_DELAY_MS or ms) or nil
end

-- The resource module and id a path names, or nil.
local function resource(segments)
  local n = #segments
  if segments[1] ~= "api" or segments[2] ~= "public" or segments[3] ~= "v1" then
    return nil
  end
  local kind, id = segments[4], segments[5]
  if kind == "echo" then
    return echo, "echo"
  end
  if id == nil or id == "" then
    return nil
  end
  if n == 5 and kind == "payouts" then
    return payouts, id
  elseif n == 5 and kind == "channels" then
    return channels, id
  elseif n == 6 and kind == "accounts" and segments[6] == "addresses" then
    return addresses, id
  end
  return nil
end

--- content_by_lua handler for every request.
function _M.handle()
  local method = ngx.req.get_method()
  local raw = ngx.var.request_uri
  local segments = uri.segments(raw)
  if segments[1] == "__sandbox" and #segments == 2 then
    return control.handle(method, segments[2])
  end
  local module, id = resource(segments)
  if not module then
    return respond.not_found("no route " .. method .. " " .. match(raw, "^[^?]*"))
  end

  state.hit(id)
  state.set_headers(id, ngx.req.get_headers(200))
  local header_ms = delay_header_ms()
  ngx.ctx.delay_header_ms = header_ms
  local delay_ms = header_ms or state.latency(id)
  if delay_ms > 0 and not faults.owns_delay(id) then
    ngx.sleep(delay_ms / 1000)
  end
  local ok, header, token = authorized()
  if not ok then
    ngx.header["WWW-Authenticate"] = 'Bearer realm="sandbox"'
    return respond.error(401, "unauthorized", "Unauthorized", "missing or invalid api key")
  end
  if state.echo_key() then
    echo_key(header, token)
  end
  return module.handle(method, id)
end

return _M

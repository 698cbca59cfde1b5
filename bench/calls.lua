--- One calls-per-second measurement for `make bench` (bench/run.lua runs it).
--
--   lua5.4 bench/calls.lua MODE BASE_URL SECONDS [CAFILE]
--
-- MODE `merchantapi`: `client:get_channel(id)` in a loop on one client.
-- MODE `merchantapi-metrics`, `merchantapi-trace`: the same on a client made
-- with `metrics = true` (every attempt counted), or `trace = true` (a new
-- trace per call, a traceparent header on every attempt).
-- MODE `luasocket`: what a Lua user writes without merchantapi: luasocket's
-- `socket.http` (or luasec's `ssl.https` for an https URL) for the GET with
-- the same headers, lua-cjson to decode, and the relationship resolution in
-- plain Lua (the channel's `targetAccount` from `included`), flattening the
-- resource as merchantapi does.  socket.http opens a new connection for
-- every request (it has no keep-alive); ssl.https a new TLS session too.
--
-- Prints `calls N seconds S cpu C` (after one warm-up call; C: the process's
-- CPU seconds over those calls, os.clock); raises on a failed call.
-- BENCH_CALLS=N: exactly N calls, whatever SECONDS says (the instruction
-- counts of bench/run.lua, under callgrind).
local mode, base_url, seconds, cafile = arg[1], arg[2], tonumber(arg[3]), arg[4]
local CHANNEL_ID = "60e05bc0-4690-4985-a08a-8acf00e48294"
local API_KEY = os.getenv("MERCHANTAPI_API_KEY") or "sk_test_sandbox_4f9a2c"
local now = require("merchantapi.core").monotonic

local call

if mode == "merchantapi" or mode == "merchantapi-metrics" or mode == "merchantapi-trace" then
  local merchantapi = require "merchantapi"
  local client = assert(merchantapi.new {
    base_url = base_url, api_key = API_KEY, cafile = cafile ~= "" and cafile or nil,
    metrics = mode == "merchantapi-metrics" or nil, trace = mode == "merchantapi-trace" or nil,
  })
  call = function()
    local channel = assert(client:get_channel(CHANNEL_ID))
    assert(channel.targetAccount.currencyCode)
  end
elseif mode == "luasocket" then
  local cjson = require "cjson"
  local ltn12 = require "ltn12"
  local https = base_url:match("^https:")
  local http = https and require("ssl.https") or require("socket.http")
  local url = base_url .. "/api/public/v1/channels/" .. CHANNEL_ID
  local headers = {
    ["content-type"] = "application/vnd.api+json",
    accept = "application/vnd.api+json",
    authorization = "Bearer " .. API_KEY,
  }

  local resolve = dofile("bench/alt_resolve.lua").resolve

  call = function()
    local chunks = {}
    local req = { url = url, headers = headers, sink = ltn12.sink.table(chunks) }
    if https then
      req.cafile, req.verify, req.protocol = cafile, "peer", "any"
    end
    local ok, status = http.request(req)
    assert(ok and status == 200, "request failed: " .. tostring(status))
    local channel = resolve(cjson.decode(table.concat(chunks)))
    assert(channel.targetAccount.currencyCode)
  end
else
  error("usage: calls.lua merchantapi[-metrics|-trace]|luasocket BASE_URL SECONDS [CAFILE]")
end

local fixed = tonumber(os.getenv("BENCH_CALLS") or "")
call()
local calls, t0, c0 = 0, now(), os.clock()
local t
repeat
  call()
  calls = calls + 1
  t = now() - t0
until (fixed and calls >= fixed) or (not fixed and t >= seconds)
print(("calls %d seconds %.6f cpu %.6f"):format(calls, t, os.clock() - c0))

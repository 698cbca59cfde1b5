--- The Lua side of the OpenResty transport, for `make bench` (LuaJIT):
-- merchantapi.transport.ngx and a whole `client:get_channel` over it, run
-- outside nginx against a scripted cosocket (spec/support/fake_cosocket.lua)
-- that answers the channel document with the nginx headers the sandbox
-- sends.  No network, no nginx: CPU time of what the transport and the
-- client do per request, steady whatever else runs on the machine.
--
--   luajit bench/ngx_transport.lua ROUNDS ITERATIONS [WAY]
--
-- WAY (e.g. get_channel_trace): that way alone (its instructions under
-- callgrind, bench/run.lua).
--
-- Prints `transport <median us>`, `get_channel <median us>` (CPU per request),
-- and `get_channel_metrics`, `get_channel_trace`: the same call on a client
-- made with `metrics = true` (the core's counting; a dict adds only the
-- worker's flush, once a second) or `trace = true`.
package.path = "spec/?.lua;" .. package.path
local fake_cosocket = require "support.fake_cosocket"

local rounds, iterations = tonumber(arg[1] or "7"), tonumber(arg[2] or "20000")
local f = assert(io.open("fixtures/get_channel.200.json", "rb"))
local body = f:read("*a")
f:close()
local answer = table.concat({
  "HTTP/1.1 200 OK", "Server: nginx/1.22.1", "Date: Mon, 24 Nov 2025 00:14:22 GMT",
  "Content-Type: application/vnd.api+json", "Content-Length: " .. #body,
  "Last-Modified: Mon, 24 Nov 2025 00:05:22 GMT", "Connection: keep-alive",
  'ETag: "6923a202-5f3"', "X-Request-Id: 3f9c2a8e4b1d4e6f8a0b2c4d6e8f0a1b", "Accept-Ranges: bytes",
  "", body,
}, "\r\n")

local fake = fake_cosocket.ngx(answer)
-- what the socket is handed is dropped, not kept
local DROP = { __newindex = function() end }
fake.sent, fake.connects, fake.timeouts = setmetatable({}, DROP), setmetatable({}, DROP),
  setmetatable({}, DROP)
rawset(_G, "ngx", fake)
local merchantapi = require "merchantapi"
local transport = require("merchantapi.transport.ngx").request
local CHANNEL_ID = "60e05bc0-4690-4985-a08a-8acf00e48294"
local function new_client(extra)
  local opts = { base_url = "http://127.0.0.1:8089/static", api_key = "k", transport = transport }
  for k, v in pairs(extra) do
    opts[k] = v
  end
  return assert(merchantapi.new(opts))
end
local client = new_client {}
local metrics_client, trace_client = new_client { metrics = true }, new_client { trace = true }
local request = {
  method = "GET", url = "http://127.0.0.1:8089/static/api/public/v1/channels/" .. CHANNEL_ID,
  headers = { Authorization = "Bearer k", Accept = "application/vnd.api+json",
    ["Content-Type"] = "application/vnd.api+json",
    ["User-Agent"] = "merchantapi/0.1.0 libcurl/7.88.1 LuaJIT 2.1.0-beta3" },
  timeout = 30, connect_timeout = 10, max_body = 16777216, fresh_connection = false, attempt = 1,
}

local ways = {
  { "transport", function()
      local res = transport(request)
      assert(res.status == 200 and #res.body == #body)
    end },
  { "get_channel", function()
      local channel = assert(client:get_channel(CHANNEL_ID))
      assert(channel.targetAccount)
    end },
  { "get_channel_metrics", function()
      local channel = assert(metrics_client:get_channel(CHANNEL_ID))
      assert(channel.targetAccount)
    end },
  { "get_channel_trace", function()
      local channel = assert(trace_client:get_channel(CHANNEL_ID))
      assert(channel.targetAccount)
    end },
}
if arg[3] then
  for i = #ways, 1, -1 do
    if ways[i][1] ~= arg[3] then
      table.remove(ways, i)
    end
  end
  assert(#ways == 1, "no way " .. arg[3])
end
local times = {}
for _, w in ipairs(ways) do
  times[w[1]] = {}
end
for _ = 1, rounds do
  for _, w in ipairs(ways) do
    local fn = w[2]
    fn()
    collectgarbage()
    local t0 = os.clock()
    for _ = 1, iterations do
      fn()
    end
    local t = times[w[1]]
    t[#t + 1] = (os.clock() - t0) / iterations
  end
end
for _, w in ipairs(ways) do
  local t = times[w[1]]
  table.sort(t)
  print(("%s %.3f"):format(w[1], t[math.floor((#t + 1) / 2)] * 1e6))
end

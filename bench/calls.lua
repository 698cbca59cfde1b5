--- One calls-per-second measurement for `make bench` (bench/run.lua runs it).
--
--   lua5.4 bench/calls.lua MODE BASE_URL SECONDS [CAFILE]
--
-- MODE `merchantapi`: `client:get_channel(id)` in a loop on one client.
-- MODE `merchantapi-metrics`, `merchantapi-trace`: the same on a client made
-- with `metrics = true` (every attempt counted), or `trace = true` (a new
-- trace per call, a traceparent header on every attempt).
-- MODE `merchantapi-costs`: the three clients in one process, paired (below);
-- prints `rounds R block B plain_us P metrics_add_us M trace_add_us T`.
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

if mode == "merchantapi-costs" then
  -- What metrics and traces add, paired in one process: three clients
  -- (plain, `metrics = true`, `trace = true`), each with its own
  -- connection, run in blocks of BLOCK calls, the three blocks of a round in
  -- an order that turns each round, for SECONDS in all.  The CPU a call
  -- adds is the median over the rounds of (block - plain block of the same
  -- round) / BLOCK: a drift of the machine's load hits both blocks of a
  -- difference alike.  os.clock: the process's CPU, user and system.
  local merchantapi = require "merchantapi"
  local BLOCK = tonumber(os.getenv("BENCH_BLOCK") or "100")
  local clients = {}
  for i, extra in ipairs({ {}, { metrics = true }, { trace = true } }) do
    local opts = { base_url = base_url, api_key = API_KEY, cafile = cafile ~= "" and cafile or nil }
    for k, v in pairs(extra) do
      opts[k] = v
    end
    clients[i] = assert(merchantapi.new(opts))
  end
  local function block(client)
    local c0 = os.clock()
    for _ = 1, BLOCK do
      local channel = assert(client:get_channel(CHANNEL_ID))
      assert(channel.targetAccount.currencyCode)
    end
    return os.clock() - c0
  end
  for i = 1, 3 do -- warm-up: a connection and a first call each
    block(clients[i])
  end
  local adds, plain = { {}, {}, {} }, {}
  local t0, r = now(), 0
  repeat
    r = r + 1
    local cpu = {}
    for j = 0, 2 do
      local i = (j + r) % 3 + 1
      cpu[i] = block(clients[i])
    end
    plain[r] = cpu[1] / BLOCK
    adds[2][r], adds[3][r] = (cpu[2] - cpu[1]) / BLOCK, (cpu[3] - cpu[1]) / BLOCK
  until now() - t0 >= seconds
  local function median(t)
    table.sort(t)
    local n = #t
    return n % 2 == 1 and t[(n + 1) / 2] or (t[n / 2] + t[n / 2 + 1]) / 2
  end
  print(("rounds %d block %d plain_us %.3f metrics_add_us %.3f trace_add_us %.3f"):format(r, BLOCK,
    median(plain) * 1e6, median(adds[2]) * 1e6, median(adds[3]) * 1e6))
  os.exit(0)
elseif mode == "merchantapi" or mode == "merchantapi-metrics" or mode == "merchantapi-trace" then
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
  error("usage: calls.lua merchantapi[-metrics|-trace|-costs]|luasocket BASE_URL SECONDS [CAFILE]")
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

--- `make bench`: runs every measurement against the sandbox bench/run
-- started, and prints ONE table of medians and the ratios the targets are
-- about, every ratio taken between figures of this same run.
--
-- Environment (set by bench/run):
--   BENCH_HTTP, BENCH_HTTPS   the sandbox's base URLs; BENCH_CA its test CA
--   BENCH_BIN                 limit (the honest limit of a call), curl_loop, mapi_loop and
--                             parse_floor (simdjson's DOM parse)
--   BENCH_LUAMOD, BENCH_LUAJITMOD  merchantapi.core builds (the second may be absent)
--   BENCH_DOC, BENCH_CHANNEL_DOC  /static/addresses-1000.json and /static/channel.json
--   BENCH_OPENRESTY, BENCH_OPENRESTY_PID  the OpenResty of bench/openresty.conf (its
--                             URL and pid file; empty: no OpenResty rows)
--   BENCH_SANDBOX_PID         the sandbox's pid file (its nginx master)
--   BENCH_CPU (0)             the CPU the calls/s rows pin the client and the sandbox to
--                             (taskset); "" pins nothing
--   BENCH_ROUNDS (5), BENCH_SECONDS (1), BENCH_LIST_ROUNDS (3), BENCH_WRK_CONNECTIONS (8)
--   BENCH_ONLY=openresty      the OpenResty rows alone (`make bench BENCH_ONLY=openresty`)
local getenv, format = os.getenv, string.format

local HTTP, HTTPS, CA = getenv("BENCH_HTTP"), getenv("BENCH_HTTPS"), getenv("BENCH_CA")
local BIN, LUAMOD, LUAJITMOD = getenv("BENCH_BIN"), getenv("BENCH_LUAMOD"), getenv("BENCH_LUAJITMOD")
local DOC, CHANNEL_DOC = getenv("BENCH_DOC"), getenv("BENCH_CHANNEL_DOC")
local ROUNDS = tonumber(getenv("BENCH_ROUNDS") or "5")
local SECONDS = tonumber(getenv("BENCH_SECONDS") or "1")
local LIST_ROUNDS = tonumber(getenv("BENCH_LIST_ROUNDS") or "3")
local CHANNEL_PATH = "/api/public/v1/channels/60e05bc0-4690-4985-a08a-8acf00e48294"
local OPENRESTY, OPENRESTY_PID = getenv("BENCH_OPENRESTY"), getenv("BENCH_OPENRESTY_PID")
local WRK_CONNECTIONS = tonumber(getenv("BENCH_WRK_CONNECTIONS") or "8")
local SANDBOX_PID = getenv("BENCH_SANDBOX_PID")
local CPU = getenv("BENCH_CPU") or "0"

local function sh_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Runs a command; returns its standard output, raising when it fails.
local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("*a")
  local ok, _, code = p:close()
  if not ok then
    error(format("bench: command failed (%s): %s\n%s", tostring(code), cmd, out), 0)
  end
  return out
end

local function lua_cmd(interp, mod, script, ...)
  local args = {}
  for i, a in ipairs({ ... }) do
    args[i] = sh_quote(a)
  end
  return format("LUA_PATH=%s LUA_CPATH=%s %s %s %s",
    sh_quote("lua/?.lua;;"), sh_quote(mod .. "/?.so;;"), interp, script, table.concat(args, " "))
end

local function median(t)
  local s = {}
  for i = 1, #t do
    s[i] = t[i]
  end
  table.sort(s)
  local n = #s
  if n % 2 == 1 then
    return s[(n + 1) / 2]
  end
  return (s[n / 2] + s[n / 2 + 1]) / 2
end

local function sandbox_latency(ms)
  run(format("curl -sf -X POST -d %s %s/__sandbox/config >/dev/null",
    sh_quote(format('{"latency_ms":%d}', ms)), HTTP))
end

local function file_exists(path)
  local f = io.open(path, "rb")
  if f then
    f:close()
  end
  return f ~= nil
end

local function first_line(cmd)
  local ok, out = pcall(run, cmd)
  return ok and (out:match("[^\n]+") or "?") or "?"
end

-- ---------------------------------------------------------------------------
-- calls per second
-- ---------------------------------------------------------------------------

local function calls_of(out)
  local n, s = out:match("calls (%d+) seconds ([%d.]+)")
  assert(n, "unexpected output: " .. out)
  return tonumber(n) / tonumber(s)
end

-- The client process's CPU seconds per call (bench/calls.lua's `cpu`), or nil.
local function cpu_of(out)
  local n, c = out:match("calls (%d+) seconds [%d.]+ cpu ([%d.]+)")
  return n and tonumber(c) / tonumber(n) or nil
end

local call_ways = {
  { key = "http_mapi", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi", HTTP, SECONDS)
    end },
  { key = "http_mapi_metrics", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi-metrics", HTTP, SECONDS)
    end },
  { key = "http_mapi_trace", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi-trace", HTTP, SECONDS)
    end },
  { key = "http_capi", cmd = function()
      return format("%s/mapi_loop %s %s", BIN, sh_quote(HTTP), SECONDS)
    end },
  { key = "http_limit", cmd = function()
      return format("%s/limit %s %s", BIN, sh_quote(HTTP .. CHANNEL_PATH), SECONDS)
    end },
  { key = "http_curl", cmd = function()
      return format("%s/curl_loop %s %s", BIN, sh_quote(HTTP .. CHANNEL_PATH), SECONDS)
    end },
  { key = "http_mapi_static", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi", HTTP .. "/static", SECONDS)
    end },
  { key = "http_curl_static", cmd = function()
      return format("%s/curl_loop %s %s", BIN, sh_quote(HTTP .. "/static/channel.json"), SECONDS)
    end },
  { key = "http_socket", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "luasocket", HTTP, SECONDS)
    end },
  { key = "https_mapi", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi", HTTPS, SECONDS, CA)
    end },
  { key = "https_capi", cmd = function()
      return format("%s/mapi_loop %s %s %s", BIN, sh_quote(HTTPS), SECONDS, sh_quote(CA))
    end },
  { key = "https_limit", cmd = function()
      return format("%s/limit %s %s %s", BIN, sh_quote(HTTPS .. CHANNEL_PATH), SECONDS, sh_quote(CA))
    end },
  { key = "https_curl", cmd = function()
      return format("%s/curl_loop %s %s %s", BIN, sh_quote(HTTPS .. CHANNEL_PATH), SECONDS,
        sh_quote(CA))
    end },
  { key = "https_mapi_static", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi", HTTPS .. "/static", SECONDS, CA)
    end },
  { key = "https_curl_static", cmd = function()
      return format("%s/curl_loop %s %s %s", BIN, sh_quote(HTTPS .. "/static/channel.json"),
        SECONDS, sh_quote(CA))
    end },
  { key = "https_sec", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "luasocket", HTTPS, SECONDS, CA)
    end },
}

-- ---------------------------------------------------------------------------
-- OpenResty: one worker, wrk over keep-alive connections
-- ---------------------------------------------------------------------------

local has_luajit = LUAJITMOD and file_exists(LUAJITMOD .. "/merchantapi/core.so") and
  os.execute("command -v luajit >/dev/null 2>&1")

-- CPU seconds the nginx worker has used (utime + stime), or nil; and its
-- user time alone.  The sum from /proc/<pid>/schedstat (nanoseconds on the
-- CPU) where the kernel has it: the clock ticks of /proc/<pid>/stat (10 ms)
-- are 0.4 us a request over a 2 s round, too coarse for a difference of
-- 1 us; the user share (ticks only) beside it.
local clock_tick = tonumber(first_line("getconf CLK_TCK")) or 100
local function worker_cpu(pid)
  local f = pid and io.open("/proc/" .. pid .. "/stat", "rb")
  if not f then
    return nil
  end
  local stat = f:read("*a")
  f:close()
  local fields = {}
  for x in stat:gsub("^.-%) ", ""):gmatch("%S+") do -- after "pid (comm) "
    fields[#fields + 1] = x
  end
  local user, total = tonumber(fields[12]) / clock_tick, nil -- utime
  f = io.open("/proc/" .. pid .. "/schedstat", "rb")
  if f then
    total = tonumber((f:read("*a") or ""):match("^(%d+)"))
    f:close()
  end
  return total and total / 1e9 or user + tonumber(fields[13]) / clock_tick, user
end

local O, OT, OU = nil, nil, nil
local wrk_ok = OPENRESTY and OPENRESTY ~= ""
if wrk_ok then
  local master = first_line("cat " .. sh_quote(OPENRESTY_PID))
  local worker = first_line("pgrep -P " .. sh_quote(master) .. " | head -1")
  local handlers = { "mapi", "bare", "mapi_metrics", "mapi_trace" }
  io.stderr:write(format("bench: OpenResty, %d rounds of %d handlers x %g s\n", ROUNDS, #handlers,
    SECONDS * 2))
  O, OT, OU = {}, {}, {}
  for _, h in ipairs(handlers) do
    O[h], OT[h], OU[h] = {}, {}, {}
  end
  for r = 1, ROUNDS do
    for i = 1, #handlers do -- each round begins with another handler: no order favoured
      local h = handlers[(i + r - 2) % #handlers + 1]
      local url = OPENRESTY .. "/bench/" .. h
      run("curl -sf " .. sh_quote(url) .. " >/dev/null") -- fails the bench when the handler does
      local c0, u0 = worker_cpu(worker)
      local out = run(format("wrk -t1 -c%d -d%ds %s", WRK_CONNECTIONS, math.max(1, SECONDS * 2),
        sh_quote(url)))
      local c1, u1 = worker_cpu(worker)
      local rps = tonumber(out:match("Requests/sec:%s*([%d.]+)"))
      local n = tonumber(out:match("(%d+) requests in"))
      assert(rps and n, "unexpected wrk output: " .. out)
      assert(not out:find("Non%-2xx"), "the handler failed: " .. out)
      O[h][#O[h] + 1] = rps
      if c0 and c1 then
        OT[h][#OT[h] + 1] = (c1 - c0) / n
        OU[h][#OU[h] + 1] = (u1 - u0) / n
      end
    end
  end
end
-- the transport's Lua side outside nginx, on a scripted cosocket (LuaJIT)
local NT
if has_luajit then
  local out = run(lua_cmd("luajit", LUAJITMOD, "bench/ngx_transport.lua", 7, 20000))
  NT = { transport = tonumber(out:match("transport ([%d.]+)")),
         get_channel = tonumber(out:match("get_channel ([%d.]+)")),
         metrics = tonumber(out:match("get_channel_metrics ([%d.]+)")),
         trace = tonumber(out:match("get_channel_trace ([%d.]+)")) }
end

-- The OpenResty rows of the table.  The target (issue 29): the handler's
-- worker CPU per request minus the bare cosocket's at most the scripted
-- get_channel row plus 3 us.
local function openresty_rows(row, section, rate, target)
  section(format("OpenResty, one worker, wrk -t1 -c%d over keep-alive, GET of the channel (static copy)"
    .. ", requests/s", WRK_CONNECTIONS))
  if O then
    local m, b = median(O.mapi), median(O.bare)
    local function worker_us(h)
      return #OT[h] > 0 and format("worker CPU %.1f us/request", median(OT[h]) * 1e6) or ""
    end
    row("handler: client:get_channel, transport.ngx", rate(m),
      target(m / b >= 0.8, format("%.2fx bare cosocket (>= 0.8)", m / b)) .. ";  " .. worker_us("mapi"))
    row("handler: the same GET, bare cosocket (the limit)", rate(b),
      "request out, status, headers, body read; nothing decoded;  " .. worker_us("bare"))
  else
    row("handler: client:get_channel, transport.ngx", "n/a",
      "no wrk, nginx Lua module or LuaJIT build here")
  end
  if NT then
    row("transport.ngx per request, scripted socket, us", format("%.2f", NT.transport),
      "LuaJIT, outside nginx: the transport function alone")
    row("get_channel over it, scripted socket, us", format("%.2f", NT.get_channel),
      "the call, the core's exchange, decoding and tables included")
    -- what metrics and traces add to the call in LuaJIT (issue 32: at most 1 us
    -- each): CPU of one process, steady whatever else runs on the machine
    for _, w in ipairs({ { "metrics", "metrics = true" }, { "trace", "trace = true" } }) do
      if NT[w[1]] then
        local add = NT[w[1]] - NT.get_channel
        row("  the same, " .. w[2] .. ", us", format("%.2f", NT[w[1]]),
          target(add <= 1, format("%+.2f us per call (<= 1)", add)))
      end
    end
  end
  if O and NT and #OT.mapi > 0 and #OT.bare > 0 then
    local over = (median(OT.mapi) - median(OT.bare)) * 1e6
    row("handler CPU minus bare cosocket's, us", format("%.2f", over),
      target(over <= NT.get_channel + 3, format("<= get_channel scripted + 3 us (%.2f)",
        NT.get_channel + 3)))
  end
  -- what asking for metrics (the example's lua_shared_dict) or traces adds to
  -- the handler's worker CPU per request (issue 32: at most 1 us each): the
  -- median over the rounds of the difference to the plain handler of the
  -- same round (a drift of the load hits both); the target on user +
  -- system, the user share beside it
  for _, w in ipairs({ { "mapi_metrics", "metrics = <lua_shared_dict>" }, { "mapi_trace", "trace = true" } }) do
    if O and #OT.mapi > 0 and #OT[w[1]] == #OT.mapi then
      local d, du = {}, {}
      for r = 1, #OT.mapi do
        d[r] = OT[w[1]][r] - OT.mapi[r]
        du[r] = OU[w[1]][r] - OU.mapi[r]
      end
      local add = median(d) * 1e6
      row("  the handler with " .. w[2], rate(median(O[w[1]])),
        target(add <= 1, format("%+.2f us worker CPU per request (<= 1), paired by round", add))
        .. format(";  user alone %+.2f", median(du) * 1e6))
    end
  end
end

-- BENCH_ONLY=openresty: these rows alone (bench/run starts what they need)
if getenv("BENCH_ONLY") == "openresty" then
  local out = {}
  openresty_rows(function(label, value, note)
    out[#out + 1] = format("  %-50s %12s  %s", label, value, note or "")
  end, function(title) out[#out + 1] = title end, function(x) return format("%.0f", x) end,
  function(ok_, text) return format("%s %s", text, ok_ and "MET" or "MISSED") end)
  print(table.concat(out, "\n"))
  os.exit(0)
end

-- A client and the server it calls in a loop, on two CPUs of a VM, wait for
-- each other's wake-up across CPUs: the loop then runs at one of two speeds
-- (here about 6,000 and 20,000 calls/s) whichever way it runs, and ratios
-- drawn from it mean little.  On one CPU every call costs what client and
-- server compute; the calls/s rows are measured so (BENCH_CPU).
local function pin_sandbox(cpus)
  if SANDBOX_PID and SANDBOX_PID ~= "" then
    run(format("m=$(cat %s) && for p in $m $(pgrep -P $m); do taskset -a -p -c %s $p >/dev/null; done",
      sh_quote(SANDBOX_PID), cpus))
  end
end
local pinned = CPU ~= "" and SANDBOX_PID and SANDBOX_PID ~= ""
if pinned then
  pin_sandbox(CPU)
  for _, w in ipairs(call_ways) do
    local cmd = w.cmd
    w.cmd = function()
      return "taskset -c " .. CPU .. " env " .. cmd()
    end
  end
end

io.stderr:write(format("bench: calls/s, %d rounds of %d ways x %g s%s\n", ROUNDS, #call_ways,
  SECONDS, pinned and ", on CPU " .. CPU or ""))
sandbox_latency(0)
local calls, cpus = {}, {}
for _, w in ipairs(call_ways) do
  calls[w.key], cpus[w.key] = {}, {}
end
-- what metrics and traces add to a call, paired in one process each round
-- (bench/calls.lua merchantapi-costs): the per-round medians.  Against the
-- sandbox's static copy of the channel (plain nginx, no Lua): the sandbox's
-- Lua route does more for a traced request (it keeps each request's headers
-- as a JSON string, a new one for each traceparent), and on the CPU client
-- and sandbox share that showed on the client's own CPU (+1 to +9 us a call
-- against the route, +0.9 to +1.3 against the static copy, paired).
local costs_cmd = lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi-costs", HTTP .. "/static",
  SECONDS * 2)
if pinned then
  costs_cmd = "taskset -c " .. CPU .. " env " .. costs_cmd
end
local COSTS = { metrics = {}, trace = {}, plain = {} }
for _ = 1, ROUNDS do
  for _, w in ipairs(call_ways) do -- interleaved: load drifts hit every way alike
    local t = calls[w.key]
    local out = run(w.cmd())
    t[#t + 1] = calls_of(out)
    cpus[w.key][#cpus[w.key] + 1] = cpu_of(out)
  end
  local out = run(costs_cmd)
  local p, m, tr = out:match("plain_us ([%d.]+) metrics_add_us (%-?[%d.]+) trace_add_us (%-?[%d.]+)")
  assert(p, "unexpected output: " .. out)
  COSTS.plain[#COSTS.plain + 1] = tonumber(p)
  COSTS.metrics[#COSTS.metrics + 1] = tonumber(m)
  COSTS.trace[#COSTS.trace + 1] = tonumber(tr)
end
local C, CPU_PER_CALL = {}, {}
for k, t in pairs(calls) do
  C[k] = median(t)
  CPU_PER_CALL[k] = #cpus[k] > 0 and median(cpus[k]) or nil
end

-- Instructions per call of the client process (valgrind's callgrind, the
-- total of its run): the difference between runs of N2 and N1 calls over
-- N2 - N1, so the start and the warm-up cancel out.  A count, not a time:
-- it repeats to a fraction of a percent whatever the load.
local IR = {}
local has_valgrind = os.execute("command -v valgrind >/dev/null 2>&1")
if has_valgrind then
  local N1, N2 = 200, 1200
  io.stderr:write(format("bench: callgrind, 3 modes x %d and %d calls\n", N1, N2))
  local function instructions(mode, n)
    local file = os.tmpname()
    run(format("BENCH_CALLS=%d %s", n, lua_cmd("valgrind --tool=callgrind --callgrind-out-file="
      .. sh_quote(file) .. " lua5.4", LUAMOD, "bench/calls.lua", mode, HTTP, 1)))
    local f = assert(io.open(file, "rb"))
    local text = f:read("*a")
    f:close()
    os.remove(file)
    return tonumber(text:match("\nsummary:%s*(%d+)") or text:match("\ntotals:%s*(%d+)"))
  end
  for _, mode in ipairs({ "merchantapi", "merchantapi-metrics", "merchantapi-trace" }) do
    IR[mode] = (instructions(mode, N2) - instructions(mode, N1)) / (N2 - N1)
  end
  -- the same over the cosocket transport on the scripted socket (LuaJIT, no network)
  if has_luajit then
    local function ngx_instructions(way, n)
      local file = os.tmpname()
      run(lua_cmd("valgrind --tool=callgrind --callgrind-out-file=" .. sh_quote(file) .. " luajit",
        LUAJITMOD, "bench/ngx_transport.lua", 1, n, way))
      local f = assert(io.open(file, "rb"))
      local text = f:read("*a")
      f:close()
      os.remove(file)
      return tonumber(text:match("\nsummary:%s*(%d+)") or text:match("\ntotals:%s*(%d+)"))
    end
    for _, way in ipairs({ "get_channel", "get_channel_metrics", "get_channel_trace" }) do
      IR["ngx-" .. way] = (ngx_instructions(way, 6000) - ngx_instructions(way, 1000)) / 5000
    end
  end
end
if pinned then
  pin_sandbox("0-" .. (tonumber(first_line("nproc")) or 1) - 1) -- every CPU again
end

-- ---------------------------------------------------------------------------
-- decoding in process
-- ---------------------------------------------------------------------------

local function decode_of(out)
  local r = {}
  for way, med in out:gmatch("(%S+) ([%d.]+) [%d.]+ [%d.]+") do
    r[way] = tonumber(med)
  end
  assert(r.merchantapi and r["cjson+lua"] and r.cjson, "unexpected output: " .. out)
  return r
end

io.stderr:write("bench: decoding\n")
local D = { lua54 = decode_of(run(lua_cmd("lua5.4", LUAMOD, "bench/decode.lua", DOC, 15, 20))) }
if has_luajit then
  D.luajit = decode_of(run(lua_cmd("luajit", LUAJITMOD, "bench/decode.lua", DOC, 15, 20)))
end
local function floor_of(out)
  return {
    dom = tonumber(out:match("simdjson%-dom ([%d.]+)")),
    mapi = tonumber(out:match("mapi_doc_parse ([%d.]+)")),
    bytes = tonumber(out:match("mapi_doc_size (%d+)")),
    allocs = { out:match("mapi_doc_allocs (%d+) (%d+) (%d+) (%d+)") },
  }
end
local F = floor_of(run(format("%s/parse_floor %s 15 20", BIN, sh_quote(DOC))))
-- the same for the channel document every get_channel call decodes
local FC = floor_of(run(format("%s/parse_floor %s 15 2000", BIN, sh_quote(CHANNEL_DOC))))

-- ---------------------------------------------------------------------------
-- listing acct-25000 with latency; peak RSS
-- ---------------------------------------------------------------------------

local function list_of(out)
  local n, s, kb = out:match("items (%d+) seconds ([%d.]+) vmhwm_kb (%-?%d+)")
  assert(n, "unexpected output: " .. out)
  return tonumber(n), tonumber(s), tonumber(kb)
end

io.stderr:write(format("bench: listing acct-25000 with 20 ms latency, %d rounds\n", LIST_ROUNDS))
local L = { [1] = {}, [4] = {}, [8] = {} }
sandbox_latency(20)
local ok, err = pcall(function()
  for _ = 1, LIST_ROUNDS do
    for _, c in ipairs({ 1, 4, 8 }) do
      local n, s = list_of(run(lua_cmd("lua5.4", LUAMOD, "bench/list.lua", HTTP, "acct-25000",
        100, c)))
      assert(n == 25000, "listed " .. n .. " addresses")
      L[c][#L[c] + 1] = s
    end
  end
end)
sandbox_latency(0)
if not ok then
  error(err, 0)
end

io.stderr:write("bench: peak RSS\n")
local R = { ["25000/1"] = {}, ["1000/1"] = {}, ["25000/8"] = {}, ["1000/8"] = {} }
for _ = 1, LIST_ROUNDS do
  for _, c in ipairs({ 1, 8 }) do
    local n1, _, kb1 = list_of(run(lua_cmd("lua5.4", LUAMOD, "bench/list.lua", HTTP,
      "acct-25000", 100, c)))
    local n2, _, kb2 = list_of(run(lua_cmd("lua5.4", LUAMOD, "bench/list.lua", HTTP,
      "acct-25000", 100, c, 10)))
    assert(n1 == 25000 and n2 == 1000)
    local t1, t2 = R["25000/" .. c], R["1000/" .. c]
    t1[#t1 + 1], t2[#t2 + 1] = kb1, kb2
  end
end

-- ---------------------------------------------------------------------------
-- the table
-- ---------------------------------------------------------------------------

local function target(ok_, text)
  return format("%s %s", text, ok_ and "MET" or "MISSED")
end

local lines = {}
local function row(label, value, note)
  lines[#lines + 1] = format("  %-50s %12s  %s", label, value, note or "")
end
local function section(title)
  lines[#lines + 1] = title
end
local function rate(x)
  return format("%.0f", x)
end
local function ms(x)
  return format("%.3f", x * 1000)
end

local cpu = first_line("grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'")
local mem = first_line("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
local nproc = first_line("nproc")
local curlv = first_line("curl-config --version 2>/dev/null || echo libcurl")
local simdjsonv = first_line("pkg-config --modversion simdjson 2>/dev/null || echo ?")

section(format("merchantapi %s bench -- %s cores, %s, %s; %s, simdjson %s; %s rounds, medians",
  require("merchantapi.core")._VERSION, nproc, cpu, mem, curlv, simdjsonv, ROUNDS))
section(format("  %-50s %12s  %s", "", "median", "ratios (same run) and targets"))

section("calls/s, GET /channels/:id in a loop, one connection kept alive (HTTP/1.1, loopback)"
  .. (pinned and ", client and sandbox on CPU " .. CPU or ""))
local r1, r2 = C.http_mapi / C.http_curl, C.http_mapi / C.http_socket
row("merchantapi client:get_channel (Lua 5.4)", rate(C.http_mapi),
  format("%.2fx the limit", C.http_mapi / C.http_limit) .. ";  " ..
  target(r1 >= 0.9, format("%.2fx libcurl loop (>= 0.9)", r1)) .. ";  " ..
  target(r2 >= 1.5, format("%.2fx luasocket (>= 1.5)", r2)))
-- what asking for metrics or traces costs a call: the ratio, and the
-- microseconds per call it adds (1/rate against 1/rate without)
local function cost(x)
  return format("%.2fx without;  %+.1f us per call", x / C.http_mapi, (1 / x - 1 / C.http_mapi) * 1e6)
end
row("  the same, metrics = true (every attempt counted)", rate(C.http_mapi_metrics),
  cost(C.http_mapi_metrics))
row("  the same, trace = true (traceparent, span ids)", rate(C.http_mapi_trace),
  cost(C.http_mapi_trace))
-- the client process's own CPU per call (os.clock), the median over the
-- rounds; what metrics and traces add to it (issue 32: at most 1 us each),
-- paired: the three clients in one process, in blocks of calls whose order
-- turns (bench/calls.lua merchantapi-costs), the median of the rounds'
-- medians of the differences -- separate processes swing by more than 1 us
if CPU_PER_CALL.http_mapi then
  local base = CPU_PER_CALL.http_mapi
  row("  client CPU per call, plain (us)", format("%.2f", base * 1e6), "os.clock of the calls process")
  for _, w in ipairs({ { "http_mapi_metrics", "metrics = true" }, { "http_mapi_trace", "trace = true" } }) do
    row("  client CPU per call, " .. w[2] .. " (us)", format("%.2f", CPU_PER_CALL[w[1]] * 1e6),
      format("%+.2f us per call, separate processes", (CPU_PER_CALL[w[1]] - base) * 1e6))
  end
end
for _, w in ipairs({ { "metrics", "metrics = true" }, { "trace", "trace = true" } }) do
  local add = median(COSTS[w[1]])
  row("  client CPU a call adds, " .. w[2] .. ", paired (us)", format("%+.2f", add),
    target(add <= 1, format("<= 1, user + system, one process, blocks of calls, static copy (plain %.2f us)",
      median(COSTS.plain))))
end
if IR.merchantapi then
  local base = IR.merchantapi
  row("  instructions per call, plain (callgrind)", format("%.0f", base), "client process, N2 - N1 calls")
  row("  instructions per call, metrics = true", format("%.0f", IR["merchantapi-metrics"]),
    target(IR["merchantapi-metrics"] / base <= 1.03,
      format("%.4fx plain (<= 1.03)", IR["merchantapi-metrics"] / base)))
  row("  instructions per call, trace = true", format("%.0f", IR["merchantapi-trace"]),
    format("%.4fx plain", IR["merchantapi-trace"] / base))
end
local ngx_base = IR["ngx-get_channel"]
if ngx_base then
  row("  instructions per call over transport.ngx, scripted", format("%.0f", ngx_base),
    "LuaJIT, no network: the client's whole call")
  row("    metrics = true", format("%.0f", IR["ngx-get_channel_metrics"]),
    target(IR["ngx-get_channel_metrics"] / ngx_base <= 1.03,
      format("%.4fx plain (<= 1.03)", IR["ngx-get_channel_metrics"] / ngx_base)))
  row("    trace = true", format("%.0f", IR["ngx-get_channel_trace"]),
    format("%.4fx plain", IR["ngx-get_channel_trace"] / ngx_base))
end
row("C mapi_get_channel loop (libmerchantapi, no Lua)", rate(C.http_capi),
  format("%.2fx the limit;  %.2fx libcurl loop", C.http_capi / C.http_limit,
    C.http_capi / C.http_curl))
row("C: GET + simdjson + the same Lua tables (the limit)", rate(C.http_limit),
  "bench/limit.cpp: the required work only")
row("plain C libcurl loop, same route (GET only)", rate(C.http_curl))
row("merchantapi client:get_channel, static file", rate(C.http_mapi_static),
  format("%.2fx libcurl loop, static file", C.http_mapi_static / C.http_curl_static))
row("plain C libcurl loop, static file (no Lua route)", rate(C.http_curl_static))
row("luasocket socket.http + lua-cjson + Lua resolution", rate(C.http_socket),
  "new connection per call (socket.http has no keep-alive)")

section("calls/s over HTTPS (sandbox CA, TLS 1.3; HTTP/2 where both sides offer it)")
local r3, r4 = C.https_mapi / C.https_curl, C.https_mapi / C.https_sec
row("merchantapi client:get_channel (Lua 5.4)", rate(C.https_mapi),
  format("%.2fx the limit", C.https_mapi / C.https_limit) .. ";  " ..
  target(r3 >= 0.9, format("%.2fx libcurl loop (>= 0.9)", r3)) .. ";  " ..
  target(r4 >= 10, format("%.1fx luasec (>= 10)", r4)))
row("C mapi_get_channel loop (libmerchantapi, no Lua)", rate(C.https_capi),
  format("%.2fx the limit;  %.2fx libcurl loop", C.https_capi / C.https_limit,
    C.https_capi / C.https_curl))
row("C: GET + simdjson + the same Lua tables (the limit)", rate(C.https_limit),
  "bench/limit.cpp: the required work only")
row("plain C libcurl loop, same route (GET only)", rate(C.https_curl))
row("merchantapi client:get_channel, static file", rate(C.https_mapi_static),
  format("%.2fx libcurl loop, static file", C.https_mapi_static / C.https_curl_static))
row("plain C libcurl loop, static file (no Lua route)", rate(C.https_curl_static))
row("luasec ssl.https + lua-cjson + Lua resolution", rate(C.https_sec),
  "new TCP + TLS handshake per call")

section("decoding the 1,000-address page (" .. math.floor(#assert(io.open(DOC, "rb")):read("*a") / 1024)
  .. " KiB) in process, ms of CPU per decode")
for _, v in ipairs({ { "lua54", "Lua 5.4", 0.5 }, { "luajit", "LuaJIT", 0.7 } }) do
  local d = D[v[1]]
  if d then
    local r = d.merchantapi / d.cjson
    row("merchantapi.decode, " .. v[2], ms(d.merchantapi),
      target(r <= v[3], format("%.2fx cjson alone (<= %.1f)", r, v[3])) ..
      format(";  %.2fx cjson + Lua resolution", d.merchantapi / d["cjson+lua"]))
    row("cjson.decode + Lua resolution, " .. v[2], ms(d["cjson+lua"]))
    row("cjson.decode alone (nothing resolved), " .. v[2], ms(d.cjson))
  else
    row("merchantapi.decode, " .. v[2], "n/a", "no LuaJIT build of merchantapi.core here")
  end
end
row("C: simdjson's own DOM parse", ms(F.dom), "parser reused, as page after page")
row("C: mapi_doc_parse + mapi_doc_free", ms(F.mapi),
  target(F.mapi / F.dom <= 2.0, format("%.2fx simdjson DOM (<= 2.0)", F.mapi / F.dom)))
row("C: bytes a document of the page holds (mapi_doc_size)", format("%d", F.bytes),
  format("%.2fx the page", F.bytes / #assert(io.open(DOC, "rb")):read("*a")))
row("C: heap asked by one decode of the page, bytes", F.allocs[2] or "?",
  format("%s allocations; the first decode of a thread: %s in %s (the reader's buffers)",
    F.allocs[1] or "?", F.allocs[4] or "?", F.allocs[3] or "?"))
row("C: simdjson DOM parse of the channel document, us", format("%.1f", FC.dom * 1e6),
  "per get_channel call (the limit row parses On-Demand)")
row("C: mapi_doc_parse + free of the channel document, us", format("%.1f", FC.mapi * 1e6),
  format("%.2fx simdjson DOM", FC.mapi / FC.dom))

openresty_rows(row, section, rate, target)

section("listing acct-25000: 250 pages of 100, 20 ms sandbox latency per request, wall s")
local l1, l4, l8 = median(L[1]), median(L[4]), median(L[8])
row("pager:each(), concurrency 1", format("%.3f", l1))
row("pager:each(), concurrency 4", format("%.3f", l4), format("%.2fx concurrency 1", l4 / l1))
row("pager:each(), concurrency 8", format("%.3f", l8),
  target(l8 / l1 <= 0.2, format("%.2fx concurrency 1 (<= 0.20)", l8 / l1)))

section("peak RSS (VmHWM) streaming pager:each(), separate processes, MiB")
for _, c in ipairs({ 1, 8 }) do
  local big, small = median(R["25000/" .. c]), median(R["1000/" .. c])
  row(format("25,000 addresses, concurrency %d", c), format("%.1f", big / 1024),
    target(big / small <= 1.5, format("%.2fx 1,000 addresses (<= 1.5)", big / small)))
  row(format("1,000 addresses, concurrency %d", c), format("%.1f", small / 1024))
end

print(table.concat(lines, "\n"))

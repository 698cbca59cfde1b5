--- `make bench`: runs every measurement against the sandbox bench/run
-- started, and prints ONE table of medians and the ratios the targets are
-- about, every ratio taken between figures of this same run.
--
-- Environment (set by bench/run):
--   BENCH_HTTP, BENCH_HTTPS   the sandbox's base URLs; BENCH_CA its test CA
--   BENCH_BIN                 curl_loop and parse_floor (simdjson's DOM parse: the floor)
--   BENCH_LUAMOD, BENCH_LUAJITMOD  merchantapi.core builds (the second may be absent)
--   BENCH_DOC, BENCH_CHANNEL_DOC  /static/addresses-1000.json and /static/channel.json
--   BENCH_ROUNDS (5), BENCH_SECONDS (1), BENCH_LIST_ROUNDS (3)
local getenv, format = os.getenv, string.format

local HTTP, HTTPS, CA = getenv("BENCH_HTTP"), getenv("BENCH_HTTPS"), getenv("BENCH_CA")
local BIN, LUAMOD, LUAJITMOD = getenv("BENCH_BIN"), getenv("BENCH_LUAMOD"), getenv("BENCH_LUAJITMOD")
local DOC, CHANNEL_DOC = getenv("BENCH_DOC"), getenv("BENCH_CHANNEL_DOC")
local ROUNDS = tonumber(getenv("BENCH_ROUNDS") or "5")
local SECONDS = tonumber(getenv("BENCH_SECONDS") or "1")
local LIST_ROUNDS = tonumber(getenv("BENCH_LIST_ROUNDS") or "3")
local CHANNEL_PATH = "/api/public/v1/channels/60e05bc0-4690-4985-a08a-8acf00e48294"

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

local call_ways = {
  { key = "http_mapi", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "merchantapi", HTTP, SECONDS)
    end },
  { key = "http_curl", cmd = function()
      return format("%s/curl_loop %s %s", BIN, sh_quote(HTTP .. CHANNEL_PATH), SECONDS)
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
  { key = "https_curl", cmd = function()
      return format("%s/curl_loop %s %s %s", BIN, sh_quote(HTTPS .. CHANNEL_PATH), SECONDS,
        sh_quote(CA))
    end },
  { key = "https_curl_static", cmd = function()
      return format("%s/curl_loop %s %s %s", BIN, sh_quote(HTTPS .. "/static/channel.json"),
        SECONDS, sh_quote(CA))
    end },
  { key = "https_sec", cmd = function()
      return lua_cmd("lua5.4", LUAMOD, "bench/calls.lua", "luasocket", HTTPS, SECONDS, CA)
    end },
}

io.stderr:write(format("bench: calls/s, %d rounds of %d ways x %g s\n", ROUNDS, #call_ways,
  SECONDS))
sandbox_latency(0)
local calls = {}
for _, w in ipairs(call_ways) do
  calls[w.key] = {}
end
for _ = 1, ROUNDS do
  for _, w in ipairs(call_ways) do -- interleaved: load drifts hit every way alike
    local t = calls[w.key]
    t[#t + 1] = calls_of(run(w.cmd()))
  end
end
local C = {}
for k, t in pairs(calls) do
  C[k] = median(t)
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
local has_luajit = LUAJITMOD and file_exists(LUAJITMOD .. "/merchantapi/core.so") and
  os.execute("command -v luajit >/dev/null 2>&1")
if has_luajit then
  D.luajit = decode_of(run(lua_cmd("luajit", LUAJITMOD, "bench/decode.lua", DOC, 15, 20)))
end
local function floor_of(out)
  return {
    dom = tonumber(out:match("simdjson%-dom ([%d.]+)")),
    mapi = tonumber(out:match("mapi_doc_parse ([%d.]+)")),
    bytes = tonumber(out:match("mapi_doc_size (%d+)")),
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

section("calls/s, GET /channels/:id in a loop, one connection kept alive (HTTP/1.1, loopback)")
local r1, r2 = C.http_mapi / C.http_curl, C.http_mapi / C.http_socket
row("merchantapi client:get_channel (Lua 5.4)", rate(C.http_mapi),
  target(r1 >= 0.8, format("%.2fx libcurl loop (>= 0.8)", r1)) .. ";  " ..
  target(r2 >= 1.5, format("%.2fx luasocket (>= 1.5)", r2)))
row("plain C libcurl loop, same route (the limit)", rate(C.http_curl))
row("plain C libcurl loop, static file (no Lua route)", rate(C.http_curl_static))
row("luasocket socket.http + lua-cjson + Lua resolution", rate(C.http_socket),
  "new connection per call (socket.http has no keep-alive)")

section("calls/s over HTTPS (sandbox CA, TLS 1.3; HTTP/2 where both sides offer it)")
local r3, r4 = C.https_mapi / C.https_curl, C.https_mapi / C.https_sec
row("merchantapi client:get_channel (Lua 5.4)", rate(C.https_mapi),
  target(r3 >= 0.8, format("%.2fx libcurl loop (>= 0.8)", r3)) .. ";  " ..
  target(r4 >= 10, format("%.1fx luasec (>= 10)", r4)))
row("plain C libcurl loop, same route (the limit)", rate(C.https_curl))
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
row("C: simdjson's own DOM parse (the floor)", ms(F.dom), "parser reused, as page after page")
row("C: mapi_doc_parse + mapi_doc_free", ms(F.mapi),
  target(F.mapi / F.dom <= 2.0, format("%.2fx simdjson DOM (<= 2.0)", F.mapi / F.dom)))
row("C: bytes a document of the page holds (mapi_doc_size)", format("%d", F.bytes),
  format("%.2fx the page", F.bytes / #assert(io.open(DOC, "rb")):read("*a")))
row("C: simdjson DOM parse of the channel document, us", format("%.1f", FC.dom * 1e6),
  "per get_channel call; the libcurl loop parses nothing")
row("C: mapi_doc_parse + free of the channel document, us", format("%.1f", FC.mapi * 1e6),
  format("%.2fx simdjson DOM", FC.mapi / FC.dom))

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

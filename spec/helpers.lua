--- Spec helpers: fixtures, the sandbox (reused when the runner started one,
-- started here otherwise and stopped by pid at exit), its control routes,
-- and small table utilities.
--
-- Environment:
--   MERCHANTAPI_BASE_URL, MERCHANTAPI_API_KEY  a running sandbox (make test sets them)
--   MERCHANTAPI_FIXTURES                      the fixture documents (default fixtures/)
--   MERCHANTAPI_SPEC_PORT                     port for a sandbox started here (default: free ports)
local merchantapi = require "merchantapi"
local cjson = require "cjson"

local os_getenv, io_open, io_popen = os.getenv, io.open, io.popen
local format = string.format
local type, pairs, tostring, assert, error = type, pairs, tostring, assert, error
local concat = table.concat

local helpers = {}

helpers.API_KEY = os_getenv("MERCHANTAPI_API_KEY") or "sk_test_sandbox_4f9a2c"
helpers.PAYOUT_ID = "6ecebf80-b210-413b-b396-df4760d142c5"
helpers.PARTNER_PAY_ID = "9a1d2f64-58c3-4b0e-a7d1-3f2c6b8e4a17"
helpers.CHANNEL_ID = "60e05bc0-4690-4985-a08a-8acf00e48294"
helpers.ACCOUNT_ID = "13a85b45-8543-41c7-b963-394d4ea128ae"

-- The repository root: the directory above the one holding this file, made
-- absolute (nginx reads paths from its own prefix).
local function repo_root()
  local source = debug.getinfo(1, "S").source
  local dir = source:match("^@(.*)/spec/[^/]*$")
  if dir == nil or dir == "" then
    dir = "."
  end
  local pwd = os_getenv("PWD")
  if dir:sub(1, 1) ~= "/" and pwd then
    dir = dir == "." and pwd or pwd .. "/" .. dir
  end
  return dir
end

helpers.ROOT = repo_root()
helpers.FIXTURES = os_getenv("MERCHANTAPI_FIXTURES") or (helpers.ROOT .. "/fixtures")

--- The text of fixtures/<name>.json.
function helpers.fixture(name)
  local path = helpers.FIXTURES .. "/" .. name .. ".json"
  local f = assert(io_open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function execute(cmd)
  local a, _, c = os.execute(cmd)
  if type(a) == "number" then -- 5.1
    return a == 0
  end
  return a == true and c == 0
end

-- ---------------------------------------------------------------------------
-- The sandbox.  Its state lives in the registry, which busted's per-file
-- insulation (it resets package.loaded) leaves alone: it is started at most
-- once per run, and stopped when the Lua state closes (busted exits with
-- os.exit(code, true)).
-- ---------------------------------------------------------------------------

local REGISTRY_KEY = "merchantapi.spec.sandbox"

local function on_close(fn)
  local newproxy = rawget(_G, "newproxy")
  if newproxy then -- 5.1: only userdata have __gc
    local p = newproxy(true)
    getmetatable(p).__gc = fn
    return p
  end
  return setmetatable({}, { __gc = fn })
end

--- The sandbox's base URL, starting the sandbox first when the runner has
-- not (bare `busted` from the repository root).
function helpers.base_url()
  local env = os_getenv("MERCHANTAPI_BASE_URL")
  if env and env ~= "" then
    return env
  end
  local reg = debug.getregistry()
  local state = reg[REGISTRY_KEY]
  if state then
    if state.failed then
      error(state.failed, 2) -- once is enough to try
    end
    return state.url
  end
  -- free ports unless MERCHANTAPI_SPEC_PORT fixes the plain one
  local port = os_getenv("MERCHANTAPI_SPEC_PORT") or "auto"
  -- env -u LD_PRELOAD: under an ASan run the preloaded runtime must not reach nginx
  local envs = format("env -u LD_PRELOAD SANDBOX_PORT=%s SANDBOX_PREFIX=build/sandbox-lua",
    shell_quote(port))
  local run = shell_quote(helpers.ROOT .. "/sandbox/run")
  state = {}
  if execute(envs .. " " .. run .. " status >/dev/null 2>&1") then
    state.owned = false -- someone else's: use it, leave it running
  elseif execute(envs .. " " .. run .. " start >/dev/null") then
    state.owned = true
    state.guard = on_close(function()
      os.execute(envs .. " " .. run .. " stop >/dev/null 2>&1")
    end)
  else
    state.failed = "helpers: the sandbox did not start (" .. run .. " start)"
  end
  if not state.failed then
    -- the ports it listens on, as sandbox/run ports prints them
    local p = io.popen(envs .. " " .. run .. " ports 2>/dev/null")
    local text = p and p:read("*a") or ""
    if p then p:close() end
    state.ports = {}
    for name, value in text:gmatch("([%u_]+)=(%d+)") do
      state.ports[name] = tonumber(value)
    end
    if state.ports.SANDBOX_PORT then
      state.url = "http://127.0.0.1:" .. state.ports.SANDBOX_PORT
    else
      state.failed = "helpers: the sandbox's ports are unknown (" .. run .. " ports)"
    end
  end
  reg[REGISTRY_KEY] = state
  if state.failed then
    error(state.failed, 2)
  end
  return state.url
end

--- A transport every helpers.client gets unless opts say otherwise (nil:
-- libcurl).  spec/transports/transport_spec.lua sets it to run endpoint specs over
-- another HTTP client.
helpers.transport = nil

--- A client of the sandbox; opts override the defaults.
function helpers.client(opts)
  local o = { base_url = helpers.base_url(), api_key = helpers.API_KEY, max_retries = 0,
              transport = helpers.transport }
  for k, v in pairs(opts or {}) do
    o[k] = v
  end
  if o.api_key == false then
    o.api_key = nil
  end
  if o.transport == false then
    o.transport = nil -- libcurl, whatever helpers.transport says
  end
  return assert(merchantapi.new(o))
end

-- One HTTP request without the module (the /__sandbox routes are not
-- JSON:API), with an optional request body: status and body.
local function http(method, path, body)
  local url = helpers.base_url() .. path
  local ok, socket_http = pcall(require, "socket.http")
  if ok then
    local ltn12 = require "ltn12"
    local chunks = {}
    local _, status = socket_http.request({
      url = url,
      method = method,
      sink = ltn12.sink.table(chunks),
      source = body and ltn12.source.string(body) or nil,
      headers = { ["content-length"] = body and tostring(#body) or (method == "POST" and "0" or nil) },
    })
    return status, concat(chunks)
  end
  local p = assert(io_popen(format("env -u LD_PRELOAD curl -s -X %s %s-w '\\n%%{http_code}' %s", method,
    body and ("-d " .. shell_quote(body) .. " ") or "", shell_quote(url))))
  local out = p:read("*a")
  p:close()
  local answer, status = out:match("^(.*)\n(%d+)$")
  return tonumber(status), answer
end

--- Forgets confirmed payouts, request counts and latencies.
function helpers.reset()
  local status, body = http("POST", "/__sandbox/reset")
  assert(status == 200, "reset failed: " .. tostring(status) .. " " .. tostring(body))
end

--- POST /__sandbox/config with a JSON body (sandbox/README.md, "Control
-- routes"); raises unless the sandbox answers 200.
-- @tparam string json e.g. '{"latency_ms":200}'
-- @treturn string the sandbox's configuration after the change, as JSON text
function helpers.sandbox_config(json)
  local status, body = http("POST", "/__sandbox/config", json)
  assert(status == 200, "config " .. json .. " failed: " .. tostring(status) .. " " .. tostring(body))
  return body
end

--- How many requests the sandbox received for resource id `id` since the last reset.
function helpers.count(id)
  local status, body = http("GET", "/__sandbox/count?id=" .. id:gsub("[^%w%-._~]", function(c)
    return format("%%%02X", c:byte())
  end))
  assert(status == 200, "count failed: " .. tostring(status) .. " " .. tostring(body))
  return math.floor(cjson.decode(body).count) -- an integer on 5.3+
end

--- The traceparent header of every request the sandbox received for
-- resource id `id` since the last reset, in order ("-" for one without).
function helpers.traceparents(id)
  local status, body = http("GET", "/__sandbox/traceparents?id=" .. id:gsub("[^%w%-._~]", function(c)
    return format("%%%02X", c:byte())
  end))
  assert(status == 200, "traceparents failed: " .. tostring(status) .. " " .. tostring(body))
  return cjson.decode(body).traceparents
end

--- The headers of the last request the sandbox received for resource id
-- `id` (lower-case names; a repeated header's values as an array; never
-- `authorization`), or nil when none came since the last reset.
function helpers.headers(id)
  local status, body = http("GET", "/__sandbox/headers?id=" .. id:gsub("[^%w%-._~]", function(c)
    return format("%%%02X", c:byte())
  end))
  assert(status == 200, "headers failed: " .. tostring(status) .. " " .. tostring(body))
  local h = cjson.decode(body).headers
  if h == cjson.null then
    return nil
  end
  return h
end

-- ---------------------------------------------------------------------------
-- Both ways: blocking, and inside a task of merchantapi.loop()
-- ---------------------------------------------------------------------------

local unpack = rawget(table, "unpack") or rawget(_G, "unpack")

local function pack(...)
  return { n = select("#", ...), ... }
end

-- Whether a coroutine may yield from inside pcall, and from a generic
-- for's iterator (Lua 5.2+, LuaJIT; not the standalone Lua 5.1, which
-- raises "attempt to yield across metamethod/C-call boundary").
local function can_yield(fn)
  local co = coroutine.create(fn)
  local _, yielded = coroutine.resume(co)
  return yielded == true
end

helpers.YIELDS_IN_PCALL = can_yield(function() pcall(coroutine.yield, true) end)
helpers.YIELDS_IN_ITERATOR = can_yield(function()
  for _ in function() return coroutine.yield(true) end do -- luacheck: ignore 512
    break
  end
end)

--- Runs fn(...) as the one task of a new merchantapi.loop(), steps the loop
-- until the task is done, and returns what fn returned; what fn raised (a
-- failed assertion, an error) is raised again as it was, so busted reports
-- it as it would from a blocking run.
function helpers.in_loop(fn, ...)
  local loop = assert(merchantapi.loop())
  local task = loop:spawn(function(...)
    return true, pack(fn(...))
  end, ...)
  loop:run()
  assert(task:done(), "helpers.in_loop: the loop ended before its task")
  local ok, results = task:result()
  loop:close()
  if not ok then
    error(results, 0)
  end
  return unpack(results, 1, results.n)
end

--- The three ways a call runs that the observation specs compare, each
-- `{ name, run, transport }`: `run(fn)` calls fn blocking or as a loop
-- task, and `transport` is the client option (false: libcurl, or the
-- LuaSocket transport of spec/support/socket_transport.lua).
function helpers.drivers()
  local socket_transport = require "support.socket_transport"
  return {
    { "blocking", function(fn) return fn() end, false },
    { "a loop task", helpers.in_loop, false },
    { "a custom transport", function(fn) return fn() end, socket_transport },
  }
end

--- Defines the case `name` twice in the current describe block: `fn("blocking")`
-- as it is, and `fn("loop")` inside a loop task (helpers.in_loop), named
-- "<name> [in a loop task]", with the same assertions.  `fn`'s argument
-- lets a case keep the two runs apart where a counter outlives the
-- sandbox's reset (a test server's).
-- opts.yields_in_pcall / opts.yields_in_iterator: the case makes a client
-- call inside pcall (has_error) / from a generic for's iterator
-- (`pager:each()`): the loop's run is pending on a Lua where that cannot
-- yield (Lua 5.1).
function helpers.both(name, fn, opts)
  local busted = require "busted"
  busted.it(name, function()
    return fn("blocking")
  end)
  local loop_name = name .. " [in a loop task]"
  opts = opts or {}
  if opts.yields_in_pcall and not helpers.YIELDS_IN_PCALL then
    busted.pending(loop_name .. ": this Lua cannot yield inside pcall")
  elseif opts.yields_in_iterator and not helpers.YIELDS_IN_ITERATOR then
    busted.pending(loop_name .. ": this Lua cannot yield from a for's iterator")
  else
    busted.it(loop_name, function()
      helpers.in_loop(fn, "loop")
    end)
  end
end

-- ---------------------------------------------------------------------------
-- The sandbox's HTTPS ports and test CA (sandbox/README.md, "HTTPS")
-- ---------------------------------------------------------------------------

-- The plain port of the sandbox in use, from its base URL.
local function sandbox_port()
  return tonumber(helpers.base_url():match(":(%d+)/*$"))
end

-- SANDBOX_TLS_PORT / SANDBOX_TLS_UNTRUSTED_PORT, else the sandbox's own rule.
local function tls_port(env, offset, default8089)
  local p = tonumber(os_getenv(env) or "")
  if p then
    return p
  end
  local plain = sandbox_port()
  local state = debug.getregistry()[REGISTRY_KEY]
  if state and state.ports and state.ports[env] then
    return state.ports[env] -- a sandbox these helpers started
  end
  return plain == 8089 and default8089 or plain + offset
end

--- https://localhost:<TLS port>: the sandbox's certificate signed by the test CA.
function helpers.tls_url()
  return "https://localhost:" .. tls_port("SANDBOX_TLS_PORT", 1000, 8443)
end

--- https://localhost:<untrusted port>: a self-signed certificate nobody trusts.
function helpers.untrusted_url()
  return "https://localhost:" .. tls_port("SANDBOX_TLS_UNTRUSTED_PORT", 2000, 8444)
end

--- The absolute path of the sandbox's test CA (<prefix>/tls/ca.pem).  Every
--- sandbox has one (sandbox/run makes it): raises when it is missing, so
--- that a lost CA fails the HTTPS cases instead of leaving them unrun.
function helpers.ca_file()
  local prefix = os_getenv("SANDBOX_PREFIX")
  if prefix == nil or prefix == "" then
    local base = os_getenv("MERCHANTAPI_BASE_URL") -- "" (make matrix): the specs' own
    prefix = (base and base ~= "") and "build/sandbox" or "build/sandbox-lua"
    -- SANDBOX_PREFIX not exported (CONTRIBUTING.md's one-spec recipe): the
    -- prefix under build/ whose ports.env (sandbox/run) names the base URL's port
    local line = format("SANDBOX_PORT=%s\n", (base or ""):match(":(%d+)/*$") or "")
    local p = io_popen("ls -d " .. shell_quote(helpers.ROOT) .. "/build/*/ 2>/dev/null")
    for dir in (p and p:read("*a") or ""):gmatch("[^\n]+") do
      local f = io_open(dir .. "ports.env", "rb")
      if f and f:read("*a"):find(line, 1, true) == 1 then
        prefix = dir:gsub("/$", "")
      end
      if f then f:close() end
    end
    if p then p:close() end
  end
  if prefix:sub(1, 1) ~= "/" then
    prefix = helpers.ROOT .. "/" .. prefix
  end
  local path = prefix .. "/tls/ca.pem"
  local f = io_open(path, "rb")
  if not f then
    error("helpers: the sandbox's test CA is missing: " .. path .. " (sandbox/run makes it)", 2)
  end
  f:close()
  return path
end

--- Runs a shell command line and returns its whole output (stdout and
--- stderr) and whether it exited 0.  Under a sanitizer run (LD_PRELOAD of
--- the ASan runtime) the command runs without the preload, unless
--- keep_preload is true: a child Lua then runs under the same runtime as
--- this one.
function helpers.run(cmd, keep_preload)
  if not keep_preload then
    cmd = "env -u LD_PRELOAD sh -c " .. shell_quote(cmd)
  end
  local p = assert(io_popen(cmd .. " 2>&1; echo \"exit:$?\""))
  local out = p:read("*a")
  p:close()
  local body, code = out:match("^(.*)exit:(%d+)%s*$")
  return body or out, code == "0"
end

helpers.shell_quote = shell_quote

--- A shell command prefix that runs a child Lua interpreter (the one the
--- runner uses: $LUA, else lua5.4) with this process's package.path and
--- package.cpath, so that it loads the same merchantapi build.
function helpers.lua_command()
  local lua = os_getenv("LUA")
  if lua == nil or lua == "" then
    lua = "lua5.4"
  end
  return format("env LUA_PATH=%s LUA_CPATH=%s %s", shell_quote(package.path),
    shell_quote(package.cpath), shell_quote(lua))
end

--- Runs Lua source in a child interpreter (helpers.lua_command) with the
--- given arguments (arg[1], ...) and an optional "NAME=value ..." environment
--- prefix; returns its output and whether it exited 0.
function helpers.run_lua(source, args, env)
  local path = os.tmpname()
  local f = assert(io_open(path, "wb"))
  f:write(source)
  f:close()
  local quoted = {}
  for i, a in ipairs(args or {}) do
    quoted[i] = shell_quote(a)
  end
  local out, ok = helpers.run(format("%s %s %s %s", env and ("env " .. env) or "",
    helpers.lua_command(), shell_quote(path), concat(quoted, " ")), true)
  os.remove(path)
  return out, ok
end

--- Runs fn with the collector made as eager as it goes (no pause between
--- cycles, large steps), then restores it; raises fn's error.  Lua 5.5 sets
--- these through collectgarbage("param", name, value), 5.1-5.4 through
--- "setpause"/"setstepmul".
function helpers.with_eager_gc(fn)
  local function set(name, value)
    if _VERSION == "Lua 5.5" then
      return collectgarbage("param", name, value)
    end
    return collectgarbage("set" .. name, value)
  end
  collectgarbage("collect")
  local pause = set("pause", 0)
  local stepmul = set("stepmul", 1000)
  local ok, err = pcall(fn)
  set("pause", pause)
  set("stepmul", stepmul)
  assert(ok, err)
end

--- Hooks that keep what they are handed: `r.on_request` and `r.on_response`
-- append each attempt's info to `r.requests` and `r.responses`.
-- @treturn table r
function helpers.recorder()
  local r = { requests = {}, responses = {} }
  r.on_request = function(info) r.requests[#r.requests + 1] = info end
  r.on_response = function(info) r.responses[#r.responses + 1] = info end
  return r
end

--- A file's whole content, or nil when it cannot be opened.
-- @tparam string path
-- @treturn string|nil
function helpers.read_file(path)
  local f = io_open(path, "rb")
  if not f then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return text
end

--- This process's resident set size in KiB (Linux /proc), or nil.
function helpers.rss_kib()
  local f = io_open("/proc/self/status", "r")
  if not f then
    return nil
  end
  local text = f:read("*a")
  f:close()
  return tonumber(text:match("VmRSS:%s*(%d+)"))
end

--- How many file descriptors this process has open (Linux /proc), read
-- here (LuaFileSystem, which busted itself loads), not by a child: an `ls`
-- under io.popen also saw the popen pipe's write end whenever it ran before
-- this process had closed it (on a loaded machine: 7 counted for 6 open,
-- spec/calls/client_spec.lua's __gc case failing either way).  The
-- directory's own descriptor is left out.
function helpers.open_fds()
  local lfs = require "lfs"
  local n = 0
  for name in lfs.dir("/proc/self/fd") do
    if name ~= "." and name ~= ".." then
      n = n + 1
    end
  end
  return n - 1
end

--- Wall-clock seconds with sub-second resolution (luasocket's gettime,
--- else `date +%s.%N`), for measuring waits inside a spec.
function helpers.now()
  local ok, socket = pcall(require, "socket")
  if ok and socket.gettime then
    return socket.gettime()
  end
  local p = assert(io_popen("date +%s.%N"))
  local t = tonumber(p:read("*l"))
  p:close()
  return t
end

-- ---------------------------------------------------------------------------
-- Utilities
-- ---------------------------------------------------------------------------

--- Sorted keys of a table.
function helpers.keys(t)
  local out = {}
  for k in pairs(t) do
    out[#out + 1] = k
  end
  table.sort(out, function(a, b) return tostring(a) < tostring(b) end)
  return out
end

--- Every string reachable from v (tables walked once, keys and values), and
--- tostring(v) when it has a __tostring.
function helpers.strings(v)
  local out, seen = {}, {}
  local function walk(x)
    if type(x) == "string" then
      out[#out + 1] = x
    elseif type(x) == "table" and not seen[x] then
      seen[x] = true
      for k, val in pairs(x) do
        walk(k)
        walk(val)
      end
      local mt = getmetatable(x)
      if type(mt) == "table" and mt.__tostring then
        out[#out + 1] = tostring(x)
      end
    end
  end
  walk(v)
  return out
end

--- true when `s` occurs (plainly) in one of the strings of v.
function helpers.contains_string(v, s)
  for _, str in ipairs(helpers.strings(v)) do
    if str:find(s, 1, true) then
      return true
    end
  end
  return false
end

--- Lua integer (5.3+) or integral number (5.1): the contract's "integer".
function helpers.is_integer(v)
  if math.type then
    return math.type(v) == "integer"
  end
  return type(v) == "number" and v % 1 == 0
end

--- The ids of a list of resources.
function helpers.ids(list)
  local out = {}
  for i = 1, #list do
    out[i] = list[i].id
  end
  return out
end

--- The ids of the items a pager yields through pager:each(), in order.
function helpers.collect(pager)
  local out = {}
  for item in pager:each() do
    out[#out + 1] = item.id
  end
  return out
end

--- Fails the running test when the api key (helpers.API_KEY) is in any
-- string reachable from v (helpers.strings) or in tostring(v); `what`
-- names v in the message.  A failure's response (`err.res`) is checked in
-- its headers and request_id: its body is left as received (the contract).
function helpers.assert_no_key(v, what)
  local luassert = require "luassert"
  if type(v) == "table" and type(rawget(v, "res")) == "table" then
    local copy = setmetatable({}, getmetatable(v))
    for k, val in pairs(v) do
      copy[k] = k ~= "res" and val or nil
    end
    helpers.assert_no_key({ v.res.headers, v.res.request_id }, what .. ": err.res")
    v = copy
  end
  luassert.is_false(helpers.contains_string(v, helpers.API_KEY), "the api key in " .. what)
  if type(v) == "table" then
    luassert.is_nil(tostring(v):find(helpers.API_KEY, 1, true), "the api key in tostring of " .. what)
  end
end

-- ---------------------------------------------------------------------------
-- The sandbox's generated accounts (sandbox/README.md, "Addresses")
-- ---------------------------------------------------------------------------

--- The address of fixtures/list_addresses.200.json: acct-22's first.
helpers.FIXTURE_ADDRESS = "138928d2-769d-478f-9508-90b7e4f8942a"

--- The id of acct-22's i-th address, oldest first (1..22): the fixture
-- address for 1.
function helpers.acct22_id(i)
  return i == 1 and helpers.FIXTURE_ADDRESS or format("00000022-0000-4000-8000-%012d", i)
end

--- The ids of acct-22's addresses first..last, in order.
function helpers.acct22_ids(first, last)
  local out = {}
  for i = first, last do
    out[#out + 1] = helpers.acct22_id(i)
  end
  return out
end

--- The id of acct-25000's i-th address, oldest first (1..25000).
function helpers.acct25000_id(i)
  return format("00025000-0000-4000-8000-%012d", i)
end

return helpers

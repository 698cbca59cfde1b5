--- Rows of the fault matrix played by a sandbox of their own that ends every
-- kept-alive connection after 2 requests (SANDBOX_KEEPALIVE_REQUESTS=2: a real
-- nginx's keepalive_requests and reloads, made small; HTTP/1.1
-- `Connection: close`, HTTP/2 GOAWAY). A chain of calls on one client, and a
-- walk of acct-22 two by two (11 pages, 4 or 8 at once), must each get their
-- own answers, every item once, in order. The shape: spec/faults/fault_matrix_spec.lua.
local rows = {}

local server = {} -- ports, prefix once started (shared by the rows below)

local function shell(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("*a")
  p:close()
  return out
end

local function start(ctx)
  if server.port then
    return
  end
  local h = ctx.helpers
  -- a prefix of its own: two runs of the spec may go at once (40-lua-matrix's lanes)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  server.prefix = string.format("%s/build/sandbox-matrix-keepalive-%d", h.ROOT,
    math.random(100000, 999999))
  local env = "env -u LD_PRELOAD -u SANDBOX_TLS_PORT -u SANDBOX_TLS_UNTRUSTED_PORT SANDBOX_PORT=auto "
    .. "SANDBOX_KEEPALIVE_REQUESTS=2 SANDBOX_PREFIX=" .. h.shell_quote(server.prefix) .. " "
  local run = h.shell_quote(h.ROOT .. "/sandbox/run")
  local out = shell(env .. run .. " start")
  local ports = shell(env .. run .. " ports")
  server.port = ports:match("SANDBOX_PORT=(%d+)")
  server.tls_port = ports:match("SANDBOX_TLS_PORT=(%d+)")
  server.stop = env .. run .. " stop >/dev/null 2>&1; rm -rf " .. h.shell_quote(server.prefix)
  assert(server.port and server.tls_port, "the keepalive sandbox did not start: " .. out)
end

local function stop()
  if server.stop then
    os.execute(server.stop)
    server.port, server.stop = nil, nil
  end
end

-- Requests that reached that sandbox for `id` (its /__sandbox/count).
local function reached(_, id)
  local http = require "socket.http"
  local body = http.request("http://127.0.0.1:" .. server.port .. "/__sandbox/count?id="
    .. id:gsub("[^%w%-._~]", function(c) return string.format("%%%02X", c:byte()) end))
  return tonumber(body and body:match('"count":(%d+)')) or -1
end

-- A chain of `n` calls on one client, each on an id of its own.
local function chain(make, n)
  local first = make(1)
  local at = first
  for i = 2, n do
    at.after = make(i)
    at = at.after
  end
  return first
end

local function oks(n)
  local first = { ok = true }
  local at = first
  for _ = 2, n do
    at.after = { ok = true }
    at = at.after
  end
  return first
end

local CHAIN = 5

local function row(name, scheme)
  rows[#rows + 1] = {
    name = name,
    server = "sandbox-keepalive",
    start = start,
    stop = stop,
    reached = reached,
    base_url = function()
      return scheme == "https" and ("https://localhost:" .. server.tls_port)
        or ("http://127.0.0.1:" .. server.port)
    end,
    client_opts = function(_, o)
      if scheme == "https" then
        -- that sandbox's own test CA
        o.cafile = server.prefix .. "/tls/ca.pem"
      end
      return o
    end,
    calls = {
      get = chain(function(i) return { id = "echo-ka" .. i } end, CHAIN),
      put = chain(function(i) return { id = "fault-flaky-0-50" .. i } end, CHAIN),
      list = chain(function(i) return { account = "acct-22", per_page = i } end, CHAIN),
    },
    opts = { max_retries = 1, timeout = 5 },
    expect = { get = oks(CHAIN), put = oks(CHAIN), list = oks(CHAIN),
               pages = { ok = true } },
    na = scheme == "https" and {
      transport = "spec/support/socket_transport.lua speaks plain HTTP only",
      cosocket = "nginx trusts the main sandbox's CA, not this sandbox's",
    } or nil,
    alone = true,
  }
  -- the walk: acct-22 two by two
  rows[#rows].calls.list.pages = { account = "acct-22", per_page = 2 }
end

row("keepalive_requests 2: 5 calls on one client, a walk of 11 pages", "http")
row("keepalive_requests 2 over HTTPS (HTTP/2 GOAWAY)", "https")

return rows

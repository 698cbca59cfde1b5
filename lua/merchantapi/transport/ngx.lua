--- An OpenResty transport for merchantapi: HTTP/1.1 over cosockets, so a
-- call never blocks the nginx worker (it yields while it waits, and other
-- requests are served meanwhile).
--
-- It only moves bytes: connect, the keepalive pool, send, and bounded reads
-- (receiveany) into the core's HTTP/1.1 reader (core.h1_reader,
-- src/h1_reader.c), which reads the answer as libcurl's path does (the
-- framing rule, the caps, the same errors); every read and write within
-- what is left of the attempt's timeout.  Where it can be used, the pool,
-- the confirm's fresh connection, TLS and the nginx configuration it needs:
-- docs/guide/openresty.md, "Transports".
--
-- @module merchantapi.transport.ngx
local type = type
local tostring = tostring
local pairs = pairs
local pcall = pcall
local rawget = rawget
local sub = string.sub
local find = string.find
local byte = string.byte
local max = math.max
local concat = table.concat

local core = require "merchantapi.core"
local h1_reader, DEFAULT_MAX_BODY = core.h1_reader, core.defaults.max_body
-- the reader's methods, looked up once (a reader's __index is a function:
-- its fields are built when read)
local feed, eof, keep_alive, reset
do
  local r = h1_reader(false, 0)
  feed, eof, keep_alive, reset = r.feed, r.eof, r.keep_alive, r.reset
end
local url_parts = core.url_parts

local M = {}

--- Counters of this worker: `connections` opened, `reused` connections
-- taken from the keepalive pool, `requests` sent.
M.stats = { connections = 0, reused = 0, requests = 0 }

local DEFAULTS = { pool_size = 16, keepalive_timeout = 60 }
-- the most bytes one read takes (the reader counts every cap itself)
local READ_BLOCK = 65536

-- The origins parse_url has seen: "scheme://authority" -> { scheme, host,
-- port, authority } (a client calls one or two; bounded all the same).
local origins, norigins = {}, 0
local MAX_ORIGINS = 64

-- scheme, host (for connect), port, authority (for Host), path and query.
-- Plain searches, and the origin's parts (the core's `url_parts`, once per
-- origin) remembered: this runs for every request.
local function parse_url(url)
  local sep = find(url, "://", 1, true)
  if not sep then
    return nil, "not an http(s) URL"
  end
  local stop = find(url, "[/?#]", sep + 3)
  local origin = stop and sub(url, 1, stop - 1) or url
  local path = stop and sub(url, stop) or ""
  if path == "" or byte(path, 1) == 63 then -- "?"
    path = "/" .. path
  end
  local o = origins[origin]
  if not o then
    local scheme, host, port = url_parts(origin)
    if scheme ~= "http" and scheme ~= "https" then
      return nil, "not an http(s) URL"
    elseif host == "" or not port then
      return nil, "bad host in URL"
    end
    local pool = scheme .. "://" .. host .. ":" .. port
    -- the connect options of the keepalive pool, and of the fresh connections
    o = { scheme, host, port, sub(origin, sep + 3), { pool = pool }, { pool = pool .. ":fresh" } }
    if norigins >= MAX_ORIGINS then
      origins, norigins = {}, 0
    end
    origins[origin], norigins = o, norigins + 1
  end
  return o[1], o[2], o[3], o[4], path, o
end

-- The readers this worker handed out with an answer, the last on top (at
-- most LENT): the exchange takes the answer at once (x:response), and a
-- reader whose answer was taken reads the next one (reader:reset), so that
-- no reader is made and collected per request.  One whose answer is still
-- held (a caller of the transport itself) is let go, unchanged.
local lent, nlent = {}, 0
local LENT = 16

-- the pieces of a request's bytes, joined at once (one table per worker),
-- and the pieces of a traced request
local scratch, pair = {}, {}

-- A reader for the answer to come (core.h1_reader's arguments).
local function take_reader(head_only, max_body)
  local n = nlent
  if n > 0 then
    local r = lent[n]
    lent[n], nlent = nil, n - 1
    if reset(r, head_only, max_body) then
      return r
    end
  end
  return h1_reader(head_only, max_body)
end

-- Sets the socket's timeouts to the time left before st.deadline (the
-- connect timeout as given), before every read and write: a read returns
-- as soon as bytes come (receiveany), so a server sending one byte at a
-- time meets the deadline however slowly it sends.  The time left only
-- changes when nginx's cached clock does, i.e. after a wait: settimeouts
-- is called again only then.
local function set_timeout(st)
  local t = st.ngx.now()
  if t ~= st.at then
    st.at = t
    local left = max(1, (st.deadline - t) * 1000)
    st.sock:settimeouts(st.connect_ms, left, left)
  end
end

-- A failed attempt: the shape merchantapi.dispatch expects.
local function failure(message, sent)
  return nil, { message = message, sent = sent }
end

-- Moves the answer's bytes into reader (the core's HTTP/1.1 reader,
-- core.h1_reader: src/h1_reader.c), at most READ_BLOCK at a time, each read
-- within the deadline: the reader's state (1 the answer is complete, 2
-- refused, 3 failed), or nil, the socket's error.
local function pump(st, reader)
  local sock = st.sock
  while true do
    set_timeout(st)
    local data, err = sock:receiveany(READ_BLOCK)
    local state
    if data then
      state = feed(reader, data)
    elseif err == "closed" then
      return eof(reader)
    else
      return nil, err
    end
    if state ~= 0 then
      return state
    end
  end
end

--- Makes a transport with its own settings.
--
-- syntax: `transport = require("merchantapi.transport.ngx").new(opts)`
--
-- @tparam[opt] table opts `pool_size` (connections kept per host and port in
--   each worker, default 16), `keepalive_timeout` (seconds an idle pooled
--   connection is kept, default 60).
-- @treturn function `transport(request) -> res | nil, err` for
--   `merchantapi.new { transport = ... }`.
function M.new(opts)
  opts = opts or {}
  local pool_size = opts.pool_size or DEFAULTS.pool_size
  local keepalive_ms = (opts.keepalive_timeout or DEFAULTS.keepalive_timeout) * 1000

  return function(request)
    local ngx = rawget(_G, "ngx")
    if type(ngx) ~= "table" or type(ngx.socket) ~= "table" then
      return failure("merchantapi.transport.ngx runs inside OpenResty only", false)
    end
    local scheme, host, port, authority, path, origin = parse_url(request.url)
    if not scheme then
      return failure(host, false)
    end
    local deadline = ngx.now() + request.timeout
    local connect_ms = max(1, request.connect_timeout * 1000)

    local ok, sock = pcall(ngx.socket.tcp)
    if not ok or not sock then
      return failure("cosockets are not available here: " .. tostring(sock), false)
    end
    local st = { ngx = ngx, sock = sock, deadline = deadline, connect_ms = connect_ms, at = nil }
    set_timeout(st)

    local fresh = request.fresh_connection
    local connect_host = (host == "localhost") and "127.0.0.1" or host
    local cok, connected, err = pcall(sock.connect, sock, connect_host, port,
      fresh and origin[6] or origin[5])
    if not cok then
      return failure("connect: " .. tostring(connected), false)
    end
    if not connected then
      return failure("connect to " .. authority .. ": " .. tostring(err), false)
    end
    local reused = sock:getreusedtimes() or 0
    if reused > 0 then
      M.stats.reused = M.stats.reused + 1
    else
      M.stats.connections = M.stats.connections + 1
      if scheme == "https" then
        -- lua-resty-core up to 0.1.31 (Debian 12 ships 0.1.25) raises "assertion
        -- failed!" instead of returning the error when a handshake completes at
        -- once but verification fails (its issue #499): caught here, it is the
        -- failure it stands for.  Never pass reused_session = false: that path
        -- skips the verification result (its issue #532).
        local hok, session, herr = pcall(sock.sslhandshake, sock, nil, host, true)
        if not hok or not session then
          sock:close()
          return failure("TLS handshake with " .. authority .. ": "
            .. (hok and tostring(herr) or "certificate verification failed"), false)
        end
      end
    end

    -- the request, built in the worker's scratch table (nothing yields
    -- between filling it and the concat)
    local method = request.method
    local out = scratch
    out[1], out[2], out[3], out[4], out[5] = method, " ", path, " HTTP/1.1\r\nHost: ", authority
    local n = 5
    local traceparent
    for name, value in pairs(request.headers) do
      if name == "traceparent" then
        traceparent = value
      else
        out[n + 1], out[n + 2], out[n + 3], out[n + 4] = "\r\n", name, ": ", value
        n = n + 4
      end
    end
    -- a traced request's own line starts a second string (below)
    local split = n
    if traceparent then
      out[n + 1], out[n + 2] = "\r\ntraceparent: ", traceparent
      n = n + 2
    end
    local body = request.body
    if method ~= "GET" and method ~= "HEAD" then
      body = body or ""
      out[n + 1], out[n + 2] = "\r\nContent-Length: ", #body
      n = n + 2
    end
    out[n + 1] = fresh and "\r\nConnection: close\r\n\r\n" or "\r\n\r\n"
    n = n + 1
    if body and body ~= "" then
      out[n + 1] = body
      n = n + 1
    end
    -- one string: handed a table, the cosocket sizes and copies its pieces
    -- through Lua's C API, a fifth of what this function cost per request.
    -- But a traced request goes as pieces: the lines every request of the
    -- client repeats (a string made before), its traceparent line (the
    -- value is the request's own string) and the rest (one constant piece
    -- for a GET).  Joined, each request would be a new string differing
    -- from the last only in bytes LuaJIT's string hash does not read (it
    -- reads 16 of them): every such string of the worker not yet collected
    -- has the same hash, and making the next one compared it with each of
    -- them (in nginx +3 us a request, cache misses mostly; BENCHMARKS.md,
    -- issue 32).  So no new string is made for a traced request here.
    local bytes
    if traceparent then
      pair[1], pair[2], pair[3] = concat(out, "", 1, split), "\r\ntraceparent: ", traceparent
      pair[4] = n == split + 3 and out[n] or concat(out, "", split + 3, n)
      bytes = pair
    else
      bytes = concat(out, "", 1, n)
    end
    local sent
    set_timeout(st)
    sent, err = sock:send(bytes) -- (the cosocket copies pair's strings before it returns)
    M.stats.requests = M.stats.requests + 1
    if not sent then
      sock:close()
      -- a pooled connection the server had closed fails here before any byte
      -- could be read by the server; still: unknown, as nothing proves it
      return failure("sending the request: " .. tostring(err), true)
    end

    -- the answer: the core reads it, this only moves bytes
    local reader = take_reader(method == "HEAD", request.max_body or DEFAULT_MAX_BODY)
    local state
    state, err = pump(st, reader)
    if state == 1 and keep_alive(reader) and not fresh then
      sock:setkeepalive(keepalive_ms, pool_size)
    else
      sock:close()
    end
    if not state then
      return failure("reading the answer: " .. tostring(err), true)
    elseif state == 3 then -- no answer: the reader's reason, as libcurl's path titles it
      return failure(reader:error(), true)
    end
    -- the answer, or a head the exchange refuses as libcurl's path does
    if nlent < LENT then
      nlent = nlent + 1
      lent[nlent] = reader
    end
    return reader
  end
end

--- The transport with the default settings: pass it as
-- `merchantapi.new { transport = require("merchantapi.transport.ngx").request }`.
-- @function request
-- @tparam table request the request the client builds (see `merchantapi.dispatch`).
-- @treturn table|nil the response `{ status, headers, body }`, or nil and
--   the error (`{ message = s, sent = boolean }`).
M.request = M.new()

return M

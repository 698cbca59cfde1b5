--- An OpenResty transport for merchantapi: HTTP/1.1 over cosockets, so a
-- call never blocks the nginx worker (it yields while it waits, and other
-- requests are served meanwhile).
--
-- Where it can be used, what it does (framing by the core's rule, the
-- keepalive pool, the confirm's fresh connection, TLS) and the nginx
-- configuration it needs: docs/guide/openresty.md, "Transports".
--
-- @module merchantapi.transport.ngx
local type = type
local tonumber = tonumber
local tostring = tostring
local pairs = pairs
local pcall = pcall
local rawget = rawget
local concat = table.concat
local lower = string.lower
local sub = string.sub
local find = string.find
local match = string.match
local byte = string.byte
local min = math.min
local max = math.max

local core = require "merchantapi.core"
local core_framing, DEFAULT_MAX_BODY = core.framing, core.defaults.max_body
local url_parts = core.url_parts

local M = {}

--- Counters of this worker: `connections` opened, `reused` connections
-- taken from the keepalive pool, `requests` sent.
M.stats = { connections = 0, reused = 0, requests = 0 }

local DEFAULTS = { pool_size = 16, keepalive_timeout = 60 }
-- the core's cap of a head: reading stops past it (the core refuses the head)
local MAX_HEADER_BYTES = core.defaults.max_header_bytes
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

-- Lower-case header names seen ("Content-Type" -> "content-type"): a server
-- sends the same few on every answer.  Bounded.
local lower_names, nlower = {}, 0
local MAX_NAMES = 256

local function lower_name(name)
  local l = lower_names[name]
  if not l then
    l = lower(name)
    if nlower >= MAX_NAMES then
      lower_names, nlower = {}, 0
    end
    lower_names[name], nlower = l, nlower + 1
  end
  return l
end

-- The value of a header line after its colon at `colon`, without the
-- spaces and tabs around it (RFC 9110's OWS), found with plain byte tests.
local function header_line_value(line, colon)
  local first, last = colon + 1, #line
  local b = byte(line, first)
  while b == 32 or b == 9 do
    first = first + 1
    b = byte(line, first)
  end
  b = byte(line, last)
  while last >= first and (b == 32 or b == 9) do
    last = last - 1
    b = byte(line, last)
  end
  return sub(line, first, last)
end

-- Sets the socket's timeouts to the time left before st.deadline (the
-- connect timeout as given).  The time left only changes when nginx's
-- cached clock does, i.e. after a wait: settimeouts is called again only
-- then, not for every line read.
local function set_timeout(st)
  local t = st.ngx.now()
  if t ~= st.at then
    st.at = t
    local left = max(1, (st.deadline - t) * 1000)
    st.sock:settimeouts(st.connect_ms, left, left)
  end
end

-- Receives pattern (a byte count or "*l") within the deadline: the data,
-- or nil, "<what>: <socket error>".
local function receive(st, pattern, what)
  set_timeout(st)
  local data, err = st.sock:receive(pattern)
  if not data then
    return nil, what .. ": " .. tostring(err)
  end
  return data
end

-- A failed attempt: the shape merchantapi.transport expects.
local function failure(message, sent)
  return nil, { message = message, sent = sent }
end

-- Reads a line of a head within the deadline, at most room + 1 bytes of it
-- (receive("*l") has no bound): the line without its CR LF, cut if longer,
-- and the bytes it took; or nil, "<what>: <socket error>".  receiveuntil's
-- iterator, called with a size, returns at most that many bytes before its
-- pattern, then nil, nil once past it (lua-nginx-module's README).
local function read_line(st, room, what)
  set_timeout(st)
  local line, err = st.line(room + 1)
  if not line then
    return nil, what .. ": " .. tostring(err)
  end
  local n = #line
  if n <= room then
    st.line() -- the line ended: its nil, nil (nothing is read)
  end
  if byte(line, n) == 13 then
    line = sub(line, 1, n - 1)
  end
  return line, n + 1
end

-- Reads the status line and headers of one answer; skips 1xx answers.
-- Returns status, headers (lower-case name -> value or { values }), the
-- HTTP minor version, and when the head passed the core's cap the bytes
-- read so far (reading stops at most one byte past it); or nil, err.
local function read_head(st)
  local bytes = 0
  st.line = st.sock:receiveuntil("\n")
  while true do
    local line, n = read_line(st, MAX_HEADER_BYTES - bytes, "reading the status line")
    if not line then
      return nil, n
    end
    bytes = bytes + n
    local minor, status = match(line, "^HTTP/1%.([01]) (%d%d%d)")
    if not status then
      return nil, "not an HTTP/1.x status line"
    end
    status = tonumber(status)
    local headers, last = {}, nil
    while bytes <= MAX_HEADER_BYTES do
      line, n = read_line(st, MAX_HEADER_BYTES - bytes, "reading the headers")
      if not line then
        return nil, n
      end
      bytes = bytes + n
      if line == "" or bytes > MAX_HEADER_BYTES then
        break
      end
      local first = byte(line, 1)
      if (first == 32 or first == 9) and last then
        -- an obsolete folded line continues the last header
        local v = headers[last]
        if type(v) == "table" then
          v[#v] = v[#v] .. " " .. header_line_value(line, 0)
        else
          headers[last] = v .. " " .. header_line_value(line, 0)
        end
      else
        local colon = find(line, ":", 1, true)
        if colon and colon > 1 then
          local name, value = lower_name(sub(line, 1, colon - 1)), header_line_value(line, colon)
          local old = headers[name]
          if old == nil then
            headers[name] = value
          elseif type(old) == "table" then
            old[#old + 1] = value
          else
            headers[name] = { old, value }
          end
          last = name
        end
      end
    end
    if bytes > MAX_HEADER_BYTES then
      return status, headers, tonumber(minor), bytes
    end
    if status >= 200 or status == 101 then
      return status, headers, tonumber(minor)
    end
    -- 1xx interim answer: the real one follows
  end
end

-- The longest chunk-size line read (hex digits and extensions), and the
-- bytes of trailer lines together (the head's cap): a line past its room
-- fails the attempt; nothing past the room is read.
local CHUNK_LINE_ROOM = 4096

-- One line of a chunked body within room bytes, or nil, err.
local function chunk_line(st, room, what)
  local line, n = read_line(st, room, what)
  if line and n > room + 1 then
    return nil, what .. ": over " .. room .. " bytes"
  end
  return line, n
end

-- Reads a chunked body, at most limit bytes.  body, complete | nil, err.
local function read_chunked(st, limit)
  local parts, total = {}, 0
  while true do
    local line, err = chunk_line(st, CHUNK_LINE_ROOM, "reading a chunk size")
    if not line then
      return nil, err
    end
    local size = tonumber(match(line, "^%s*(%x+)"), 16)
    if not size then
      return nil, "bad chunk size line"
    end
    if size == 0 then
      local room = MAX_HEADER_BYTES
      repeat -- trailers, up to the blank line
        local n
        line, n = chunk_line(st, room, "reading the trailers")
        if not line then
          return nil, n
        end
        room = room - n
        if line ~= "" and room < 2 then
          return nil, "reading the trailers: over " .. MAX_HEADER_BYTES .. " bytes"
        end
      until line == ""
      return concat(parts), true
    end
    local want = min(size, limit - total)
    if want > 0 then
      local data
      data, err = receive(st, want, "reading a chunk")
      if not data then
        return nil, err
      end
      parts[#parts + 1] = data
      total = total + #data
    end
    if want < size then
      return concat(parts), false -- over the limit: the rest is not read
    end
    local crlf
    crlf, err = chunk_line(st, 2, "reading a chunk end")
    if crlf ~= "" then
      return nil, "bad chunk end: " .. tostring(err or crlf)
    end
  end
end

-- Reads a body delimited by the connection's close, at most limit bytes.
local function read_to_close(st, limit)
  local sock = st.sock
  local parts, total = {}, 0
  while total < limit do
    set_timeout(st)
    local data, err, partial = sock:receive(min(READ_BLOCK, limit - total))
    data = data or partial
    if data and #data > 0 then
      parts[#parts + 1] = data
      total = total + #data
    end
    if err == "closed" then
      return concat(parts), true
    elseif err then
      return nil, "reading the body: " .. tostring(err)
    end
  end
  return concat(parts), false
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

    -- the request
    local method = request.method
    local out = { method, " ", path, " HTTP/1.1\r\nHost: ", authority, "\r\n" }
    local nout = #out
    for name, value in pairs(request.headers) do
      out[nout + 1], out[nout + 2], out[nout + 3], out[nout + 4] = name, ": ", value, "\r\n"
      nout = nout + 4
    end
    local body = request.body
    if method ~= "GET" and method ~= "HEAD" then
      body = body or ""
      out[#out + 1] = "Content-Length: " .. #body .. "\r\n"
    end
    out[#out + 1] = fresh and "Connection: close\r\n\r\n" or "\r\n"
    if body and body ~= "" then
      out[#out + 1] = body
    end
    local sent
    sent, err = sock:send(out)
    M.stats.requests = M.stats.requests + 1
    if not sent then
      sock:close()
      -- a pooled connection the server had closed fails here before any byte
      -- could be read by the server; still: unknown, as nothing proves it
      return failure("sending the request: " .. tostring(err), true)
    end

    -- the answer
    local status, headers, minor, head_bytes = read_head(st)
    if not status then
      sock:close()
      return failure(headers, true)
    end
    if head_bytes then -- over the cap: the exchange refuses it as libcurl's path does
      sock:close()
      return { status = status, headers = headers, body = "", head_bytes = head_bytes }
    end
    local limit = (request.max_body or DEFAULT_MAX_BODY) + 1
    local keep = not fresh and minor == 1
    local connection = headers.connection -- a repeated header: its last value
    connection = type(connection) == "table" and connection[#connection] or connection
    if connection and find(lower(connection), "close", 1, true) then
      keep = false
    end
    -- the core's framing rule: a refused head is handed on without a body,
    -- and the exchange fails it as libcurl's path does
    local framing, n = core_framing(headers["content-length"], headers["transfer-encoding"])
    if not framing then
      sock:close()
      return { status = status, headers = headers, body = "" }
    end
    local data, complete = "", true
    if method == "HEAD" or status == 204 or status == 304 or status < 200 then
      data = ""
    elseif framing == "chunked" then
      data, complete = read_chunked(st, limit)
    elseif framing == "length" then
      if n > 0 then
        local want = min(n, limit)
        set_timeout(st)
        data, err = sock:receive(want)
        if not data then
          -- cut before its end (the connection closed): a transport failure
          sock:close()
          return failure("reading the body: " .. tostring(err), true)
        end
        complete = want == n
      end
    else
      data, complete = read_to_close(st, limit)
      keep = false
    end
    if not data then
      sock:close()
      return failure(complete, true) -- complete holds the reason
    end
    if keep and complete then
      sock:setkeepalive(keepalive_ms, pool_size)
    else
      sock:close()
    end
    return { status = status, headers = headers, body = data }
  end
end

--- The transport with the default settings: pass it as
-- `merchantapi.new { transport = require("merchantapi.transport.ngx").request }`.
-- @function request
-- @tparam table request the request the client builds (see `merchantapi.transport`).
-- @treturn table|nil the response `{ status, headers, body }`, or nil and
--   the error (`{ message = s, sent = boolean }`).
M.request = M.new()

return M

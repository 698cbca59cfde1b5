--- A stand-in for OpenResty's `ngx` global with a scripted cosocket, so that
-- merchantapi.transport.ngx runs outside nginx: spec/transports/ngx_transport_spec.lua
-- checks what it sends and how it reads answers, and bench/ngx_transport.lua
-- times its Lua side.  (tests/suites/50-openresty runs it inside nginx.)
--
--   local fake = require "support.fake_cosocket"
--   local ngx = fake.ngx(answer)   -- answer: the raw bytes the server sends
--   ... ngx.sent[i] is the i-th request's bytes, ngx.log the socket calls
--
-- `receiveany(max)` (what the transport reads with) gives at most max
-- bytes, all that is left by default, `fake.step` bytes at a time when set,
-- and past the end nil, "closed" (or, with `fake.hold`, the connection
-- kept open: a wait of the read timeout, then nil, "timeout").  With
-- `fake.interval` (seconds) each read waits that long for its bytes on
-- the fake clock (`fake.clock`, what `now()` gives): longer than the
-- socket's read timeout, the read times out instead (the clock moved by
-- the timeout), as nginx's does.  Lines are split on "\n" (a "\r" before
-- it dropped), as a cosocket's `receive("*l")` does; `receive(n)` gives n
-- bytes; `receive("*a")` and a read past the end give what is left with
-- "closed"; `receiveuntil(p)`'s iterator, called with a size, the bytes
-- before p, at most that many at a time, then nil, nil once p is passed
-- (as lua-nginx-module's).
local concat, find, sub, min = table.concat, string.find, string.sub, math.min
local setmetatable, type = setmetatable, type

local M = {}

local Sock = {}
Sock.__index = Sock

function Sock:settimeouts(connect, send, read)
  self.fake.timeouts[#self.fake.timeouts + 1] = { connect, send, read }
  self.read_timeout = read
end

function Sock:receiveany(max)
  local fake, data, pos = self.fake, self.fake.answer, self.pos
  fake.reads = fake.reads + 1
  local timeout = (self.read_timeout or 60000) / 1000
  if pos > #data and not fake.hold then
    return nil, "closed"
  end
  if pos > #data or (fake.interval and fake.interval > timeout) then
    fake.clock = fake.clock + timeout
    return nil, "timeout"
  end
  if fake.interval then
    fake.clock = fake.clock + fake.interval
  end
  local n = min(max, fake.step or max)
  self.pos = pos + n
  return sub(data, pos, pos + n - 1)
end

function Sock:connect(host, port, opts)
  self.fake.connects[#self.fake.connects + 1] = { host = host, port = port, pool = opts and opts.pool }
  return 1
end

function Sock:getreusedtimes()
  return self.fake.reused
end

function Sock.sslhandshake()
  return true
end

function Sock:send(data)
  self.fake.sent[#self.fake.sent + 1] = type(data) == "table" and concat(data) or data
  local parts = self.fake.sent_parts -- when asked for: the strings as handed over
  if parts then
    local copy = {}
    for i, piece in ipairs(type(data) == "table" and data or { data }) do
      copy[i] = piece
    end
    parts[#parts + 1] = copy
  end
  return 1
end

-- nginx's receive(n) and receiveuntil restart their timer whenever bytes
-- come: with `fake.interval`, they wait interval seconds for every `step`
-- bytes they return, however long that is.
local function trickled(fake, got)
  if fake.interval and got then
    fake.clock = fake.clock + fake.interval * math.ceil(#got / (fake.step or 1))
  end
  return got
end

function Sock:receive(pattern)
  local a, b, c = self:receive_now(pattern)
  return trickled(self.fake, a or c) and a, b, c
end

function Sock:receive_now(pattern)
  local data, pos = self.fake.answer, self.pos
  if pattern == "*l" then
    local nl = find(data, "\n", pos, true)
    if not nl then
      self.pos = #data + 1
      return nil, "closed", sub(data, pos)
    end
    self.pos = nl + 1
    local line = sub(data, pos, nl - 1)
    if sub(line, -1) == "\r" then
      line = sub(line, 1, -2)
    end
    return line
  end
  if pattern == "*a" then
    self.pos = #data + 1
    return sub(data, pos)
  end
  local want = pattern
  if pos + want - 1 > #data then
    self.pos = #data + 1
    return nil, "closed", sub(data, pos)
  end
  self.pos = pos + want
  return sub(data, pos, pos + want - 1)
end

function Sock:receiveuntil(p)
  local passed = false
  local fake = self.fake
  local read = function(size)
    if passed then
      passed = false
      return nil, nil
    end
    local data, pos = self.fake.answer, self.pos
    local at = find(data, p, pos, true)
    if size and size > 0 and (at or #data + 1) - pos >= size then
      self.pos = pos + size
      return sub(data, pos, pos + size - 1)
    elseif not at then
      self.pos = #data + 1
      return nil, "closed", sub(data, pos)
    end
    self.pos, passed = at + #p, size and size > 0
    return sub(data, pos, at - 1)
  end
  return function(size)
    local a, b, c = read(size)
    trickled(fake, a or c)
    return a, b, c
  end
end

function Sock:setkeepalive()
  self.fake.kept = self.fake.kept + 1
  return 1
end

function Sock:close()
  self.fake.closed = self.fake.closed + 1
  return 1
end

--- An `ngx` table whose `socket.tcp()` answers `answer` (a string: the
-- server's bytes) to every request; `now()` is a fixed clock; `sock` is
-- the last socket made.
function M.ngx(answer)
  local fake
  fake = {
    answer = answer, sent = {}, connects = {}, timeouts = {}, reused = 0, kept = 0, closed = 0,
    reads = 0, clock = 1000,
    now = function() return fake.clock end,
    sleep = function() end,
    socket = { tcp = function()
      fake.sock = setmetatable({ fake = fake, pos = 1 }, Sock) -- .pos: the next byte read
      return fake.sock
    end },
  }
  return fake
end

return M

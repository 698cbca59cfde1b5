--- Resetting the client connection (TCP RST instead of an orderly FIN).
--
-- ngx.exit(444) closes the connection with a FIN, which a client sees as a
-- short body. To make it see "connection reset by peer", SO_LINGER is set to
-- zero seconds on the socket just before nginx closes it. ngx_lua has no API
-- for the socket's descriptor, so it is read from the request through the
-- first members of ngx_http_request_t and ngx_connection_t, which have kept
-- their places for many nginx releases; the descriptor is used only after
-- getpeername() on it confirms it is this request's client.
local ffi = require "ffi"
local base = require "resty.core.base"

local C = ffi.C
local tonumber = tonumber

ffi.cdef [[
struct sandbox_linger { int l_onoff; int l_linger; };
struct sandbox_sockaddr { unsigned short family; unsigned char port[2]; char rest[124]; };
]]
-- pcall: another module may have declared these libc functions already
pcall(ffi.cdef, "int setsockopt(int fd, int level, int name, const void *value, unsigned int length);")
pcall(ffi.cdef, "int getpeername(int fd, void *addr, unsigned int *length);")

local SOL_SOCKET, SO_LINGER = 1, 13 -- Linux
local RESET_NOW = ffi.new("struct sandbox_linger", 1, 0)

local _M = {}

-- r->connection (ngx_http_request_t: uint32_t signature; ngx_connection_t *connection)
-- then c->fd (ngx_connection_t: void *data; ngx_event_t *read, *write; ngx_socket_t fd).
local function client_fd()
  local r = base.get_request()
  if r == nil then
    return nil
  end
  local c = ffi.cast("void **", r)[1]
  local fd = ffi.cast("int *", ffi.cast("void **", c) + 3)[0]
  local peer = ffi.new("struct sandbox_sockaddr")
  local length = ffi.new("unsigned int[1]", ffi.sizeof(peer))
  if C.getpeername(fd, peer, length) ~= 0 then
    return nil
  end
  local port = peer.port[0] * 256 + peer.port[1]
  if port ~= tonumber(ngx.var.remote_port) then
    return nil
  end
  return fd
end

--- End the request by resetting its connection. Falls back to a plain close
-- (logged) if the socket cannot be found. Over HTTP/2 only the stream is
-- reset (RST_STREAM): the connection carries other streams.
function _M.reset()
  if ngx.req.http_version() == 2 then
    return ngx.exit(444)
  end
  local found, fd = pcall(client_fd)
  if not found or not fd
      or C.setsockopt(fd, SOL_SOCKET, SO_LINGER, RESET_NOW, ffi.sizeof(RESET_NOW)) ~= 0 then
    ngx.log(ngx.WARN, "sandbox: could not set SO_LINGER; closing without a reset")
  end
  return ngx.exit(444)
end

return _M

--- Rows of the fault matrix played by tests/servers/h2_fault.py: HTTPS with
-- ALPN h2 and http/1.1, each HTTP/2 fault asked for by the id
-- (`fault-<fault>`, and `fault-page-3-<fault>` for the concurrent pages: the
-- fault on page 3 of acct-22's 5 pages of 5, page 1 telling meta.total).
-- The calls: get_channel (get), confirm_payout with settle = false (put),
-- list_addresses (list), client:addresses(...):all() (pages1/4/8).
--
-- Expected answers (README "Decisions", "No hidden resends"; issue 19):
-- - a PUT goes over HTTP/1.1 on a connection of its own, where no HTTP/2
--   fault can touch it: it succeeds, and reached the server once;
-- - a GET whose stream the server never processed (REFUSED_STREAM, above a
--   GOAWAY's last_stream_id) is sent again on a new connection and ends
--   with the resource, the server having processed it once;
-- - HTTP_1_1_REQUIRED: the GET is sent again over HTTP/1.1 (the server took
--   the first one: reached twice) and ends with the resource;
-- - a stream reset (RST_STREAM INTERNAL_ERROR) before or after its :status
--   is a `transport` error, retried once (and reset again);
-- - a body cut by the connection's end while other streams are multiplexed
--   on it is `transport` (never `decode`): retried, on another connection,
--   it ends with the resource.
-- "reached" counts the requests the server processed (tests/servers/answers.py).
--
-- The LuaSocket transport and the OpenResty cosocket transport speak
-- HTTP/1.1 only: the cosocket one over TLS to the same port (it offers no
-- ALPN), the LuaSocket one to the server's plain HTTP/1.1 port; they get the
-- normal answers and succeed, as their `differ` entries say.
local fault_servers = require "support.matrix.fault_servers"

local h2 = fault_servers.new("h2_fault.py", { tls = true })
local rows = {}

local OK = { ok = true }

local E = require("support.matrix.cell").expect

local HTTP11 = {
  transport = { why = "LuaSocket speaks HTTP/1.1 only (no h2 frames): the server's plain "
                  .. "HTTP/1.1 port answers it", get = OK, put = OK, list = OK },
  cosocket = { why = "offers no ALPN h2 (HTTP/1.1 over TLS, no h2 frames): the server "
                 .. "answers it normally", get = OK, put = OK, list = OK },
}

local function row(name, fault, expect, t)
  t = t or {}
  local id = "fault-" .. fault
  rows[#rows + 1] = fault_servers.attach({
    name = name,
    server = "h2",
    calls = {
      get = { id = id },
      put = { id = id },
      list = { account = id, per_page = t.per_page or 5,
               pages = { account = t.pages_account or ("fault-page-3-" .. fault), page = 3 } },
    },
    opts = t.opts or { max_retries = 1, timeout = 3 },
    expect = expect,
    differ = HTTP11,
    -- a fault that ends the connection ends every stream on it: such a row
    -- runs alone (the loop drivers run rows side by side on one loop, whose
    -- clients share its connections)
    alone = t.alone,
  }, h2)
end

-- the server took the request, then reset its stream: retried once, reset again
local RESET = { get = E("transport", nil, nil, 2), put = OK, list = E("transport", nil, nil, 2) }

row("h2 RST_STREAM before headers", "h2-rst-before", RESET)
row("h2 RST_STREAM after headers", "h2-rst-after", RESET)
row("h2 REFUSED_STREAM (first connection)", "h2-refuse-first", { get = OK, put = OK, list = OK })
local ALONE = { alone = true }
row("h2 GOAWAY graceful (last = newest)", "h2-goaway", { get = OK, put = OK, list = OK }, ALONE)
row("h2 GOAWAY below streams in flight", "h2-goaway-low", { get = OK, put = OK, list = OK }, ALONE)
row("h2 HTTP_1_1_REQUIRED", "h2-1.1-required", {
  get = { ok = true, reached = { 2, 2 } }, put = OK, list = { ok = true, reached = { 2, 2 } } })
-- The connection that carries the request first is cut mid-body (with the
-- streams multiplexed on it); the retry, on another connection, is answered.
-- A cut body is `transport` (retryable), never `decode` (which would end the
-- call). The server took the cut request, unless it was written on the
-- connection as the server closed it (libcurl's resend of it is stopped,
-- and the retry goes over HTTP/1.1): reached once or twice.
local RETRIED = { ok = true, reached = { 1, 2 } }
row("h2 connection closed mid-body (multiplexed)", "h2-cut",
  { get = RETRIED, put = OK, list = RETRIED, pages = OK }, ALONE)

-- nginx's keepalive_requests (3 here): every connection answers 3 requests,
-- then GOAWAY at the third; the streams after it, never processed, go again
-- on a new connection.  acct-22 in 11 pages of 2, all of them faulted: at
-- concurrency 4 and 8 most pages meet a GOAWAY, each must hold its own items
-- (issue 19: a page sent again with another page's URL).  A stream may be
-- left above a GOAWAY on its new connection too: up to 3 retries.
row("h2 GOAWAY every 3 streams (keepalive_requests), 11 pages", "h2-goaway-every",
  { get = OK, put = OK, list = OK },
  { per_page = 2, pages_account = "fault-h2-goaway-every", opts = { max_retries = 3, timeout = 3 },
    alone = true })

return rows

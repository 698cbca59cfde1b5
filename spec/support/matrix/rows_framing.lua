--- Rows of the fault matrix played by tests/servers/h1_framing.py: plain
-- HTTP/1.1 answers framed wrongly, byte by byte, each asked for by the id
-- (`fault-<fault>`, and `fault-page-3-<fault>` for the concurrent pages: the
-- fault on page 3 of acct-22's 5 pages of 5).  Every driver speaks HTTP/1.1,
-- so every driver gives the same answer (README "Decisions": "A response head
-- that cannot be taken whole is refused"; issue 19):
-- - two Content-Length headers that disagree, or Content-Length with
--   Transfer-Encoding: chunked: refused as `decode`, not retried; a confirm's
--   outcome `unknown` (it was sent), the status as the head said;
-- - a head over the 256 KiB cap of a response's header lines
--   (`core.defaults.max_header_bytes`), in many lines or in one of 2 MiB
--   (libcurl's own cap of a line is 100 KiB), however the driver reads it:
--   refused as `decode`, not retried, the status kept; a confirm `unknown`;
-- - a chunked body cut inside a chunk, or a body shorter than its
--   Content-Length, and then the connection closed: `transport` (never
--   `decode`); a GET retried once, a confirm `unknown` after one request.
local fault_servers = require "support.matrix.fault_servers"

local h1 = fault_servers.new("h1_framing.py")
local rows = {}

local E = require("support.matrix.cell").expect

local function row(name, fault, expect)
  local id = "fault-" .. fault
  rows[#rows + 1] = fault_servers.attach({
    name = name,
    server = "h1raw",
    calls = {
      get = { id = id },
      put = { id = id },
      list = { account = id, per_page = 5,
               pages = { account = "fault-page-3-" .. fault, page = 3 } },
    },
    -- timeout: a guard only (each fault answers at once); 10 s, as an
    -- overloaded machine can leave the Python server seconds behind
    opts = { max_retries = 1, timeout = 10 },
    expect = expect,
  }, h1)
end

local REFUSED = { get = E("decode", nil, 200, 1), put = E("decode", "unknown", 201, 1),
                  list = E("decode", nil, 200, 1) }
local CUT = { get = E("transport", nil, nil, 2), put = E("transport", "unknown", nil, 1),
              list = E("transport", nil, nil, 2) }

row("framing: two different Content-Lengths", "h1-two-lengths", REFUSED)
row("framing: Content-Length with chunked", "h1-length-chunked", REFUSED)
row("framing: a head over 256 KiB", "h1-huge-head", REFUSED)
row("framing: a header line of 2 MiB", "h1-long-line", REFUSED)
row("framing: chunk cut, then close", "h1-cut-chunk", CUT)
row("framing: body shorter than Content-Length, then close", "h1-short-body", CUT)

return rows

--- Rows of the fault matrix played by tests/servers/h1_framing.py: plain
-- HTTP/1.1 answers framed wrongly, byte by byte, each asked for by the id
-- (`fault-<fault>`, and `fault-page-3-<fault>` for the concurrent pages: the
-- fault on page 3 of acct-22's 5 pages of 5).  Every driver speaks HTTP/1.1,
-- so every driver gives the same answer (README "Decisions": "A response head
-- that cannot be taken whole is refused"; issue 19; issue 29's rows, after
-- these, say theirs where they are written):
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

-- The cells known to fail today (the matrix's KNOWN_FAILING, counted
-- pending; one that holds fails the run): where the cosocket transport's
-- reader (src/h1_reader.c, issue 29) still answers otherwise than libcurl's
-- path. Flip: take a fault out of this list. None today (on a3bc464, before
-- that reader, the trickles, the chunk-size line zz, the spaces before a
-- chunk size and the Content-Length trailer were here; on the first reader,
-- the status-line trailer and the folded Content-Length).
local COSOCKET_READER = {}

local function row(name, fault, expect, t)
  t = t or {}
  local pending = COSOCKET_READER[fault]
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
    opts = t.opts or { max_retries = 1, timeout = 10 },
    expect = expect,
    differ = t.differ,
    alone = t.alone,
    known = pending and { cosocket = pending .. "; issue 29, to settle on one answer" } or nil,
  }, h1)
end

local REFUSED = { get = E("decode", nil, 200, 1), put = E("decode", "unknown", 201, 1),
                  list = E("decode", nil, 200, 1) }
local OK = { get = { ok = true }, put = { ok = true }, list = { ok = true } }
local CUT = { get = E("transport", nil, nil, 2), put = E("transport", "unknown", nil, 1),
              list = E("transport", nil, nil, 2) }

row("framing: two different Content-Lengths", "h1-two-lengths", REFUSED)
row("framing: Content-Length with chunked", "h1-length-chunked", REFUSED)
row("framing: a head over 256 KiB", "h1-huge-head", REFUSED)
row("framing: a header line of 2 MiB", "h1-long-line", REFUSED)
row("framing: chunk cut, then close", "h1-cut-chunk", CUT)
row("framing: body shorter than Content-Length, then close", "h1-short-body", CUT)

-- A trickle (a byte every 0.25 s, for 4 s at most), no retry: every driver
-- ends the attempt when what is left of its timeout and of the call's
-- deadline runs out, as `transport`, a confirm `unknown`, within 0.1 s of it
-- (issue 29: the cosocket transport waited for the whole answer, each read's
-- timer restarted by every byte). Alone in its batch: 8 rows at once on two
-- cores must not take the 0.1 s. `deadline_exceeded` is asserted where the
-- timeout was the nearer (never set), not where the deadline was: src/
-- exchange.c judges "its timeout was what was left of the deadline" by the
-- clock after the attempt, and an attempt whose timer fires a hair early (a
-- custom transport's, libcurl's in whole ms) finds the deadline not yet
-- passed: no deadline_exceeded, some runs (seen on transport and pages1).
local function timed_out(x)
  x.elapsed = { 0.9, 1.1 }
  return { get = E("transport", nil, nil, 1, 1, x), put = E("transport", "unknown", nil, 1, 1, x),
           list = E("transport", nil, nil, 1, 1, x) }
end
row("framing: the head a byte every 0.25 s (timeout 3, deadline 1)", "h1-trickle-head", timed_out({}),
  { opts = { max_retries = 0, timeout = 3, deadline = 1 }, alone = true })
row("framing: the body a byte every 0.25 s (timeout 1, deadline 2)", "h1-trickle-body",
  timed_out({ deadline_exceeded = false }),
  { opts = { max_retries = 0, timeout = 1, deadline = 2 }, alone = true })

-- What libcurl answers (the reference column) to a chunked body's grammar
-- broken, and to a head it cannot read: `transport` (its "Illegal or missing
-- hexadecimal sequence", "Too long hexadecimal number", "Weird server
-- reply"), a GET retried once, a confirm `unknown` after one request.
row("framing: chunk-size line zz", "h1-bad-chunk-size", CUT)
-- A custom transport frames the body itself (the core sees its headers and
-- the body it hands on): LuaSocket's (spec/support/socket_transport.lua)
-- reads a chunk size with tonumber(), spaces and leading zeros taken, and
-- joins a folded line onto its header.
local function own_framing(what)
  return { transport = { why = "a custom transport frames the body itself: LuaSocket's takes " .. what,
                         get = OK.get, put = OK.put, list = OK.list } }
end
row("framing: spaces before a chunk size", "h1-space-chunk-size", CUT,
  { differ = own_framing("spaces before a chunk size") })
row("framing: a chunk-size line of 2 MiB of zeros", "h1-long-chunk-size", CUT,
  { differ = own_framing("a chunk size of any length") })
-- A trailer line with no colon (one named like a status line): libcurl
-- 7.88.1 fails the transfer after the body (curl 43, "Failed reading the
-- chunked-encoded stream"), and the reader as well. A folded Content-Length:
-- libcurl reads its first line, empty, as no number (curl 8, "Weird server
-- reply", "Invalid Content-Length: value"), and the reader as well.
row("framing: a trailer line HTTP/1.1 200 OK", "h1-status-trailer", CUT)
-- (the title libcurl's path and the reader share; the cosocket transport
-- hands the core the reader's title only)
local weird = { message_has = "Weird server reply" }
row("framing: a folded Content-Length", "h1-folded-length",
  { get = E("transport", nil, nil, 2, 2, weird), put = E("transport", "unknown", nil, 1, 1, weird),
    list = E("transport", nil, nil, 2, 2, weird) },
  { differ = own_framing("a folded Content-Length") })
-- Refused by every path as a head that cannot be taken whole (src/framing.c
-- since issue 29, where llhttp decides first): a second Content-Length, even
-- an equal one, a list ("n, n"), a folded line.  A custom transport's
-- LuaSocket joins a folded line onto its header (the core never sees it) and
-- a repeated header into a list (refused).
row("framing: a folded header (obs-fold)", "h1-folded-header", REFUSED,
  { differ = own_framing("a folded header, joined") })
row("framing: two equal Content-Lengths", "h1-equal-lengths", REFUSED)
row("framing: Content-Length: n, n", "h1-length-list", REFUSED)
-- Taken by every path: trailers (skipped; a Content-Length among them too:
-- the body was framed already), LF-only line ends.
row("framing: chunked trailers", "h1-trailers", OK)
row("framing: a trailer Content-Length: 5", "h1-length-trailer", OK)
row("framing: LF-only line ends", "h1-lf-only", OK)

return rows

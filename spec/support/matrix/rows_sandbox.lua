--- Rows of the fault matrix played by the sandbox (sandbox/README.md, "Fault
-- ids"): each HTTP/1.1 fault of RELIABILITY.md ("Faults of the server and the
-- network") through get_channel (get), confirm_payout with settle = false
-- (put) and list_addresses (list), and for the concurrent pages the same fault
-- on page 3 of 5 (`fault-page-3-<fault>`, 5 per page of acct-22's 22
-- addresses: page 1 tells meta.total, the pages after it come at once).
-- The shape: spec/support/matrix/cell.lua, spec/faults/fault_matrix_spec.lua.
--
-- Expected values are the contract's (docs/contract.md, README "Decisions",
-- RELIABILITY.md): with max_retries = 1 a GET is retried on transport
-- errors, 429 and 502/503/504; a confirm only on 429 (rejected) and when it
-- provably never arrived (not_sent); every other failed confirm is
-- `unknown` after exactly one request. `retryable` (calling again is safe
-- and may succeed): a GET's says whether its error may pass (429, 502-504,
-- transport); a confirm's is true only when not_sent, rejected by a 429, or
-- settled by a read showing the payout still a draft.
local rows = {}

-- An error expectation: kind, outcome, status, attempts {lo, hi}.
local E = require("support.matrix.cell").expect

local OK = { ok = true }

-- cafile = the sandbox's test CA (known at run time only): HTTPS rows. Also
-- where the handshake must fail: a one-certificate file, not the system's
-- bundle, is loaded for each of their many connections.
local function test_ca(ctx, o)
  o.cafile = ctx.ca_file
  return o
end

-- A row of fault id `fault` (without "fault-") for all three calls and the
-- pages; `t` gives expect (get, put, list; pages derived by the harness
-- unless given), opts, and anything else of a row.
local function fault(name, t)
  local id = "fault-" .. name
  local row = {
    name = t.row_name or id,
    server = "sandbox",
    calls = {
      get = { id = id, headers = t.headers },
      put = { id = id, headers = t.headers },
      list = { account = id, per_page = 5, headers = t.headers,
               pages = t.pages_account ~= false and {
                 account = t.pages_account or ("fault-page-3-" .. name), page = 3 } or nil },
    },
    opts = t.opts or { max_retries = 1, timeout = 5 },
    expect = t.expect,
    differ = t.differ,
    na = t.na,
    note = t.note,
  }
  rows[#rows + 1] = row
  return row
end

-- GET retried once (retryable), the confirm not retried: `unknown` after 1
-- request, not retryable.
local function retried_get(kind, status)
  local again = { retryable = true }
  return { get = E(kind, nil, status, 2, 2, again),
           put = E(kind, "unknown", status, 1, 1, { retryable = false }),
           list = E(kind, nil, status, 2, 2, again) }
end

-- Not retried at all (a GET's transport error is retryable all the same:
-- max_retries 0); the confirm `unknown`, not retryable.
local function once(kind, status)
  local again = { retryable = kind == "transport" }
  return { get = E(kind, nil, status, 1, 1, again),
           put = E(kind, "unknown", status, 1, 1, { retryable = false }),
           list = E(kind, nil, status, 1, 1, again) }
end

fault("redirect", { expect = once("http", 302) })
fault("500", { expect = once("api", 500) })
fault("html-502", { expect = retried_get("http", 502) })
fault("502-json", { expect = retried_get("api", 502) })
fault("503", { expect = retried_get("api", 503) })
fault("504", { expect = retried_get("api", 504) })
-- 429 is "not taken": the confirm is retried too, and `rejected`
local R = { retryable = true }
fault("429-after-0", { expect = {
  get = E("api", nil, 429, 2, 2, R), put = E("api", "rejected", 429, 2, 2, R),
  list = E("api", nil, 429, 2, 2, R) } })
-- Retry-After: 30 against a deadline of 3 s: the retry would end after the
-- deadline, so the call ends at once with the 429, 1 request (RELIABILITY.md's
-- fault-429 against a 0.5 s deadline, with room for a loaded machine)
fault("429-after-30", { row_name = "fault-429-after-30 (deadline 3)",
  opts = { max_retries = 1, timeout = 5, deadline = 3 },
  expect = {
    get = E("api", nil, 429, 1, 1, { deadline_exceeded = true, retryable = true }),
    put = E("api", "rejected", 429, 1, 1, { deadline_exceeded = true, retryable = true }),
    list = E("api", nil, 429, 1, 1, { deadline_exceeded = true, retryable = true }) } })
-- (max_retries 1 and one failure fewer than RELIABILITY.md's rows: one
-- backoff per call instead of two, the same rule)
fault("flaky-1-503", { expect = {
  get = { ok = true, reached = { 2, 2 } },
  put = E("api", "unknown", 503, 1, 1, { retryable = false }),
  list = { ok = true, reached = { 2, 2 } },
  pages = { ok = true, reached = { 2, 2 } } } })
-- more failures than retries: the last failure; the next call succeeds
fault("flaky-2-504", { expect = {
  get = E("api", nil, 504, 2, 2, { after = OK, retryable = true }),
  put = E("api", "unknown", 504, 1, 1, { retryable = false,
    after = E("api", "unknown", 504, 1, 1, { retryable = false }) }),
  list = E("api", nil, 504, 2, 2, { after = OK, retryable = true }) } })
rows[#rows].calls.get.after = { same = true }
rows[#rows].calls.put.after = { same = true }
rows[#rows].calls.list.after = { same = true }
fault("flaky-1-500", { expect = once("api", 500) })
fault("flaky-1-429", { expect = {
  get = { ok = true, reached = { 2, 2 } }, put = { ok = true, reached = { 2, 2 } },
  list = { ok = true, reached = { 2, 2 } } } })
fault("no-response", { expect = retried_get("transport") })
fault("reset", { expect = retried_get("transport") })
fault("truncated-chunked", { expect = retried_get("transport") })
-- (max_retries 0: a retried transport error is the rows above; this one is
-- the timeout)
-- (timeout 1: the walk's good pages must come within it on a loaded machine;
-- its page 3 waits 3 s)
fault("slow-first-byte", { row_name = "fault-slow-first-byte (2 s) vs timeout 1",
  headers = { ["X-Sandbox-Delay-Ms"] = "2000" },
  opts = { max_retries = 0, timeout = 1 }, expect = once("transport") })
fault("big-body", { row_name = "fault-big-body (20 MiB) vs max_body 1 MiB",
  opts = { max_retries = 1, timeout = 5, max_body = 1048576 }, expect = once("decode") })
local NR = { retryable = false }
fault("bad-json", { expect = {
  get = E("decode", nil, 200, 1, 1, NR), put = E("decode", "unknown", 201, 1, 1, NR),
  list = E("decode", nil, 200, 1, 1, NR) } })
fault("wrong-type", { expect = once("decode") })
fault("not-jsonapi", { expect = once("decode") })
fault("text-plain", { expect = once("decode") })
fault("deep", { expect = once("decode") })
fault("bad-utf8", { expect = once("decode") })
fault("dup-keys", { expect = once("decode") })
fault("empty-errors", { expect = { get = OK, put = OK, list = OK } })
fault("data-and-errors", { expect = {
  get = E("decode", nil, 200, 1, 1, NR), put = E("decode", "unknown", 201, 1, 1, NR),
  list = E("decode", nil, 200, 1, 1, NR) } })
-- an answer for another resource: the list has no primary id (it behaves)
fault("other-id", { expect = { get = E("decode", nil, nil, 1, 1, NR),
  put = E("decode", "unknown", nil, 1, 1, NR), list = OK } })

-- Over HTTPS (the sandbox's CA-signed port, its test CA trusted): the faults
-- that cut a TLS connection, as over plain HTTP.
local NO_TLS = "spec/support/socket_transport.lua speaks plain HTTP only "
  .. "(LuaSocket's https checks no certificate)"
local function https(name, expect)
  local row = fault(name, { row_name = "fault-" .. name .. " over HTTPS", expect = expect })
  row.base_url = function(ctx) return ctx.helpers.tls_url() end
  row.opts = { max_retries = 1, timeout = 5 } -- and cafile: client_opts
  row.client_opts = test_ca
  row.na = { transport = NO_TLS }
end
https("reset", retried_get("transport"))
https("truncated-chunked", retried_get("transport"))

-- A certificate nobody vouches for: nothing sent, so the confirm is retried.
rows[#rows + 1] = {
  name = "untrusted certificate (self-signed port)",
  server = "sandbox",
  base_url = function(ctx) return ctx.helpers.untrusted_url() end,
  client_opts = test_ca, -- the test CA does not vouch for it either
  calls = { get = { id = "fault-untrusted" }, put = { id = "fault-untrusted" },
            list = { account = "fault-untrusted", per_page = 5 } },
  opts = { max_retries = 1, timeout = 5 },
  expect = {
    get = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
    put = E("transport", "not_sent", nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
    list = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
  },
  na = { pages = "page 1 fails already: no page after it to fault", transport = NO_TLS },
}

-- Settling (settle = true): a confirm whose answer was lost is read once,
-- and trusted only for what the service says (docs/contract.md). Carried
-- out, then answered 502 / no answer: the read finds it processing (a
-- success, 2 requests); not carried out (flaky): still a draft, the error
-- stays `unknown` with the draft as err.payout, and calling again is safe
-- (retryable). The read fails too: `unknown`, not retryable.
local function settle_row(id, expect, name)
  rows[#rows + 1] = {
    name = (name or id) .. " (settle = true)",
    server = "sandbox",
    calls = { put = { id = id, settle = true } },
    opts = { max_retries = 1, timeout = 5 },
    expect = { put = expect },
  }
end
local SETTLED = { ok = true, reached = { 2, 2 }, settled_by = "read" }
settle_row("fault-applied-502", SETTLED)
settle_row("fault-applied-no-response", SETTLED)
settle_row("fault-flaky-1-502", E("api", "unknown", 502, 1, 1, { reached = { 2, 2 },
  payout_status = "draft", retryable = true }))
-- a confirm answered 500 that was not carried out: the draft read makes it
-- retryable, which the 500 alone is not
settle_row("fault-flaky-1-500", E("api", "unknown", 500, 1, 1, { reached = { 2, 2 },
  payout_status = "draft", retryable = true }))
-- the confirm answered 503, its read 503 twice (max_retries 1): nothing
-- known, so not retryable, though every answer was a 503
settle_row("fault-503", E("api", "unknown", 503, 1, 1, { reached = { 3, 3 },
  payout_status = false, retryable = false }))
settle_row("fault-no-response", E("transport", "unknown", nil, 1, 1, { reached = { 3, 3 },
  payout_status = false, retryable = false }))

-- The read after a lost confirm (fault-read-<status>[-txid]: the PUT answered
-- 502, the GET the payout with that status, and a txid with -txid): carried
-- out when it shows a txid, whatever the status, or status processing; still
-- a draft, as above; any other status is no proof either way: `unknown`,
-- the payout kept, its status in the message, not retryable.
local function read_row(status, expect)
  settle_row("fault-read-" .. status, expect)
end
read_row("processing", SETTLED)
read_row("processing-txid", SETTLED)
read_row("expired-txid", { ok = true, reached = { 2, 2 }, settled_by = "read",
  resource_status = "expired" })
read_row("draft-txid", { ok = true, reached = { 2, 2 }, settled_by = "read",
  resource_status = "draft" })
read_row("draft", E("api", "unknown", 502, 1, 1, { reached = { 2, 2 }, payout_status = "draft",
  retryable = true, message_has = 'the payout read after it shows status "draft"' }))
for _, status in ipairs({ "expired", "failed", "cancelled", "on_hold" }) do
  read_row(status, E("api", "unknown", 502, 1, 1, { reached = { 2, 2 }, payout_status = status,
    retryable = false, message_has = 'the payout read after it shows status "' .. status .. '"' }))
end

-- A timeout, then another call on the same client: the second gets its own
-- answer (never the first one's, which comes while the second is under way),
-- on a connection of its own. The first call's deadline (0.3 s) cuts its
-- attempt's timeout; the client's timeout (3 s) leaves the second call room
-- on a loaded machine.
local SLOW = { ["X-Sandbox-Delay-Ms"] = "1000" }
rows[#rows + 1] = {
  name = "a timeout, then another call on the same client",
  server = "sandbox",
  calls = {
    get = { id = "fault-slow-first-byte", headers = SLOW, deadline = 0.3,
            after = { id = "echo-next" } },
    put = { id = "fault-slow-first-byte", headers = SLOW, deadline = 0.3,
            after = { id = "fault-flaky-0-503" } },
    list = { account = "fault-slow-first-byte", per_page = 5, headers = SLOW, deadline = 0.3,
             after = { account = "acct-22" } },
  },
  opts = { max_retries = 0, timeout = 3 },
  expect = {
    get = E("transport", nil, nil, 1, 1, { after = OK, retryable = true }),
    put = E("transport", "unknown", nil, 1, 1, { after = OK, retryable = false }),
    list = E("transport", nil, nil, 1, 1, { after = OK, retryable = true }),
  },
  na = { pages = "a walk has no call after it on the same client (fault-slow-first-byte's row is the pages' timeout)" },
}

-- Nobody listens: provably not sent, so the confirm is retried too.
rows[#rows + 1] = {
  name = "connection refused",
  server = "sandbox",
  base_url = function(ctx) return "http://127.0.0.1:" .. ctx.dead_port end,
  calls = { get = { id = "fault-refused" }, put = { id = "fault-refused" },
            list = { account = "fault-refused", per_page = 5 } },
  opts = { max_retries = 1, timeout = 5 },
  expect = {
    get = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
    put = E("transport", "not_sent", nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
    list = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
  },
  na = { pages = "page 1 fails already: no page after it to fault" },
}

-- https:// to the plain port: the TLS handshake fails, nothing was sent.
rows[#rows + 1] = {
  name = "TLS handshake failure (https to the plain port)",
  server = "sandbox",
  base_url = function(ctx) return (ctx.sandbox_url:gsub("^http:", "https:")) end,
  client_opts = test_ca,
  calls = { get = { id = "fault-tls" }, put = { id = "fault-tls" },
            list = { account = "fault-tls", per_page = 5 } },
  opts = { max_retries = 1, timeout = 5 },
  expect = {
    get = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
    put = E("transport", "not_sent", nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
    list = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
  },
  differ = {
    transport = {
      why = "the LuaSocket transport tells only a refused connection as not sent "
        .. "(sent = true for a failed handshake): the core takes its word, confirm unknown",
      get = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
      put = E("transport", "unknown", nil, 1, 1, { reached = { 0, 0 }, retryable = false }),
      list = E("transport", nil, nil, 2, 2, { reached = { 0, 0 }, retryable = true }),
    },
  },
  na = { pages = "page 1 fails already: no page after it to fault" },
}

return rows

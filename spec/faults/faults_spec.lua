-- Every fault mode of the sandbox (sandbox/README.md, "Fault ids") through
-- each of the three calls: the error's kind, status, retryable and outcome,
-- and, through the sandbox's counter (/__sandbox/count), how many requests
-- reached the server.  This is where docs/contract.md's "Errors", "HTTP
-- behaviour" and "Retries" are held to their word while the server
-- misbehaves: a confirm is retried only when it provably never left (or was
-- answered 429), and a confirm that may have gone through says "unknown".
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count = helpers.count
local DEAD = "http://127.0.0.1:9" -- the discard port: nobody listens on loopback

-- The three calls, by name.  The confirm is made without settling (no read
-- of the payout after an unknown outcome: spec/calls/settle_deadline_spec.lua),
-- so that what is counted here is the confirm's own requests.
local OPS = {
  { name = "get_channel", method = "GET", ok_status = 200,
    call = function(c, id) return c:get_channel(id) end },
  { name = "list_addresses", method = "GET", ok_status = 200,
    call = function(c, id) return c:list_addresses(id) end },
  { name = "confirm_payout", method = "PUT", ok_status = 201,
    call = function(c, id) return c:confirm_payout(id, { settle = false }) end },
}

-- Calls op on a fresh client (a fresh connection: libcurl's own resend of
-- an idempotent GET on a dead reused connection cannot blur the count) and
-- checks the error against want:
--   kind, status (false: none), retryable (a GET's; the confirm's is
--   put_retryable, else false: an outcome "unknown" is never safe to send
--   again, docs/contract.md "Errors"), title (a Lua pattern, optional),
--   curl_code (optional), reached = requests that must reach the sandbox
--   for a GET and for the PUT (want.get_reached, want.put_reached),
--   put_outcome.
local function check_fault(op, id, want, opts)
  helpers.reset()
  local client = helpers.client(opts)
  local value, err = op.call(client, id)
  client:close()
  local is_put = op.method == "PUT"
  assert.is_nil(value)
  local res = err.res
  assert.is_table(err)
  assert.equal(want.kind, err.kind)
  if want.status then
    assert.equal(is_put and want.put_status or want.status, err.status)
    assert.is_table(res)
    assert.equal(err.status, res.status)
  else
    assert.is_nil(err.status)
  end
  if is_put then
    assert.equal(want.put_retryable or false, err.retryable)
  else
    assert.equal(want.retryable, err.retryable)
  end
  if want.title then
    assert.matches(want.title, err.title)
  end
  if want.curl_code then
    assert.equal(want.curl_code, err.curl_code)
  end
  local reached = is_put and want.put_reached or want.get_reached
  assert.equal(reached, count(id))
  assert.equal(reached, err.attempts)
  assert.equal(op.method, err.method)
  assert.equal(is_put and want.put_outcome or nil, err.outcome)
  assert.equal(err.message, tostring(err))
  return err, res
end

-- Faults answered once and never retried: one request reaches the server.
local ANSWERED = {
  ["fault-redirect"] = { kind = "http", status = 302, put_status = 302, retryable = false,
    title = "^HTTP 302$", put_outcome = "unknown" },
  ["fault-500"] = { kind = "api", status = 500, put_status = 500, retryable = false,
    title = "^Internal Server Error$", put_outcome = "unknown" },
  ["fault-bad-json"] = { kind = "decode", status = 200, put_status = 201, retryable = false,
    title = "^invalid JSON: unexpected end of input$", put_outcome = "unknown" },
  ["fault-wrong-type"] = { kind = "decode", status = 200, put_status = 201, retryable = false,
    title = "^expected a .*, got .*$", put_outcome = "unknown" },
  ["fault-not-jsonapi"] = { kind = "decode", status = 200, put_status = 201, retryable = false,
    title = "^not JSON:API: no data, errors or meta member$", put_outcome = "unknown" },
  ["fault-text-plain"] = { kind = "decode", status = 200, put_status = 201, retryable = false,
    title = "^expected a JSON:API body, got Content%-Type text/plain$", put_outcome = "unknown" },
  ["fault-deep"] = { kind = "decode", status = 200, put_status = 201, retryable = false,
    title = "^invalid JSON: nested deeper than 64$", put_outcome = "unknown" },
  ["fault-bad-utf8"] = { kind = "decode", status = 200, put_status = 201, retryable = false,
    title = "^invalid JSON: invalid utf%-8 string$", put_outcome = "unknown" },
  ["fault-dup-keys"] = { kind = "decode", status = 200, put_status = 201, retryable = false,
    title = "^invalid JSON: duplicate member name$", put_outcome = "unknown" },
}

-- Faults a GET retries (max_retries = 1 here: two requests) and the
-- confirm does not (one request, outcome unknown), except 429.
local RETRIED = {
  ["fault-html-502"] = { kind = "http", status = 502, put_status = 502, retryable = true,
    title = "^HTTP 502$" },
  ["fault-502-json"] = { kind = "api", status = 502, put_status = 502, retryable = true,
    title = "^Bad Gateway$" },
  ["fault-503"] = { kind = "api", status = 503, put_status = 503, retryable = true,
    title = "^Service Unavailable$" },
  ["fault-504"] = { kind = "api", status = 504, put_status = 504, retryable = true,
    title = "^Gateway Timeout$" },
  ["fault-reset"] = { kind = "transport", status = false, retryable = true, curl_code = 56 },
  ["fault-truncated-chunked"] = { kind = "transport", status = false, retryable = true,
    curl_code = 18 },
  ["fault-no-response"] = { kind = "transport", status = false, retryable = true,
    curl_code = 52 },
}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    keys[#keys + 1] = k
  end
  table.sort(keys)
  return keys
end

describe("faults answered once (never retried)", function()
  for _, id in ipairs(sorted_keys(ANSWERED)) do
    local want = ANSWERED[id]
    want.get_reached, want.put_reached = 1, 1
    for _, op in ipairs(OPS) do
      it(id .. " through " .. op.name .. ": " .. want.kind .. ", 1 request", function()
        check_fault(op, id, want, { max_retries = 3 })
      end)
    end
  end

  it("does not follow a redirect to another host: kind http, the Location kept", function()
    local err, res = check_fault(OPS[1], "fault-redirect", ANSWERED["fault-redirect"],
      { max_retries = 3 })
    assert.equal("http://other-host.invalid/api/public/v1/channels/fault-redirect",
      res.headers["location"])
    assert.equal("redirect to http://other-host.invalid/api/public/v1/channels/fault-redirect"
      .. " not followed", err.detail)
    assert.same({}, err.errors)
  end)

  it("keeps the error document of a 500 (code internal_error)", function()
    local err = check_fault(OPS[1], "fault-500", ANSWERED["fault-500"], { max_retries = 3 })
    assert.equal("internal_error", err.code)
    assert.equal(500, err.errors[1].status)
  end)

  it("gives the raw body of an unreadable 2xx in res.body, and res:document() fails too", function()
    local _, res = check_fault(OPS[1], "fault-bad-utf8", ANSWERED["fault-bad-utf8"])
    assert.truthy(res.body:find("\255\254", 1, true))
    local doc, derr = res:document()
    assert.is_nil(doc)
    assert.equal("decode", derr.kind)
  end)
end)

describe("faults a GET retries and the confirm does not", function()
  for _, id in ipairs(sorted_keys(RETRIED)) do
    local want = RETRIED[id]
    want.get_reached, want.put_reached, want.put_outcome = 2, 1, "unknown"
    for _, op in ipairs(OPS) do
      local n = op.method == "PUT" and 1 or 2
      it(("%s through %s: %s, %d request%s"):format(id, op.name, want.kind, n, n == 1 and "" or "s"),
        function()
          check_fault(op, id, want, { max_retries = 1, timeout = 5 })
        end)
    end
  end
end)

describe("429 Too Many Requests", function()
  local want = { kind = "api", status = 429, put_status = 429, retryable = true,
                 put_retryable = true, title = "^Too Many Requests$", get_reached = 2, put_reached = 2,
                 put_outcome = "rejected" }

  for _, op in ipairs(OPS) do
    it("Retry-After: 1 makes " .. op.name .. " wait at least 1 s before its retry", function()
      local t0 = helpers.now()
      local err = check_fault(op, "fault-429", want, { max_retries = 1 })
      local elapsed = helpers.now() - t0
      assert.is_true(elapsed >= 1.0, "waited only " .. elapsed .. " s")
      assert.is_true(elapsed < 5.0, "waited " .. elapsed .. " s")
      assert.equal(1, err.retry_after)
      assert.equal("rate_limited", err.code)
    end)
  end

  for _, op in ipairs(OPS) do
    it("Retry-After as an HTTP date (" .. op.name .. "): read, capped, retried", function()
      local t0 = helpers.now()
      local err = check_fault(op, "fault-429-date", want, { max_retries = 1 })
      local elapsed = helpers.now() - t0
      -- the date has whole seconds and is 1 s ahead: the wait is 0..1 s (2 at a second's edge)
      assert.is_true(err.retry_after >= 0 and err.retry_after <= 2, tostring(err.retry_after))
      assert.is_true(elapsed < 4.0, "waited " .. elapsed .. " s")
    end)
  end
end)

describe("fail N times, then succeed (fault-flaky-<N>-<code>)", function()
  before_each(helpers.reset)

  it("a GET failing twice with 503 then succeeding returns the resource after 3 requests", function()
    local client = helpers.client({ max_retries = 2 })
    local ch, err, res = client:get_channel("fault-flaky-2-503")
    client:close()
    assert.is_nil(err)
    assert.equal("fault-flaky-2-503", ch.id)
    assert.equal("channels", ch.type)
    assert.equal(200, res.status)
    assert.equal(3, count("fault-flaky-2-503"))
  end)

  it("a list failing twice with 502 then succeeding returns the page after 3 requests", function()
    local client = helpers.client({ max_retries = 2 })
    local list, err = client:list_addresses("fault-flaky-2-502")
    client:close()
    assert.is_nil(err)
    assert.equal(22, #list)
    assert.equal(22, list.meta.total)
    assert.equal(3, count("fault-flaky-2-502"))
  end)

  it("a GET failing more often than max_retries returns the last failure", function()
    local client = helpers.client({ max_retries = 2 })
    local ch, err = client:get_channel("fault-flaky-3-504")
    assert.is_nil(ch)
    assert.equal(504, err.status)
    assert.equal(3, err.attempts)
    assert.equal(3, count("fault-flaky-3-504"))
    -- the next call gets the fourth answer: the id behaves now
    assert.is_table((client:get_channel("fault-flaky-3-504")))
    assert.equal(4, count("fault-flaky-3-504"))
    client:close()
  end)

  it("a GET answered 500 is not retried, even with retries left", function()
    local client = helpers.client({ max_retries = 2 })
    local ch, err = client:get_channel("fault-flaky-1-500")
    client:close()
    assert.is_nil(ch)
    assert.equal(500, err.status)
    assert.is_false(err.retryable)
    assert.equal(1, count("fault-flaky-1-500"))
  end)

  it("a confirm answered 503 is not retried: outcome unknown after 1 request", function()
    local client = helpers.client({ max_retries = 5, settle = false })
    local p, err = client:confirm_payout("fault-flaky-1-503")
    assert.is_nil(p)
    assert.equal(503, err.status)
    -- the error is transient, but the confirm may have been carried out:
    -- calling again is not known to be safe (the caller reads the payout)
    assert.is_false(err.retryable)
    assert.equal("unknown", err.outcome)
    assert.equal(1, count("fault-flaky-1-503"))
    -- the payout was not confirmed by that request: the caller's second try is the first 201
    local payout = assert(client:confirm_payout("fault-flaky-1-503"))
    assert.equal("processing", payout.status)
    assert.equal(2, count("fault-flaky-1-503"))
    client:close()
  end)

  it("a confirm answered 429 is retried and succeeds after 2 requests", function()
    local client = helpers.client({ max_retries = 2 })
    local payout, err, res = client:confirm_payout("fault-flaky-1-429")
    client:close()
    assert.is_nil(err)
    assert.equal(201, res.status)
    assert.equal("processing", payout.status)
    assert.equal(2, count("fault-flaky-1-429"))
  end)

  it("a confirm answered 429 more often than max_retries fails as rejected", function()
    local client = helpers.client({ max_retries = 1 })
    local p, err = client:confirm_payout("fault-flaky-3-429")
    client:close()
    assert.is_nil(p)
    assert.equal(429, err.status)
    assert.equal("rejected", err.outcome)
    assert.equal(2, err.attempts)
    assert.equal(2, count("fault-flaky-3-429"))
  end)
end)

describe("a confirm whose answer never comes", function()
  before_each(helpers.reset)

  it("returns outcome unknown after exactly 1 request, on a warm keep-alive client", function()
    local client = helpers.client({ max_retries = 5, settle = false })
    assert.is_table((client:get_channel(helpers.CHANNEL_ID))) -- a live reused connection
    local p, err = client:confirm_payout("fault-no-response")
    client:close()
    assert.is_nil(p)
    assert.is_nil(err.res)
    assert.equal("transport", err.kind)
    assert.equal(52, err.curl_code)
    assert.is_nil(err.status)
    assert.is_false(err.retryable) -- it may have gone through: not safe to send again
    assert.equal("unknown", err.outcome)
    assert.equal(1, err.attempts)
    assert.equal(1, count("fault-no-response"))
  end)

  it("a GET on a warm connection that dies is one attempt: libcurl is stopped from resending it", function()
    local client = helpers.client({ max_retries = 0 })
    assert.is_table((client:get_channel(helpers.CHANNEL_ID)))
    local ch, err = client:get_channel("fault-no-response")
    assert.is_nil(ch)
    assert.equal("transport", err.kind)
    -- libcurl would send it again on a fresh connection (a reused connection
    -- that died before any byte came back): every request that leaves is an
    -- attempt, so it is stopped, and the call's own rules decide
    assert.equal(42, err.curl_code)
    assert.equal("libcurl was about to send the request again: stopped", err.title)
    assert.equal(1, err.attempts)
    assert.equal(1, count("fault-no-response"))
    client:close()
    -- with a retry allowed: two attempts, two requests
    helpers.reset()
    client = helpers.client({ max_retries = 1 })
    assert.is_table((client:get_channel(helpers.CHANNEL_ID)))
    ch, err = client:get_channel("fault-no-response")
    client:close()
    assert.is_nil(ch)
    assert.equal(2, err.attempts)
    assert.equal(2, count("fault-no-response"))
  end)
end)

describe("a confirm to a port nobody listens on", function()
  it("returns outcome not_sent, and is retried because it provably never left", function()
    local client = assert(merchantapi.new({ base_url = DEAD, api_key = helpers.API_KEY,
                                            max_retries = 1 }))
    local p, err = client:confirm_payout(helpers.PAYOUT_ID)
    client:close()
    assert.is_nil(p)
    assert.is_nil(err.res)
    assert.equal("transport", err.kind)
    assert.equal(7, err.curl_code) -- CURLE_COULDNT_CONNECT
    assert.is_nil(err.status)
    assert.is_true(err.retryable)
    assert.equal("not_sent", err.outcome)
    assert.equal(2, err.attempts)
    assert.equal("PUT", err.method)
    assert.equal(DEAD .. "/api/public/v1/payouts/" .. helpers.PAYOUT_ID, err.url)
  end)

  it("a GET to it fails as transport without an outcome", function()
    local client = assert(merchantapi.new({ base_url = DEAD, max_retries = 0 }))
    local ch, err = client:get_channel(helpers.CHANNEL_ID)
    client:close()
    assert.is_nil(ch)
    assert.equal("transport", err.kind)
    assert.is_nil(err.outcome)
    assert.equal(1, err.attempts)
  end)
end)

describe("slow servers against the timeout", function()
  before_each(helpers.reset)

  it("a slow first byte (3 s) past timeout 0.5 s: transport 28, GET retried, confirm unknown", function()
    local want = { kind = "transport", status = false, retryable = true, curl_code = 28,
                   get_reached = 2, put_reached = 1, put_outcome = "unknown" }
    for _, op in ipairs(OPS) do
      local err = check_fault(op, "fault-slow-first-byte", want, { max_retries = 1, timeout = 0.5 })
      assert.matches("with 0 bytes received", err.detail, 1, true)
    end
  end)

  it("a slow first byte (3 s) within timeout 10 s: the resource, 1 request", function()
    local client = helpers.client({ timeout = 10 })
    local t0 = helpers.now()
    local ch, err = client:get_channel("fault-slow-first-byte")
    local elapsed = helpers.now() - t0
    client:close()
    assert.is_nil(err)
    assert.equal("fault-slow-first-byte", ch.id)
    assert.is_true(elapsed >= 2.5, tostring(elapsed))
    assert.equal(1, count("fault-slow-first-byte"))
  end)

  it("a trickled body still fails at the timeout: it bounds the whole request", function()
    local want = { kind = "transport", status = false, retryable = true, curl_code = 28,
                   get_reached = 1, put_reached = 1, put_outcome = "unknown" }
    for _, op in ipairs(OPS) do
      local t0 = helpers.now()
      local err = check_fault(op, "fault-slow-body", want, { max_retries = 0, timeout = 1.2 })
      local elapsed = helpers.now() - t0
      -- bytes kept coming after the first half, yet the call ended at the timeout
      local got, total = err.detail:match("with (%d+) out of (%d+) bytes received")
      assert.is_truthy(got, err.detail)
      assert.is_true(tonumber(got) > tonumber(total) / 2, err.detail)
      assert.is_true(tonumber(got) < tonumber(total), err.detail)
      assert.is_true(elapsed < 3, tostring(elapsed))
    end
  end)
end)

describe("a body over max_body", function()
  before_each(helpers.reset)

  local want = { kind = "decode", status = 200, put_status = 201, retryable = false,
                 title = "^body over max_body %(1048576 bytes%)$", get_reached = 1,
                 put_reached = 1, put_outcome = "unknown" }

  for _, op in ipairs(OPS) do
    it("20 MiB against max_body 1 MiB through " .. op.name .. ": decode, cut at the cap", function()
      local _, res = check_fault(op, "fault-big-body", want, { max_body = 1048576 })
      assert.is_true(#res.body <= 1048576, tostring(#res.body))
      assert.equal("20971520", res.headers["content-length"])
    end)
  end

  it("the default cap is 16 MiB", function()
    local client = helpers.client()
    local ch, err = client:get_channel("fault-big-body")
    client:close()
    assert.is_nil(ch)
    assert.equal("decode", err.kind)
    assert.equal("body over max_body (16777216 bytes)", err.title)
    assert.is_true(#err.res.body <= 16777216)
  end)

  -- A fresh Lua process, so that what earlier specs freed cannot hide growth.
  -- It fetches the 20 MiB body once against a 1 MiB cap and once against a
  -- 32 MiB cap (the control: the measurement sees a body that is kept), and
  -- prints the growth of the Lua heap and of the RSS.
  local PROBE = [[
    local merchantapi = require "merchantapi"
    local function rss()
      local f = io.open("/proc/self/status"); local s = f:read("*a"); f:close()
      return tonumber(s:match("VmRSS:%s*(%d+)"))
    end
    local cap = tonumber(arg[2])
    local c = assert(merchantapi.new({ base_url = arg[1], api_key = arg[3], max_body = cap,
                                       max_retries = 0 }))
    assert(c:get_channel("60e05bc0-4690-4985-a08a-8acf00e48294"))
    collectgarbage(); collectgarbage()
    local heap0, rss0 = collectgarbage("count"), rss()
    local v, err, res = c:get_channel("fault-big-body")
    res = v and res or err.res
    local kept = res and #res.body or 0
    local heap1, rss1 = collectgarbage("count"), rss()
    print(("kind=%s kept=%d heap_kib=%d rss_kib=%d"):format(err and err.kind or "ok", kept,
      math.floor(heap1 - heap0), rss1 - rss0))
  ]]

  local function probe(cap)
    local out, ok = helpers.run_lua(PROBE, { helpers.base_url(), tostring(cap), helpers.API_KEY })
    assert.is_true(ok, out)
    local kind, kept, heap, rss = out:match("kind=(%S+) kept=(%d+) heap_kib=(%-?%d+) rss_kib=(%-?%d+)")
    assert.is_truthy(kind, out)
    return kind, tonumber(kept), tonumber(heap), tonumber(rss)
  end

  it("keeps the process memory bounded: the transfer is aborted at the cap", function()
    local kind, kept, heap, rss = probe(1048576)
    assert.equal("decode", kind)
    assert.is_true(kept <= 1048576)
    -- the Lua heap holds at most the cut body; the process grew by less than
    -- half of the 20 MiB the server offered
    assert.is_true(heap < 2 * 1024, "Lua heap grew by " .. heap .. " KiB")
    assert.is_true(rss < 10 * 1024, "RSS grew by " .. rss .. " KiB")
    -- the control: with the cap above the body, the same probe sees it all
    local kind2, kept2, heap2, rss2 = probe(32 * 1048576)
    assert.equal("ok", kind2)
    assert.equal(20971520, kept2)
    assert.is_true(heap2 > 20 * 1024, "Lua heap grew by " .. heap2 .. " KiB")
    assert.is_true(rss2 > 20 * 1024, "RSS grew by " .. rss2 .. " KiB")
  end)
end)

describe("hostile bodies through merchantapi.decode (no HTTP)", function()
  it("10,000-deep JSON fails as decode, the C stack untouched", function()
    local v, err = merchantapi.decode(("["):rep(10000) .. ("]"):rep(10000))
    assert.is_nil(v)
    assert.equal("decode", err.kind)
    assert.equal("invalid JSON: nested deeper than 64", err.title)
    local v2, err2 = merchantapi.decode(('{"a":'):rep(10000) .. "1" .. ("}"):rep(10000))
    assert.is_nil(v2)
    assert.equal("decode", err2.kind)
  end)

  it("64 levels are fine, 65 are not", function()
    -- the root object, data and attributes are 3 levels; the arrays the rest
    local function nest(n)
      return '{"data":{"type":"t","id":"1","attributes":{"a":' .. ("["):rep(n - 3)
        .. ("]"):rep(n - 3) .. "}}}"
    end
    local v, err = merchantapi.decode(nest(64))
    assert.is_nil(err)
    assert.equal("1", v.id)
    local v2, err2 = merchantapi.decode(nest(65))
    assert.is_nil(v2)
    assert.equal("invalid JSON: nested deeper than 64", err2.title)
  end)

  local function doc_with(text)
    return '{"data":{"type":"t","id":"1","attributes":{"a":"' .. text .. '"}}}'
  end

  it("invalid UTF-8 fails as decode: bad bytes, overlong forms, surrogates, past U+10FFFF", function()
    for _, s in ipairs({ "\255\254", "abc\128", "\192\175", "\224\128\128", "\237\160\128",
                         "\244\144\128\128", "\226\130", "\240\159\152" }) do
      local v, err = merchantapi.decode(doc_with(s))
      assert.is_nil(v)
      assert.equal("invalid JSON: invalid utf-8 string", err.title, ("%q"):format(s))
    end
  end)

  it("a \\u escape of a lone surrogate fails as decode (json-c would make it U+FFFD)", function()
    for _, s in ipairs({ "\\ud800", "\\udc00", "\\ud83dx", "\\ud83d\\u0041" }) do
      local v, err = merchantapi.decode(doc_with(s))
      assert.is_nil(v)
      assert.equal("invalid JSON: \\u escape of a lone surrogate", err.title, s)
    end
  end)

  it("valid UTF-8 and surrogate pairs come through byte for byte", function()
    local v = assert(merchantapi.decode(doc_with("caf\195\169 \226\130\172 \240\159\152\128 \\ud83d\\ude00")))
    assert.equal("caf\195\169 \226\130\172 \240\159\152\128 \240\159\152\128", v.a)
  end)

  it("duplicate member names fail as decode, at any level", function()
    for _, body in ipairs({
      '{"data":null,"data":null}',
      '{"data":{"type":"t","id":"1","attributes":{"status":"draft","status":"processing"}}}',
      '{"data":{"type":"t","id":"1","type":"u"}}',
    }) do
      local v, err = merchantapi.decode(body)
      assert.is_nil(v)
      assert.equal("decode", err.kind, body)
      assert.equal("invalid JSON: duplicate member name", err.title)
    end
  end)
end)

--- merchantapi inside nginx (tests/suites/50-openresty starts it with
-- examples/openresty/nginx.conf and spec/openresty/locations.conf): the
-- example handler's answer, the LuaJIT build of merchantapi.core, retries,
-- the confirm, TLS, chunked bodies, a header line over the cap of a head read
-- no further than the cap, and keepalive over cosockets, an error's
-- one-line message in the error log (ngx.log, merchantapi.assert) -- and that
-- 50 requests waiting on a slow service at once do not wait for each other.
--
-- Environment: OPENRESTY_URL (the nginx under test), MERCHANTAPI_BASE_URL
-- (the sandbox), SANDBOX_TLS_PORT, SANDBOX_TLS_UNTRUSTED_PORT,
-- EXPECT_CORE (the path of the LuaJIT core.so nginx must load).
local cjson = require "cjson"
local socket_http = require "socket.http"
local ltn12 = require "ltn12"
local helpers = require "helpers" -- spec/helpers.lua: the sandbox and its ids

local OR = assert(os.getenv("OPENRESTY_URL"), "OPENRESTY_URL")
local SANDBOX = assert(os.getenv("MERCHANTAPI_BASE_URL"), "MERCHANTAPI_BASE_URL")
local CHANNEL_ID, PAYOUT_ID, PARTNER_PAY_ID = helpers.CHANNEL_ID, helpers.PAYOUT_ID, helpers.PARTNER_PAY_ID
local HANDLER = OR .. "/channel-and-addresses?channel=" .. CHANNEL_ID .. "&account=acct-22"

-- GET url: status and body
local function get(url)
  local chunks = {}
  local _, status = socket_http.request { url = url, sink = ltn12.sink.table(chunks) }
  return status, table.concat(chunks)
end

local function get_json(path)
  local status, body = get(OR .. path)
  local ok, value = pcall(cjson.decode, body)
  assert(ok, "not JSON from " .. path .. ": " .. tostring(body))
  return value, status
end

-- n requests to url at once (curl --parallel): the statuses and the seconds they took.
local function parallel(url, n)
  local args = {}
  for _ = 1, n do
    args[#args + 1] = "-o /dev/null -w '%{http_code}\\n' '" .. url .. "'"
  end
  local t0 = require("socket").gettime()
  local p = assert(io.popen("curl -s --no-progress-meter --parallel --parallel-immediate "
    .. "--parallel-max " .. n .. " " .. table.concat(args, " ")))
  local out = p:read("*a")
  p:close()
  local elapsed = require("socket").gettime() - t0
  local statuses = {}
  for code in out:gmatch("%d+") do
    statuses[#statuses + 1] = tonumber(code)
  end
  return statuses, elapsed
end

describe("merchantapi in OpenResty", function()
  before_each(function()
    helpers.reset()
  end)

  it("loads the LuaJIT build of merchantapi.core", function()
    local v = get_json("/probe/core")
    assert.matches("^LuaJIT 2%.1", v.jit)
    assert.equal("Lua 5.1", v.lua)
    assert.equal(assert(os.getenv("EXPECT_CORE")), v.core)
    assert.equal("0.1.0", v.core_version)
  end)

  it("scrapes every counter and each endpoint's histogram at 0 before any traffic", function()
    -- the first test to reach the example handler: its client is made by
    -- this scrape, and the dict holds nothing counted yet
    local chunks = {}
    local _, status = socket_http.request { url = OR .. "/metrics", sink = ltn12.sink.table(chunks) }
    assert.equal(200, status)
    local text = table.concat(chunks)
    local port = SANDBOX:match(":(%d+)$")
    for _, e in ipairs { { "PUT", "confirm_payout" }, { "GET", "get_channel" },
                         { "GET", "list_addresses" }, { "GET", "get_payout" } } do
      local labels = ('http_request_method="%s",merchantapi_endpoint="%s"'):format(e[1], e[2])
      for _, name in ipairs { "merchantapi_client_retries_total", "merchantapi_client_unknown_outcomes_total",
                              "merchantapi_client_settled_confirms_total", "merchantapi_client_pages_total" } do
        assert.matches("\n" .. name .. "{" .. labels .. "} 0\n", "\n" .. text, 1, true)
      end
      assert.matches(('\nhttp_client_request_duration_seconds_count{http_request_method="%s",'
        .. 'server_address="127.0.0.1",server_port="%s",merchantapi_endpoint="%s"} 0\n'):format(
          e[1], port, e[2]), text, 1, true)
    end
    assert.is_nil(text:find("_count{[^}]*} [1-9]"), text) -- nothing counted yet
  end)

  it("answers the example handler: the channel and every address", function()
    local v, status = get_json("/channel-and-addresses?channel=" .. CHANNEL_ID .. "&account=acct-22")
    assert.equal(200, status)
    assert.equal(CHANNEL_ID, v.channel.id)
    assert.equal("enabled", v.channel.status)
    assert.equal("EUR", v.channel.target_account.currency)
    assert.equal("6194.43", v.channel.target_account.balance)
    assert.equal(22, v.count)
    assert.equal(22, #v.addresses)
    assert.equal(helpers.FIXTURE_ADDRESS, v.addresses[1].id)
    assert.equal("ttrx:usdt", v.addresses[1].network)
    local seen = {}
    for _, a in ipairs(v.addresses) do
      assert.is_nil(seen[a.id])
      seen[a.id] = true
    end
  end)

  it("answers 404 and 400 from the example handler", function()
    local v, status = get_json("/channel-and-addresses?channel=no-such-channel&account=acct-22")
    assert.equal(404, status)
    assert.equal("api", v.kind)
    local _, status2 = get_json("/channel-and-addresses?channel=" .. CHANNEL_ID)
    assert.equal(400, status2)
  end)

  it("retries a GET over cosockets, with hooks for each attempt", function()
    local v = get_json("/probe/retry?id=fault-flaky-2-503")
    assert.equal("fault-flaky-2-503", v.id)
    assert.same({ 1, 2, 3 }, v.requests)
    assert.equal(3, #v.attempts)
    assert.equal(503, v.attempts[1].status)
    assert.equal(503, v.attempts[2].status)
    assert.equal(200, v.attempts[3].status)
    assert.is_true(v.attempts[1].retry_in >= 0 and v.attempts[1].retry_in <= 0.5)
    assert.is_true(v.attempts[2].retry_in >= 0 and v.attempts[2].retry_in <= 1.0)
    assert.equal(cjson.null, v.attempts[3].retry_in)
    assert.equal("string", type(v.attempts[1].request_id))
    assert.is_true(v.elapsed >= v.attempts[1].retry_in + v.attempts[2].retry_in - 0.01)
    -- the attempt records over cosockets: the names and values of every driver
    assert.same({ "retry", "retry", "ok" },
      { v.attempts[1].outcome, v.attempts[2].outcome, v.attempts[3].outcome })
    assert.same({ "503", "503", cjson.null },
      { v.attempts[1].error_type, v.attempts[2].error_type, v.attempts[3].error_type })
    assert.same({ cjson.null, 1, 2 },
      { v.attempts[1].resend_count, v.attempts[2].resend_count, v.attempts[3].resend_count })
    assert.equal("get_channel", v.attempts[3].endpoint)
    assert.matches("/api/public/v1/channels/fault%-flaky%-2%-503$", v.attempts[3].url)
    -- trace = true: the traceparent of each attempt, as the sandbox got it (the last three)
    local got = helpers.traceparents("fault-flaky-2-503")
    assert.is_true(#got >= 3)
    for i = 1, 3 do
      assert.equal("00-" .. v.attempts[i].trace_id .. "-" .. v.attempts[i].span_id .. "-01",
        got[#got - 3 + i])
    end
    assert.equal(v.attempts[1].trace_id, v.attempts[3].trace_id)
    assert.are_not.equal(v.attempts[1].span_id, v.attempts[2].span_id)
  end)

  it("gives up after max_retries with the contract's error", function()
    local v = get_json("/probe/retry?id=fault-flaky-5-502")
    assert.equal(cjson.null, v.id)
    assert.equal("api", v.err.kind)
    assert.equal(502, v.err.status)
    assert.equal(3, v.err.attempts)
  end)

  it("confirms once, then reports payout_not_draft as rejected", function()
    local v = get_json("/probe/confirm?id=" .. PAYOUT_ID)
    assert.equal("processing", v.first.status)
    assert.equal("250.10", v.first.amount)
    assert.equal(201, v.first.http)
    assert.equal("EUR", v.first.currency)
    assert.equal("api", v.second.kind)
    assert.equal("payout_not_draft", v.second.code)
    assert.equal("rejected", v.second.outcome)
  end)

  it("sends headers of one's own over cosockets, and refuses the client's own", function()
    local v = get_json("/probe/headers?id=" .. PAYOUT_ID)
    assert.equal("usage", v.refused.kind)
    assert.equal("not_sent", v.refused.outcome)
    assert.equal("processing", v.status)
    assert.equal(1, helpers.count(PAYOUT_ID)) -- the refused call sent nothing
    local h = helpers.headers(PAYOUT_ID)
    assert.equal("or-call", h["x-trace"])
    assert.equal("c", h["x-client"])
    assert.equal("127.0.0.1:" .. SANDBOX:match(":(%d+)$"), h["host"])
  end)

  it("confirms over TLS with verification, and refuses an untrusted peer as not_sent", function()
    local v = get_json("/probe/tls?id=" .. PARTNER_PAY_ID .. "&port=" .. os.getenv("SANDBOX_TLS_PORT"))
    assert.equal(cjson.null, v.err)
    assert.equal("processing", v.status)
    assert.equal("1200", v.amount)
    local u = get_json("/probe/tls?id=" .. PAYOUT_ID .. "&port=" .. os.getenv("SANDBOX_TLS_UNTRUSTED_PORT"))
    assert.equal("transport", u.err.kind)
    assert.equal("not_sent", u.err.outcome)
    assert.matches("TLS handshake", u.err.message)
  end)

  it("reads a chunked body", function()
    local v = get_json("/probe/chunked?id=" .. CHANNEL_ID)
    assert.equal(cjson.null, v.err)
    assert.equal(CHANNEL_ID, v.id)
    assert.equal("6194.43", v.balance)
    assert.equal("chunked", v.transfer_encoding)
  end)

  it("stops reading a header line of 8 MiB at the cap of a line", function()
    local v = get_json("/probe/long-line")
    assert.equal(cjson.null, v.err)
    assert.equal(200, v.status)
    -- the core's reader (src/h1_reader.c) stops at libcurl's cap of a line
    assert.equal("response header line too long", v.refused)
    assert.is_true(v.head_bytes > 100 * 1024)
    -- all it allocated: receive("*l") held the whole line (over 34,000
    -- KiB); the reader holds the fields it took, the reads 64 KiB each
    assert.is_true(v.kib < 2048, "the transport took " .. v.kib .. " KiB")
  end)

  it("ends an answer trickled a byte every 0.25 s at the attempt's timeout", function()
    -- before: nginx restarted one receive(n)'s timer at each byte, and the
    -- call returned ok after the whole body (issue 29: 14.8 s)
    local v = get_json("/probe/trickle")
    assert.equal("transport", v.get.kind)
    assert.is_true(v.get.took >= 0.95 and v.get.took <= 1.1, "get took " .. v.get.took .. " s")
    assert.equal("transport", v.put.kind)
    assert.equal("unknown", v.put.outcome)
    assert.is_true(v.put.took >= 0.95 and v.put.took <= 1.1, "put took " .. v.put.took .. " s")
  end)

  it("keeps connections alive between calls", function()
    local v = get_json("/probe/keepalive?id=" .. CHANNEL_ID)
    assert.is_true(v.opened <= 1)
    assert.is_true(v.reused >= 2)
  end)

  -- the suite's error log of this nginx (tests/suites/50-openresty)
  local function error_log()
    local f = assert(io.open(assert(os.getenv("OR_PREFIX"), "OR_PREFIX") .. "/logs/error.log", "rb"))
    local text = f:read("*a")
    f:close()
    return text
  end

  -- The line of the error log that holds `text`, or nil.
  local function log_line(text)
    for line in error_log():gmatch("[^\n]+") do
      if line:find(text, 1, true) then
        return line
      end
    end
  end

  it("writes the error's one-line message with ngx.log(ngx.ERR, err) and \"..\"", function()
    local id = "log-probe-" .. tostring(os.time())
    local v = get_json("/probe/log-error?id=" .. id)
    local message = "merchantapi: 404 not_found: Not found (no channel " .. id
      .. ") [GET /api/public/v1/channels/" .. id .. "]"
    assert.equal(message, v.message)
    local line = log_line("log_error(): " .. message .. ", client: ")
    assert.truthy(line, "no ngx.log(ngx.ERR, err) line in the error log")
    assert.matches(" %[error%] ", line)
    line = log_line("log_error(): failed: " .. message .. ", client: ")
    assert.truthy(line, "no ngx.log(ngx.WARN, \"failed: \" .. err) line in the error log")
    assert.matches(" %[warn%] ", line)
  end)

  it("logs the message of an error raised by merchantapi.assert out of a handler", function()
    local id = "raise-probe-" .. tostring(os.time())
    local status = get(OR .. "/probe/raise?id=" .. id)
    assert.equal(500, status)
    local message = "merchantapi: 404 not_found: Not found (no channel " .. id
      .. ") [GET /api/public/v1/channels/" .. id .. "]"
    local line = log_line(": " .. message)
    assert.truthy(line, "no line with the message in the error log")
    assert.matches("runtime error: %S+merchantapi_probe%.lua:%d+: ", line)
  end)

  it("serves the pool's metrics from a lua_shared_dict as Prometheus text", function()
    -- /metrics is the example handler's (examples/openresty), whose client
    -- counts in the same dict as the probe's: the pool's totals.  Other
    -- tests' calls are in them too, so this one reads what its calls added.
    local port = SANDBOX:match(":(%d+)$")
    local function scrape()
      local chunks = {}
      local _, status, headers = socket_http.request { url = OR .. "/metrics",
        sink = ltn12.sink.table(chunks) }
      assert.equal(200, status)
      assert.equal("text/plain; version=0.0.4", headers["content-type"])
      return table.concat(chunks)
    end
    -- the value of the line name{labels} (labels: the whole set), or 0
    local function value(text, name, labels)
      local line = "\n" .. name .. "{" .. labels .. "} "
      local at = ("\n" .. text):find(line, 1, true)
      return at and tonumber(("\n" .. text):match("^(%S+)\n", at + #line)) or 0
    end
    local server = ('http_request_method="GET",server_address="127.0.0.1",server_port="%s",'):format(port)
    local ok200 = server .. 'http_response_status_code="200",merchantapi_endpoint="get_channel"'
    local failed503 = server .. 'http_response_status_code="503",error_type="503",'
      .. 'merchantapi_endpoint="get_channel"'
    local retries = 'http_request_method="GET",merchantapi_endpoint="get_channel"'
    local before = scrape()
    -- 3 attempts over cosockets (503, 503, 200), each an attempt record
    local v = get_json("/probe/metrics-traffic?id=fault-flaky-2-503")
    assert.equal("fault-flaky-2-503", v.id)
    local text = scrape()
    local function added(name, labels)
      return value(text, name, labels) - value(before, name, labels)
    end
    assert.equal(2, added("http_client_request_duration_seconds_count", failed503), text)
    assert.equal(1, added("http_client_request_duration_seconds_count", ok200), text)
    assert.equal(1, added("http_client_request_duration_seconds_bucket", ok200 .. ',le="+Inf"'), text)
    assert.equal(2, added("http_client_request_duration_seconds_bucket", failed503 .. ',le="+Inf"'), text)
    assert.is_true(added("http_client_request_duration_seconds_sum", ok200) > 0)
    assert.equal(2, added("merchantapi_client_retries_total", retries), text)
    assert.matches("\n# TYPE http_client_request_duration_seconds histogram\n", text)
    assert.is_nil(text:find(os.getenv("MERCHANTAPI_API_KEY"), 1, true))
  end)

  it("adds a call's attempts to the lua_shared_dict at a flush, not in the request", function()
    local v = get_json("/probe/metrics-flush?id=fault-429-after-60")
    assert.equal(429, v.status)
    assert.equal(v.before, v.after_call) -- the request did no dict operation
    assert.equal(v.before + 1, v.after_read) -- the flush (here the read's) added it
  end)

  it("logs the message of a plain assert(call()) out of a handler, over both drivers", function()
    for i, driver in ipairs { "", "&libcurl=1" } do
      local id = "assert-probe-" .. tostring(os.time()) .. i
      local status = get(OR .. "/probe/assert?id=" .. id .. driver)
      assert.equal(500, status)
      local message = "merchantapi: 404 not_found: Not found (no channel " .. id
        .. ") [GET /api/public/v1/channels/" .. id .. "]"
      local line = log_line(": " .. message)
      assert.truthy(line, "no line with the message in the error log (" .. driver .. ")")
      -- LuaJIT's assert raised the message itself: no position, no "unknown reason"
      assert.matches("runtime error: " .. message:gsub("%p", "%%%0"), line)
    end
    assert.is_nil(error_log():find("unknown reason", 1, true))
  end)

  it("a client made without transport goes over cosockets where they can yield", function()
    local v = get_json("/probe/default-stats?id=" .. CHANNEL_ID)
    assert.equal(3, v.cosocket_requests)
  end)

  it("a client made without transport uses libcurl where cosockets cannot yield (set_by_lua)", function()
    local v = get_json("/probe/default-set?id=" .. CHANNEL_ID)
    assert.equal(CHANNEL_ID, v.id)
    assert.equal(0, v.cosocket_requests)
  end)

  -- Issue 29: a trickle outlived every timeout on the cosocket transport
  -- (each read's timer restarted by every byte), and a chunk-size line zz
  -- raised out of it. true while the cosocket transport reads with its own
  -- Lua HTTP reader (a3bc464): the case below runs, and its failure is
  -- reported pending; one that holds then fails the run (flip this to false
  -- once the core's llhttp reader with one clock is in, branch h-h1reader).
  local H1_READER_PENDING = false

  describe("hostile HTTP/1.1 answers over cosockets, under load", function()
    local h1
    setup(function()
      h1 = require("support.test_server").start("h1_framing.py")
    end)
    teardown(function()
      if h1 then
        h1.stop()
      end
    end)

    -- what each of the requests at once asks /probe/h1 for, in turn
    local ROTA = {
      { id = "fault-h1-trickle-body", call = "get", timeout = 1, deadline = 2, trickle = true },
      { id = "good-channel", call = "get", timeout = 5, deadline = 5, good = true },
      { id = "fault-h1-bad-chunk-size", call = "put", timeout = 5, deadline = 5 },
      { id = "fault-h1-trickle-head", call = "put", timeout = 3, deadline = 1, trickle = true },
      { id = "fault-h1-two-lengths", call = "get", timeout = 5, deadline = 5 },
      { id = "good-payout", call = "put", timeout = 5, deadline = 5, good = true },
      { id = "fault-h1-cut-chunk", call = "put", timeout = 5, deadline = 5 },
      { id = "fault-h1-long-chunk-size", call = "get", timeout = 5, deadline = 5 },
      { id = "fault-h1-space-chunk-size", call = "get", timeout = 5, deadline = 5 },
      { id = "fault-h1-length-chunked", call = "put", timeout = 5, deadline = 5 },
      { id = "fault-h1-huge-head", call = "get", timeout = 5, deadline = 5 },
    }
    local N = 33 -- three rounds of the rota: 6 trickles, 6 good calls, 21 hostile answers

    -- the problems of one answer of /probe/h1 for `want` (a ROTA entry)
    local function problems(want, v, out)
      local where = want.call .. " " .. want.id .. ": "
      if type(v) ~= "table" then
        out[#out + 1] = where .. "no JSON answer"
      elseif v.raised ~= cjson.null then
        out[#out + 1] = where .. "raised " .. tostring(v.raised)
      elseif want.good then
        if v.id ~= want.id then
          out[#out + 1] = where .. "want the resource, got " .. cjson.encode(v.err)
        end
      elseif v.err == cjson.null then
        out[#out + 1] = where .. ("want an error, got success after %.2f s"):format(v.elapsed)
      elseif want.trickle then
        local e = v.err
        local outcome = e.outcome ~= cjson.null and e.outcome or nil
        if e.kind ~= "transport" or e.attempts ~= 1 or outcome ~= (want.call == "put" and "unknown" or nil) then
          out[#out + 1] = where .. "want transport (a confirm unknown) x1, got " .. cjson.encode(e)
        end
        local due = math.min(want.timeout, want.deadline)
        if math.abs(v.elapsed - due) > 0.1 then
          out[#out + 1] = where .. ("ended after %.3f s, not within 0.1 s of %g s"):format(v.elapsed, due)
        end
      elseif (v.err.kind ~= "transport" and v.err.kind ~= "decode")
        or (want.call == "put" and v.err.outcome ~= "unknown") then
        out[#out + 1] = where .. "want transport or decode (a confirm unknown), got " .. cjson.encode(v.err)
      end
      return out
    end

    it("ends each trickle within 0.1 s of its deadline, 33 calls at once, good and hostile", function()
      local dir = os.tmpname()
      os.remove(dir)
      assert(os.execute("mkdir -p " .. dir))
      local base = "http://127.0.0.1:" .. h1.port
      local args = {}
      for i = 1, N do
        local w = ROTA[(i - 1) % #ROTA + 1]
        args[i] = ("-o %s/%d.json '%s/probe/h1?base=%s&id=%s&call=%s&timeout=%g&deadline=%g'"):format(
          dir, i, OR, base, w.id .. "~n" .. i, w.call, w.timeout, w.deadline)
      end
      -- every call is bounded by its deadline (5 s at most); curl's 20 s a guard
      local p = assert(io.popen("curl -s --no-progress-meter -m 20 --parallel --parallel-immediate "
        .. "--parallel-max " .. N .. " " .. table.concat(args, " ")))
      p:read("*a")
      p:close()
      local out = {}
      for i = 1, N do
        local w = ROTA[(i - 1) % #ROTA + 1]
        local body = helpers.read_file(dir .. "/" .. i .. ".json")
        local ok, v = pcall(cjson.decode, body or "")
        problems({ id = w.id .. "~n" .. i, call = w.call, timeout = w.timeout, deadline = w.deadline,
                   trickle = w.trickle, good = w.good }, ok and v, out)
      end
      os.execute("rm -rf " .. dir)
      local verdict = #out == 0 and "held" or table.concat(out, "\n")
      if H1_READER_PENDING then
        assert.are_not.equal("held", verdict, "holds now: set H1_READER_PENDING to false")
        pending("issue 29, the cosocket transport's own reader (branch h-h1reader fixes): " .. verdict)
      else
        assert.equal("held", verdict)
      end
    end)
  end)

  describe("with the service answering each call after 200 ms", function()
    before_each(function()
      helpers.sandbox_config('{"latency_ms":200}')
    end)
    after_each(function()
      helpers.reset()
    end)

    it("serves 50 requests at once within 3 s (blocking would need 20 s)", function()
      -- each request makes two calls (channel, one page of addresses): 400 ms
      local statuses, elapsed = parallel(HANDLER, 50)
      assert.equal(50, #statuses)
      for _, s in ipairs(statuses) do
        assert.equal(200, s)
      end
      assert.is_true(elapsed < 3, ("50 requests took %.2f s"):format(elapsed))
      print(("\n50 parallel requests, 2 calls each, 200 ms per call: %.2f s"):format(elapsed))
    end)

    it("fetches pages with light threads when asked for concurrency", function()
      -- 22 addresses, 5 per page: the first page, then 4 pages 3 at a time
      local v = get_json("/probe/pages?account=acct-22")
      assert.equal(22, #v.concurrent)
      assert.same(v.sequential, v.concurrent)
      assert.is_true(v.t_sequential >= 5 * 0.2 - 0.05)
      assert.is_true(v.t_concurrent < v.t_sequential - 0.3,
        ("concurrent %.2f s, sequential %.2f s"):format(v.t_concurrent, v.t_sequential))
    end)

    it("never blocks the worker with a client made without transport", function()
      -- one worker: 5 requests x 2 calls x 200 ms = 2 s if each blocked it
      local statuses, elapsed = parallel(OR .. "/default?channel=" .. CHANNEL_ID .. "&account=acct-22", 5)
      assert.same({ 200, 200, 200, 200, 200 }, statuses)
      assert.is_true(elapsed < 1.5, ("5 requests took %.2f s"):format(elapsed))
    end)

    it("would be serialised by the blocking libcurl transport (the control)", function()
      -- one worker: 5 requests x 2 calls x 200 ms = 2 s when each blocks it
      local statuses, elapsed = parallel(OR .. "/blocking?channel=" .. CHANNEL_ID .. "&account=acct-22", 5)
      assert.same({ 200, 200, 200, 200, 200 }, statuses)
      assert.is_true(elapsed >= 1.8, ("5 blocking requests took only %.2f s"):format(elapsed))
    end)
  end)
end)

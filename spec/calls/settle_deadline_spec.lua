-- A confirm whose outcome is unknown is settled by reading the payout; every
-- call checks that the resource it got is the one it asked for; and a whole
-- call -- attempts, retries and waits -- ends within its deadline.  Each
-- over libcurl and over a LuaSocket transport, against the sandbox's fault
-- ids (sandbox/README.md), with the requests that reached it counted.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local socket_transport = require "support.socket_transport"

local count = helpers.count
local OTHER_ID = "00000000-0000-4000-8000-000000000000"

local recorder = helpers.recorder

for _, over in ipairs({ { "libcurl", false }, { "a LuaSocket transport", socket_transport } }) do
  local name, transport = over[1], over[2]

  describe("settling a confirm whose outcome is unknown, over " .. name, function()
    before_each(helpers.reset)

    helpers.both("the confirm was carried out, then answered 502: confirmed by the read", function()
      local r = recorder()
      local c = helpers.client({ max_retries = 2, transport = transport,
                                 on_response = r.on_response })
      local payout, err, res = c:confirm_payout("fault-applied-502")
      c:close()
      assert.is_nil(err)
      assert.equal("fault-applied-502", payout.id)
      assert.equal("processing", payout.status)
      assert.equal("250.10", payout.amount)
      assert.equal("read", res.settled_by)
      assert.equal(200, res.status) -- the read's response
      assert.equal(2, count("fault-applied-502")) -- one PUT, one GET
      assert.equal(2, #r.responses)
      assert.same({ "PUT", 502, "GET", 200 }, { r.responses[1].method, r.responses[1].status,
                                               r.responses[2].method, r.responses[2].status })
    end)

    helpers.both("the confirm was carried out, then the connection dropped: confirmed by the read", function()
      local c = helpers.client({ max_retries = 2, transport = transport })
      local payout, err, res = c:confirm_payout("fault-applied-no-response")
      c:close()
      assert.is_nil(err)
      assert.equal("processing", payout.status)
      assert.equal("read", res.settled_by)
      assert.equal(2, count("fault-applied-no-response"))
    end)

    helpers.both("not carried out (502, still a draft): unknown with err.payout; a second try confirms", function()
      local c = helpers.client({ max_retries = 2, transport = transport })
      local p, err = c:confirm_payout("fault-flaky-1-502")
      assert.is_nil(p)
      local res = err.res
      assert.equal("api", err.kind)
      assert.equal(502, err.status)
      assert.equal("unknown", err.outcome)
      assert.equal(1, err.attempts)
      assert.equal("PUT", err.method)
      assert.equal(502, res.status) -- the confirm's response
      assert.equal("fault-flaky-1-502", err.payout.id)
      assert.equal("draft", err.payout.status)
      assert.is_nil(err.settle_error)
      assert.equal(2, count("fault-flaky-1-502"))
      -- still a draft: confirming again is safe, and is the first 201
      local payout, err2, res2 = c:confirm_payout("fault-flaky-1-502")
      c:close()
      assert.is_nil(err2)
      assert.equal("processing", payout.status)
      assert.equal(201, res2.status)
      assert.is_nil(res2.settled_by)
      assert.equal(3, count("fault-flaky-1-502"))
    end)

    helpers.both("the read fails too: the confirm's error, with the read's as err.settle_error", function()
      local c = helpers.client({ max_retries = 1, transport = transport })
      local p, err = c:confirm_payout("fault-502-json")
      c:close()
      assert.is_nil(p)
      assert.equal(502, err.status)
      assert.equal("unknown", err.outcome)
      assert.equal("PUT", err.method)
      assert.equal(1, err.attempts)
      assert.is_nil(err.payout)
      local se = err.settle_error
      assert.equal("api", se.kind)
      assert.equal(502, se.status)
      assert.equal("GET", se.method)
      assert.equal(2, se.attempts) -- retried as GETs are
      assert.is_nil(se.outcome)
      assert.matches("%[GET /api/public/v1/payouts/fault%-502%-json%]$", tostring(se))
      assert.equal(3, count("fault-502-json")) -- 1 PUT + 2 GET
    end)

    helpers.both("is turned off on the client, or per call", function()
      local off = helpers.client({ transport = transport, settle = false })
      local p, err = off:confirm_payout("fault-applied-502")
      assert.is_nil(p)
      assert.equal("unknown", err.outcome)
      assert.is_nil(err.payout)
      assert.is_nil(err.settle_error)
      assert.equal(1, count("fault-applied-502"))
      local payout, _, res = off:confirm_payout("fault-applied-no-response", { settle = true })
      off:close()
      assert.equal("processing", payout.status)
      assert.equal("read", res.settled_by)
      assert.equal(2, count("fault-applied-no-response"))
      local on = helpers.client({ transport = transport })
      local _, err2 = on:confirm_payout("fault-503", { settle = false })
      on:close()
      assert.equal("unknown", err2.outcome)
      assert.equal(1, count("fault-503"))
    end)
  end)

  describe("the id of the answer, over " .. name, function()
    before_each(helpers.reset)

    helpers.both("another id than the one asked for is decode, naming both", function()
      local c = helpers.client({ transport = transport, max_retries = 2 })
      local ch, err = c:get_channel("fault-other-id")
      assert.is_nil(ch)
      local res = err.res
      assert.equal("decode", err.kind)
      assert.equal(200, err.status)
      assert.equal("expected channels fault-other-id, got channels " .. OTHER_ID, err.title)
      assert.is_false(err.retryable)
      assert.equal(1, err.attempts)
      assert.equal(200, res.status)
      local _, perr = c:get_payout("fault-other-id")
      assert.equal("decode", perr.kind)
      assert.equal("expected payouts fault-other-id, got payouts " .. OTHER_ID, perr.title)
      local _, cerr = c:confirm_payout("fault-other-id", { settle = false })
      assert.equal("decode", cerr.kind)
      assert.equal(201, cerr.status)
      assert.equal("unknown", cerr.outcome) -- a 2xx: something was confirmed, not shown what
      assert.equal("expected payouts fault-other-id, got payouts " .. OTHER_ID, cerr.title)
      local _, werr = c:wait_for_txid("fault-other-id", { timeout = 5, interval = 0.1 })
      c:close()
      assert.equal("decode", werr.kind) -- at once: waiting cannot fix it
      assert.equal("expected payouts fault-other-id, got payouts " .. OTHER_ID, werr.title)
      assert.equal(4, count("fault-other-id"))
    end)
  end)

  describe("the whole-call deadline, over " .. name, function()
    before_each(helpers.reset)

    helpers.both("a Retry-After of 60 s with deadline = 1 ends the confirm at once with the 429", function()
      local c = helpers.client({ transport = transport, max_retries = 2 })
      local t0 = helpers.now()
      local p, err = c:confirm_payout("fault-429-after-60", { deadline = 1 })
      local elapsed = helpers.now() - t0
      c:close()
      assert.is_nil(p)
      assert.is_true(elapsed < 3, tostring(elapsed))
      assert.equal("api", err.kind)
      assert.equal(429, err.status)
      assert.equal(60, err.retry_after)
      assert.is_true(err.deadline_exceeded)
      assert.equal(1, err.attempts)
      assert.equal("rejected", err.outcome)
      assert.equal(1, count("fault-429-after-60"))
    end)

    helpers.both("the client's deadline bounds GETs, lists and generic calls the same way", function()
      local c = helpers.client({ transport = transport, max_retries = 2, deadline = 1 })
      local t0 = helpers.now()
      local _, e1 = c:get_channel("fault-429-after-60")
      local _, e2 = c:list_addresses("fault-429-after-60", { per_page = 5 })
      local _, e3 = c:request("GET", "/api/public/v1/channels/fault-429-after-60")
      local elapsed = helpers.now() - t0
      c:close()
      assert.is_true(elapsed < 3, tostring(elapsed))
      for _, e in ipairs({ e1, e2, e3 }) do
        assert.equal(429, e.status)
        assert.is_true(e.deadline_exceeded)
        assert.equal(1, e.attempts)
      end
      assert.equal(3, count("fault-429-after-60"))
    end)

    helpers.both("cuts an attempt's timeout to what is left: a 3 s first byte, timeout 10, deadline 1", function()
      local c = helpers.client({ transport = transport, max_retries = 2, timeout = 10 })
      local t0 = helpers.now()
      local ch, err = c:get_channel("fault-slow-first-byte", { deadline = 1 })
      local elapsed = helpers.now() - t0
      c:close()
      assert.is_nil(ch)
      assert.is_true(elapsed < 2.5, tostring(elapsed))
      assert.equal("transport", err.kind)
      assert.is_true(err.deadline_exceeded)
      assert.equal(1, err.attempts)
      assert.equal(1, count("fault-slow-first-byte"))
    end)
  end)
end

describe("the whole-call deadline", function()
  before_each(helpers.reset)

  -- The first attempt runs its whole timeout (the sandbox holds the first
  -- byte 3 s); the first retry's backoff is drawn in [0, 0.5 s], so with a
  -- deadline one second past the timeout the second attempt always begins,
  -- its timeout cut to what is left (at most DEADLINE - TIMEOUT), and ends
  -- at the deadline -- no third.  An uncut second attempt would run TIMEOUT
  -- and end past DEADLINE + 1 s: the bounds below sit half that gap away,
  -- what a loaded machine may add to a wake-up.
  helpers.both("timeout = 2, max_retries = 2, deadline = 3: the second attempt gets what is left", function()
    local TIMEOUT, DEADLINE, LATE = 2, 3, 0.5
    local r = recorder()
    local c = helpers.client({ timeout = TIMEOUT, max_retries = 2, deadline = DEADLINE,
                               on_response = r.on_response })
    local t0 = merchantapi.monotonic()
    local _, err = c:get_channel("fault-slow-first-byte")
    local elapsed = merchantapi.monotonic() - t0
    c:close()
    -- ended by the call's deadline, during the second attempt
    assert.equal("transport", err.kind)
    assert.equal(28, err.curl_code)
    assert.is_true(err.deadline_exceeded)
    assert.equal(2, err.attempts)
    assert.equal(2, #r.responses)
    local first, second = r.responses[1], r.responses[2]
    assert.is_true(first.elapsed >= TIMEOUT - 0.01, tostring(first.elapsed)) -- its whole timeout
    assert.is_true(first.retry_in >= 0 and first.retry_in <= 0.5, tostring(first.retry_in))
    assert.is_true(second.elapsed <= DEADLINE - TIMEOUT + LATE, tostring(second.elapsed)) -- cut
    assert.is_nil(second.retry_in)
    -- not before the deadline (libcurl's timeout is rounded to the ms), nor a timeout after it
    assert.is_true(elapsed >= DEADLINE - 0.01 and elapsed <= DEADLINE + LATE, tostring(elapsed))
    local reached = count("fault-slow-first-byte")
    assert.is_true(reached >= 1 and reached <= 2, tostring(reached))
  end)

  helpers.both("a pager's pages end at the deadline too", function()
    local c = helpers.client({ max_retries = 2, deadline = 1 })
    local t0 = helpers.now()
    local list, err = c:addresses("fault-429-after-60", { per_page = 5 }):all()
    local elapsed = helpers.now() - t0
    c:close()
    assert.is_nil(list)
    assert.is_true(elapsed < 3, tostring(elapsed))
    assert.equal(429, err.status)
    assert.is_true(err.deadline_exceeded)
    assert.equal(1, count("fault-429-after-60"))
  end)

  helpers.both("a transport is handed the timeout cut to what is left", function()
    local requests = {}
    local c = assert(merchantapi.new({
      base_url = "http://127.0.0.1:1", api_key = helpers.API_KEY, timeout = 30, deadline = 0.5,
      max_retries = 3,
      transport = function(r)
        requests[#requests + 1] = r
        return { status = 429, headers = { ["Retry-After"] = "60" }, body = "" }
      end,
    }))
    local _, err = c:get_channel("x")
    c:close()
    assert.equal(1, #requests)
    assert.is_true(requests[1].timeout > 0 and requests[1].timeout <= 0.5,
      tostring(requests[1].timeout))
    assert.is_true(requests[1].connect_timeout <= requests[1].timeout)
    assert.equal("http", err.kind)
    assert.equal(429, err.status)
    assert.is_true(err.deadline_exceeded)
  end)

  helpers.both("refuses a deadline or settle that is not one", function()
    local base = { base_url = "http://127.0.0.1:9", api_key = helpers.API_KEY }
    local function with(extra)
      local o = {}
      for k, v in pairs(base) do
        o[k] = v
      end
      for k, v in pairs(extra) do
        o[k] = v
      end
      return o
    end
    for _, d in ipairs({ 0, -1, 0 / 0 }) do
      local c, err = merchantapi.new(with({ deadline = d }))
      assert.is_nil(c)
      assert.equal("usage", err.kind)
      assert.matches("deadline", err.title)
    end
    assert.has_error(function() merchantapi.new(with({ deadline = "1" })) end)
    assert.has_error(function() merchantapi.new(with({ settle = "no" })) end)
    local c = assert(merchantapi.new(base))
    local p, err = c:confirm_payout("p", { deadline = 0 })
    assert.is_nil(p)
    assert.equal("usage", err.kind)
    assert.equal("not_sent", err.outcome)
    local _, err2 = c:get_channel("c", { deadline = -2 })
    assert.equal("usage", err2.kind)
    local _, err3 = c:request("GET", "/x", { deadline = -2 })
    assert.equal("usage", err3.kind)
    assert.has_error(function() c:confirm_payout("p", { settle = 1 }) end)
    assert.has_error(function() c:get_channel("c", { settle = true }) end)
    assert.has_error(function() c:get_payout("p", { deadline = "1" }) end)
    c:close()
  end)
end)

-- client:get_payout and client:wait_for_txid against the sandbox's txid
-- timing (sandbox/README.md, "txid"): a payout read before and after its
-- confirm, a txid that comes and one that never does, an unknown id, and
-- 429s during polling, counted by the sandbox.  Clocks and sleeps are faked
-- where the waits themselves are what is checked, so the file takes about
-- two seconds.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local wait = require "merchantapi.wait"

local count, shell_quote, sandbox_config = helpers.count, helpers.shell_quote, helpers.sandbox_config

-- The sandbox's txid of a payout: the SHA-256 of its id in hex.
local function txid_of(id)
  local p = assert(io.popen("printf %s " .. shell_quote(id) .. " | sha256sum"))
  local out = p:read("*a")
  p:close()
  return assert(out:match("^(%x+)"))
end

-- A fake clock that only sleeping moves, and a sleep that records its waits.
local function fake_time()
  local t = { now = 100, sleeps = {} }
  t.clock = function() return t.now end
  t.sleep = function(s)
    t.sleeps[#t.sleeps + 1] = s
    t.now = t.now + s
  end
  return t
end

describe("payout tracking", function()
  local client

  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)

  after_each(function()
    client:close()
  end)

  describe("get_payout", function()
    helpers.both("reads a draft, then the confirmed payout as confirm returned it", function()
      local draft, err, res = client:get_payout(helpers.PAYOUT_ID)
      assert.is_nil(err)
      assert.equal(200, res.status)
      assert.equal("draft", draft.status)
      local confirmed = assert(client:confirm_payout(helpers.PAYOUT_ID))
      local read = assert(client:get_payout(helpers.PAYOUT_ID))
      assert.same(confirmed, read)
      assert.equal("processing", read.status)
      assert.equal("250.10", read.amount)
      assert.is_nil(read.txid)
      assert.equal("EUR", read.accountCharged.currencyCode)
      assert.equal("payouts-bot", read.author.name)
      assert.equal(3, count(helpers.PAYOUT_ID))
    end)

    helpers.both("shows the txid once the payout is broadcast", function()
      sandbox_config(('{"id":"%s","txid_after_ms":0}'):format(helpers.PAYOUT_ID))
      assert(client:confirm_payout(helpers.PAYOUT_ID))
      local read = assert(client:get_payout(helpers.PAYOUT_ID))
      assert.equal("dd8368b4d2d702d26f01443a3adeeb150b4f989b058f002e8953cd618fc2fb56", read.txid)
      assert.equal(txid_of(helpers.PAYOUT_ID), read.txid)
      assert.equal("processing", read.status)
    end)

    helpers.both("fails with status 404 for an unknown id", function()
      local p, err = client:get_payout("no-such-payout")
      assert.is_nil(p)
      local res = err.res
      assert.equal("api", err.kind)
      assert.equal(404, err.status)
      assert.equal("not_found", err.code)
      assert.is_false(err.retryable)
      assert.is_nil(err.outcome)
      assert.equal(404, res.status)
      assert.has_error(function() client:get_payout(42) end)
    end)
  end)

  describe("wait_for_txid", function()
    helpers.both("returns the payout with its txid within the timeout", function()
      local id = "draft-track-fast"
      sandbox_config('{"id":"draft-track-fast","txid_after_ms":300}')
      assert(client:confirm_payout(id))
      local statuses = {}
      local start = merchantapi.monotonic()
      local payout, err, res = client:wait_for_txid(id, {
        timeout = 5, interval = 0.05,
        on_read = function(p) statuses[#statuses + 1] = p and p.status end,
      })
      local elapsed = merchantapi.monotonic() - start
      assert.is_nil(err)
      assert.equal(txid_of(id), payout.txid)
      assert.equal("processing", payout.status)
      assert.equal("250.10", payout.amount)
      assert.equal(200, res.status)
      assert.is_true(elapsed >= 0.2 and elapsed < 3, tostring(elapsed))
      assert.is_true(#statuses >= 3)
      for _, s in ipairs(statuses) do
        assert.equal("processing", s)
      end
      assert.equal(1 + #statuses, count(id)) -- the confirm and the reads: nothing else
    end)

    helpers.both("times out cleanly on a txid that never comes", function()
      local id = "draft-track-never"
      assert(client:confirm_payout(id))
      local start = merchantapi.monotonic()
      local payout, err = client:wait_for_txid(id, { timeout = 0.6, interval = 0.1 })
      local elapsed = merchantapi.monotonic() - start
      assert.is_nil(payout)
      local res = err.res -- the last read's response
      assert.equal("timeout", err.kind)
      assert.is_true(err.retryable)
      assert.equal(id, err.payout.id)
      assert.equal("processing", err.payout.status)
      assert.is_nil(err.payout.txid)
      assert.is_nil(err.last_error)
      assert.equal("GET", err.method)
      assert.equal(helpers.base_url() .. "/api/public/v1/payouts/" .. id, err.url)
      assert.is_true(elapsed >= 0.6 and elapsed < 1.2, tostring(elapsed))
      assert.is_true(err.elapsed >= 0.6 and err.elapsed < 1.2)
      assert.is_true(err.attempts >= 5 and err.attempts <= 8, tostring(err.attempts))
      assert.equal(1 + err.attempts, count(id)) -- one confirm, then only reads
      assert.truthy(tostring(err):find("^merchantapi: timeout: payout draft%-track%-never has no txid"))
      assert.equal(200, res.status)
      -- and the payout was left as it was: still processing, never confirmed again
      assert.equal("payout_not_draft", select(2, client:confirm_payout(id)).code)
    end)

    helpers.both("returns the error of an unknown id at once, after one request", function()
      local t = fake_time()
      local payout, err = client:wait_for_txid("no-such-payout",
        { timeout = 30, interval = 1, sleep = t.sleep, clock = t.clock })
      assert.is_nil(payout)
      assert.equal("api", err.kind)
      assert.equal(404, err.status)
      assert.same({}, t.sleeps)
      assert.equal(1, count("no-such-payout"))
    end)

    helpers.both("backs off on 429 and goes on reading until the txid comes", function()
      local id = "fault-flaky-2-429" -- the first two requests answer 429 (no Retry-After)
      sandbox_config('{"id":"fault-flaky-2-429","txid_after_ms":0}')
      local other = helpers.client()
      local t = fake_time()
      local sleep = function(s)
        t.sleep(s)
        if #t.sleeps == 2 then
          -- confirmed elsewhere while this one waits (the third request for the id)
          assert(other:confirm_payout(id))
        end
      end
      local payout, err = client:wait_for_txid(id,
        { timeout = 10, interval = 0.25, max_interval = 5, sleep = sleep, clock = t.clock })
      other:close()
      assert.is_nil(err)
      assert.equal(txid_of(id), payout.txid)
      assert.same({ 0.5, 1 }, t.sleeps) -- interval * 2, then * 4
      assert.equal(4, count(id)) -- 429, 429, the confirm, the read with the txid
    end)

    helpers.both("honours Retry-After and stops at the deadline", function()
      local t = fake_time()
      local payout, err = client:wait_for_txid("fault-429", -- 429 with Retry-After: 1, always
        { timeout = 3.5, interval = 0.1, sleep = t.sleep, clock = t.clock })
      assert.is_nil(payout)
      assert.equal("timeout", err.kind)
      assert.is_nil(err.payout)
      assert.equal(429, err.last_error.status)
      assert.equal("rate_limited", err.last_error.code)
      assert.same({ 1, 1, 1, 0.5 }, t.sleeps) -- never sooner than Retry-After; the last is cut
      assert.equal(4, err.attempts)
      assert.equal(4, count("fault-429"))
      assert.equal(3.5, err.elapsed)
    end)

    helpers.both("caps the backoff at max_interval", function()
      local t = fake_time()
      local _, err = client:wait_for_txid("fault-503",
        { timeout = 6, interval = 0.5, max_interval = 2, sleep = t.sleep, clock = t.clock })
      assert.equal("timeout", err.kind)
      assert.equal(503, err.last_error.status)
      assert.same({ 1, 2, 2, 1 }, t.sleeps)
      assert.equal(5, count("fault-503"))
    end)

    helpers.both("checks its options", function()
      assert.has_error(function() client:wait_for_txid(42) end)
      assert.has_error(function() client:wait_for_txid("x", { timout = 1 }) end)
      assert.has_error(function() client:wait_for_txid("x", { sleep = 1 }) end)
      assert.has_error(function() client:wait_for_txid("x", "fast") end)
      -- the one option check of merchantapi.options, blaming the caller's line
      local ok, msg = pcall(function() client:wait_for_txid("x", { timout = 1 }) end)
      assert.is_false(ok)
      assert.matches("wait_spec%.lua:%d+: unknown option 'timout' to 'wait_for_txid'", msg)
      ok, msg = pcall(function() client:wait_for_txid("x", { sleep = 1 }) end)
      assert.is_false(ok)
      assert.matches("wait_spec%.lua:%d+: bad option 'sleep' to 'wait_for_txid' %(function expected",
        msg)
      for _, opts in ipairs { { timeout = -1 }, { interval = 0 }, { max_interval = -2 },
        { timeout = 0 / 0 } } do
        local p, err = client:wait_for_txid("x", opts)
        assert.is_nil(p)
        assert.equal("usage", err.kind)
      end
      local p, err = client:wait_for_txid("")
      assert.is_nil(p)
      assert.equal("usage", err.kind)
      assert.equal("payout_id is empty", err.title) -- the core's id rule (core.path)
      assert.equal(0, count("x"))
    end)

    helpers.both("reads once with timeout 0", function()
      local _, err = client:wait_for_txid(helpers.PAYOUT_ID, { timeout = 0 })
      assert.equal("timeout", err.kind)
      assert.equal("draft", err.payout.status)
      assert.equal(1, err.attempts)
      assert.equal(1, count(helpers.PAYOUT_ID))
    end)
  end)

  describe("the default sleep and clock", function()
    after_each(function()
      rawset(_G, "ngx", nil)
    end)

    it("is ngx.sleep in an OpenResty phase that can yield, else the C sleep", function()
      assert.equal(merchantapi.sleep, wait.default_sleep())
      local ngx_sleep = function() end
      local phase = "content"
      rawset(_G, "ngx", { sleep = ngx_sleep, get_phase = function() return phase end })
      assert.equal(ngx_sleep, wait.default_sleep())
      phase = "timer"
      assert.equal(ngx_sleep, wait.default_sleep())
      phase = "init_worker"
      assert.equal(merchantapi.sleep, wait.default_sleep())
      rawset(_G, "ngx", { sleep = ngx_sleep }) -- no get_phase: not trusted
      assert.equal(merchantapi.sleep, wait.default_sleep())
      rawset(_G, "ngx", { sleep = ngx_sleep, get_phase = function() error("no phase") end })
      assert.equal(merchantapi.sleep, wait.default_sleep())
    end)

    helpers.both("sleeps for real and measures with a monotonic clock", function()
      local t0 = merchantapi.monotonic()
      merchantapi.sleep(0.05)
      local dt = merchantapi.monotonic() - t0
      assert.is_true(dt >= 0.05 and dt < 0.5, tostring(dt))
      merchantapi.sleep(-1) -- no wait
      merchantapi.sleep(0)
      assert.has_error(function() merchantapi.sleep("1") end)
    end)
  end)
end)

-- merchantapi.loop: every client call inside a task yields to the loop
-- instead of blocking, with the blocking call's results: the values, retries
-- whose waits are loop timers, the deadline, the confirm's outcome and
-- settling, the pagers, wait_for_txid.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local support = require "support.loop"

local count = helpers.count
local client, in_task, assert_same_error = support.client, support.in_task, support.assert_same_error

describe("merchantapi.loop: the calls in a task", function()
  local c
  before_each(function()
    helpers.reset()
    c = client { max_retries = 2 }
  end)
  after_each(function()
    c:close()
  end)

  it("give the blocking calls' values: channel, page, payout, request, confirm", function()
    local loop = assert(merchantapi.loop())
    local t = {
      channel = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end),
      page = loop:spawn(function() return c:list_addresses("acct-22", { page = 2, per_page = 5 }) end),
      payout = loop:spawn(function() return c:get_payout("draft-track-never") end),
      echo = loop:spawn(function()
        return c:request("POST", "/api/public/v1/echo/x", { body = '{"amount": 250.10}' })
      end),
      confirm = loop:spawn(function() return c:confirm_payout(helpers.PAYOUT_ID) end),
    }
    loop:run()
    local ch, _, res = t.channel:result()
    assert.same(c:get_channel(helpers.CHANNEL_ID), ch)
    assert.equal(helpers.fixture("get_channel.200"), res.body)
    local page = t.page:result()
    assert.same(c:list_addresses("acct-22", { page = 2, per_page = 5 }), page)
    assert.equal(5, #page)
    assert.same(c:get_payout("draft-track-never"), (t.payout:result()))
    local echo, _, eres = t.echo:result()
    assert.equal(201, eres.status)
    assert.equal('{"amount": 250.10}', echo.body)
    local payout, err = t.confirm:result()
    assert.is_nil(err)
    assert.equal("processing", payout.status)
    assert.equal("250.10", payout.amount)
    assert.equal(1, count(helpers.PAYOUT_ID))
    -- a second confirm is refused the same way
    local _, again = in_task(function() return c:confirm_payout(helpers.PAYOUT_ID) end)
    local _, blocking = c:confirm_payout(helpers.PAYOUT_ID)
    assert.equal("payout_not_draft", again.code)
    assert.equal("rejected", again.outcome)
    assert_same_error(blocking, again)
    assert.equal(3, count(helpers.PAYOUT_ID))
    loop:close()
  end)

  it("wait on a 429's Retry-After as a loop timer, seen by the hooks", function()
    local seen, timeouts = {}, {}
    local hooked = client { max_retries = 1, on_response = function(info)
      seen[#seen + 1] = info.retry_in or -1
    end }
    local loop = assert(merchantapi.loop())
    local task = loop:spawn(function() return hooked:get_channel("fault-429") end)
    while loop:step(0.05) > 0 do
      if #seen == 1 then
        timeouts[#timeouts + 1] = loop:timeout()
      end
    end
    local v, err = task:result()
    assert.is_nil(v)
    assert.equal(429, err.status)
    assert.equal(2, err.attempts)
    assert.equal(1, err.retry_after)
    assert.same({ 1, -1 }, seen)
    assert.equal(2, count("fault-429"))
    -- between the attempts the loop's timeout held the wait
    assert.is_true(#timeouts > 0 and timeouts[1] > 0.5 and timeouts[1] <= 1)
    hooked:close()
    loop:close()
  end)

  it("retry 503 twice, then return the resource after 3 requests", function()
    local ch = assert(in_task(function() return c:get_channel("fault-flaky-2-503") end))
    assert.equal("fault-flaky-2-503", ch.id)
    assert.equal(3, count("fault-flaky-2-503"))
  end)

  it("end a confirm at once when Retry-After outlasts its deadline", function()
    local v, err = in_task(function()
      return c:confirm_payout("fault-429-after-60", { deadline = 1 })
    end)
    assert.is_nil(v)
    assert.is_true(err.deadline_exceeded)
    assert.equal("rejected", err.outcome)
    assert.equal(1, err.attempts)
    assert.equal(1, count("fault-429-after-60"))
  end)

  it("settle a confirm whose answer was lost: read once, as blocking", function()
    local payout, err, res = in_task(function() return c:confirm_payout("fault-applied-502") end)
    assert.is_nil(err)
    assert.equal("read", res.settled_by)
    assert.equal("processing", payout.status)
    assert.equal(2, count("fault-applied-502"))
    local v, err2 = in_task(function() return c:confirm_payout("fault-flaky-1-502") end)
    assert.is_nil(v)
    assert.equal("unknown", err2.outcome)
    assert.equal("draft", err2.payout.status)
    assert.equal(2, count("fault-flaky-1-502"))
  end)

  it("walk a pager with concurrency: the blocking walk's items and requests", function()
    local blocking = assert(c:addresses("acct-22", { per_page = 5, concurrency = 3 }):all())
    local n = count("acct-22")
    local items = assert(in_task(function()
      return c:addresses("acct-22", { per_page = 5, concurrency = 3 }):all()
    end))
    assert.same(blocking, items)
    assert.equal(22, #items)
    assert.equal(2 * n, count("acct-22"))
    -- a failing page ends the walk with its error, as blocking
    local _, berr = c:addresses("fault-page-2-500", { per_page = 5, concurrency = 3, max_pages = 4 }):all()
    local _, lerr = in_task(function()
      return c:addresses("fault-page-2-500", { per_page = 5, concurrency = 3, max_pages = 4 }):all()
    end)
    assert.equal(500, lerr.status)
    assert_same_error(berr, lerr)
  end)

  it("follow links with paginate", function()
    local items = assert(in_task(function()
      return c:paginate("/api/public/v1/accounts/links-acct-22/addresses",
        { query = { ["page[size]"] = 10 } }):all()
    end))
    assert.equal(22, #items)
  end)

  it("wait_for_txid yields: another task keeps ticking meanwhile", function()
    assert(c:confirm_payout("draft-track-fast"))
    local loop = assert(merchantapi.loop())
    local ticks, ticks_when_done = 0, nil
    local waiter = loop:spawn(function()
      local p, err = c:wait_for_txid("draft-track-fast", { interval = 0.2, timeout = 10 })
      ticks_when_done = ticks
      return p, err
    end)
    loop:spawn(function()
      while not waiter:done() do
        ticks = ticks + 1
        merchantapi.sleep(0.02)
      end
    end)
    loop:run()
    local p = assert(waiter:result())
    assert.equal(64, #p.txid)
    assert.is_true(ticks_when_done > 5) -- the ticker ran while the txid was awaited
    assert.is_true(count("draft-track-fast") >= 3)
    loop:close()
  end)
end)

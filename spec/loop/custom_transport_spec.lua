-- merchantapi.loop: a custom transport's calls in a task: its own waits and
-- the waits between retries yield to the loop, and its failures and a
-- confirm's outcome come back as from a blocking call.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local support = require "support.loop"

local count = helpers.count
local in_task, assert_same_error = support.in_task, support.assert_same_error

describe("merchantapi.loop: a custom transport in a task", function()
  local socket_transport = require "support.socket_transport"

  it("carries the calls; its own waits and the waits between retries yield to the loop", function()
    helpers.reset()
    local sent = 0
    local c = helpers.client { max_retries = 1, transport = function(request)
      sent = sent + 1
      merchantapi.sleep(0.05) -- a transport that waits as a cosocket does: yields in a task
      return socket_transport(request)
    end }
    -- blocking first: what the loop must give back
    local _, berr = c:get_channel("fault-429") -- 429, Retry-After: 1, then 429 again
    local bch = assert(c:get_channel(helpers.CHANNEL_ID))
    assert.equal(3, sent)
    local loop = assert(merchantapi.loop())
    local ticks, ticks_when_done = 0, nil
    local limited = loop:spawn(function()
      local v, err = c:get_channel("fault-429")
      ticks_when_done = ticks
      return v, err
    end)
    local channel = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    loop:spawn(function()
      while not (limited:done() and channel:done()) do
        ticks = ticks + 1
        merchantapi.sleep(0.02)
      end
    end)
    loop:run()
    local v, err = limited:result()
    assert.is_nil(v)
    assert_same_error(berr, err)
    assert.equal(429, err.status)
    assert.equal(2, err.attempts)
    assert.same(bch, (channel:result()))
    assert.equal(6, sent)
    assert.equal(4, count("fault-429")) -- 2 blocking, 2 in the task
    assert.equal(2, count(helpers.CHANNEL_ID))
    assert.is_true(ticks_when_done > 5) -- the ticker ran through the 1 s wait
    loop:close()
    c:close()
  end)

  it("a transport's failure and a confirm's outcome come back as blocking", function()
    helpers.reset()
    local c = helpers.client { max_retries = 2, transport = socket_transport }
    local dead = helpers.client { base_url = "http://127.0.0.1:1", max_retries = 1,
                                  transport = socket_transport }
    local _, bdead = dead:get_channel("x")
    local _, bsettled = c:confirm_payout("fault-flaky-1-502") -- a 502, read as a draft
    helpers.reset()
    local results = { in_task(function()
      local _, e1 = dead:get_channel("x")
      local _, e2 = c:confirm_payout("fault-flaky-1-502")
      return e1, e2
    end) }
    assert_same_error(bdead, results[1])
    assert.equal("transport", results[1].kind)
    assert.equal(2, results[1].attempts)
    assert_same_error(bsettled, results[2])
    assert.equal("unknown", results[2].outcome)
    assert.equal("draft", results[2].payout.status)
    assert.equal(2, count("fault-flaky-1-502")) -- the PUT once, the read once
    c:close()
    dead:close()
  end)
end)

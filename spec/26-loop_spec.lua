-- merchantapi.loop: every client call inside a task yields to the loop
-- instead of blocking, with the blocking call's results: the fault cases
-- of spec/08 run both ways and compared field by field (what reached the
-- sandbox counted), retries whose waits are loop timers, the deadline, the
-- confirm's outcome and settling, the pagers, wait_for_txid, task errors,
-- a loop driven by a real poller (luv) through pollfd()/timeout(), and
-- calls outside a task that still block.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count = helpers.count

-- A client over libcurl (the loop's own transfers), whatever the run's
-- helpers.transport says.
local function client(opts)
  opts = opts or {}
  opts.transport = false
  return helpers.client(opts)
end

-- Runs fn(...) as the one task of a new loop until it is done; its results.
local function in_task(fn, ...)
  local loop = assert(merchantapi.loop())
  local task = loop:spawn(fn, ...)
  loop:run()
  assert.is_true(task:done())
  loop:close()
  return task:result()
end

-- What a user reads of an error, to compare a blocking call's with a loop's.
local FIELDS = { "kind", "status", "code", "title", "detail", "retryable", "curl_code",
  "attempts", "method", "path", "url", "outcome", "deadline_exceeded", "retry_after", "message" }

-- The fields that tell how a connection ended, for a fault that ends it:
-- the loop's connections are shared by the clients on it, so a retry there
-- may go over a connection another call kept alive, which the server then
-- closes with nothing sent back; libcurl would send the request again by
-- itself and is stopped ("libcurl was about to send the request again",
-- curl_code 42), where the blocking client's own fresh connection says
-- "Server returned nothing" (52).  Everything else is the same.
local CONNECTION_FIELDS = { title = true, detail = true, curl_code = true, message = true }
local ENDS_CONNECTION = { ["fault-no-response"] = true }

local function assert_same_error(want, got, what)
  assert.is_table(want)
  assert.is_table(got)
  for _, k in ipairs(FIELDS) do
    if ENDS_CONNECTION[what] and CONNECTION_FIELDS[k] and got.curl_code == 42 then
      assert.equal(52, want.curl_code, what .. " blocking curl_code")
    else
      assert.same(want[k], got[k], (what or "") .. " field " .. k)
    end
  end
end

local OPS = {
  { name = "get_channel", call = function(c, id) return c:get_channel(id) end },
  { name = "list_addresses", call = function(c, id) return c:list_addresses(id) end },
  { name = "confirm_payout", call = function(c, id) return c:confirm_payout(id, { settle = false }) end },
}

local FAULTS = { "fault-redirect", "fault-500", "fault-bad-json", "fault-wrong-type",
  "fault-not-jsonapi", "fault-text-plain", "fault-bad-utf8", "fault-html-502",
  "fault-503", "fault-504", "fault-reset", "fault-no-response", "fault-other-id" }

describe("merchantapi.loop: the fault cases, blocking and in tasks", function()
  for _, op in ipairs(OPS) do
    it(op.name .. ": the same errors and the same requests, all faults at once on one loop", function()
      helpers.reset()
      -- a client per case, both ways: each starts without a kept connection
      local blocking, values, reached = {}, {}, {}
      for _, id in ipairs(FAULTS) do
        local c = client { max_retries = 1 }
        local v, err = op.call(c, id)
        c:close()
        values[id], blocking[id] = v, err
        reached[id] = count(id)
        if err then
          assert.equal(err.attempts, reached[id])
        end
      end
      -- every fault at once, one task each
      local loop = assert(merchantapi.loop())
      local tasks = {}
      local clients = {}
      for _, id in ipairs(FAULTS) do
        clients[id] = client { max_retries = 1 }
        tasks[id] = loop:spawn(op.call, clients[id], id)
      end
      loop:run()
      for _, id in ipairs(FAULTS) do
        local v, err = tasks[id]:result()
        if values[id] then -- an address list has no id to be another's
          assert.same(values[id], v)
        else
          assert.is_nil(v)
          assert_same_error(blocking[id], err, id)
        end
        assert.equal(2 * reached[id], count(id), id)
        clients[id]:close()
      end
      loop:close()
    end)
  end
end)

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

describe("merchantapi.loop: tasks", function()
  it("a task that raises ends alone: nil, err; the loop and other tasks go on", function()
    local c = client()
    local loop = assert(merchantapi.loop())
    local bad = loop:spawn(function() error("boom", 0) end)
    local bad2 = loop:spawn(function()
      assert(c:get_channel(helpers.CHANNEL_ID))
      error({ code = 7 })
    end)
    local good = loop:spawn(function(a, b) return a + b, c:get_channel(helpers.CHANNEL_ID).id end, 2, 3)
    assert.is_false(good:done())
    assert.has_error(function() good:result() end)
    loop:run()
    assert.same({ nil, "boom" }, { bad:result() })
    local v, e = bad2:result()
    assert.is_nil(v)
    assert.same({ code = 7 }, e)
    assert.same({ 5, helpers.CHANNEL_ID }, { good:result() })
    assert.equal(0, loop:step(0))
    loop:close()
    c:close()
  end)

  it("a usage error comes back from a task as from a blocking call", function()
    local c = client()
    local _, err = in_task(function() return c:confirm_payout("") end)
    local _, berr = c:confirm_payout("")
    assert.equal("usage", err.kind)
    assert.equal("not_sent", err.outcome)
    assert_same_error(berr, err)
    c:close()
  end)

  it("calls outside a task block as always, while a loop has tasks", function()
    local c = client()
    local loop = assert(merchantapi.loop())
    local task = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    local ch = assert(c:get_channel(helpers.CHANNEL_ID)) -- no task: returns the channel
    assert.equal(helpers.CHANNEL_ID, ch.id)
    assert.is_false(task:done())
    loop:run()
    assert.equal(helpers.CHANNEL_ID, (task:result()).id)
    loop:close()
    c:close()
  end)

  it("close() during a call waits for its end; new calls see a closed client", function()
    local c = client()
    local loop = assert(merchantapi.loop())
    local task = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    loop:step(0) -- started
    c:close()
    loop:run()
    assert.equal(helpers.CHANNEL_ID, (task:result()).id)
    local _, err = c:get_channel(helpers.CHANNEL_ID)
    assert.equal("usage", err.kind)
    loop:close()
  end)

  it("a call where the task cannot yield blocks, or raises before anything is sent", function()
    helpers.reset()
    local c = client()
    local loop = assert(merchantapi.loop())
    -- a table.sort comparator: a C function's callback, in every Lua
    local sorted = loop:spawn(function()
      local r
      table.sort({ 2, 1 }, function(a, b)
        r = r or { c:confirm_payout(helpers.PAYOUT_ID) }
        return a < b
      end)
      return r[1], r[2]
    end)
    -- pcall: yields on 5.2+ and LuaJIT, not on Lua 5.1
    local caught = loop:spawn(function()
      return pcall(c.confirm_payout, c, helpers.PARTNER_PAY_ID)
    end)
    loop:spawn(function() merchantapi.sleep(0.3) end) -- the loop goes on meanwhile
    loop:run()
    local p, err = sorted:result()
    if rawget(coroutine, "isyieldable") then -- 5.3+, LuaJIT: it blocked
      assert.is_nil(err)
      assert.equal("processing", p.status)
      assert.equal(1, count(helpers.PAYOUT_ID))
    else -- 5.1, 5.2 cannot tell: raised, nothing sent
      assert.is_nil(p)
      assert.matches("attempt to yield across", err)
      assert.equal(0, count(helpers.PAYOUT_ID))
    end
    local ok, v = caught:result()
    if helpers.YIELDS_IN_PCALL then
      assert.is_true(ok)
      assert.equal(helpers.PARTNER_PAY_ID, v.id)
      assert.equal(1, count(helpers.PARTNER_PAY_ID))
    else
      assert.is_false(ok)
      assert.matches("attempt to yield across", v)
      assert.equal(0, count(helpers.PARTNER_PAY_ID))
    end
    loop:close()
    c:close()
  end)

  it("a Lua state closed while calls run on a loop ends cleanly", function()
    -- lua_close finalizes every object, a call's exchange before its loop
    local out, ok = helpers.run_lua([[
      local merchantapi = require "merchantapi"
      local c = assert(merchantapi.new({ base_url = arg[1], api_key = arg[2], max_retries = 0 }))
      local loop = assert(merchantapi.loop())
      loop:spawn(function() return c:get_channel(arg[3]) end)
      loop:spawn(function() return c:addresses("acct-22", { per_page = 5, concurrency = 2 }):all() end)
      loop:step(0)
      local inner = assert(merchantapi.loop()) -- and a client made inside a task, after its loop
      inner:spawn(function()
        local c2 = assert(merchantapi.new({ base_url = arg[1], api_key = arg[2] }))
        return c2:get_channel(arg[3])
      end)
      inner:step(0)
      print("exiting")
    ]], { helpers.base_url(), helpers.API_KEY, helpers.CHANNEL_ID })
    assert.is_true(ok, out)
    assert.matches("exiting", out)
  end)

  it("steps with bad arguments raise; timeout() is nil without tasks", function()
    local loop = assert(merchantapi.loop())
    assert.is_nil(loop:timeout())
    assert.equal(0, loop:step(0))
    assert.has_error(function() loop:step(-1) end)
    assert.has_error(function() loop:spawn(42) end)
    assert.is_number(loop:pollfd())
    loop:close()
    loop:close()
  end)
end)

describe("merchantapi.loop: driven by another loop (luv) through pollfd() and timeout()", function()
  local ok, uv = pcall(require, "luv")
  if not ok then
    pending("luv is not installed for this Lua")
    return
  end
  it("runs calls, retries and timers from a poll handle and a timer", function()
    helpers.reset()
    local c = client { max_retries = 1 }
    local loop = assert(merchantapi.loop())
    local t1 = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    local t2 = loop:spawn(function() return c:get_channel("fault-flaky-1-503") end)
    local t3 = loop:spawn(function()
      merchantapi.sleep(0.1)
      return c:list_addresses("acct-22", { per_page = 3 })
    end)
    local poll = uv.new_poll(loop:pollfd())
    local timer = uv.new_timer()
    local readable, steps = 0, 0
    local function step()
      steps = steps + 1
      local left = loop:step(0)
      timer:stop()
      if left == 0 then
        poll:stop()
        return
      end
      local t = loop:timeout()
      if t then
        timer:start(math.floor(t * 1000 + 0.999), 0, step)
      end
    end
    poll:start("r", function()
      readable = readable + 1
      step()
    end)
    step()
    uv.run()
    poll:close()
    timer:close()
    uv.run()
    assert.is_true(readable >= 1)
    assert.equal(helpers.CHANNEL_ID, (t1:result()).id)
    assert.equal("fault-flaky-1-503", (t2:result()).id)
    assert.equal(3, #t3:result())
    assert.equal(2, count("fault-flaky-1-503"))
    loop:close()
    c:close()
  end)
end)

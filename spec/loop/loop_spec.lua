-- merchantapi.loop: every client call inside a task yields to the loop
-- instead of blocking, with the blocking call's results: the fault cases
-- of spec/faults/faults_spec.lua run both ways and compared field by field (what reached the
-- sandbox counted), retries whose waits are loop timers, the deadline, the
-- confirm's outcome and settling, the pagers, wait_for_txid, task errors,
-- a loop driven by a real poller (luv) through pollfd()/timeout(), and
-- calls outside a task that still block.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count = helpers.count
local unpack = rawget(table, "unpack") or rawget(_G, "unpack")

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

describe("merchantapi.loop: on_done, for a host with a scheduler of its own", function()
  it("is called once, from the step the task ended in, as pcall reports", function()
    helpers.reset()
    local c = client()
    local loop = assert(merchantapi.loop())
    local got = {}
    local function record(name)
      return function(...)
        got[#got + 1] = { name = name, n = select("#", ...), ... }
      end
    end
    local ok_task = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    assert.equal(ok_task, ok_task:on_done(record("channel")))
    loop:spawn(function() return c:get_channel("fault-404") end):on_done(record("missing"))
    loop:spawn(function() error({ code = 7 }) end):on_done(record("raised"))
    assert.has_error(function() ok_task:on_done(record("again")) end,
      "merchantapi.loop: the task has an on_done callback already")
    assert.has_error(function() ok_task:on_done(42) end)
    assert.same({}, got) -- never before a step
    loop:run()
    assert.equal(3, #got)
    local by = {}
    for _, g in ipairs(got) do
      assert.is_nil(by[g.name]) -- once
      by[g.name] = g
    end
    assert.is_true(by.channel[1])
    assert.equal(helpers.CHANNEL_ID, by.channel[2].id)
    assert.equal(4, by.channel.n) -- true, value, nil, res: what the call returned
    assert.is_true(by.missing[1]) -- the call failed; the task did not
    assert.is_nil(by.missing[2])
    assert.equal(404, by.missing[3].status)
    assert.same({ name = "raised", n = 2, false, { code = 7 } }, by.raised)
    -- a callback asked of a task already done: at the next step, not at once
    local plain = loop:spawn(function() return 1 end)
    loop:run()
    assert.is_true(plain:done())
    local late = 0
    plain:on_done(function() late = late + 1 end)
    assert.equal(0, late)
    assert.equal(0, loop:step(0))
    assert.equal(1, late)
    assert.equal(0, loop:step(0))
    assert.equal(1, late)
    loop:close()
    c:close()
  end)

  it("an error a callback raises comes out of the step; the others run at the next", function()
    local loop = assert(merchantapi.loop())
    local called = {}
    for i = 1, 3 do
      loop:spawn(function() return i end):on_done(function(_, v)
        called[#called + 1] = v
        if v == 1 then
          error("host bug", 0)
        end
      end)
    end
    local ok, err = pcall(loop.step, loop, 0)
    assert.is_false(ok)
    assert.equal("host bug", err)
    assert.same({ 1 }, called)
    assert.equal(0, loop:step(0))
    assert.same({ 1, 2, 3 }, called)
    loop:close()
  end)

  it("close() ends the tasks not done and calls their callbacks", function()
    local c = client()
    local loop = assert(merchantapi.loop())
    local seen
    local task = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    task:on_done(function(...) seen = { n = select("#", ...), ... } end)
    local quiet = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    loop:step(0) -- started
    loop:close()
    local late -- asked after the close: no step will come, so at once
    quiet:on_done(function(ok) late = ok end)
    assert.is_false(late)
    assert.is_true(task:done())
    assert.same({ n = 2, false, "merchantapi.loop: the loop was closed before the task ended" }, seen)
    local v, err = task:result()
    assert.is_nil(v)
    assert.matches("closed before the task ended", err)
    assert.has_error(function() loop:spawn(function() end) end, "merchantapi.loop: spawn on a closed loop")
    c:close()
  end)

  it("parks a coroutine of a host's scheduler until its call is done (the glue of the guide)", function()
    helpers.reset()
    local c = client { max_retries = 1 }
    local loop = assert(merchantapi.loop())
    -- a scheduler of the host's: coroutines it resumes, parked ones it wakes
    local runnable, parked = {}, {}
    local function wait()
      parked[coroutine.running()] = true
      return coroutine.yield("host: wait")
    end
    local function wakeup(co)
      parked[co] = nil
      runnable[#runnable + 1] = co
    end
    -- the glue: a call made from a host coroutine, as a task of the loop
    local function call(fn, ...)
      local co, r = coroutine.running(), nil
      loop:spawn(fn, ...):on_done(function(...)
        r = { n = select("#", ...), ... }
        wakeup(co)
      end)
      wait()
      return unpack(r, 1, r.n)
    end
    local results, host_yields = {}, 0
    for i, id in ipairs { helpers.CHANNEL_ID, "fault-flaky-1-503" } do
      runnable[#runnable + 1] = coroutine.create(function()
        local ok, ch = call(function() return c:get_channel(id) end)
        host_yields = host_yields + 1
        coroutine.yield("host: a turn") -- the host's own yield, outside the task: its own
        results[i] = ok and ch.id
      end)
    end
    local rounds = 0
    while #runnable > 0 or next(parked) do
      rounds = rounds + 1
      local now = runnable
      runnable = {}
      for _, co in ipairs(now) do
        local _, what = assert(coroutine.resume(co))
        if what == "host: a turn" then
          runnable[#runnable + 1] = co
        end
      end
      loop:step(0.05) -- the host's timer: polls the loop
    end
    assert.same({ helpers.CHANNEL_ID, "fault-flaky-1-503" }, results)
    assert.equal(2, host_yields)
    assert.equal(2, count("fault-flaky-1-503"))
    loop:close()
    c:close()
  end)
end)

describe("merchantapi.loop: a yield that is not the loop's", function()
  it("ends the task with an error naming what was yielded; the loop goes on", function()
    local c = client()
    local loop = assert(merchantapi.loop())
    local co
    local foreign = loop:spawn(function()
      co = coroutine.running()
      coroutine.yield("SLEEP", 10) -- a host's sleep inside a task
      return "never here"
    end)
    local seen
    foreign:on_done(function(...) seen = { ... } end)
    local many = loop:spawn(function() coroutine.yield(nil, 1, "a", true, {}) end)
    local turn = loop:spawn(function()
      coroutine.yield() -- without values: a turn, as ever
      return "after a turn"
    end)
    local other = loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    loop:run()
    local v, err = foreign:result()
    assert.is_nil(v)
    assert.is_string(err)
    assert.matches('a task yielded outside merchantapi %("SLEEP", 10%)', err)
    assert.matches("merchantapi.sleep", err)
    assert.same({ false, err }, seen)
    assert.matches("outside merchantapi %(nil, 1, \"a\", true, %.%.%.%)", select(2, many:result()))
    assert.equal("after a turn", turn:result())
    assert.equal(helpers.CHANNEL_ID, (other:result()).id)
    if rawget(coroutine, "close") then -- 5.4+: closed, so the host cannot resume it
      assert.equal("dead", coroutine.status(co))
    end
    loop:close()
    c:close()
  end)

  it("a step from inside one of the loop's own tasks raises", function()
    local loop = assert(merchantapi.loop())
    local task = loop:spawn(function() return loop:step(0) end)
    loop:run()
    local v, err = task:result()
    assert.is_nil(v)
    assert.matches("step from inside one of the loop's own tasks", err)
    loop:close()
  end)
end)

describe("merchantapi.loop: a budget per step", function()
  -- Steps with budget until no task is left; per step, the tasks that
  -- ended in it, and whether work was left for the next (timeout 0).
  local function run_with(loop, tasks, timeout, budget)
    local per_step, left_over = {}, 0
    while true do
      local before = 0
      for _, t in ipairs(tasks) do
        before = before + (t:done() and 1 or 0)
      end
      local running = loop:step(timeout, budget)
      local after = 0
      for _, t in ipairs(tasks) do
        after = after + (t:done() and 1 or 0)
      end
      per_step[#per_step + 1] = after - before
      if running == 0 then
        break
      end
      if loop:timeout() == 0 then
        left_over = left_over + 1
      end
      assert(#per_step < 10000, "the loop does not move on")
    end
    return per_step, left_over
  end

  it("calls = 1: one call handed back per step, the others at the next steps", function()
    helpers.reset()
    local c = client()
    local loop = assert(merchantapi.loop())
    local ids, tasks = {}, {}
    for i = 1, 5 do
      ids[i] = "echo-budget-" .. i
      tasks[i] = loop:spawn(function()
        -- answered together, 300 ms after they all arrived
        return c:get_channel(ids[i], { headers = { ["X-Sandbox-Delay-Ms"] = "300" } })
      end)
    end
    local per_step, left_over = run_with(loop, tasks, 1, { calls = 1 })
    for _, n in ipairs(per_step) do
      assert.is_true(n <= 1)
    end
    assert.is_true(#per_step >= 5)
    assert.is_true(left_over >= 1) -- answers read or calls ended, waiting for a step
    for i = 1, 5 do
      assert.equal(ids[i], (tasks[i]:result()).id)
      assert.equal(1, count(ids[i])) -- nothing lost, nothing sent twice
    end
    loop:close()
    c:close()
  end)

  it("time: a step returns early with work left, and the next carries on", function()
    helpers.reset()
    local c = client()
    local loop = assert(merchantapi.loop())
    local clock = merchantapi.monotonic
    local function busy(s) -- a task's own work: longer than the budget
      local t = clock()
      while clock() - t < s do end -- luacheck: ignore 563
    end
    local tasks, started = {}, 0
    for i = 1, 6 do
      tasks[i] = loop:spawn(function()
        started = started + 1
        busy(0.02)
        local ch = c:get_channel(helpers.CHANNEL_ID)
        busy(0.02)
        return ch and ch.id, i
      end)
    end
    -- the first step starts one task: the 20 ms it works spend the 5 ms budget
    assert.equal(6, loop:step(0, { time = 0.005 }))
    assert.equal(1, started)
    assert.equal(0, loop:timeout()) -- work left: a step is due now
    assert.equal(6, loop:step(0, { time = 0.005 }))
    assert.equal(2, started)
    local per_step = run_with(loop, tasks, 0.05, { time = 0.005 })
    for _, n in ipairs(per_step) do
      assert.is_true(n <= 1) -- each task's end is 20 ms of work
    end
    for i = 1, 6 do
      assert.same({ helpers.CHANNEL_ID, i }, { tasks[i]:result() })
    end
    assert.equal(6, count(helpers.CHANNEL_ID))
    -- without a budget, one step starts every task
    started = 0
    for _ = 1, 3 do
      loop:spawn(function() started = started + 1; busy(0.01) end)
    end
    loop:step(0)
    assert.equal(3, started)
    loop:close()
    c:close()
  end)

  it("a pager's pages fetched ahead are handed out across steps once the budget is spent", function()
    helpers.reset()
    local c = client()
    local loop = assert(merchantapi.loop())
    local clock = merchantapi.monotonic
    local pages_at_step, step_no = {}, 0
    local task = loop:spawn(function()
      local n, pager = 0, c:addresses("acct-22", { per_page = 5, concurrency = 5 })
      while true do
        local item = pager:next()
        if not item then break end
        n = n + 1
        if n % 5 == 1 then -- a page's first item: 10 ms of work on the page
          pages_at_step[#pages_at_step + 1] = step_no
          local t = clock()
          while clock() - t < 0.01 do end -- luacheck: ignore 563
        end
      end
      return n
    end)
    while true do
      step_no = step_no + 1
      if loop:step(0.05, { time = 0.005 }) == 0 then break end
    end
    assert.equal(22, task:result())
    assert.equal(5, #pages_at_step)
    if helpers.YIELDS_IN_PCALL then -- not Lua 5.1: there the pager cannot yield a turn
      for i = 2, 5 do -- one page of work (10 ms) per step: each page in a step of its own
        assert.is_true(pages_at_step[i] > pages_at_step[i - 1])
      end
    end
    loop:close()
    c:close()
  end)

  it("a batch's pages are turned into tables one page per piece: a spent budget stops after one", function()
    helpers.reset()
    local c = client()
    local loop = assert(merchantapi.loop())
    -- the page batch's methods, counted: each page turned into tables
    local methods = debug.getregistry()["merchantapi.page_batch"].__index
    local take, result = methods.take, methods.result
    local converted = 0
    if take then
      methods.take = function(b)
        local list = take(b)
        converted = converted + (list and 1 or 0)
        return list
      end
    end
    methods.result = function(b)
      local lists, err = result(b)
      converted = converted + #lists
      return lists, err
    end
    local ok, err = pcall(function()
      -- page 1 alone, then pages 2-6 and 7-11 in two batches of 5
      local task = loop:spawn(function()
        return #c:addresses("acct-22", { per_page = 2, concurrency = 5 }):all()
      end)
      local per_step = {}
      repeat
        local before = converted
        local running = loop:step(0.05, { time = 1e-6 })
        per_step[#per_step + 1] = converted - before
      until running == 0 or #per_step > 5000
      assert.equal(22, task:result())
      assert.equal(10, converted)
      for i, n in ipairs(per_step) do
        assert.is_true(n <= 1, "step " .. i .. " turned " .. n .. " pages into tables")
      end
    end)
    methods.take, methods.result = take, result
    loop:close()
    c:close()
    assert(ok, err)
  end)

  -- Steps the walk of acct-22 (2 per page, concurrency 2: 11 requests) with
  -- budget until it is done; the requests each step sent, and its results.
  local function requests_per_step(budget)
    local sent, per_step = 0, {}
    local c = client { on_request = function() sent = sent + 1 end }
    local loop = assert(merchantapi.loop())
    local task = loop:spawn(function()
      return #c:addresses("acct-22", { per_page = 2, concurrency = 2 }):all()
    end)
    repeat
      local before = sent
      local running = loop:step(0.05, budget)
      per_step[#per_step + 1] = sent - before
    until running == 0 or #per_step > 5000
    local n = task:result()
    loop:close()
    c:close()
    return per_step, n, sent
  end

  it("wait = true: a page that ends starts the next in the same step", function()
    helpers.reset()
    local per_step, n, sent = requests_per_step({ time = 5, wait = true })
    assert.equal(22, n)
    assert.equal(11, sent)
    -- more requests in one step than pages in flight at once: the next
    -- page of one that ended was sent in the step (all of them, here)
    assert.is_true(math.max(unpack(per_step)) > 2)
    -- without wait, a page started in a step is sent at the next one
    per_step, n, sent = requests_per_step({ time = 5 })
    assert.equal(22, n)
    assert.equal(11, sent)
    assert.is_true(math.max(unpack(per_step)) <= 2)
  end)

  it("wait = true with nothing ready: the step waits out its budget and no longer", function()
    helpers.reset()
    local c = client()
    local loop = assert(merchantapi.loop())
    local clock = merchantapi.monotonic
    local task = loop:spawn(function()
      return c:get_channel("echo-wait-budget", { headers = { ["X-Sandbox-Delay-Ms"] = "3000" } })
    end)
    local t0 = clock()
    local running, spent = loop:step(5, { time = 0.1, wait = true })
    local wall = clock() - t0
    assert.equal(1, running)
    -- what the loop counted: the whole budget (waits count with wait), the
    -- last wait ending within it; the wall clock only far from 3 s and 5 s
    assert.is_number(spent)
    assert.is_true(spent >= 0.099, "spent " .. tostring(spent))
    assert.is_true(spent <= 0.1 + 0.25, "spent " .. tostring(spent))
    assert.is_true(wall < 1.5, "wall " .. wall)
    -- without wait, the wait is not counted: a step of timeout 0 spends little
    local _, spent0 = loop:step(0, { time = 0.1 })
    assert.is_true(spent0 < 0.1)
    loop:close()
    assert.is_nil(task:result())
    c:close()
  end)

  it("a bad budget raises", function()
    local loop = assert(merchantapi.loop())
    assert.has_error(function() loop:step(0, 5) end)
    assert.has_error(function() loop:step(0, { time = 0 }) end)
    assert.has_error(function() loop:step(0, { calls = 0.5 }) end)
    assert.has_error(function() loop:step(0, { calls = 0 }) end)
    assert.has_error(function() loop:step(0, { calls = 1, wait = true }) end)
    assert.has_error(function() loop:step(0, { time = 1, wait = 1 }) end)
    assert.equal(0, loop:step(0, {}))
    loop:close()
  end)
end)

-- merchantapi.loop in a host's own loop or scheduler: driven by a real poller
-- (luv) through pollfd()/timeout(), and on_done, the callback a host's
-- scheduler resumes its coroutines from.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local support = require "support.loop"

local count = helpers.count
local unpack = rawget(table, "unpack") or rawget(_G, "unpack")
local client = support.client

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

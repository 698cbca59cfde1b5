-- merchantapi.loop: its tasks -- a task that raises, a usage error, calls
-- outside a task that still block, close() during a call, a call where the
-- task cannot yield, a Lua state closed under running calls, bad steps, and
-- a yield that is not the loop's.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local support = require "support.loop"

local count = helpers.count
local client, in_task, assert_same_error = support.client, support.in_task, support.assert_same_error

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

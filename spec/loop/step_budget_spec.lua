-- merchantapi.loop: what one step of a budget holds -- a batch's pages kept
-- in the core until the pager hands each out (Lua's heap, and so the
-- collector's work in a step, holds one page, not a batch), a piece that
-- does not fit ends the step's work, what a task starts at the end of a
-- step that may wait goes out before it returns, and the links, meta and
-- relationships of a page's items read after a collection (the page's body
-- kept outside Lua's heap).
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local clock = merchantapi.monotonic
local count = helpers.count

local function client(opts)
  opts = opts or {}
  opts.transport = false
  return helpers.client(opts)
end

-- Wall-clock work of s seconds (a task's own work on a page).
local function busy(s)
  local t = clock()
  while clock() - t < s do end -- luacheck: ignore 563
end

-- The page batch's methods, with take counted (each page turned into tables
-- by it); fn(counter) runs with them; restored after.
local function counting_takes(fn)
  local methods = debug.getregistry()["merchantapi.page_batch"].__index
  local take, result = methods.take, methods.result
  local n = { take = 0, result = 0 }
  methods.take = function(b)
    local list = take(b)
    n.take = n.take + (list and 1 or 0)
    return list
  end
  methods.result = function(b)
    local lists, err = result(b)
    n.result = n.result + #lists
    return lists, err
  end
  local ok, err = pcall(fn, n)
  methods.take, methods.result = take, result
  assert(ok, err)
end

describe("merchantapi.loop: a step's budget", function()
  before_each(function()
    helpers.reset()
  end)

  it("in a task, a batch's pages become tables one at a time, as the pager hands them out", function()
    if not helpers.YIELDS_IN_PCALL then
      pending("Lua 5.1: a task gives no turn between two pages; a batch's pages become "
        .. "tables as they come")
      return
    end
    counting_takes(function(n)
      local c = client()
      local loop = assert(merchantapi.loop())
      local seen = {} -- per page handed out: the pages turned into tables by then
      local task = loop:spawn(function()
        -- page 1 alone, then pages 2-6 and 7-11 in two batches of 5
        for list in c:addresses("acct-22", { per_page = 2, concurrency = 5 }):pages() do
          seen[#seen + 1] = n.take + n.result
          assert.is_true(#list >= 1)
        end
        return #seen
      end)
      loop:run()
      assert.equal(11, task:result())
      -- page 1 came alone (a list call: no batch); page k of a batch (k = 2..11)
      -- was the only one of its batch in tables when it was handed out
      for k = 2, 11 do
        assert.equal(k - 1, seen[k], "page " .. k .. ": pages in tables")
      end
      assert.equal(0, n.result)
      loop:close()
      c:close()
    end)
  end)

  it("a piece that does not fit ends the step: the task is not resumed again in it", function()
    if not helpers.YIELDS_IN_PCALL then
      pending("Lua 5.1: the pager cannot yield a turn between two pages")
      return
    end
    local c = client()
    local loop = assert(merchantapi.loop())
    local step_no, pages_at_step = 0, {}
    local task = loop:spawn(function()
      -- pages 2-11 fetched ahead in two batches; 3 ms of work on each page
      for _ in c:addresses("acct-22", { per_page = 2, concurrency = 5 }):pages() do
        pages_at_step[#pages_at_step + 1] = step_no
        busy(0.003)
      end
      return #pages_at_step
    end)
    repeat
      step_no = step_no + 1
    until loop:step(0.05, { time = 0.005 }) == 0 or step_no > 5000
    assert.equal(11, task:result())
    -- a page (3 ms) after one in the same step would end after the 5 ms:
    -- the first page of a step is its last
    local per_step = {}
    for _, s in ipairs(pages_at_step) do
      per_step[s] = (per_step[s] or 0) + 1
    end
    for s, k in pairs(per_step) do
      assert.is_true(k <= 1, "step " .. s .. " handed out " .. k .. " pages")
    end
    loop:close()
    c:close()
  end)

  it("wait = true: a call a task starts at the end of a step is sent before the step returns", function()
    if not rawget(coroutine, "isyieldable") then
      pending("Lua 5.1, 5.2: a call's start is one plain yield first (loop.before_start), "
        .. "so a call after the budget is spent starts at the next step")
      return
    end
    local c = client()
    local loop = assert(merchantapi.loop())
    -- a connection of the loop's, kept alive: the request needs no connect
    -- (a connect is socket work, read within a step's budget)
    loop:spawn(function() return c:get_channel(helpers.CHANNEL_ID) end)
    loop:run()
    -- a task spends a step's budget (20 ms of work), then starts a call
    -- answered 30 ms after it arrives; the host sleeps 300 ms, then steps
    -- again: whether that step, which reads for 5 ms, ends the call
    local function done_after_second_step(id, budget)
      local task = loop:spawn(function()
        busy(0.02)
        return c:get_channel(id, { headers = { ["X-Sandbox-Delay-Ms"] = "30" } })
      end)
      loop:step(0, budget)
      merchantapi.sleep(0.3)
      loop:step(0, budget)
      local done = task:done()
      loop:run()
      assert.equal(id, (task:result()).id)
      assert.equal(1, count(id))
      return done
    end
    -- with wait: sent before the first step returned, answered meanwhile
    assert.is_true(done_after_second_step("echo-sent-at-end", { time = 0.005, wait = true }))
    -- without wait: sent by the second step, which does not wait for it
    assert.is_false(done_after_second_step("echo-sent-next", { time = 0.005 }))
    loop:close()
    c:close()
  end)

  for _, way in ipairs({ "blocking", "loop" }) do
    it("a concurrent walk's items keep their links, meta and relationships after a collection ["
      .. way .. "]", function()
      local c = client()
      local function walk()
        local kept, n = {}, 0
        local pager = c:addresses("acct-25000", { per_page = 100, concurrency = 4, max_pages = 5 })
        while true do -- pager:next(), not a generic for: Lua 5.1 yields from no iterator
          local item = pager:next()
          if not item then
            break
          end
          n = n + 1
          if n % 100 == 0 then -- a page's last item
            kept[#kept + 1] = item
          end
        end
        return kept
      end
      local kept = way == "loop" and helpers.in_loop(walk) or walk()
      collectgarbage("collect")
      collectgarbage("collect")
      assert.equal(5, #kept)
      for _, item in ipairs(kept) do
        local account = merchantapi.relationship(item, "account")
        assert.is_table(account)
        assert.is_false(account.meta.included)
        assert.is_nil(account.data)
        local network = merchantapi.relationship(item, "network")
        assert.equal(item.network, network.data)
        assert.equal("network", network.linkage.type)
      end
      c:close()
    end)
  end
end)

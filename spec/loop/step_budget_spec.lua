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

  it("a page of 1,000 is turned into tables and checked in pieces: a spent budget stops a step "
    .. "between two, and the page is handed out whole", function()
    if not helpers.YIELDS_IN_PCALL then
      pending("Lua 5.1: a task gives no turn between two pieces of a page")
      return
    end
    -- the batch's take and the walk's checks, passed through (their
    -- arguments too), each call a piece: per piece, the step it ran in and,
    -- for a take, what it added to Lua's heap (the collector stopped while
    -- the walk runs, so that nothing is freed in a piece)
    local registry = debug.getregistry()
    local batch = registry["merchantapi.page_batch"].__index
    local walk = registry["merchantapi.page_walk"].__index
    local take, page = batch.take, walk.page
    local step_no, pieces, takes = 0, {}, {}
    batch.take = function(...)
      local before = collectgarbage("count")
      local list = take(...)
      takes[#takes + 1] = { kb = collectgarbage("count") - before, done = list ~= false }
      pieces[#pieces + 1] = step_no
      return list
    end
    walk.page = function(...)
      pieces[#pieces + 1] = step_no
      return page(...)
    end
    local ok, err = pcall(function()
      local c = client()
      local loop = assert(merchantapi.loop())
      local sizes, ids, lists = {}, {}, {}
      local task = loop:spawn(function()
        -- page 1 alone, then pages 2 and 3 in one batch
        local pager = c:addresses("acct-25000", { per_page = 1000, concurrency = 2, max_pages = 3 })
        for list in pager:pages() do
          sizes[#sizes + 1] = #list
          ids[#ids + 1] = list[1].id .. " " .. list[#list].id
          lists[#lists + 1] = list
        end
        return pager.received
      end)
      collectgarbage("stop")
      repeat
        step_no = step_no + 1
      until loop:step(0.05, { time = 1e-6 }) == 0 or step_no > 5000
      collectgarbage("restart")
      assert.equal(3000, task:result())
      assert.same({ 1000, 1000, 1000 }, sizes)
      for k = 1, 3 do
        assert.equal(helpers.acct25000_id(1000 * k - 999) .. " " .. helpers.acct25000_id(1000 * k),
          ids[k])
      end
      -- a budget spent at once: each step ran one piece, never two
      local per_step = {}
      for _, s in ipairs(pieces) do
        per_step[s] = (per_step[s] or 0) + 1
        assert.is_true(per_step[s] <= 1, "step " .. s .. " ran " .. per_step[s] .. " pieces")
      end
      -- pages 2 and 3 each took several pieces, none of which made half of its
      -- page's tables (256 of 1,000 items: a quarter of them, and the first
      -- piece the page's own tables too: a third at most on Lua 5.3-5.5, LuaJIT)
      local pages, page_kb, largest = 0, 0, 0
      for _, t in ipairs(takes) do
        page_kb = page_kb + t.kb
        largest = math.max(largest, t.kb)
        if t.done then
          pages = pages + 1
          assert.is_true(largest < page_kb / 2, string.format(
            "page %d: a piece made %.0f KB of its %.0f KB", pages + 1, largest, page_kb))
          page_kb, largest = 0, 0
        end
      end
      assert.equal(2, pages)
      assert.is_true(#takes >= 8, #takes .. " takes")
      -- the pages made in pieces are the pages made at once: the blocking walk's
      local k = 0
      for list in c:addresses("acct-25000", { per_page = 1000, concurrency = 2, max_pages = 3 }):pages() do
        k = k + 1
        assert.same(list.meta, lists[k].meta)
        for i, item in ipairs(list) do
          local got = lists[k][i]
          for _, f in ipairs({ "id", "type", "label", "value", "createdAt" }) do
            assert.equal(item[f], got[f])
          end
          assert.same(item.network, got.network)
          assert.equal(got.network, merchantapi.relationship(got, "network").data)
          assert.is_false(merchantapi.relationship(got, "account").meta.included)
        end
      end
      assert.equal(3, k)
      loop:close()
      c:close()
    end)
    collectgarbage("restart")
    batch.take, walk.page = take, page
    assert(ok, err)
  end)

  it("a page handed out item by item is not held by the pager while the next one is made", function()
    if not helpers.YIELDS_IN_PCALL then
      pending("Lua 5.1: a batch's pages become tables as they come")
      return
    end
    -- at the first piece of each page of the batch: whether the first item
    -- of the page before it outlives a full collection (the caller holds
    -- only the last item it was given)
    local batch = debug.getregistry()["merchantapi.page_batch"].__index
    local take = batch.take
    local firsts = setmetatable({}, { __mode = "v" })
    local held, starting = {}, true
    batch.take = function(...)
      if starting then
        collectgarbage("collect")
        held[#held + 1] = firsts[#firsts] ~= nil
      end
      local list = take(...)
      starting = list ~= false
      return list
    end
    local ok, err = pcall(function()
      local c = client()
      local n = helpers.in_loop(function()
        local k = 0
        for item in c:addresses("acct-25000", { per_page = 100, concurrency = 4, max_pages = 5 }):each() do
          k = k + 1
          if k % 100 == 1 then
            firsts[#firsts + 1] = item
          end
        end
        return k
      end)
      assert.equal(500, n)
      assert.same({ false, false, false, false }, held) -- pages 2-5, each after the one before
      c:close()
    end)
    batch.take = take
    assert(ok, err)
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

  it("wait = true: a budget that ends between two milliseconds is waited out whole", function()
    local c = client()
    local loop = assert(merchantapi.loop())
    local task = loop:spawn(function()
      return c:get_channel("echo-wait-fraction", { headers = { ["X-Sandbox-Delay-Ms"] = "3000" } })
    end)
    loop:step(0) -- the call sent: the steps below have nothing ready
    -- 1.9 ms each: a wait cut to whole milliseconds would end the step
    -- after 1 ms, leaving nearly half of its budget unused
    for _ = 1, 5 do
      local t0 = clock()
      local running = loop:step(0, { time = 0.0019, wait = true })
      local wall = clock() - t0
      assert.equal(1, running)
      assert.is_true(wall >= 0.0018, "the step returned after " .. wall .. " s")
    end
    loop:close()
    assert.is_nil(task:result())
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

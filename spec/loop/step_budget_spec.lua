-- merchantapi.loop: a budget per step (calls, time, wait) -- what a step
-- hands back and sends, when it returns with work left and what it waits
-- out, bad budgets -- and what one step of a budget holds: a batch's pages kept
-- in the core until the pager hands each out (Lua's heap, and so the
-- collector's work in a step, holds one page, not a batch), a piece that
-- does not fit ends the step's work, what a task starts at the end of a
-- step that may wait goes out before it returns, and the links, meta and
-- relationships of a page's items read after a collection (the page's body
-- kept outside Lua's heap).
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local support = require "support.loop"

local clock = merchantapi.monotonic
local count = helpers.count
local unpack = rawget(table, "unpack") or rawget(_G, "unpack")
local client = support.client

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
    local pages_at_step, step_no = {}, 0
    local task = loop:spawn(function()
      local n, pager = 0, c:addresses("acct-22", { per_page = 5, concurrency = 5 })
      while true do
        local item = pager:next()
        if not item then break end
        n = n + 1
        if n % 5 == 1 then -- a page's first item: 10 ms of work on the page
          pages_at_step[#pages_at_step + 1] = step_no
          busy(0.01)
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
    -- each page turned into tables, by take or by result
    local ok, err = pcall(counting_takes, function(counted)
      local function converted() return counted.take + counted.result end
      -- page 1 alone, then pages 2-6 and 7-11 in two batches of 5
      local task = loop:spawn(function()
        return #c:addresses("acct-22", { per_page = 2, concurrency = 5 }):all()
      end)
      local per_step = {}
      repeat
        local before = converted()
        local running = loop:step(0.05, { time = 1e-6 })
        per_step[#per_step + 1] = converted() - before
      until running == 0 or #per_step > 5000
      assert.equal(22, task:result())
      assert.equal(10, converted())
      for i, n in ipairs(per_step) do
        assert.is_true(n <= 1, "step " .. i .. " turned " .. n .. " pages into tables")
      end
    end)
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

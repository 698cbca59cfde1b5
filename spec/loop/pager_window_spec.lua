-- merchantapi.loop: a task's pager keeps pages in flight while it hands
-- them out (src/pages.c, the page batch's window that slides): as the pager
-- asks for page k, the pages up to k + concurrency - 1 start -- in the step
-- that asked, not once a batch of `concurrency` pages has been handed out
-- -- and never one past them; a step ends with them in flight (sent before
-- it returns); walked to its end the same requests as a blocking walk,
-- each once; a walk stopped early has sent at most concurrency - 1 pages
-- past the last page handed out; the task's other calls and sleeps between
-- two pages leave the pages in flight alone.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

-- The page number of a list request's URL, else nil.
local function page_of(url)
  return url:find("/addresses", 1, true) and tonumber(url:match("[?&]page=(%d+)"))
end

-- A client recording the page of every list request as it goes out
-- (requested) and as its answer is read (ended, optional).
local function recording_client(requested, ended)
  return helpers.client({
    transport = false,
    on_request = function(info)
      requested[#requested + 1] = page_of(info.url)
    end,
    on_response = ended and function(info)
      ended[#ended + 1] = page_of(info.url)
    end or nil,
  })
end

-- Wall-clock work of s seconds (a task's own work on a page).
local function busy(s)
  local t = merchantapi.monotonic()
  while merchantapi.monotonic() - t < s do end -- luacheck: ignore 563
end

local function highest(list)
  local m = 0
  for _, v in ipairs(list) do
    m = v > m and v or m
  end
  return m
end

-- Whether list holds each of 1..n exactly once, and nothing else.
local function each_once(list, n)
  local seen = {}
  for _, v in ipairs(list) do
    if seen[v] or v < 1 or v > n then
      return false
    end
    seen[v] = true
  end
  return #list == n
end

local function streams()
  if not (helpers.YIELDS_IN_PCALL and helpers.YIELDS_IN_ITERATOR) then
    pending("Lua 5.1: a task's pager fetches a batch at a time (no turn between pages)")
    return false
  end
  return true
end

describe("merchantapi.loop: a task's pager, its window", function()
  before_each(function()
    helpers.reset()
  end)

  it("starts page k + concurrency - 1 in the step that asks for page k, never one further", function()
    if not streams() then
      return
    end
    local requested = {}
    local c = recording_client(requested)
    local loop = assert(merchantapi.loop())
    local during, after = {}, {} -- page k: the highest page requested while / after it is held
    local task = loop:spawn(function()
      -- acct-22 at 2 a page: 11 pages; page 1 alone, then 2..11 three at most in flight
      local k = 0
      for _ in c:addresses("acct-22", { per_page = 2, concurrency = 3 }):pages() do
        k = k + 1
        during[k] = highest(requested)
        merchantapi.sleep(0) -- the task's turn ends: the step returns, the next one resumes it
        after[k] = highest(requested)
      end
      return k
    end)
    local steps = 0
    repeat
      steps = steps + 1
    until loop:step(0.05) == 0 or steps > 1000
    assert.equal(11, task:result())
    -- the page after the window went out in the step that asked for page k
    -- (a batch's policy: only once the batch of three is handed out)
    for k = 2, 11 do
      assert.equal(math.min(k + 2, 11), after[k], "page " .. k .. ": highest page requested")
      assert.is_true(during[k] <= k + 2, "page " .. k .. ": a page past the window")
    end
    -- walked to its end: every page requested once, as a blocking walk does
    assert.is_true(each_once(requested, 11), "requests: " .. table.concat(requested, ","))
    loop:close()
    c:close()
  end)

  it("ends a step between two pages with the next pages in flight, sent before it returns", function()
    if not streams() then
      return
    end
    local requested, ended = {}, {}
    local c = recording_client(requested, ended)
    local loop = assert(merchantapi.loop())
    -- whether the task waits for a page's answer (else it gave its turn
    -- between two pages: the step's budget was spent)
    local module = require "merchantapi.loop"
    local next_ended, waiting = module.next_ended, false
    module.next_ended = function(...)
      waiting = true
      local x = next_ended(...)
      waiting = false
      return x
    end
    local task = loop:spawn(function()
      -- acct-22 at 1 a page: 22 pages; page 1 alone, then 2..22 four at most in flight
      local k = 0
      for _ in c:addresses("acct-22", { per_page = 1, concurrency = 4 }):pages() do
        k = k + 1
        busy(0.006) -- a page's work: more than a step's budget, the step ends after it
      end
      return k
    end)
    -- the steps that end between two pages (the task not waiting) with a
    -- page requested whose answer they have not read
    local crossing, steps, trace = 0, 0, {}
    local ok, err = pcall(function()
      repeat
        steps = steps + 1
        local running = loop:step(0, { time = 0.005, wait = true })
        trace[#trace + 1] = #requested .. "/" .. #ended .. (waiting and "w" or "")
        if not waiting and #requested > #ended then
          crossing = crossing + 1
        end
      until running == 0 or steps > 1000
    end)
    module.next_ended = next_ended
    assert(ok, err)
    assert.equal(22, task:result())
    -- each step hands out one page (its work outlasts the budget).  A
    -- batch's policy sends nothing while it hands out a batch that has come
    -- (a step ends with pages in flight only while the task waits for a
    -- batch): never.  A window that slides sends the page the pager's ask
    -- started before the step returns, the task between two pages: the
    -- server answers it while the host sleeps
    assert.is_true(crossing >= 2, "steps ending between two pages with pages in flight: "
      .. crossing .. " (requested/read at each step's end, w: the task waiting: "
      .. table.concat(trace, " ") .. ")")
    assert.is_true(each_once(requested, 22), "requests: " .. table.concat(requested, ","))
    loop:close()
    c:close()
  end)

  it("stopped early, has sent at most concurrency - 1 pages past the last one handed out", function()
    local requested = {}
    local c = recording_client(requested)
    local items = helpers.in_loop(function()
      local pager = c:addresses("acct-22", { per_page = 2, concurrency = 3 })
      local n = 0
      while true do -- pager:next(), not a generic for: Lua 5.1 yields from no iterator
        assert(pager:next())
        n = n + 1
        if n == 10 then -- page 5's last item: the walk stops there
          return n
        end
      end
    end)
    assert.equal(10, items)
    -- pages 1..5 handed out; 6 and 7 (page 5 + 3 - 1) at most, each once
    assert.is_true(highest(requested) <= 7, "requests: " .. table.concat(requested, ","))
    assert.is_true(each_once(requested, highest(requested)), "requests: "
      .. table.concat(requested, ","))
    c:close()
  end)

  it("leaves its pages in flight alone while the task makes another call and sleeps", function()
    local c = helpers.client({ transport = false })
    local blocking = assert(c:addresses("acct-22", { per_page = 2, concurrency = 4 }):all())
    local got = helpers.in_loop(function()
      local items = {}
      local pager = c:addresses("acct-22", { per_page = 2, concurrency = 4 })
      while true do -- pager:next(), not a generic for: Lua 5.1 yields from no iterator
        local item, err = pager:next()
        assert(err == nil, err)
        if not item then
          return items
        end
        items[#items + 1] = item
        if #items % 2 == 0 then
          -- between two pages: a call of its own and a sleep, pages in flight
          local ch = assert(c:get_channel(helpers.CHANNEL_ID))
          assert.equal(helpers.CHANNEL_ID, ch.id)
          merchantapi.sleep(0.001)
        end
      end
    end)
    assert.equal(#blocking, #got)
    for i = 1, #blocking do
      assert.equal(blocking[i].id, got[i].id)
    end
    c:close()
  end)
end)

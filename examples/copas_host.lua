-- A host with a coroutine scheduler of its own (copas, as Debian 12 ships it:
-- 1.2, for Lua 5.1/5.2) using merchantapi through a merchantapi.loop: a
-- 10 ms ticker and a payments coroutine run side by side; the payments
-- coroutine's calls run as tasks of the loop, the coroutine parked until
-- each task's on_done callback wakes it, and a poller coroutine steps the
-- loop every 10 ms with a 5 ms budget.  Like skynet, this scheduler cannot
-- watch the loop's descriptor: it polls.  The ticker keeps ticking while
-- the calls run.
--
--   MERCHANTAPI_BASE_URL=... MERCHANTAPI_API_KEY=... lua5.1 examples/copas_host.lua PAYOUT_ID ACCOUNT_ID
local copas = require "copas"
local merchantapi = require "merchantapi"

local unpack = rawget(table, "unpack") or rawget(_G, "unpack")
local payout_id, account_id = arg[1], arg[2]
if not (payout_id and account_id) then
  io.stderr:write("usage: lua5.1 copas_host.lua PAYOUT_ID ACCOUNT_ID\n")
  os.exit(2)
end
local client = assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "MERCHANTAPI_BASE_URL"),
  api_key = os.getenv("MERCHANTAPI_API_KEY"),
})
local loop = assert(merchantapi.loop())
local clock = merchantapi.monotonic

-- ---- the host's scheduler: copas for sockets, timers of its own ----
-- copas 1.2 has no timers: a coroutine that yields nothing is forgotten
-- (parked) until copas.addthread(co) resumes it.  skynet's equivalents:
-- skynet.wait / skynet.wakeup / skynet.sleep.
local timers, runnable = {}, {}
local function wait() coroutine.yield() end
local function wakeup(co) runnable[#runnable + 1] = co end
local function sleep(seconds)
  timers[#timers + 1] = { clock() + seconds, coroutine.running() }
  wait()
end
local function host_run()
  while #timers > 0 or #runnable > 0 do
    local now, first = clock(), nil
    for _, t in ipairs(timers) do
      first = (not first or t[1] < first) and t[1] or first
    end
    copas.step(#runnable == 0 and first and math.max(0, first - now) or 0) -- the host's sockets
    now = clock()
    local keep = {}
    for _, t in ipairs(timers) do
      if t[1] <= now then wakeup(t[2]) else keep[#keep + 1] = t end
    end
    timers = keep
    local ready = runnable
    runnable = {}
    for _, co in ipairs(ready) do
      copas.addthread(co) -- resumes it
    end
  end
end

-- ---- the glue: a call from a host coroutine, run as a task of the loop ----
local busy = 0
local function call(fn, ...)
  local co, r = coroutine.running(), nil
  busy = busy + 1
  loop:spawn(fn, ...):on_done(function(...)
    r = { n = select("#", ...), ... }
    wakeup(co)
  end)
  wait() -- parked until on_done
  busy = busy - 1
  if not r[1] then
    error(r[2], 0) -- the task raised
  end
  return unpack(r, 2, r.n)
end
-- the poller: the host's timer steps the loop, at most 5 ms of work a step
local finished = false
copas.addthread(function()
  while not finished do
    loop:step(0, { time = 0.005 })
    sleep(0.01)
  end
end)

-- ---- the game: a ticker and a payments coroutine ----
local ticks, during, longest, last = 0, 0, 0, clock()
copas.addthread(function()
  while not finished do
    sleep(0.01)
    local now = clock()
    longest = math.max(longest, now - last)
    last = now
    ticks = ticks + 1
    if busy > 0 then
      during = during + 1
    end
  end
end)

copas.addthread(function()
  local payout = merchantapi.assert(call(function() return client:confirm_payout(payout_id) end))
  print(("payout %s is %s: %s %s"):format(payout.id, payout.status, payout.amount,
    payout.currency or ""))
  local done = merchantapi.assert(call(function()
    return client:wait_for_txid(payout_id, { interval = 0.25, timeout = 30 })
  end))
  print("txid " .. done.txid)
  local n = call(function()
    local count = 0
    for _, item in ipairs(merchantapi.assert(client:addresses(account_id, {
      per_page = 5, concurrency = 3 }):all())) do
      count = count + (item.id and 1 or 0)
    end
    return count
  end)
  print(n .. " addresses")
  finished = true
end)

host_run()
print(("%d ticks of 10 ms, %d of them while calls ran; the longest gap between two: %.1f ms")
  :format(ticks, during, longest * 1000))
loop:close()
client:close()

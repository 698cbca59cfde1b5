-- The loop's rows of `make bench` (run by bench/loop_run against a sandbox
-- of its own): calls that never block the host.
--   1. 50 get_channel calls in flight on one merchantapi.loop against a
--      sandbox answering after 500 ms, stepped by a 60 Hz tick loop with
--      loop:step(0): the longest single step (the host's stall) and the
--      time until all 50 are done.  Targets: <= 5 ms, <= 1.5 s.
--   2. CPU seconds per get_channel through the loop (in a task) against the
--      blocking call, in this process (os.clock), sandbox without latency.
--      Target: <= 1.2x.
--   3. acct-25000's 25,000 addresses listed at 1,000 per page, concurrency
--      8, in a task, stepped by a 60 Hz tick with loop:step(0): the longest
--      single step without a budget and with { time = 0.005 }, their ratio,
--      and the time each walk took; beside them the longest step in CPU
--      seconds of this process (os.clock), which a loaded machine inflates
--      less than the wall clock.
-- Medians of BENCH_ROUNDS rounds (default 3); ratios from the same run.
local merchantapi = require "merchantapi"

local format = string.format
local clock = merchantapi.monotonic
local BASE = assert(os.getenv("BENCH_HTTP"), "BENCH_HTTP")
local KEY = os.getenv("MERCHANTAPI_API_KEY") or "sk_test_sandbox_4f9a2c"
local CHANNEL = "60e05bc0-4690-4985-a08a-8acf00e48294"
local ROUNDS = tonumber(os.getenv("BENCH_ROUNDS") or "3")
local CALLS = tonumber(os.getenv("BENCH_LOOP_CALLS") or "2000")

local function latency(ms)
  local p = assert(io.popen(format("curl -s -X POST -d '{\"latency_ms\":%d}' %s/__sandbox/config",
    ms, BASE)))
  p:read("*a")
  p:close()
end

local function median(t)
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local function client()
  return assert(merchantapi.new { base_url = BASE, api_key = KEY, timeout = 10 })
end

-- 1. fifty calls in flight, a 60 Hz tick
local function fifty()
  local c = client()
  local loop = assert(merchantapi.loop())
  local t0 = clock()
  local tasks = {}
  for i = 1, 50 do
    tasks[i] = loop:spawn(function() return c:get_channel(CHANNEL) end)
  end
  local TICK, longest, next_tick = 1 / 60, 0, clock()
  local all_done
  while true do
    local s = clock()
    local running = loop:step(0)
    local d = clock() - s
    if d > longest then
      longest = d
    end
    if running == 0 then
      all_done = clock() - t0
      break
    end
    next_tick = next_tick + TICK
    local left = next_tick - clock()
    if left > 0 then
      merchantapi.sleep(left)
    end
  end
  for i = 1, 50 do
    assert(tasks[i]:result(), "a call failed")
  end
  loop:close()
  c:close()
  return longest, all_done
end

-- 2. CPU per call, blocking and in a task
local function cpu_blocking(c)
  local t0 = os.clock()
  for _ = 1, CALLS do
    assert(c:get_channel(CHANNEL))
  end
  return (os.clock() - t0) / CALLS
end

local function cpu_loop(c)
  local loop = assert(merchantapi.loop())
  local t0 = os.clock()
  loop:spawn(function()
    for _ = 1, CALLS do
      assert(c:get_channel(CHANNEL))
    end
  end)
  loop:run()
  local t = (os.clock() - t0) / CALLS
  loop:close()
  return t
end

-- 3. a long listing under a 60 Hz tick, with and without a budget per step
local function listing(budget)
  local c = client()
  local loop = assert(merchantapi.loop())
  local t0 = clock()
  local task = loop:spawn(function()
    local n = 0
    for _ in c:addresses("acct-25000", { per_page = 1000, concurrency = 8 }):each() do
      n = n + 1
    end
    return n
  end)
  local TICK, longest, cpu, next_tick = 1 / 60, 0, 0, clock()
  while true do
    local s, sc = clock(), os.clock()
    local running = loop:step(0, budget)
    local d, dc = clock() - s, os.clock() - sc
    if d > longest then
      longest = d
    end
    if dc > cpu then
      cpu = dc
    end
    if running == 0 then
      break
    end
    next_tick = next_tick + TICK
    local left = next_tick - clock()
    if left > 0 then
      merchantapi.sleep(left)
    end
  end
  local all = clock() - t0
  assert(task:result() == 25000, "the listing failed")
  loop:close()
  c:close()
  return longest, all, cpu
end

latency(500)
local gaps, alls = {}, {}
for r = 1, ROUNDS do
  gaps[r], alls[r] = fifty()
end
latency(0)
local c = client()
cpu_blocking(c) -- warm: the connection, the caches
cpu_loop(c)
local blk, lp = {}, {}
for r = 1, ROUNDS do
  blk[r] = cpu_blocking(c)
  lp[r] = cpu_loop(c)
end
c:close()
listing(nil) -- warm: the sandbox's pages
local free_steps, free_alls, free_cpus, cut_steps, cut_alls, cut_cpus = {}, {}, {}, {}, {}, {}
for r = 1, ROUNDS do
  free_steps[r], free_alls[r], free_cpus[r] = listing(nil)
  cut_steps[r], cut_alls[r], cut_cpus[r] = listing({ time = 0.005 })
end

local gap, all, b, l = median(gaps), median(alls), median(blk), median(lp)
local free_step, free_all, free_cpu = median(free_steps), median(free_alls), median(free_cpus)
local cut_step, cut_all, cut_cpu = median(cut_steps), median(cut_alls), median(cut_cpus)
local function row(label, value, note)
  print(format("  %-58s %12s  %s", label, value, note or ""))
end
print("Calls that never block (merchantapi.loop, Lua " .. _VERSION:match("%d.%d") .. ")")
row("50 get_channel in flight, sandbox 500 ms: longest loop:step(0)", format("%.2f ms", gap * 1000),
  format("target <= 5 ms: %s", gap <= 0.005 and "met" or "MISSED"))
row("  the same: all 50 done (one after another: 25 s)", format("%.2f s", all),
  format("target <= 1.5 s: %s", all <= 1.5 and "met" or "MISSED"))
row("CPU per get_channel, blocking", format("%.1f us", b * 1e6))
row("CPU per get_channel, in a loop task", format("%.1f us", l * 1e6),
  format("%.2fx blocking; target <= 1.2x: %s", l / b, l / b <= 1.2 and "met" or "MISSED"))
row("acct-25000 at 1,000/page, concurrency 8, 60 Hz: longest loop:step(0)",
  format("%.2f ms", free_step * 1000),
  format("longest in CPU time: %.2f ms; the walk: %.2f s", free_cpu * 1000, free_all))
row("  the same, loop:step(0, { time = 0.005 }): longest step", format("%.2f ms", cut_step * 1000),
  format("%.2fx the unbounded step (CPU %.2f ms, %.2fx); the walk: %.2f s", cut_step / free_step,
    cut_cpu * 1000, cut_cpu / free_cpu, cut_all))

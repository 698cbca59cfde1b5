--- An event loop for client calls that never block the host: tasks
-- (coroutines) in which every client call yields instead of blocking,
-- stepped by the host's own loop (a game's tick, libuv, epoll).  What runs
-- on the loop and what blocks, the yields a task may not make, and how a
-- host with a scheduler of its own (skynet, copas) parks its coroutine
-- until `task:on_done`: docs/guide/loop.md.
--
-- @module merchantapi.loop
local core = require "merchantapi.core"
local options = require "merchantapi.options"
local is_count, check_arg = options.is_count, options.arg

local type = type
local error = error
local select = select
local setmetatable = setmetatable
local tostring = tostring
local rawget = rawget
local pcall = pcall
local pairs = pairs
local co_create = coroutine.create
local co_resume = coroutine.resume
local co_running = coroutine.running
local co_status = coroutine.status
local co_yield = coroutine.yield
local co_isyieldable = rawget(coroutine, "isyieldable") -- Lua 5.3+, LuaJIT 2.1
local co_close = rawget(coroutine, "close") -- Lua 5.4+
local unpack = rawget(table, "unpack") or rawget(_G, "unpack")
local concat = table.concat
local format = string.format

local M = {}

-- What a task yields when it waits for the loop (a call's end, a timer);
-- a yield without values just gives the other tasks a turn; any other
-- yield is foreign (docs/guide/loop.md) and ends the task.
local WAIT = setmetatable({}, { __tostring = function() return "merchantapi.loop.wait" end })

-- coroutine -> its task (weak: a finished task's coroutine can go)
local task_of = setmetatable({}, { __mode = "k" })

local function pack(...)
  return { n = select("#", ...), ... }
end

--- The task whose coroutine is running, or nil outside a loop task, and
-- where the task cannot yield (inside a C function's callback, such as a
-- `table.sort` comparator), on a Lua that can tell (5.3+, LuaJIT): a call
-- there blocks, as outside a task.
-- @local
function M.current()
  local co = co_running()
  local task = co and task_of[co]
  if task and co_isyieldable and not co_isyieldable() then
    return nil
  end
  return task
end

--- Whether a task can give a turn between two pieces of work (a yield
-- inside `pcall`: Lua 5.2+ and LuaJIT, not Lua 5.1), as
-- `yield_if_over_budget` does.  Told by the version, never by trying: a
-- yield at load time raises inside `require` (OpenResty's coroutines).
-- @local
M.turns_between_pieces = not (_VERSION == "Lua 5.1" and rawget(_G, "jit") == nil)

--- Before a piece of work inside a loop task whose step has a budget
-- (`loop:step(timeout, { time = s })`): when the budget (the C loop's, the
-- one budget of the step) is spent, a plain yield, so that the task goes on
-- at the next step; else the piece is counted in it.  Called before each
-- page of a batch is turned into tables, and by a pager between the pages
-- it fetched ahead.  Elsewhere, or where the task cannot yield (and on Lua
-- 5.1, not LuaJIT, which cannot yield across the pcall that tells): nothing.
-- @local
-- @tparam[opt] number cost the seconds the piece is expected to last (the
--   last one's, say): a piece that would end after the budget waits for
--   the next step, unless the step has barely begun.
function M.yield_if_over_budget(cost)
  local task = M.current()
  local loop = task and task._loop
  if loop and loop._bounded and not loop._c:take(false, cost) then
    pcall(co_yield) -- raises where it cannot yield (Lua 5.1, 5.2): then no turn
  end
end

--- Inside a task, before its call starts: on a Lua that cannot tell whether
-- the task may yield here (5.1, 5.2), one plain yield (the task goes on at
-- this step's end), which raises "attempt to yield across ..." where it
-- cannot -- before the request is started, never after it left.
-- @local
function M.before_start()
  if not co_isyieldable then
    co_yield()
  end
end

local Task = {}
Task.__index = Task

local notify -- calls the on_done callbacks due (defined below)

--- Whether the task's function has returned or raised.
--
-- syntax: `done = task:done()`
-- @treturn boolean
function Task:done()
  return self._done
end

--- What the task's function returned, or `nil, err` when it raised (err:
-- the value raised).
--
-- syntax: `... = task:result()`
-- @return the function's results.
-- @raise when the task is not done yet.
function Task:result()
  if not self._done then
    error("merchantapi.loop: task:result() before the task is done", 2)
  end
  local r = self._results
  return unpack(r, 1, r.n)
end

--- Asks for `cb(ok, ...)` once the task has ended, as `pcall` reports:
-- `cb(true, ...)` with what the task's function returned (a failed client
-- call included: `true, nil, err`), or `cb(false, err)` when it raised or
-- yielded outside merchantapi, or the loop was closed first (err: a
-- string).  The way a host with a scheduler of its own learns that a call
-- made in a task is over, with no polling of `task:done()`
-- (docs/guide/loop.md).  Always called from `loop:step` (or `loop:close`),
-- at the end of the step in which the task ended -- never from `on_done`
-- itself: for a task already done, at the next step (on a closed loop, at
-- once).  cb runs on the thread that steps the loop and must not yield; an
-- error it raises comes out of that `loop:step` (the loop is consistent:
-- the callbacks not yet called run at the next step).  One callback per task.
--
-- syntax: `task = task:on_done(cb)`
-- @tparam function cb called once: `cb(true, ...)` or `cb(false, err)`.
-- @return the task (so `loop:spawn(fn):on_done(cb)` chains).
-- @raise when cb is not a function, or the task has a callback already.
function Task:on_done(cb)
  check_arg(cb, "function", "on_done", 1)
  if self._on_done then
    error("merchantapi.loop: the task has an on_done callback already", 2)
  end
  self._on_done = cb
  if self._done then
    local loop = self._loop
    loop._notify[#loop._notify + 1] = self
    if loop._closed then -- no step will come
      notify(loop)
    end
  end
  return self
end

function Task:__tostring()
  return "merchantapi.loop.task (" .. (self._done and "done" or "running") .. ")"
end

local Loop = {}
Loop.__index = Loop

-- The task is over: ok false when it raised (results: nil, err).
local function finish(loop, task, ok, results)
  task._done = true
  task._ok = ok
  task._results = results
  task_of[task._co] = nil
  loop._tasks[task] = nil
  loop._running = loop._running - 1
  if task._on_done then
    local q = loop._notify
    q[#q + 1] = task
  end
end

-- A task's end with nil, err (it raised, or for a reason of the loop's).
local function fail(loop, task, msg)
  finish(loop, task, false, { n = 2, nil, msg })
end

-- The values of a foreign yield, for its error message.
local function describe(...)
  local n, parts = select("#", ...), {}
  for i = 1, n < 4 and n or 4 do
    local v = (select(i, ...))
    parts[i] = type(v) == "string" and format("%q", v) or tostring(v)
  end
  if n > 4 then
    parts[5] = "..."
  end
  return concat(parts, ", ")
end

-- What a resume of task gave: its end (returned or raised), or a yield --
-- WAIT, a plain yield (queued for the next step), or a foreign one.
local function resumed(loop, task, ok, ...)
  if ok and (...) == WAIT then -- the task waits (WAIT is no value a task's function can return)
    return
  elseif not ok then
    fail(loop, task, (...)) -- it raised: never the loop's concern
  elseif co_status(task._co) == "dead" then
    finish(loop, task, true, pack(...))
  elseif select("#", ...) == 0 then
    loop._ready[#loop._ready + 1] = { task, { n = 0 } }
  else
    fail(loop, task, "merchantapi.loop: a task yielded outside merchantapi (" .. describe(...)
      .. "): a host's own yield (its sleep, its calls) cannot run inside a loop task;"
      .. " wait with merchantapi.sleep there, and make the host's calls outside the task")
    if co_close then
      pcall(co_close, task._co) -- the host cannot resume it behind the loop's back
    end
  end
end

-- Resumes task with ... (no table made on the way: this runs for every call).
local function resume(loop, task, ...)
  return resumed(loop, task, co_resume(task._co, ...))
end

-- The fields of a step's budget (`loop:step(timeout, budget)`), checked:
-- time, calls, wait.  The budget itself is the C loop's (loop:budget).
local function budget_fields(budget)
  local time, calls, wait = budget.time, budget.calls, budget.wait
  if time ~= nil and not (type(time) == "number" and time > 0) then
    error("bad argument #2 to 'step' (budget.time: number > 0 or nil expected, got "
      .. tostring(time) .. ")", 3)
  end
  if calls ~= nil and not is_count(calls) then
    error("bad argument #2 to 'step' (budget.calls: integer >= 1 or nil expected, got "
      .. tostring(calls) .. ")", 3)
  end
  if wait ~= nil and type(wait) ~= "boolean" then
    error("bad argument #2 to 'step' (budget.wait: boolean or nil expected, got "
      .. tostring(wait) .. ")", 3)
  end
  if wait and not time then
    error("bad argument #2 to 'step' (budget.wait needs budget.time: the time it may wait)", 3)
  end
  return time, calls, wait or false
end

-- The calls ended and not yet handed to their tasks (NONE: none; never
-- written to).
local NONE = {}

-- What a step leaves for the next one: list[i..], then after's items.
local function rest(list, i, after)
  local left = {}
  for j = i, #list do
    left[#left + 1] = list[j]
  end
  for j = 1, after and #after or 0 do
    left[#left + 1] = after[j]
  end
  return left
end

-- Hands the ended calls (and timers) in calls to their tasks, or as many as
-- the step's budget allows; the rest go to loop._calls, for the next step.
-- counted: the C loop counted them against the budget's calls when it
-- reported them in this step (else each one is counted here).
local function run_calls(loop, calls, counted)
  if calls == NONE then
    return
  end
  local waiting, c, bounded = loop._waiting, loop._c, loop._bounded
  for i = 1, #calls do
    local x = calls[i]
    local task = waiting[x]
    if task and not task._waits and not task._done then
      -- the task gave a turn (a plain yield) with this call in flight: the
      -- end waits for it (M.next_ended gives it)
      waiting[x] = nil
      local q = task._ended
      if not q then
        q = {}
        task._ended = q
      end
      q[#q + 1] = x
    else
      if bounded and not c:take(not counted) then
        loop._calls = rest(loop._calls, 1, rest(calls, i))
        return
      end
      waiting[x] = nil
      if task and not task._done then
        resume(loop, task, x)
      end
    end
  end
end

-- Resumes every task queued before this call, or as many as the step's
-- budget allows (the rest: at the next step, first).
local function run_ready(loop)
  local ready = loop._ready
  if #ready > 0 then
    loop._ready = {}
    local c, bounded = loop._c, loop._bounded
    for i = 1, #ready do
      if bounded and not c:take() then
        loop._ready = rest(ready, i, loop._ready)
        return
      end
      local task, args = ready[i][1], ready[i][2]
      if not task._done then
        resume(loop, task, unpack(args, 1, args.n))
      end
    end
  end
end

-- Calls the on_done callbacks of the tasks that ended.
function notify(loop)
  local q = loop._notify
  if #q == 0 then
    return
  end
  loop._notify = {}
  for i = 1, #q do
    local task = q[i]
    local r = task._results
    local ok, err
    if task._ok then
      ok, err = pcall(task._on_done, true, unpack(r, 1, r.n))
    else
      ok, err = pcall(task._on_done, false, r[2])
    end
    if not ok then -- the rest at the next step, then the host sees its error
      loop._notify = rest(q, i + 1, loop._notify)
      error(err, 0)
    end
  end
end

-- Whether a step has work at once: tasks to resume, ended calls to hand back.
local function due_now(loop)
  return #loop._ready > 0 or loop._calls ~= NONE
end

--- Runs `fn(...)` as a task of the loop: in a coroutine, from the next
-- `step` on.  Inside it, client calls yield to the loop instead of
-- blocking.  An error raised by `fn` ends only this task (see
-- `task:result`).
--
-- syntax: `task = loop:spawn(fn, ...)`
-- @tparam function fn the task's body.
-- @param ... its arguments.
-- @return the task: `task:done()`, `task:result()`.
-- @raise when fn is not a function.
function Loop:spawn(fn, ...)
  check_arg(fn, "function", "spawn", 1)
  if self._closed then
    error("merchantapi.loop: spawn on a closed loop", 2)
  end
  local task = setmetatable({ _co = co_create(fn), _loop = self, _done = false }, Task)
  task_of[task._co] = task
  self._tasks[task] = true
  self._running = self._running + 1
  self._ready[#self._ready + 1] = { task, pack(...) }
  return task
end

--- Moves every call and timer on and resumes the tasks that can go on:
-- waits at most `timeout` seconds for the loop's sockets or its next timer
-- (never longer than the next timer; not at all when a task is ready),
-- then calls the `on_done` callbacks of the tasks that ended.
--
-- A budget bounds what one step does, for a host whose tick has a time to
-- keep: `time`, seconds by the wall clock (monotonic, not CPU time) of work
-- (moving transfers on, reading and decoding the answers, running the
-- tasks, turning each page of a batch into tables; the wait for `timeout`
-- not counted), and `calls`, how many ended calls are handed back to their
-- tasks (each a resume of its task).  The budget is checked before each
-- piece of work (a socket event, an answer read, a task resumed, one page
-- turned into tables and handed out), so a step can overrun it by one
-- piece; the first piece is always done, so every step moves on.  A page
-- that would end after the budget (by the last page's cost) is left for
-- the next step, and the step then does no more work.  In a task, a batch
-- of pages fetched together waits in the core's memory until the pager
-- hands each page out (not on Lua 5.1: there each page becomes tables as
-- it comes): Lua's heap holds the page being handed out, so the
-- collector's work that a step pays for is that of one page.  What it leaves -- answers
-- not read, ended calls, tasks to resume, pages not turned into tables,
-- due timers -- is done first by the next step, and `loop:timeout()` is 0
-- until then; nothing is lost, nothing reordered.
--
-- `wait = true` (with `time`) spends the budget on the work that becomes
-- ready within it: a call a task starts (the next page of a walk whose page
-- just ended) is sent at once, and the step waits on the loop's descriptor
-- for the answers, for at most the time its budget has left (`timeout` is
-- not used then), until the budget is spent or no task is left.  Its waits
-- count against the budget: the step lasts at most `time` seconds by the
-- wall clock (a wait ends within it, to the microsecond; in whole
-- milliseconds on a Linux older than 5.11), plus the one
-- piece begun before the budget ran out; a call a task started in that
-- last piece is sent before the step returns (nothing more is read), so its
-- answer comes between two steps.  Without `wait` (the default) a step does
-- what is ready and returns: a call started in it is sent at the next step.
--
-- syntax: `running, spent = loop:step(timeout[, budget])`
-- @tparam[opt] number timeout seconds; `0` does not wait; nil waits as long
--   as the next event needs.
-- @tparam[opt] table budget `{ time = seconds, calls = n, wait = boolean }`
--   (any of them; `wait` needs `time`; nil: no bound).
-- @treturn integer the tasks still running (0: none left).
-- @treturn number the seconds the step's time budget counted (its waits
--   only with `wait`); 0 without `time`.
-- @raise when timeout is not a number >= 0 or nil, the budget is not as
--   above, the loop is closed, or the step is made from inside one of the
--   loop's own tasks; an error an `on_done` callback raises.
function Loop:step(timeout, budget)
  if timeout ~= nil and not (type(timeout) == "number" and timeout >= 0) then
    error("bad argument #1 to 'step' (number >= 0 or nil expected, got "
      .. tostring(timeout) .. ")", 2)
  end
  if self._closed then
    error("merchantapi.loop: step on a closed loop", 2)
  end
  local time, calls, wait
  if budget ~= nil then
    if type(budget) ~= "table" then
      error("bad argument #2 to 'step' (table or nil expected, got " .. type(budget) .. ")", 2)
    end
    time, calls, wait = budget_fields(budget)
  end
  local cur = M.current()
  if cur and cur._loop == self then
    error("merchantapi.loop: step from inside one of the loop's own tasks", 2)
  end
  local c = self._c
  local bounded = (time or calls) and true or false
  if bounded then
    c:budget(time, calls, wait)
  end
  self._bounded = bounded
  local left = self._calls -- what an earlier step's budget left: first
  self._calls = NONE
  run_calls(self, left, false)
  run_ready(self)
  -- one pass of the C loop, the tasks it woke resumed; with wait, again
  -- while the budget has time left
  while self._running > 0 and not self._closed do
    local _, ended = c:step(due_now(self) and 0 or (wait and -1) or timeout or -1)
    if ended then
      run_calls(self, ended, true)
    end
    run_ready(self)
    if not wait or c:left() <= 0 then
      break
    end
  end
  if wait and self._running > 0 and not self._closed then
    -- what the tasks began in the last pass goes out before the step
    -- returns, so that its answers come before the next step; what ended
    -- meanwhile waits for the next step (after what this one left)
    local _, ended = c:step(0)
    if ended then
      self._calls = self._calls == NONE and ended or rest(self._calls, 1, ended)
    end
  end
  local spent = bounded and c:budget_end() or 0
  self._bounded = false
  notify(self)
  return self._running, spent
end

--- Steps until no task is left (blocks the calling thread meanwhile).
--
-- syntax: `loop:run()`
function Loop:run()
  while self:step() > 0 do -- luacheck: ignore 542
  end
end

--- The loop's descriptor: readable when one of its transfers has work, so
-- a host polls it among its own (libuv's poll handle, epoll, a game
-- engine's poller) and calls `loop:step(0)` then.  Timers are not in it:
-- see `loop:timeout`.  Never close it or read from it.
--
-- syntax: `fd = loop:pollfd()`
-- @treturn integer the descriptor (an epoll set of the loop's own).
function Loop:pollfd()
  return self._c:fd()
end

--- Seconds until the loop needs a step even when its descriptor stays
-- quiet (a transfer's timeout, a wait before a retry, a task's timer);
-- `0` when a step is due now; nil when no task is running.
--
-- syntax: `seconds = loop:timeout()`
-- @treturn number|nil
function Loop:timeout()
  if self._running == 0 then
    return nil
  end
  return due_now(self) and 0 or self._c:timeout()
end

--- Ends the loop: its calls still running are stopped (a confirm under way
-- may have arrived: its outcome is unknown) and its tasks are never
-- resumed: each one not done yet ends with `nil, "merchantapi.loop: the
-- loop was closed before the task ended"`, and the `on_done` callbacks
-- still due are called (a host's coroutine parked on one is woken).  Safe
-- to call twice; the loop is also closed (without callbacks) when
-- collected.  From a hook of one of its calls (`on_request`,
-- `on_response`, which run inside `loop:step`): the same, and the step
-- begins nothing more (the call whose `on_request` closed the loop is not
-- sent); the loop's descriptor and connections are let go when that step
-- returns.
--
-- syntax: `loop:close()`
-- @raise an error an `on_done` callback raises (the others were called).
function Loop:close()
  if self._closed then
    return
  end
  self._closed = true
  self._c:close()
  local left = {}
  for task in pairs(self._tasks) do
    left[#left + 1] = task
  end
  for i = 1, #left do
    fail(self, left[i], "merchantapi.loop: the loop was closed before the task ended")
  end
  local first
  while #self._notify > 0 do
    local ok, err = pcall(notify, self)
    if not ok and first == nil then
      first = { err }
    end
  end
  if first then
    error(first[1], 0)
  end
end

function Loop:__tostring()
  return "merchantapi.loop (" .. self._running .. " tasks)"
end

-- ---- what the client's calls do inside a task ----

--- Inside a task: yields until `seconds` have passed (a timer of the
-- loop).  Outside a task: blocks (`merchantapi.sleep`).
-- @local
-- @tparam number seconds how long (0 or less: until the loop's next step).
function M.sleep(seconds)
  local task = M.current()
  if not task then
    return core.sleep(seconds)
  end
  check_arg(seconds, "number", "sleep", 1)
  local loop = task._loop
  M.before_start() -- else a timer left behind by a yield that failed
  local token = {} -- what the C loop hands back once the time has passed
  local ok, err = loop._c:timer(seconds > 0 and seconds or 0, token)
  if not ok then
    error(err, 2) -- out of memory
  end
  loop._waiting[token] = task
  task._waits = true
  co_yield(WAIT)
  task._waits = false
end

--- Inside `task`: starts the prepared exchange x (`client:prepare`) of the
-- core client c on the task's loop, with the hooks' state table (or nil);
-- `loop.next_ended` gives it back once its call is over.  merchantapi.dispatch
-- decides that a call runs here.
-- @local
-- @tparam table task the running task (`loop.current()`).
-- @param c the core client (`merchantapi.core.new`).
-- @param x the exchange.
-- @tparam[opt] table hooks the hooks' state table (see `merchantapi.dispatch`).
-- @return true, or nil, err, message (the loop or the client is closed).
function M.start(task, c, x, hooks)
  local ok, err, msg = task._loop._c:start(c, x, hooks)
  if ok then
    task._loop._waiting[x] = task
  end
  return ok, err, msg
end

--- Inside a task: yields until one of its exchanges started by `loop.start`
-- has ended, and returns it (at once when one ended while the task gave a
-- turn: `yield_if_over_budget`).
-- @local
function M.next_ended()
  local task = task_of[co_running()]
  local q = task._ended
  if q and #q > 0 then
    return table.remove(q, 1)
  end
  task._waits = true
  local x = co_yield(WAIT) -- run_calls resumes the task with the exchange
  task._waits = false
  return x
end

--- A new loop (one libcurl multi handle, one epoll descriptor): what
-- `merchantapi.loop()` returns.
-- @local
function M.new()
  local c, err, msg = core.loop_new()
  if not c then
    return nil, err, msg
  end
  return setmetatable({
    _c = c,
    _running = 0,            -- tasks not done
    _ready = {},             -- { task, args } to resume at the next step
    _waiting = {},           -- exchange (or a timer's token) -> the task waiting for it
    _bounded = false,        -- true during a step with a budget (the C loop's)
    _calls = NONE,           -- exchanges whose call ended, not yet handed to their task
    _tasks = {},             -- task -> true while not done
    _notify = {},            -- tasks ended whose on_done is not called yet
    _closed = false,
  }, Loop)
end

return M

--- An event loop for client calls that never block the host: tasks
-- (coroutines) in which every client call yields instead of blocking,
-- stepped by the host's own loop (a game's tick, libuv, epoll).
--
--     local loop = merchantapi.loop()
--     local task = loop:spawn(function(id)
--       return client:confirm_payout(id)  -- yields until the call is over
--     end, payout_id)
--     while loop:step(0) > 0 do
--       -- the host's own work for this tick
--     end
--     local payout, err = task:result()
--
-- Inside a task, the calls `confirm_payout`, `get_channel`,
-- `list_addresses`, `get_payout`, `request`, the pagers (`addresses` with
-- `concurrency` included, `paginate`), `wait_for_txid` and the waits
-- between retries run on the loop: each attempt is a transfer of the C
-- loop (src/loop.c, libcurl's multi socket interface: connections, DNS
-- cache and TLS sessions are the client's), each wait a timer of the loop.
-- The call decides exactly what it decides when it blocks (the same
-- exchange: retries, Retry-After, the deadline, the outcome, the settling
-- of a confirm, the error fields, the hooks).  Outside a task, calls block
-- as always.  A client with a custom `transport` keeps its transport
-- inside a task (its waits between retries yield to the loop).
--
-- A task is the coroutine the loop made: a client call made from a
-- coroutine of one's own inside a task blocks, and so does a call where
-- the task cannot yield (a C function's callback, e.g. a `table.sort`
-- comparator) on Lua 5.3+ and LuaJIT.  Lua 5.1 and 5.2 cannot tell: there
-- such a call raises "attempt to yield across ..." before anything is
-- sent -- on Lua 5.1 (not LuaJIT) that is also a call inside `pcall` or
-- from a generic `for`'s iterator (`for item in pager:each()`; use
-- `pager:next()` or `all()`).  A loop and its clients belong to one
-- `lua_State` (and its coroutines), used by one thread at a time; a host
-- may move that state to another thread between two steps, as skynet
-- moves a service (`merchantapi.h`, "Threading rules").
--
-- @module merchantapi.loop
local core = require "merchantapi.core"

local type = type
local error = error
local select = select
local setmetatable = setmetatable
local tostring = tostring
local rawget = rawget
local rawset = rawset
local pcall = pcall
local co_create = coroutine.create
local co_resume = coroutine.resume
local co_running = coroutine.running
local co_status = coroutine.status
local co_yield = coroutine.yield
local co_isyieldable = rawget(coroutine, "isyieldable") -- Lua 5.3+, LuaJIT 2.1
local unpack = rawget(table, "unpack") or rawget(_G, "unpack")
local monotonic = core.monotonic

local M = {}

-- What a task yields when it waits for the loop (a call's end, a timer);
-- any other yield just gives the other tasks a turn.
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

-- Before a call starts on the loop: on a Lua that cannot tell whether the
-- task may yield here (5.1, 5.2), one plain yield (the task goes on at
-- this step's end), which raises "attempt to yield across ..." where it
-- cannot -- before the request is started, never after it left.
local function yield_or_raise()
  if not co_isyieldable then
    co_yield()
  end
end

local Task = {}
Task.__index = Task

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

function Task:__tostring()
  return "merchantapi.loop.task (" .. (self._done and "done" or "running") .. ")"
end

local Loop = {}
Loop.__index = Loop

local function finish(loop, task, results)
  task._done = true
  task._results = results
  task_of[task._co] = nil
  loop._running = loop._running - 1
end

-- What a resume of task gave: its end (returned or raised), or a yield --
-- WAIT, or a plain yield, after which it is queued for the next step.
local function resumed(loop, task, ok, ...)
  if not ok then
    finish(loop, task, { n = 2, nil, (...) }) -- it raised: never the loop's concern
  elseif co_status(task._co) == "dead" then
    finish(loop, task, pack(...))
  elseif (...) ~= WAIT then
    loop._ready[#loop._ready + 1] = { task, { n = 0 } }
  end
end

-- Resumes task with ... (no table made on the way: this runs for every call).
local function resume(loop, task, ...)
  return resumed(loop, task, co_resume(task._co, ...))
end

-- Resumes every task queued before this call, then every sleeper that is due.
local function run_ready(loop)
  local ready = loop._ready
  if #ready > 0 then
    loop._ready = {}
    for i = 1, #ready do
      local task, args = ready[i][1], ready[i][2]
      if not task._done then
        resume(loop, task, unpack(args, 1, args.n))
      end
    end
  end
  local sleepers = loop._sleepers
  if #sleepers > 0 then
    local now, keep, due = monotonic(), {}, {}
    for i = 1, #sleepers do
      local s = sleepers[i]
      if s[1] <= now then
        due[#due + 1] = s[2]
      else
        keep[#keep + 1] = s
      end
    end
    loop._sleepers = keep
    for i = 1, #due do
      if not due[i]._done then
        resume(loop, due[i])
      end
    end
  end
end

-- Seconds until the first sleeper is due, or nil.
local function next_sleeper(loop)
  local t
  local now = monotonic()
  for i = 1, #loop._sleepers do
    local left = loop._sleepers[i][1] - now
    if t == nil or left < t then
      t = left
    end
  end
  if t and t < 0 then
    t = 0
  end
  return t
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
  if type(fn) ~= "function" then
    error("bad argument #1 to 'spawn' (function expected, got " .. type(fn) .. ")", 2)
  end
  local task = setmetatable({ _co = co_create(fn), _loop = self, _done = false }, Task)
  task_of[task._co] = task
  self._running = self._running + 1
  self._ready[#self._ready + 1] = { task, pack(...) }
  return task
end

--- Moves every call and timer on and resumes the tasks that can go on:
-- waits at most `timeout` seconds for the loop's sockets or its next timer
-- (never longer than the next timer; not at all when a task is ready).
--
-- syntax: `running = loop:step(timeout)`
-- @tparam[opt] number timeout seconds; `0` does not wait; nil waits as long
--   as the next event needs.
-- @treturn integer the tasks still running (0: none left).
-- @raise when timeout is not a number >= 0 or nil, or the loop is closed.
function Loop:step(timeout)
  if timeout ~= nil and not (type(timeout) == "number" and timeout >= 0) then
    error("bad argument #1 to 'step' (number >= 0 or nil expected, got "
      .. tostring(timeout) .. ")", 2)
  end
  if self._closed then
    error("merchantapi.loop: step on a closed loop", 2)
  end
  run_ready(self)
  if self._running == 0 then
    return 0
  end
  local wait = timeout or -1
  if #self._ready > 0 then
    wait = 0
  end
  local s = next_sleeper(self)
  if s and (wait < 0 or s < wait) then
    wait = s
  end
  local calls, ended = self._c:step(wait)
  if calls == 0 and not ended and wait > 0 then
    core.sleep(wait) -- only timers of tasks: the host asked to wait this long
  end
  if ended then
    local waiting = self._waiting
    for i = 1, #ended do
      local x = ended[i]
      local task = waiting[x]
      waiting[x] = nil
      if task and not task._done then
        resume(self, task, x)
      end
    end
  end
  run_ready(self)
  return self._running
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
  if #self._ready > 0 then
    return 0
  end
  local t = self._c:timeout()
  local s = next_sleeper(self)
  if s and (t == nil or s < t) then
    t = s
  end
  return t
end

--- Ends the loop: its calls still running are stopped (a confirm under way
-- may have arrived: its outcome is unknown) and its tasks are never
-- resumed.  Safe to call twice; the loop is also closed when collected.
--
-- syntax: `loop:close()`
function Loop:close()
  self._closed = true
  self._c:close()
end

function Loop:__tostring()
  return "merchantapi.loop (" .. self._running .. " tasks)"
end

-- ---- what the client's calls do inside a task ----

-- Waits (yields) until exchange x's call has ended.
local function wait_for(loop, task, x)
  loop._waiting[x] = task
  repeat
    local got = co_yield(WAIT)
  until got == x
end

--- Inside a task: yields until `seconds` have passed (a timer of the
-- loop).  Outside a task: blocks (`merchantapi.sleep`).
-- @local
-- @tparam number seconds how long (0 or less: until the loop's next step).
function M.sleep(seconds)
  local task = M.current()
  if not task then
    return core.sleep(seconds)
  end
  if type(seconds) ~= "number" then
    error("bad argument #1 to 'sleep' (number expected, got " .. type(seconds) .. ")", 2)
  end
  local loop = task._loop
  yield_or_raise() -- else a sleeper left behind by a yield that failed
  loop._sleepers[#loop._sleepers + 1] = { monotonic() + (seconds > 0 and seconds or 0), task }
  co_yield(WAIT)
end

-- A hook of a transport.lua wrapper, run with the wrapper busy as over
-- libcurl: a call of the client from the hook fails as "usage", a close()
-- is done once the hook is over.
local function busy_hook(wrapper, hook)
  if not hook then
    return nil
  end
  return function(info)
    wrapper._busy = true
    local ok, err = pcall(hook, info)
    wrapper._busy = false
    if wrapper._close_pending then
      wrapper._c:close() -- the loop's calls still running hold it: closed after them
    end
    if not ok then
      error(err, 0) -- recorded as the hook's error (nil and false included)
    end
  end
end

-- The hooks of a transport.lua wrapper, as the core's observer takes them.
local function hooks_of(wrapper)
  if not (wrapper._on_request or wrapper._on_response) then
    return nil
  end
  return { on_request = busy_hook(wrapper, wrapper._on_request),
           on_response = busy_hook(wrapper, wrapper._on_response) }
end

-- The results of a call, with the first hook error reported as over libcurl.
local function results(hooks, ...)
  if hooks and hooks.hook_raised then
    return require("merchantapi.transport").report_hook_error(hooks, ...)
  end
  return ...
end

-- One call of the core userdata ud, run on the loop.
local function call(loop, task, ud, hooks, name, ...)
  local x, err = ud:prepare(name, ...) -- built once, with the blocking call's checks
  if not x then
    return nil, err
  end
  yield_or_raise()
  local ok, serr = loop._c:start(ud, x, hooks)
  if not ok then
    return nil, serr
  end
  wait_for(loop, task, x)
  return results(hooks, x:result())
end

-- Pages first_page .. first_page + count - 1, up to concurrency calls on
-- the loop at once, in page order; the shape of the core's
-- list_addresses_pages: the lists before the first failed page, and its
-- error.  No page is started after one failed.
local function pages(loop, task, ud, hooks, account_id, params, first_page, count, concurrency)
  params = params or {}
  local last = first_page + count - 1
  local got, page_of = {}, {}
  local nextp, inflight, failed = first_page, 0, nil
  yield_or_raise()
  while true do
    while inflight < (concurrency or 1) and nextp <= last and not failed do
      local p = nextp
      nextp = nextp + 1
      local x, err = ud:prepare("list_addresses", account_id, {
        page = p, per_page = params.per_page, order = params.order,
        order_type = params.order_type, headers = params.headers,
      })
      local ok = x ~= nil
      if ok then
        ok, err = loop._c:start(ud, x, hooks)
      end
      if ok then
        page_of[x] = p
        loop._waiting[x] = task
        inflight = inflight + 1
      else
        got[p] = { n = 2, nil, err }
        failed = p
      end
    end
    if inflight == 0 then
      break
    end
    local x = co_yield(WAIT)
    local p = page_of[x]
    if p then
      page_of[x] = nil
      inflight = inflight - 1
      local r = pack(results(hooks, x:result()))
      got[p] = r
      if r[1] == nil and (not failed or p < failed) then
        failed = p
      end
    end
  end
  local lists = {}
  for p = first_page, last do
    local r = got[p]
    if not r or r[1] == nil then
      return lists, r and r[2]
    end
    lists[#lists + 1] = r[1]
  end
  return lists
end

local Proxy = {}

function Proxy.__index(proxy, name)
  local core_client = proxy._core
  local method = function(_, ...)
    local task = M.current()
    if not task or task._loop ~= proxy._loop then
      return core_client[name](core_client, ...) -- not in this loop's task: as always
    end
    local ud, hooks = core_client, nil
    if type(core_client) == "table" then -- transport.lua's wrapper
      if core_client._transport or name == "close" then
        return core_client[name](core_client, ...)
      end
      ud, hooks = core_client._c, hooks_of(core_client)
    elseif name == "close" or name == "_calls_built" then
      return ud[name](ud, ...)
    end
    if name == "list_addresses_pages" then
      return pages(proxy._loop, task, ud, hooks, ...)
    end
    return call(proxy._loop, task, ud, hooks, name, ...)
  end
  rawset(proxy, name, method) -- made once per name
  return method
end

-- Phases of OpenResty in which cosockets and ngx.sleep may yield
-- (lua-nginx-module's docs).
local NGX_YIELD_PHASES = {
  rewrite = true, access = true, content = true, timer = true, ssl_cert = true,
  ssl_session_fetch = true, ssl_client_hello = true, preread = true,
}

--- True inside an OpenResty phase where cosockets and `ngx.sleep` may
-- yield (not in `init_by_lua*`, `set_by_lua*`, filters, `log_by_lua*`, nor
-- outside OpenResty).  Checked at each call: a client made in
-- `init_by_lua` is used later in `content_by_lua`.
-- @local
function M.ngx_yields()
  local ngx = rawget(_G, "ngx")
  if type(ngx) == "table" and type(ngx.get_phase) == "function" then
    local ok, phase = pcall(ngx.get_phase)
    return ok and NGX_YIELD_PHASES[phase] == true
  end
  return false
end

-- The client core that calls go through: inside a loop task a stand-in
-- whose calls run on the task's loop, else `core_client` itself.
-- core_client: the core userdata, or transport.lua's wrapper of it.
local function core_of(core_client)
  local task = M.current()
  if not task then
    return core_client
  end
  local loop = task._loop
  local proxy = loop._proxies[core_client]
  if not proxy then
    proxy = setmetatable({ _core = core_client, _loop = loop }, Proxy)
    loop._proxies[core_client] = proxy
  end
  return proxy
end

--- The client core a call of `client` (a `merchantapi.new` client) goes
-- through: inside an OpenResty phase that can yield, its cosocket core
-- (made by `merchantapi.new` for a client without `transport`); else
-- `core_of(client._core)`.
-- @local
-- @tparam table client the client (its `_core`, and `_ngx_core` when it has one).
function M.core_for(client)
  local ngx_core = client._ngx_core
  if ngx_core and M.ngx_yields() then
    return ngx_core
  end
  return core_of(client._core)
end

--- A new loop (the C side: one libcurl multi handle, one epoll
-- descriptor).  Public as `merchantapi.loop()`.
--
-- syntax: `loop, err = merchantapi.loop()`
-- @return the loop, or `nil, err` (`kind` `"memory"`, or `"transport"` when
--   the descriptor could not be made).
function M.new()
  local c, err = core.loop_new()
  if not c then
    return nil, err
  end
  return setmetatable({
    _c = c,
    _running = 0,            -- tasks not done
    _ready = {},             -- { task, args } to resume at the next step
    _sleepers = {},          -- { wake_at, task }
    _waiting = {},           -- exchange -> the task waiting for its call
    _proxies = setmetatable({}, { __mode = "k" }),
    _closed = false,
  }, Loop)
end

M.WAIT = WAIT

return M

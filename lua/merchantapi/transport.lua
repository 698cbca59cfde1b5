--- Custom transports and attempt hooks: what `merchantapi.new` builds when
-- it is given `transport`, `on_request` or `on_response`.
--
-- A transport is a function that performs one HTTP request:
--
--     res, err = transport(request)
--
-- `request` holds `method`, `url` (the full URL, already percent-encoded),
-- `headers` (a table name -> value: `Content-Type`, `Accept`,
-- `Authorization` when the client has a key, `User-Agent`, then the
-- headers of one's own (`merchantapi.new`'s `headers`, and the call's,
-- checked by the core) -- exactly what libcurl would send; never log
-- `Authorization`), `body` (a string, or nil
-- for none: a PUT without body is sent with `Content-Length: 0`), `timeout`
-- (seconds: the client's, cut to what is left of the call's deadline) and
-- `connect_timeout` (seconds, never more than `timeout`), `max_body` (bytes: a transport may stop
-- reading after `max_body + 1` bytes; a longer body fails as `decode`),
-- `fresh_connection` (true for the confirm: open a new connection, and do
-- not keep it, so that a failure to connect provably sent nothing) and
-- `attempt` (1, 2, ...).
--
-- It returns `res = { status = integer, headers = { name = value or
-- { value, ... } }, body = string }` for any HTTP answer (header names in any
-- case; the core applies to it the framing rule libcurl's path meets:
-- two different `Content-Length`s, `Content-Length` with
-- `Transfer-Encoding`, a coding other than chunked fail as `decode`, a body
-- shorter than its `Content-Length` as `transport`, a longer one as
-- `decode`; `merchantapi.core.framing(content_length, transfer_encoding)`
-- tells a transport how to read a body by that rule), or `nil, err` when
-- no answer came, where `err` is a string or
-- `{ message = string, sent = boolean }`: `sent = false` says the request
-- provably never reached the server (connect or TLS failed), which makes a
-- failed confirm `outcome = "not_sent"` and retryable; anything else is
-- `"unknown"`.  A transport may yield (cosockets): the attempts of a call
-- run in the Lua loop below, which takes every decision -- what the answer
-- means, whether to retry and after how long, the deadline, the error, the
-- read that settles a confirm whose outcome is unknown (a GET handed to the
-- same transport) -- from the C core, so a call behaves the same over any
-- transport.  Between attempts it
-- sleeps with `ngx.sleep` in an OpenResty phase that can yield, else with
-- the blocking `merchantapi.sleep`.  A Lua error raised by the transport is
-- not caught: it ends the call.
--
-- Hooks `on_request(info)` and `on_response(info)` are called for every
-- attempt, over any transport (libcurl included).  `info` holds `method`,
-- `url` (never the api key), `attempt` (1, 2, ...), and for on_response
-- `status` (absent when no answer came), `elapsed` (seconds), `request_id`,
-- `error` (the kind, when the attempt failed) and `retry_in` (seconds until
-- the next attempt, absent after the last one).  An error raised by a hook
-- is caught and never changes the call's result: the first one is reported
-- as `hook_error` on the response object (success) or on the error
-- (failure) -- the value raised, or for `error(nil)` / `error(false)` the
-- string `"merchantapi: a hook raised nil"` (or `false`; Lua 5.5 itself
-- raises `error(nil)` as the string `"<no error object>"`).  Over libcurl
-- hooks run inside the C call: they cannot yield,
-- and must not call the client (such a call fails as `"usage"`; `close()`
-- waits until the call is over).
--
-- @module merchantapi.transport
local wait = require "merchantapi.wait"
local errors = require "merchantapi.errors"

local type = type
local pcall = pcall
local error = error
local tostring = tostring
local setmetatable = setmetatable
local rawget = rawget
local min = math.min

-- pcall lets the function it calls yield on LuaJIT and 5.2+, not on 5.1
local YIELDABLE_PCALL = _VERSION ~= "Lua 5.1" or rawget(_G, "jit") ~= nil

local M = {}

--- The client methods a custom transport carries (every method of the core
-- that sends through the core's call path).
-- @local
M.METHODS = {
  confirm_payout = true, get_channel = true, list_addresses = true,
  get_payout = true, request = true,
}

-- What is reported as `hook_error` for a value a hook raised: the value, or
-- for nil and false (which would read as "no error") a string naming it.
local function hook_error_value(raised)
  if raised == nil or raised == false then
    return "merchantapi: a hook raised " .. tostring(raised)
  end
  return raised
end

-- Calls a hook; returns the first error (kept, or this one).
local function call_hook(hook, info, first_error)
  local ok, err = pcall(hook, info)
  if not ok and first_error == nil then
    return hook_error_value(err)
  end
  return first_error
end

-- Puts the first hook error on the response object (success) or the error.
local function report_hook_error(hook_error, v, err, res)
  if hook_error ~= nil then
    local target = (v ~= nil and type(res) == "table" and res) or (type(err) == "table" and err)
    if target then
      target.hook_error = hook_error
    end
  end
  return v, err, res
end

--- Reports the first hook error a core observer recorded in `state`
-- (`hook_raised`, `hook_error`: see `client:observed`) on the results of a
-- call, as over libcurl (merchantapi.loop runs hooks so).
-- @local
-- @tparam table state the observer's state table.
-- @param v the call's first result.
-- @param err its error, or nil.
-- @param res its response object, or nil.
function M.report_hook_error(state, v, err, res)
  return report_hook_error(state.hook_raised and hook_error_value(state.hook_error) or nil,
    v, err, res)
end

local function usage_error(title)
  return errors.new { kind = "usage", title = title }
end

-- The attempts of one call over a custom transport.  `...` are the
-- method's arguments.
local function run(proxy, name, ...)
  local c = proxy._c
  local x, err = c:prepare(name, ...) -- the call, built once by the core
  if not x then
    return nil, err -- the call failed its checks: nothing to send
  end
  local transport, on_request, on_response = proxy._transport, proxy._on_request,
    proxy._on_response
  local hook_error
  proxy._inflight = proxy._inflight + 1
  while true do
    local req, info = x:request(not on_request) -- info only for a hook
    if on_request then
      hook_error = call_hook(on_request, info, hook_error)
    end
    local res, terr
    if YIELDABLE_PCALL then
      local ok
      ok, res, terr = pcall(transport, req)
      if not ok then
        proxy._inflight = proxy._inflight - 1 -- the call is over: a pending close may run
        if proxy._inflight == 0 and proxy._close_pending then
          c:close()
        end
        error(res, 0)
      end
    else
      res, terr = transport(req) -- (5.1: a raise leaves a pending close to __gc)
    end
    local action, rinfo, delay
    if res ~= nil then
      action, rinfo, delay = x:response(res, not on_response)
    else
      action, rinfo, delay = x:failure(terr, not on_response)
    end
    if on_response then
      hook_error = call_hook(on_response, rinfo, hook_error)
    end
    if action == "done" then
      break
    end
    if delay > 0 then -- 0: a confirm's settling read follows at once
      wait.default_sleep()(delay)
    end
  end
  proxy._inflight = proxy._inflight - 1
  local v, res
  v, err, res = x:result() -- the method's own results, converted by the core
  if proxy._inflight == 0 and proxy._close_pending then
    c:close()
  end
  return report_hook_error(hook_error, v, err, res)
end

-- Pages first_page .. first_page+count-1 of an account over a custom
-- transport, in the shape of the core's list_addresses_pages: the lists in
-- page order up to the first failure, and that failure.  Inside OpenResty
-- (a phase that can yield) the pages are fetched by `concurrency` light
-- threads at a time; elsewhere one after the other.
local function list_pages(proxy, account_id, params, first_page, count, concurrency)
  params = params or {}
  local function fetch(page)
    return run(proxy, "list_addresses", account_id, {
      page = page, per_page = params.per_page, order = params.order,
      order_type = params.order_type, headers = params.headers,
    })
  end
  local lists = {}
  local ngx = rawget(_G, "ngx")
  local spawn = type(ngx) == "table" and type(ngx.thread) == "table" and ngx.thread.spawn
  if spawn and wait.default_sleep() == ngx.sleep and (concurrency or 1) > 1 then
    local page = first_page
    local last = first_page + count - 1
    while page <= last do
      local threads = {}
      for p = page, min(last, page + concurrency - 1) do
        threads[#threads + 1] = spawn(fetch, p)
      end
      for i = 1, #threads do
        local ok, list, err = ngx.thread.wait(threads[i])
        if not ok or not list then
          for j = i + 1, #threads do
            ngx.thread.kill(threads[j])
          end
          return lists, (ok and err) or usage_error("a page fetch raised: " .. tostring(list))
        end
        lists[#lists + 1] = list
      end
      page = page + #threads
    end
    return lists
  end
  for page = first_page, first_page + count - 1 do
    local list, err = fetch(page)
    if not list then
      return lists, err
    end
    lists[#lists + 1] = list
  end
  return lists
end

-- The libcurl transport with hooks: the core calls them for every attempt.
local function observed(proxy, name, ...)
  if proxy._busy then
    return nil, usage_error("the client was called from one of its own hooks")
  end
  proxy._busy = true
  local state = { on_request = proxy._on_request or nil, on_response = proxy._on_response or nil }
  local ok, v, err, res = pcall(proxy._c.observed, proxy._c, state, name, ...)
  proxy._busy = false
  if proxy._close_pending then
    proxy._c:close()
  end
  if not ok then
    error(v, 0)
  end
  return M.report_hook_error(state, v, err, res)
end

local Proxy = {}

-- The methods a transport carries, one function per name shared by every
-- client (no closure made per call).
local RUNNERS = {}
for name in pairs(M.METHODS) do
  RUNNERS[name] = function(self, ...)
    return run(self, name, ...)
  end
end

function Proxy.close(proxy)
  if proxy._busy or proxy._inflight > 0 then
    proxy._close_pending = true -- closed once the calls under way are over
    return
  end
  proxy._c:close()
end

function Proxy.__index(proxy, name)
  local method = Proxy[name]
  if method then
    return method
  end
  if rawget(proxy, "_transport") then
    if name == "list_addresses_pages" then
      return list_pages
    end
    if not M.METHODS[name] then
      return nil -- not carried: callers fall back (the pager fetches pages one by one)
    end
    return RUNNERS[name] or function(self, ...) -- (a name added to M.METHODS later)
      return run(self, name, ...)
    end
  end
  return function(self, ...)
    return observed(self, name, ...)
  end
end

--- Wraps a core client so that its calls go through `opts.transport` (when
-- given) and call `opts.on_request` / `opts.on_response`.  The wrapper has
-- the core client's methods; merchantapi.lua keeps it as `client._core`.
--
-- @local
-- @param c the core client (`merchantapi.core.new`).
-- @tparam table opts `transport`, `on_request`, `on_response` (functions or nil).
-- @treturn table the wrapper.
function M.wrap(c, opts)
  return setmetatable({
    _c = c,
    -- false, never nil: a missing field would reach __index
    _transport = opts.transport or false,
    _on_request = opts.on_request or false,
    _on_response = opts.on_response or false,
    _inflight = 0,     -- transport calls under way
    _busy = false,     -- a libcurl call with hooks under way
    _close_pending = false,
  }, Proxy)
end

return M

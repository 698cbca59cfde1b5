--- How every call runs, the one dispatcher of the Lua side: which client
-- core a call goes through (libcurl now, a `merchantapi.loop` task, a custom
-- transport, OpenResty's cosockets), the Lua loop of custom transports and
-- the drivers of the page batch; and what custom transports and attempt
-- hooks are given and return (what `merchantapi.new` builds when it is
-- given `transport`, `on_request` or `on_response`).
--
-- Every call of a client is a prepared exchange of the core
-- (`client:prepare`: built and checked once) run one of four ways, the way
-- chosen when the client is made (a custom transport; cosockets inside
-- OpenResty, in the phases that can yield; libcurl) and, for libcurl, by
-- where the call is made: libcurl now (blocking), or a transfer of a
-- `merchantapi.loop` task's loop.  A list's pages fetched together follow
-- the core's page batch (src/pages.c), run by the core over libcurl or
-- driven below (a loop task, OpenResty's light threads; one page at a time
-- over any other transport).  Closing a client while calls run is the core
-- binding's rule (src/lua_base.c): every exchange holds its client.
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
-- two `Content-Length`s, one that is not a single number,
-- `Content-Length` with `Transfer-Encoding`, a coding other than chunked
-- fail as `decode`, a body
-- shorter than its `Content-Length` as `transport`, a longer one as
-- `decode`; `merchantapi.core.framing(content_length, transfer_encoding)`
-- tells a transport how to read a body by that rule; a head over
-- `merchantapi.core.defaults.max_header_bytes` fails as `decode` too,
-- counted as `"name: value\r\n"` lines unless `res.head_bytes` says how
-- many bytes of head the transport read -- one that stops reading past the
-- cap hands on what it has with that count), or `nil, err` when
-- no answer came, where `err` is a string or
-- `{ message = string, sent = boolean }`: `sent = false` says the request
-- provably never reached the server (connect or TLS failed), which makes a
-- failed confirm `outcome = "not_sent"` and retryable; anything else is
-- `"unknown"` (not retryable unless its settling read finds a draft).
-- `res` may instead be a `merchantapi.core.h1_reader` that
-- read the answer (`reader:feed(bytes)` as they come): the core then takes
-- its answer, or its refusal, as libcurl's path gives it.  The deadline is
-- the transport's to keep: end the attempt within `timeout` whatever the
-- server does (every read and write given what is left of it).  A
-- transport may yield (cosockets): the attempts of a call
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
-- attempt, over any transport (libcurl included).  `info` is the attempt's
-- record (below; on_request: what is known before sending), and beside it
-- the fields it had before: `method`, `url`, `attempt`, and for on_response
-- `status` (absent when no answer came), `elapsed` (seconds), `request_id`,
-- `error` (the kind, when the attempt failed), `retry_in` (seconds until
-- the next attempt, absent after the last one), `code`, `title` and
-- `max_attempts` (what `merchantapi.core.format_attempt(info)` needs to
-- make the `MERCHANTAPI_DEBUG` line of the record).  An error raised by a hook
-- is caught and never changes the call's result: the first one (the core's
-- rule, `src/lua_transport.c`, whatever drives the call) is reported
-- as `hook_error` on the response object (success) or on the error
-- (failure) -- the value raised, or for `error(nil)` / `error(false)` the
-- string `"merchantapi: a hook raised nil"` (or `false`; Lua 5.5 itself
-- raises `error(nil)` as the string `"<no error object>"`).  Over libcurl
-- hooks run inside the C call: they cannot yield,
-- and must not call the client (such a call fails as `"usage"`; `close()`
-- waits until the call is over).
--
-- **Attempt records**: the record's keys and what each holds are described
-- once, in docs/guide/observe.md ("One record per attempt").
--
-- **Trace context** (W3C): `merchantapi.new{ trace = true }` starts a new
-- trace per call (a random 16-byte trace id, flags `01`); a call's own
-- options `traceparent` (`"00-<32 hex trace id>-<16 hex parent id>-<2 hex
-- flags>"`, lowercase, neither id all zeros) continue the caller's trace,
-- with `tracestate` (at most 512 printable ASCII bytes; only with a
-- traceparent) passed through; a malformed one is a `"usage"` error,
-- nothing sent.  Each attempt is a span of its own: a new random 8-byte
-- span id, sent as the parent-id field of the `traceparent` header of that
-- attempt whatever the driver, and its record's `span_id`
-- (`parent_span_id`: the caller's parent id).  A pager given `traceparent`
-- (`client:addresses`, `client:paginate`) continues it on every page.
--
-- @module merchantapi.dispatch
local loop = require "merchantapi.loop"
local errors = require "merchantapi.errors"
local metrics = require "merchantapi.metrics"

local core = require "merchantapi.core"
local hook_raised = core.hook_raised

local type = type
local pcall = pcall
local tostring = tostring
local rawget = rawget
local unpack = rawget(table, "unpack") or rawget(_G, "unpack")

local M = {}

-- Phases of OpenResty in which cosockets and ngx.sleep may yield
-- (lua-nginx-module's docs).
local NGX_YIELD_PHASES = {
  rewrite = true, access = true, content = true, timer = true, ssl_cert = true,
  ssl_session_fetch = true, ssl_client_hello = true, preread = true,
}

--- OpenResty's `ngx` inside a phase where cosockets and `ngx.sleep` may
-- yield (not in `init_by_lua*`, `set_by_lua*`, filters, `log_by_lua*`),
-- else nil (and outside OpenResty).  Asked at each call: a client made in
-- `init_by_lua` is used later in `content_by_lua`.
-- @local
function M.ngx_yields()
  local ngx = rawget(_G, "ngx")
  if type(ngx) == "table" and type(ngx.get_phase) == "function" then
    local ok, phase = pcall(ngx.get_phase)
    return ok and NGX_YIELD_PHASES[phase] and ngx or nil
  end
end
local ngx_yields = M.ngx_yields

--- The sleep of a wait between attempts (and `wait_for_txid`'s default):
-- inside a `merchantapi.loop` task a timer of the loop (the task yields),
-- else `ngx.sleep` inside an OpenResty phase that may yield, else the C
-- module's nanosleep (blocks the calling thread).
-- @treturn function `sleep(seconds)`
function M.default_sleep()
  local ngx = not loop.current() and ngx_yields()
  return ngx and ngx.sleep or loop.sleep
end

--- How the calls of a client made with `opts` go: its fields `_transport`
-- (a custom transport, or false), `_ngx` (OpenResty's cosocket transport
-- for the phases that can yield, or false: a client with neither
-- `transport`, `proxy` nor `cafile`/`capath`, made inside OpenResty;
-- `transport = "libcurl"` opts out), `_hooks` (the hooks, or false: the
-- attempt records are made only for a hook) and `_metrics` (with
-- `opts.metrics`, true or its dict: merchantapi.new puts the client's
-- recorder there, `merchantapi.metrics.attach`; the core counts).
-- @local
-- @tparam table opts the client's options.
-- @return the fields, merged into the client by merchantapi.new, or `nil,
--   err` (`"usage"`: no `lua_shared_dict` of the name `metrics` gives).
function M.route(opts)
  local custom = type(opts.transport) == "function" and opts.transport or false
  local ngx = opts.transport == nil and not (opts.proxy or opts.cafile or opts.capath) and
    type(rawget(_G, "ngx")) == "table" and require("merchantapi.transport.ngx").request
  local where = opts.metrics
  if where and where ~= true then
    local err
    where, err = metrics.dict_of(where)
    if not where then
      return nil, err
    end
  end
  local hooks = (opts.on_request or opts.on_response) and
    { on_request = opts.on_request, on_response = opts.on_response } or false
  return { _transport = custom, _ngx = ngx or false, _hooks = hooks, _metrics = where or nil }
end

-- A call's hook state (the core's observer takes the same table): the
-- hooks, then hook_raised and hook_error once one raised (the core's rule,
-- core.hook_raised).
local function hook_state(client)
  local h = client._hooks
  return h and { on_request = h.on_request, on_response = h.on_response } or nil
end

-- Calls a hook (from Lua: it may yield); the core records its error.
local function call_hook(state, hook, info)
  local ok, err = pcall(hook, info)
  if not ok then
    hook_raised(state, err)
  end
end

-- results(state, v, err, res) -> v, err, res: a call's results with the
-- hook error the core recorded as `hook_error` (core.hook_results).
local results = core.hook_results

-- Runs the attempts of exchange x over the transport t (a Lua loop: t may
-- yield); every decision is the core's.  Returns x, done.
local function drive(x, t, state)
  local on_request = state and state.on_request
  local on_response = state and state.on_response
  while true do
    local req, info = x:request(not on_request) -- info only for a hook
    if on_request then
      call_hook(state, on_request, info)
    end
    local res, terr = t(req)
    local action, rinfo, delay
    if res ~= nil then
      action, rinfo, delay = x:response(res, not on_response)
    else
      action, rinfo, delay = x:failure(terr, not on_response)
    end
    if on_response then
      call_hook(state, on_response, rinfo)
    end
    if action == "done" then
      return x
    end
    if delay > 0 then -- 0: a confirm's settling read follows at once
      M.default_sleep()(delay)
    end
  end
end

-- A call over libcurl, now: the core client runs the client's hooks
-- itself (its observer, given to core.new), recording the first error in
-- the hooks' table, reset for each call.
local function blocking(client, c, name, ...)
  local h = client._hooks
  if not h then
    return c[name](c, ...)
  end
  h.hook_raised, h.hook_error = nil, nil
  return results(h, c[name](c, ...))
end

-- The transport a call of client goes over now, or nil for libcurl.
local function transport_of(client)
  return client._transport or (client._ngx and ngx_yields() and client._ngx) or nil
end

--- Runs `client`'s method `name` (a method of the core client:
-- `confirm_payout`, `get_channel`, `list_addresses`, `get_payout`,
-- `request`) with its arguments, the way the client's calls go.
-- @local
-- @tparam table client a `merchantapi.new` client (`_c`, and the fields of `route`).
-- @tparam string name the method.
-- @return the method's results.
function M.call(client, name, ...)
  if metrics._flush_pending then -- a client with a dict made where no timer could start
    metrics.start_flush()
  end
  local c, t = client._c, transport_of(client)
  local task = not t and loop.current()
  if not (t or task) then -- libcurl, now
    return blocking(client, c, name, ...)
  end
  local state = hook_state(client)
  local x, err, msg = c:prepare(name, ...) -- the call, built once by the core
  if not x then
    return nil, err, msg -- the call failed its checks: nothing to send
  end
  if t then
    drive(x, t, state)
  else
    loop.before_start()
    local ok, serr, smsg = loop.start(task, c, x, state)
    if not ok then
      return nil, serr, smsg
    end
    repeat until loop.next_ended() == x
  end
  return results(state, x:result())
end

--- The pages first_page .. first_page + count - 1 of an account's
-- addresses, in the shape of the core's `list_addresses_pages`: the lists
-- in page order up to the first failed page, and that page's error.  Over
-- libcurl (blocking) the core runs them; else the core's page batch
-- (`client:prepare("list_addresses_pages", ...)`: which page starts when,
-- which are dropped and kept, the error) is driven here on a loop task's
-- loop or OpenResty's light threads, or one page at a time over another
-- transport.
-- @local
-- @tparam table client a `merchantapi.new` client.
-- @tparam string account_id the account's id.
-- @tparam[opt] table params `per_page`, `order`, `order_type`, `headers`,
--   `traceparent`, `tracestate`.
-- @tparam integer first_page the first page.
-- @tparam integer count how many pages.
-- @tparam integer concurrency pages in flight at once, at most.
-- @treturn table the lists, and the error of the first page that failed;
--   in a loop task (but on Lua 5.1) the lists are empty and the pages are in the batch
--   returned third (`b:kept()` of them, taken one by one with `b:take()`):
--   the pager turns each into tables when it hands it out.
function M.pages(client, account_id, params, first_page, count, concurrency)
  local c, t = client._c, transport_of(client)
  local task = not t and loop.current()
  if not (t or task) then
    return blocking(client, c, "list_addresses_pages", account_id, params, first_page, count,
      concurrency)
  end
  local ngx = t and (concurrency or 1) > 1 and ngx_yields()
  local b, err, msg = c:prepare("list_addresses_pages", account_id, params, first_page, count,
    (task or ngx) and concurrency or 1) -- over another transport, one page at a time
  if type(b) ~= "userdata" then
    return b, err, msg -- the checks failed: nothing sent
  end
  local state = hook_state(client)
  -- the driver: start(x) -> true | nil, err; next_ended() -> x | nil, err
  -- (the pages in flight are lost)
  local start, next_ended
  if task then
    loop.before_start()
    start = function(x) return loop.start(task, c, x, state) end
    next_ended = loop.next_ended
  elseif ngx then -- light threads, waited for in the order they end
    local threads, thread_of = {}, {}
    start = function(x)
      thread_of[x] = ngx.thread.spawn(drive, x, t, state)
      threads[#threads + 1] = thread_of[x]
      return true
    end
    next_ended = function()
      local ok, x = ngx.thread.wait(unpack(threads))
      if not ok then -- the transport raised: the others are stopped
        for i = 1, #threads do
          ngx.thread.kill(threads[i])
        end
        return nil, errors.new { kind = "usage", title = "a page fetch raised: " .. tostring(x) }
      end
      for i = 1, #threads do
        if threads[i] == thread_of[x] then
          table.remove(threads, i)
          break
        end
      end
      return x
    end
  else
    local done = {}
    start = function(x)
      done[#done + 1] = drive(x, t, state)
      return true
    end
    next_ended = function() return table.remove(done, 1) end
  end
  -- the pages kept so far, turned into tables as they come (one page at a
  -- time) -- but in a loop task that can give a turn between two pieces:
  -- there they stay in the core's batch until the pager hands them out (the
  -- batch is returned third), one page per piece of a step, so that Lua's
  -- heap holds the page being handed out, not the whole batch (the
  -- collector's work in a step stays that of a page).  On Lua 5.1 a task
  -- gives its turns at each page's end instead (next_ended).
  local lazy = task and loop.turns_between_pieces
  local lists = {}
  local function take_kept()
    if lazy then
      return
    end
    local list = b:take()
    while list do
      lists[#lists + 1] = list
      list = b:take()
    end
  end
  local inflight, raised = 0, nil
  while true do
    while not raised do
      local x = b:next()
      if not x then
        break
      end
      local ok, serr = start(x)
      if ok then
        inflight = inflight + 1
      else
        raised = serr -- the walk ends before this page
      end
    end
    if inflight == 0 then
      break
    end
    local x, lost = next_ended()
    if not x then
      raised = lost
      break -- the pages in flight are lost: the walk ends at the first of them
    end
    inflight = inflight - 1
    b:ended(x) -- after a failed page: not kept
    take_kept()
  end
  if lazy then
    local _, perr = b:kept()
    local v, e = results(state, lists, perr or raised)
    return v, e, b
  end
  take_kept()
  local rest, perr = b:result() -- (none left but when a page was lost in flight)
  for i = 1, #rest do
    lists[#lists + 1] = rest[i]
  end
  return results(state, lists, perr or raised)
end

return M

--- Internal: following a confirmed payout to its txid by reading it; the
-- rules and the public face are `client:wait_for_txid`'s (lua/merchantapi.lua).
--
-- @module merchantapi.wait
local core = require "merchantapi.core"
local errors = require "merchantapi.errors"
local options = require "merchantapi.options"
local dispatch = require "merchantapi.dispatch"

local tostring = tostring
local format = string.format

local wait = {}

-- The read (the core's endpoint table), made without the core's retries.
local READ = core.endpoints.get_payout

--- The defaults of `wait_for_txid`'s options, in seconds: `timeout`, `interval`, `max_interval`.
wait.DEFAULTS = { timeout = 60, interval = 2, max_interval = 30 }
local DEFAULTS = wait.DEFAULTS

local OPTIONS = {
  timeout = "number", interval = "number", max_interval = "number",
  sleep = "function", clock = "function", on_read = "function",
}

--- The sleep used when none is given (`merchantapi.dispatch`'s, chosen at
-- each call: a loop task's timer, `ngx.sleep` where OpenResty can yield,
-- else the blocking nanosleep).
-- @function default_sleep
-- @treturn function `sleep(seconds)`
wait.default_sleep = dispatch.default_sleep

-- The first value that is a finite number >= lo, or nil, message.
local function seconds(opts, name, lo, strict)
  local v = opts[name]
  if v == nil then
    return DEFAULTS[name]
  end
  if v ~= v or v == math.huge or v < lo or (strict and v == lo) then
    return nil, ("%s must be a number of seconds %s %g"):format(name, strict and ">" or ">=", lo)
  end
  return v
end

--- Polls a payout until its `txid` is set.
--
-- syntax: `payout, err, res = wait.for_txid(client, payout_id, opts)`
--
-- It is `client:wait_for_txid`, which documents the arguments, results and errors.
--
-- @tparam table client the `merchantapi` client (its `get_payout` reads).
-- @tparam string payout_id the payout's id.
-- @tparam[opt] table opts as for `client:wait_for_txid`.
-- @return as `client:wait_for_txid`.
function wait.for_txid(client, payout_id, opts)
  options.arg(payout_id, "string", "wait_for_txid", 1)
  opts = options.check(opts, OPTIONS, "wait_for_txid", 2)
  -- the core's one table of paths and its id rule (bad: "payout_id is empty")
  local path, bad = core.path("get_payout", payout_id)
  local timeout, msg = seconds(opts, "timeout", 0, false)
  local interval, max_interval
  if timeout then
    interval, msg = seconds(opts, "interval", 0, true)
  end
  if interval then
    max_interval, msg = seconds(opts, "max_interval", 0, true)
  end
  if not max_interval or bad then
    return errors.fail(msg and errors.new { kind = "usage", title = msg, method = "GET", path = path } or bad)
  end
  if max_interval < interval then
    max_interval = interval
  end
  local sleep = opts.sleep or wait.default_sleep()
  local clock = opts.clock or core.monotonic
  local on_read = opts.on_read

  local start = clock()
  local deadline = start + timeout
  local reads, failures = 0, 0
  local last_payout, last_err, last_res
  while true do
    local payout, err, res = dispatch.call(client, "request", -- the client's way: loop, cosockets, ...
      { method = READ.method, path = path, type = READ.type, max_retries = 0, id = payout_id })
    reads = reads + 1
    res = payout and res or err.res -- the read's response, if one came
    last_res = res
    if on_read then
      on_read(payout, err, res)
    end
    local pause, must_wait
    if payout then
      if payout.txid ~= nil and payout.txid ~= "" then
        return payout, nil, res
      end
      last_payout, last_err, failures = payout, nil, 0
      pause = interval
    elseif not err.retryable then
      return errors.fail(err) -- 404, 401, decode, ...: waiting cannot help
    else
      -- the core's rule (core.retry_wait): the server's Retry-After (never
      -- read again sooner), else the backoff from interval up to max_interval
      last_err, failures, must_wait = err, failures + 1, err.retry_after ~= nil
      pause = core.retry_wait(err.retry_after, failures, interval, max_interval)
      pause = pause > interval and pause or interval
    end
    local remaining = deadline - clock()
    if remaining <= 0 or (must_wait and pause > remaining) then
      if remaining > 0 then
        sleep(remaining) -- the deadline comes before the server allows another read
      end
      local elapsed = clock() - start
      return errors.fail(errors.new {
        kind = "timeout",
        title = format("payout %s has no txid after %.3g s", payout_id, elapsed),
        detail = format("%d read%s, %s", reads, reads == 1 and "" or "s",
          last_err and "the last one failed: " .. tostring(last_err.message)
          or "status " .. tostring(last_payout and last_payout.status)),
        method = "GET", path = path,
        url = client.base_url .. path,
        retryable = true,
        payout = last_payout,
        last_error = last_err,
        attempts = reads,
        elapsed = elapsed,
        res = last_res,
      })
    end
    sleep(pause < remaining and pause or remaining)
  end
end

return wait

--- Test-only handlers for tests/suites/50-openresty (locations.conf): each
-- runs merchantapi inside the nginx worker and answers what it saw as JSON,
-- for spec/openresty/in_nginx.lua to check.
local cjson = require "cjson.safe"
local merchantapi = require "merchantapi"
local ngx_transport = require "merchantapi.transport.ngx"
local handler = require "merchantapi_handler"

local ngx = ngx
local getenv = os.getenv

local M = {}

local function reply(value)
  ngx.header["Content-Type"] = "application/json"
  ngx.say(cjson.encode(value))
end

local function client(opts)
  local o = {
    base_url = getenv("MERCHANTAPI_BASE_URL"),
    api_key = getenv("MERCHANTAPI_API_KEY"),
    transport = ngx_transport.request,
  }
  for k, v in pairs(opts or {}) do
    o[k] = v
  end
  if o.transport == false then
    o.transport = "libcurl"
  elseif o.transport == "default" then
    o.transport = nil -- merchantapi.new's own choice
  end
  return assert(merchantapi.new(o))
end

local function error_fields(err)
  if not err then
    return nil
  end
  return { kind = err.kind, status = err.status, code = err.code, outcome = err.outcome,
           attempts = err.attempts, message = tostring(err) }
end

--- Which Lua runs the handler, and which merchantapi.core it loaded.
function M.core()
  local jit = rawget(_G, "jit")
  reply {
    lua = _VERSION,
    jit = jit and jit.version or cjson.null,
    core = package.searchpath("merchantapi.core", package.cpath) or cjson.null,
    core_version = require("merchantapi.core")._VERSION,
  }
end

--- GET ?id= over cosockets with hooks recording every attempt (traced).
function M.retry()
  local attempts, requests = {}, {}
  local c = client {
    max_retries = 2,
    trace = true,
    on_request = function(info)
      requests[#requests + 1] = info.attempt
    end,
    on_response = function(info)
      attempts[#attempts + 1] = { attempt = info.attempt, status = info.status or cjson.null,
                                  request_id = info.request_id or cjson.null,
                                  retry_in = info.retry_in or cjson.null,
                                  -- the record's names (src/attempt.c), as every driver gives them
                                  outcome = info["merchantapi.outcome"],
                                  error_type = info["error.type"] or cjson.null,
                                  resend_count = info["http.request.resend_count"] or cjson.null,
                                  endpoint = info["merchantapi.endpoint"],
                                  url = info["url.full"],
                                  trace_id = info.trace_id, span_id = info.span_id }
    end,
  }
  local t0 = ngx.now()
  local ch, err = c:get_channel(ngx.var.arg_id)
  reply { id = ch and ch.id or cjson.null, err = error_fields(err) or cjson.null,
          requests = requests, attempts = attempts, elapsed = ngx.now() - t0 }
end

--- Confirms ?id= twice: 201 then 422 payout_not_draft (outcome rejected).
function M.confirm()
  local c = client { max_retries = 0 }
  local p, err, res = c:confirm_payout(ngx.var.arg_id)
  local again, err2 = c:confirm_payout(ngx.var.arg_id)
  reply {
    first = p and { status = p.status, amount = p.amount, http = res.status,
                    currency = p.accountCharged.currencyCode } or error_fields(err),
    second = again and { status = again.status } or error_fields(err2),
  }
end

--- Confirms ?id= with headers of one's own (the client's and the call's,
-- which replaces the client's X-Trace), after a call refused for a header
-- that is the client's own.
function M.headers()
  local c = client { max_retries = 0, headers = { ["X-Trace"] = "or-client", ["X-Client"] = "c" } }
  local bad, bad_err = c:confirm_payout(ngx.var.arg_id, { headers = { Host = "evil.example" } })
  local p, err = c:confirm_payout(ngx.var.arg_id, { headers = { ["x-trace"] = "or-call" } })
  reply {
    refused = bad and "sent" or error_fields(bad_err),
    status = p and p.status or cjson.null,
    err = error_fields(err) or cjson.null,
  }
end

--- Confirms ?id= over https://localhost:?port= (verification on).
function M.tls()
  local c = client { base_url = "https://localhost:" .. ngx.var.arg_port, max_retries = 0 }
  local p, err = c:confirm_payout(ngx.var.arg_id)
  reply { status = p and p.status or cjson.null, amount = p and p.amount or cjson.null,
          err = error_fields(err) or cjson.null }
end

--- Reads a channel from /fake (below), which answers chunked.
function M.chunked()
  local c = client { base_url = "http://127.0.0.1:" .. ngx.var.server_port .. "/fake" }
  local ch, err, res = c:get_channel(ngx.var.arg_id)
  reply { id = ch and ch.id or cjson.null,
          balance = ch and ch.targetAccount.balance or cjson.null,
          transfer_encoding = res and res.headers["transfer-encoding"] or cjson.null,
          err = error_fields(err) or cjson.null }
end

--- One call over cosockets to a fault server of tests/servers/ (the spec
-- starts h1_framing.py): ?base=<its URL>&id=<id>&call=get|put&timeout=
-- &deadline= (seconds; max_retries 0, a confirm without settle).  Answers
-- the value's id or the error's fields, `raised` when the call raised (caught
-- here, so that nothing reaches the error log), and the call's seconds.
function M.h1()
  local a = ngx.req.get_uri_args()
  local c = client { base_url = a.base, max_retries = 0, timeout = tonumber(a.timeout),
                     deadline = tonumber(a.deadline) }
  local monotonic = require("merchantapi.core").monotonic
  local t0 = monotonic()
  local ok, v, err = pcall(function()
    if a.call == "put" then
      return c:confirm_payout(a.id, { settle = false })
    end
    return c:get_channel(a.id)
  end)
  local elapsed = monotonic() - t0
  c:close()
  reply { id = ok and v and v.id or cjson.null, err = ok and error_fields(err) or cjson.null,
          raised = not ok and tostring(v) or cjson.null, elapsed = elapsed }
end

--- The fixture document at path, sent in three flushed pieces (chunked).
function M.fake_channel(path)
  local f = assert(io.open(path, "rb"))
  local doc = f:read("*a")
  f:close()
  ngx.header["Content-Type"] = "application/vnd.api+json"
  local third = math.floor(#doc / 3)
  ngx.print(doc:sub(1, third))
  ngx.flush(true)
  ngx.print(doc:sub(third + 1, 2 * third))
  ngx.flush(true)
  ngx.print(doc:sub(2 * third + 1))
end

-- The value of /fake-long-line's header line (8 MiB), made once before any
-- memory is counted.
local LONG_LINE

--- One GET by the cosocket transport of /fake-long-line (below: a header
-- line of 8 MiB): what it handed on, and the Lua memory (KiB) taken
-- meanwhile with the collector stopped, so every string read is counted.
function M.long_line()
  LONG_LINE = LONG_LINE or string.rep("l", 8 * 1048576)
  collectgarbage()
  collectgarbage("stop")
  local before = collectgarbage("count")
  local res, err = ngx_transport.request {
    method = "GET", url = "http://127.0.0.1:" .. ngx.var.server_port .. "/fake-long-line",
    headers = {}, timeout = 5, connect_timeout = 5 }
  local kib = collectgarbage("count") - before
  collectgarbage("restart")
  reply { kib = kib, status = res and res.status or cjson.null,
          head_bytes = res and res.head_bytes or cjson.null,
          refused = type(res) == "userdata" and res:error() or cjson.null,
          err = err and err.message or cjson.null }
end

--- An answer whose head has a header line of 8 MiB (for long_line).
function M.fake_long_line()
  ngx.header["X-Long"] = LONG_LINE or "unset"
  ngx.say("{}")
end

--- A get_channel and a confirm (settle off) by the cosocket transport of
-- an answer trickled a byte every 0.25 s (/fake-trickle/, below), with
-- `timeout = 1, deadline = 2`: how each ended and after how long (s).
function M.trickle()
  local c = client { base_url = "http://127.0.0.1:" .. ngx.var.server_port .. "/fake-trickle",
    timeout = 1, deadline = 2, max_retries = 0 }
  local function timed(fn)
    ngx.update_time()
    local t0 = ngx.now()
    local v, err = fn()
    ngx.update_time()
    return { ok = v ~= nil, kind = err and err.kind or cjson.null,
             outcome = err and err.outcome or cjson.null, took = ngx.now() - t0 }
  end
  reply {
    get = timed(function() return c:get_channel("trickled") end),
    put = timed(function() return c:confirm_payout("trickled", { settle = false }) end),
  }
end

--- A JSON:API document of the channel or the payout the path names, its
-- head at once and its body one byte every 0.25 s (for trickle).
function M.fake_trickle()
  local payout = ngx.var.uri:find("/payouts/", 1, true)
  local doc = payout and '{"data":{"type":"payouts","id":"trickled","attributes":{}}}'
    or '{"data":{"type":"channels","id":"trickled","attributes":{}}}'
  ngx.status = payout and 201 or 200
  ngx.header["Content-Type"] = "application/vnd.api+json"
  ngx.header["Content-Length"] = #doc
  for i = 1, #doc do
    if not ngx.print(doc:sub(i, i)) or not ngx.flush(true) then
      return -- the client gave up
    end
    ngx.sleep(0.25)
  end
end

--- Every address of ?account= with `concurrency` 3 (light threads) and 1.
function M.pages()
  local c = client()
  local function ids(concurrency)
    local out = {}
    local t0 = ngx.now()
    for a in c:addresses(ngx.var.arg_account, { per_page = 5, concurrency = concurrency }):each() do
      out[#out + 1] = a.id
    end
    return out, ngx.now() - t0
  end
  local concurrent, t3 = ids(3)
  local sequential, t1 = ids(1)
  reply { concurrent = concurrent, sequential = sequential, t_concurrent = t3, t_sequential = t1 }
end

--- Three reads in a row: how many connections were opened and reused.
function M.keepalive()
  local c = client()
  local before = { connections = ngx_transport.stats.connections,
                   reused = ngx_transport.stats.reused }
  for _ = 1, 3 do
    assert(c:get_channel(ngx.var.arg_id))
  end
  reply { opened = ngx_transport.stats.connections - before.connections,
          reused = ngx_transport.stats.reused - before.reused }
end

--- Reads channel ?id= (unknown to the sandbox) and writes the error with
-- `ngx.log(ngx.ERR, err)` and `ngx.log(ngx.WARN, "failed: " .. err)`;
-- answers its message.  The suite lets these lines of the error log pass.
function M.log_error()
  local c = client { max_retries = 0 }
  local ch, err = c:get_channel(ngx.var.arg_id)
  if not ch then
    ngx.log(ngx.ERR, err)
    ngx.log(ngx.WARN, "failed: " .. err)
  end
  reply { message = err and tostring(err) or cjson.null }
end

--- Reads channel ?id= with `merchantapi.assert`: an unknown id raises the
-- error out of the handler (nginx answers 500 and logs it).
function M.raise()
  local c = client { max_retries = 0 }
  local ch = merchantapi.assert(c:get_channel(ngx.var.arg_id))
  reply { id = ch.id }
end

--- Reads channel ?id= with the plain `assert(call())` an OpenResty user
-- writes first (over cosockets, or libcurl with ?libcurl=1): an unknown id
-- raises the error's message -- a failed call's last result, which
-- LuaJIT's assert raises -- and nginx answers 500 and logs it.
function M.assert_call()
  local c = client { max_retries = 0, transport = ngx.var.arg_libcurl and false or nil }
  local ch = assert(c:get_channel(ngx.var.arg_id))
  reply { id = ch.id }
end

--- The example handler with libcurl forced (transport = "libcurl"): it
-- blocks the worker during each call -- what cosockets avoid.
function M.blocking()
  return handler.channel_and_addresses(client { transport = false })
end

--- The example handler with a client made without `transport`: in
-- content_by_lua it goes over cosockets by itself.
function M.default()
  return handler.channel_and_addresses(client { transport = "default" })
end

--- Three reads of channel ?id= by a client made without `transport`, and
-- how many requests the cosocket transport sent meanwhile.
function M.default_stats()
  local c = client { transport = "default" }
  local before = ngx_transport.stats.requests
  for _ = 1, 3 do
    assert(c:get_channel(ngx.var.arg_id))
  end
  reply { cosocket_requests = ngx_transport.stats.requests - before }
end

--- In set_by_lua (cosockets cannot yield there): a client made without
-- `transport` reads channel ?id= over libcurl.  Returns "<id> <requests the
-- cosocket transport sent meanwhile>" for default_set_reply.
function M.default_in_set()
  local c = client { transport = "default" }
  local before = ngx_transport.stats.requests
  local ch, err = c:get_channel(ngx.var.arg_id)
  return (ch and ch.id or tostring(err)) .. " " .. (ngx_transport.stats.requests - before)
end

function M.default_set_reply()
  local id, n = ngx.var.probe_set:match("^(%S+) (%d+)$")
  reply { id = id or ngx.var.probe_set, cosocket_requests = tonumber(n) }
end

--- Reads channel ?id= with max_retries 2 over cosockets, with a client
-- whose metrics live in the lua_shared_dict merchantapi_metrics.
function M.metrics_traffic()
  local c = client { max_retries = 2, metrics = "merchantapi_metrics" }
  local ch, err = c:get_channel(ngx.var.arg_id)
  reply { id = ch and ch.id or cjson.null, err = error_fields(err) or cjson.null }
end

--- A call's attempt goes to the lua_shared_dict only when the worker's
-- counts are flushed (a read of the metrics here), never by the request:
-- the dict's count of get_channel's 429s before, right after the call
-- (?id= answers 429 once) and after c:metrics().
function M.metrics_flush()
  local dict = ngx.shared.merchantapi_metrics
  local c = client { max_retries = 0, metrics = "merchantapi_metrics" }
  local head = "http.client.request.duration\030"
  local function count429()
    local n = 0
    for _, k in ipairs(dict:get_keys(0)) do
      if k:sub(1, #head) == head and k:find("\031429\031", 1, true)
        and k:find("\031get_channel\031", 1, true) and k:match("\030%d+$") then
        n = n + dict:get(k)
      end
    end
    return n
  end
  assert(c:metrics()) -- this worker's counts so far, flushed
  local before = count429()
  local _, err = c:get_channel(ngx.var.arg_id)
  local after_call = count429()
  assert(c:metrics())
  reply { status = err and err.status or cjson.null, before = before, after_call = after_call,
          after_read = count429() }
end

return M

--- Fault ids: resource ids that make the sandbox misbehave the way real
-- servers and networks do. A resource module hands `respond` a context:
--   status, body     what the id answers when it behaves
--   normal()         status, body for a flaky id once its failures are used up
--   resource_type    the document's primary type; wrong_type replaces it
--   dup_key, dup_first  the attribute written twice, and its first value
--   apply()          a payout's PUT only: confirm it (draft -> processing); true
--                    if this call did, false if it was no longer a draft
--   read_as(status, txid)  a payout's GET only: status, body of the payout
--                    showing `status`, and its txid when `txid` is true
local connection = require "sandbox.connection"
local respond = require "sandbox.respond"
local state = require "sandbox.state"

local find, format, gsub, match, rep, sub = string.find, string.format, string.gsub,
    string.match, string.rep, string.sub
local ceil, floor, min, tonumber = math.ceil, math.floor, math.min, tonumber
local send, error_doc = respond.send, respond.error_doc

local _M = {}

local REASONS = {
  [400] = { "bad_request", "Bad Request" },
  [401] = { "unauthorized", "Unauthorized" },
  [403] = { "forbidden", "Forbidden" },
  [404] = { "not_found", "Not found" },
  [409] = { "conflict", "Conflict" },
  [422] = { "unprocessable_entity", "Unprocessable Entity" },
  [429] = { "rate_limited", "Too Many Requests" },
  [500] = { "internal_error", "Internal Server Error" },
  [502] = { "bad_gateway", "Bad Gateway" },
  [503] = { "service_unavailable", "Service Unavailable" },
  [504] = { "gateway_timeout", "Gateway Timeout" },
}

local HTML_502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
  .. "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
  .. "</body>\r\n</html>\r\n"

local BIG_BODY_BYTES = 20 * 1024 * 1024
local PAD_PIECE = rep("x", 64 * 1024)
local SLOW_BODY_CHUNKS, SLOW_BODY_INTERVAL = 10, 0.5
local DEFAULT_FIRST_BYTE_DELAY_MS = 3000
-- The id fault-other-id answers with instead of its own.
local OTHER_ID = "00000000-0000-4000-8000-000000000000"
local MAX_RETRY_AFTER = 86400
_M.MAX_RETRY_AFTER = MAX_RETRY_AFTER

--- Send the error document for HTTP status `status`.
local function fail(status, detail)
  local reason = REASONS[status] or { "error", "Error " .. status }
  return send(status, error_doc(status, reason[1], reason[2], detail))
end

local function half(body)
  return sub(body, 1, floor(#body / 2))
end

--- Send the status line and headers of a JSON:API document of `length`
-- bytes (nil: chunked) before any of its body.
local function start_document(status, length)
  ngx.status = status
  ngx.header["Content-Type"] = respond.JSONAPI
  ngx.header["Content-Length"] = length
  return ngx.send_headers()
end

--- Send the headers and the first half of the context's document, announcing
-- all of it (or chunked), and wait until that has left nginx.
local function send_half(ctx, chunked)
  start_document(ctx.status, not chunked and #ctx.body or nil)
  ngx.print(half(ctx.body))
  return ngx.flush(true)
end

-- Handlers by fault id; each gets the context and ends the request.
local FAULTS = {}

FAULTS["fault-redirect"] = function()
  return ngx.redirect("http://other-host.invalid" .. ngx.var.request_uri, 302)
end

FAULTS["fault-html-502"] = function()
  return send(502, HTML_502, "text/html")
end

FAULTS["fault-bad-json"] = function(ctx)
  return send(ctx.status, half(ctx.body))
end

FAULTS["fault-500"] = function() return fail(500, "sandbox fault") end
FAULTS["fault-503"] = function() return fail(503, "sandbox fault") end
FAULTS["fault-504"] = function() return fail(504, "sandbox fault") end
FAULTS["fault-502-json"] = function() return fail(502, "sandbox fault") end

FAULTS["fault-429"] = function()
  ngx.header["Retry-After"] = "1"
  return fail(429, "retry after 1 s")
end

FAULTS["fault-429-date"] = function()
  ngx.update_time()
  ngx.header["Retry-After"] = ngx.http_time(ngx.time() + 1)
  return fail(429, "retry after the date in Retry-After")
end

FAULTS["fault-other-id"] = function(ctx, id)
  local literal = gsub(id, "%p", "%%%0")
  local body = gsub(ctx.body, '("id": ?)"' .. literal .. '"', '%1"' .. OTHER_ID .. '"', 1)
  return send(ctx.status, body)
end

FAULTS["fault-wrong-type"] = function(ctx)
  local body = gsub(ctx.body, '("type": ?)"' .. ctx.resource_type .. '"',
    '%1"' .. ctx.wrong_type .. '"')
  return send(ctx.status, body)
end

-- The document with a top-level "errors" member put first: empty (JSON:API
-- reads no error document there), or one entry next to the data (a document
-- JSON:API forbids: data and errors together).
local function with_errors(body, entries)
  return (gsub(body, "^%s*{", '{"errors":[' .. entries .. '],', 1))
end

FAULTS["fault-empty-errors"] = function(ctx)
  return send(ctx.status, with_errors(ctx.body, ""))
end

FAULTS["fault-data-and-errors"] = function(ctx)
  return send(ctx.status, with_errors(ctx.body, '{"status":"422","code":"sandbox_conflict",'
    .. '"title":"Sandbox conflict","detail":"data and errors in one document"}'))
end

FAULTS["fault-not-jsonapi"] = function(ctx)
  return send(ctx.status, '{"hello":"world"}')
end

FAULTS["fault-text-plain"] = function(ctx)
  return send(ctx.status, ctx.body, "text/plain")
end

-- Waits X-Sandbox-Delay-Ms (read by sandbox.routes) or 3 s before any byte.
FAULTS["fault-slow-first-byte"] = function(ctx)
  ngx.sleep((ngx.ctx.delay_header_ms or DEFAULT_FIRST_BYTE_DELAY_MS) / 1000)
  return send(ctx.status, ctx.body)
end

FAULTS["fault-slow-body"] = function(ctx)
  local body = ctx.body
  local head = floor(#body / 2)
  local piece = ceil((#body - head) / SLOW_BODY_CHUNKS)
  start_document(ctx.status, #body)
  ngx.print(sub(body, 1, head))
  ngx.flush(true)
  for i = head + 1, #body, piece do
    ngx.sleep(SLOW_BODY_INTERVAL)
    local ok = ngx.print(sub(body, i, i + piece - 1))
    if not ok or not ngx.flush(true) then
      return ngx.exit(444)
    end
  end
  return ngx.exit(ngx.HTTP_OK)
end

FAULTS["fault-reset"] = function(ctx)
  send_half(ctx, false)
  ngx.sleep(0.1) -- let the client read what was sent before the RST
  return connection.reset()
end

FAULTS["fault-truncated-chunked"] = function(ctx)
  send_half(ctx, true)
  ngx.sleep(0.1)
  return ngx.exit(444) -- closes without the terminating zero-length chunk
end

-- `body` cut where a "padding" string member goes into its top-level meta
-- (the document's last "meta"): the text before the padding, the text after.
local function around_padding(body)
  local open_end, from = nil, 1
  repeat
    local _, e = find(body, '"meta": ?{', from)
    open_end, from = e or open_end, e and e + 1
  until not e
  local rest = sub(body, open_end + 1)
  return sub(body, 1, open_end) .. '"padding": "', (match(rest, "^%s*}") and '"' or '", ') .. rest
end

FAULTS["fault-big-body"] = function(ctx)
  local head, tail = around_padding(ctx.body)
  start_document(ctx.status, BIG_BODY_BYTES)
  ngx.print(head)
  local left, pieces = BIG_BODY_BYTES - #head - #tail, 0
  while left > 0 do
    local n = min(left, #PAD_PIECE)
    ngx.print(n == #PAD_PIECE and PAD_PIECE or sub(PAD_PIECE, 1, n))
    left, pieces = left - n, pieces + 1
    -- wait for the client every 1 MiB rather than buffer 20 MiB in nginx
    if pieces % 16 == 0 and not ngx.flush(true) then
      return ngx.exit(444) -- the client hung up
    end
  end
  ngx.print(tail)
  return ngx.exit(ngx.HTTP_OK)
end

FAULTS["fault-deep"] = function(ctx)
  return send(ctx.status, rep("[", 10000) .. rep("]", 10000))
end

FAULTS["fault-bad-utf8"] = function(ctx)
  local body = gsub(ctx.body, '"label": ?"', '%0\255\254', 1)
  return send(ctx.status, body)
end

FAULTS["fault-dup-keys"] = function(ctx)
  local key = '"' .. ctx.dup_key .. '": ?'
  local body = gsub(ctx.body, key, '"' .. ctx.dup_key .. '": "' .. ctx.dup_first .. '", %0', 1)
  return send(ctx.status, body)
end

FAULTS["fault-no-response"] = function()
  ngx.req.read_body()
  return ngx.exit(444)
end

local function flaky_spec(id)
  local n, status = match(id, "^fault%-flaky%-(%d+)%-(%d%d%d)$")
  n, status = tonumber(n), tonumber(status)
  if n and status >= 400 and status <= 599 then
    return n, status
  end
end

-- fault-429-after-<N>: 429 with Retry-After: N (0 .. MAX_RETRY_AFTER).
local function retry_after_spec(id)
  local n = tonumber(match(id, "^fault%-429%-after%-(%d%d?%d?%d?%d?)$"))
  if n and n <= MAX_RETRY_AFTER then
    return n
  end
end

-- fault-applied-<code> / fault-applied-no-response: "no-response" or the status.
local function applied_spec(id)
  local what = match(id, "^fault%-applied%-(.+)$")
  if what == "no-response" then
    return what
  end
  local status = tonumber(what and match(what, "^%d%d%d$"))
  if status and status >= 400 and status <= 599 then
    return status
  end
end

-- fault-read-<status>[-txid]: the status a payout's read shows, and whether
-- it shows a txid.
local function read_spec(id)
  local status = match(id, "^fault%-read%-([%w_]+)%-txid$")
  if status then
    return status, true
  end
  status = match(id, "^fault%-read%-([%w_]+)$")
  if status then
    return status, false
  end
end

-- `<fault id>~<tag>` (e.g. fault-reset~b1, fault-flaky-2-503~t7): the same
-- fault as `<fault id>`, counted apart (the counter is the whole id's) and,
-- as a payout, a draft of its own: one fault played by many callers at once,
-- each reading its own count. Returns the fault id without its tag.
local function untagged(id)
  return match(id, "^(.-)~%w+$") or id
end

--- Whether `id` is a fault id (`~<tag>` after it allowed).
function _M.is_fault(id)
  id = untagged(id)
  return FAULTS[id] ~= nil or flaky_spec(id) ~= nil or retry_after_spec(id) ~= nil or
    applied_spec(id) ~= nil or read_spec(id) ~= nil
end

-- A payout's confirm carried out, then answered badly: the fault after the
-- state changed (PUT only; a PUT that finds it processing, and every other
-- request, behaves).
local function applied(ctx, what)
  if not ctx.apply or not ctx.apply() then
    return send(ctx.normal())
  end
  if what == "no-response" then
    ngx.req.read_body()
    return ngx.exit(444)
  end
  return fail(what, "sandbox fault: the confirm was carried out, then this answer")
end

-- A confirm whose answer is lost, and a read that shows what it shows: a
-- payout's PUT answers 502 (changing nothing), its GET the payout with the
-- fault's status (and txid); anything else behaves.
local function read_as(ctx, status, txid)
  if ctx.read_as then
    return send(ctx.read_as(status, txid))
  end
  if ctx.apply then
    return fail(502, "sandbox fault: the answer to this confirm is lost")
  end
  return send(ctx.normal())
end

--- Whether fault `id` does its own waiting (the sandbox latency is not added).
function _M.owns_delay(id)
  return untagged(id) == "fault-slow-first-byte"
end

--- Answer the request for fault id `id` (see is_fault) in context `ctx`.
-- `ctx.counter` (optional): the counter a flaky fault reads (default: id's).
function _M.respond(id, ctx)
  local tagged = id
  id = untagged(id)
  local handler = FAULTS[id]
  if handler then
    return handler(ctx, tagged)
  end
  local secs = retry_after_spec(id)
  if secs then
    ngx.header["Retry-After"] = tostring(secs)
    return fail(429, format("retry after %d s", secs))
  end
  local what = applied_spec(id)
  if what then
    return applied(ctx, what)
  end
  local read_status, txid = read_spec(id)
  if read_status then
    return read_as(ctx, read_status, txid)
  end
  local n, status = flaky_spec(id)
  local seen = state.count(ctx.counter or tagged)
  if seen <= n then
    return fail(status, format("sandbox fault: request %d of the first %d fails", seen, n))
  end
  return send(ctx.normal())
end

return _M

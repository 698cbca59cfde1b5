--- Everything the sandbox remembers between requests, in the shared dict
-- `sandbox` (one worker, but the dict also survives a reload of the code):
--   n:<id>  requests seen for a resource id
--   p:<id>  "processing" once payout <id> is confirmed (absent: draft)
--   c:<id>  when payout <id> was confirmed, ms since the epoch
--   l:<id>  latency in ms for requests about <id>; "latency": for all requests
--   x:<id>  ms from confirm to txid for payout <id>; "txid_after": for all payouts
--   h:<id>  the headers of the last request counted for <id>, as JSON,
--           but its traceparent: that one, of every request new bytes, is
--   hp:<id> kept apart (flags 1: repeated, a JSON array), so that h:<id> is
--           the same string from one request of a client to the next.  Made
--           into one JSON string, the headers of each traced request were a
--           new string differing from the last only in bytes LuaJIT's string
--           hash does not read: each such string still alive shared one
--           hash chain, and a traced request cost the sandbox tens of us more
--   t:<id>  how many requests counted for <id> had their traceparent kept;
--   t:<id>:<k>  the traceparent header of the k-th (mod 64; "-" for one
--           without): the last 64 are kept, at a constant cost per request
--   echo_key  true while API answers echo the Authorization value
local cjson = require "cjson.safe"

-- the traceparents kept per id (the last ones): enough for any spec's call
local TRACEPARENTS_KEPT = 64

local dict = ngx.shared.sandbox

local _M = {}

--- Count one request for resource `id`; returns the new count.
function _M.hit(id)
  return assert(dict:incr("n:" .. id, 1, 0))
end

--- Remember `headers` (ngx.req.get_headers(): lower-case names, a table of
-- values for a repeated header) as those of the last request for resource
-- `id`; the api key is left out.
function _M.set_headers(id, headers)
  local copy = {}
  for name, value in pairs(headers) do
    if name ~= "authorization" and name ~= "traceparent" then
      copy[name] = value
    end
  end
  dict:set("h:" .. id, cjson.encode(copy) or "{}")
  local tp = headers.traceparent
  if type(tp) == "table" then
    dict:set("hp:" .. id, cjson.encode(tp) or "[]", 0, 1)
  else
    dict:set("hp:" .. id, tp) -- nil: deleted
  end
  tp = type(tp) == "string" and tp or (tp and table.concat(tp, ",")) or "-"
  local n = dict:incr("t:" .. id, 1, 0)
  dict:set("t:" .. id .. ":" .. n % TRACEPARENTS_KEPT, tp)
end

--- The traceparent of each of the last 64 requests counted for resource
-- `id` since the last reset, in order ("-" for a request without one).
function _M.traceparents(id)
  local out, n = {}, dict:get("t:" .. id) or 0
  for k = math.max(1, n - TRACEPARENTS_KEPT + 1), n do
    out[#out + 1] = dict:get("t:" .. id .. ":" .. k % TRACEPARENTS_KEPT)
  end
  return out
end

--- The headers of the last request counted for resource `id`, as a JSON
-- object, or nil when none came since the last reset.
function _M.headers(id)
  local json = dict:get("h:" .. id)
  local tp, repeated = dict:get("hp:" .. id)
  if json == nil or tp == nil then
    return json
  end
  local all = cjson.decode(json) or {}
  all.traceparent = repeated == 1 and cjson.decode(tp) or tp
  return cjson.encode(all)
end

--- Requests counted for resource `id` since the last reset.
function _M.count(id)
  return dict:get("n:" .. id) or 0
end

--- Move payout `id` from draft to processing. True if this call did it,
-- false if it was already processing.
function _M.confirm(id)
  local ok, err = dict:add("p:" .. id, "processing")
  if not ok and err ~= "exists" then
    error("sandbox: shared dict: " .. tostring(err))
  end
  if ok then
    ngx.update_time()
    dict:set("c:" .. id, ngx.now() * 1000)
  end
  return ok
end

--- When payout `id` was confirmed (ms since the epoch), or nil for a draft.
function _M.confirmed_at(id)
  return dict:get("c:" .. id)
end

--- Set the ms from confirm to txid (-1: never), for payout `id` or (id nil)
-- for every payout without a setting of its own.
function _M.set_txid_after(ms, id)
  dict:set(id and "x:" .. id or "txid_after", ms)
end

--- The configured ms from confirm to txid for payout `id` (id nil: the
-- setting for every payout); nil when none was configured.
function _M.txid_after(id)
  return dict:get(id and "x:" .. id or "txid_after")
end

--- "draft" or "processing".
function _M.payout_status(id)
  return dict:get("p:" .. id) or "draft"
end

--- Set the added latency in ms, for resource `id` or (id nil) for every request.
function _M.set_latency(ms, id)
  dict:set(id and "l:" .. id or "latency", ms)
end

--- The added latency in ms for a request about resource `id` (may be nil).
function _M.latency(id)
  return id and dict:get("l:" .. id) or dict:get("latency") or 0
end

--- Turn the echo_key mode on or off (see sandbox.routes).
function _M.set_echo_key(on)
  dict:set("echo_key", on and true or false)
end

--- Whether API answers echo the Authorization value (echo_key mode).
function _M.echo_key()
  return dict:get("echo_key") == true
end

--- Forget everything: drafts back to draft, counters and settings cleared.
function _M.reset()
  dict:flush_all()
  dict:flush_expired()
end

return _M

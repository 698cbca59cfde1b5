--- Everything the sandbox remembers between requests, in the shared dict
-- `sandbox` (one worker, but the dict also survives a reload of the code):
--   n:<id>  requests seen for a resource id
--   p:<id>  "processing" once payout <id> is confirmed (absent: draft)
--   l:<id>  latency in ms for requests about <id>; "latency": for all requests
local dict = ngx.shared.sandbox

local _M = {}

--- Count one request for resource `id`; returns the new count.
function _M.hit(id)
  return assert(dict:incr("n:" .. id, 1, 0))
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
  return ok
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

--- Forget everything: drafts back to draft, counters and settings cleared.
function _M.reset()
  dict:flush_all()
  dict:flush_expired()
end

return _M

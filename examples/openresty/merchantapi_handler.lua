--- An OpenResty handler: reads a deposit channel and lists an account's
-- receiving addresses through merchantapi, and answers JSON.  The calls go
-- over cosockets (merchantapi.transport.ngx): while one request waits for
-- the service, the worker serves the others.
--
--   GET /channel-and-addresses?channel=<channel id>&account=<account id>
--   GET /metrics   the calls' metrics, as Prometheus text, for every worker
--
-- nginx.conf (beside this file) wires it up:
--   content_by_lua_block { require("merchantapi_handler").channel_and_addresses() }
--   content_by_lua_block { require("merchantapi_handler").metrics() }
local cjson = require "cjson.safe"
local merchantapi = require "merchantapi"
local ngx_transport = require "merchantapi.transport.ngx"

local ngx = ngx
local type, ipairs, tostring = type, ipairs, tostring
local getenv = os.getenv

local M = {}

-- One client per worker.  With a custom transport a client may serve every
-- request of the worker at once: each call keeps its own state.
local client

local function worker_client()
  if not client then
    local c, err = merchantapi.new {
      base_url = getenv("MERCHANTAPI_BASE_URL"),   -- nginx.conf: env MERCHANTAPI_BASE_URL;
      api_key = getenv("MERCHANTAPI_API_KEY"),     -- nginx.conf: env MERCHANTAPI_API_KEY;
      transport = ngx_transport.request,
      -- the defaults of merchantapi.new (timeout 30 s, deadline 91.5 s) are far
      -- longer than a request should wait: in your handler, give timeout,
      -- connect_timeout and deadline within the request's budget, and each call
      -- a deadline of what is left (docs/guide/openresty.md, "Timeouts in a
      -- request handler")
      -- counts in nginx.conf's lua_shared_dict: every worker adds to them
      metrics = "merchantapi_metrics",
    }
    if not c then
      return nil, err
    end
    client = c
  end
  return client
end

local function reply(status, value)
  ngx.status = status
  ngx.header["Content-Type"] = "application/json"
  ngx.say(cjson.encode(value))
  return ngx.exit(status)
end

local function failed(err)
  -- a 404 from the service is the caller's mistake; anything else is ours
  return reply(err.status == 404 and 404 or 502,
    { error = tostring(err), kind = err.kind, request_id = err.request_id })
end

--- The content handler.  `c` is the client to use (default: the worker's,
-- over cosockets).
function M.channel_and_addresses(c)
  local args = ngx.req.get_uri_args()
  local channel_id, account_id = args.channel, args.account
  if type(channel_id) ~= "string" or type(account_id) ~= "string" then
    return reply(400, { error = "query parameters channel and account are required" })
  end
  local err
  if not c then
    c, err = worker_client()
    if not c then
      return reply(500, { error = tostring(err) })
    end
  end

  local channel
  channel, err = c:get_channel(channel_id)
  if not channel then
    return failed(err)
  end
  local addresses
  addresses, err = c:addresses(account_id, { per_page = 100 }):all()
  if not addresses then
    return failed(err)
  end

  local out = {}
  for i, a in ipairs(addresses) do
    out[i] = {
      id = a.id,
      value = a.value or cjson.null, -- still being generated
      network = a.network and a.network.code or cjson.null,
    }
  end
  return reply(200, {
    channel = {
      id = channel.id,
      status = channel.status,
      address = channel.address,
      pay_currency = channel.payCurrency,
      target_account = {
        currency = channel.targetAccount.currencyCode,
        balance = channel.targetAccount.balance, -- a decimal string: exact
      },
    },
    addresses = out,
    count = #out,
  })
end

--- The `/metrics` handler: what every worker's calls added up to, as
-- Prometheus text (`client:metrics("prometheus")`), for a scraper.
function M.metrics()
  local c, err = worker_client()
  local text
  if c then
    text, err = c:metrics("prometheus")
  end
  if not text then
    return reply(500, { error = tostring(err) })
  end
  ngx.header["Content-Type"] = "text/plain; version=0.0.4"
  ngx.print(text)
end

return M

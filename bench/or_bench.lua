--- The two handlers of the OpenResty rows of `make bench` (bench/openresty.conf),
-- one nginx worker, driven by wrk over keep-alive connections:
--
--   /bench/mapi  `client:get_channel(id)` over the cosocket transport
--                (merchantapi.transport.ngx): the request built and the answer
--                decoded, resolved and mapped by the C core, one client per
--                worker shared by every request;
--   /bench/mapi_metrics, /bench/mapi_trace  the same on a client made with
--                `metrics = "merchantapi_metrics"` (the example's
--                lua_shared_dict) or `trace = true`: what each adds;
--   /bench/bare  the same GET (the same request line and headers, to the same
--                keep-alive pool size) with a bare cosocket: the request out,
--                the status line, the headers and the body read -- nothing
--                decoded.  The limit of a client inside nginx.
--
-- Both answer 200 with a few bytes, or 500 with the error.  The base URL
-- and key come from MERCHANTAPI_BASE_URL and MERCHANTAPI_API_KEY (nginx's
-- `env` directives of examples/openresty/nginx.conf).
local merchantapi = require "merchantapi"
local ngx_transport = require "merchantapi.transport.ngx"

local ngx = ngx
local getenv = os.getenv
local pairs, tonumber, tostring = pairs, tonumber, tostring
local find, lower, match, sub = string.find, string.lower, string.match, string.sub

local CHANNEL_ID = "60e05bc0-4690-4985-a08a-8acf00e48294"

local M = {}

local clients = {} -- one per worker and handler, made at its first request

local function fail(what)
  ngx.status = 500
  ngx.say(tostring(what))
  return ngx.exit(500)
end

local function get_channel(name, extra)
  local client = clients[name]
  if not client then
    local opts = {
      base_url = getenv("MERCHANTAPI_BASE_URL"),
      api_key = getenv("MERCHANTAPI_API_KEY"),
      transport = ngx_transport.request,
    }
    for k, v in pairs(extra) do
      opts[k] = v
    end
    client = assert(merchantapi.new(opts))
    clients[name] = client
  end
  local channel, err = client:get_channel(CHANNEL_ID)
  if not channel then
    return fail(err)
  end
  if not channel.targetAccount then
    return fail("no targetAccount")
  end
  ngx.say("ok")
end

function M.mapi()
  return get_channel("mapi", {})
end

function M.mapi_metrics()
  return get_channel("metrics", { metrics = "merchantapi_metrics" })
end

function M.mapi_trace()
  return get_channel("trace", { trace = true })
end

-- The request bytes merchantapi.transport.ngx sends for that call: the
-- request the core builds is caught once by a transport that sends nothing.
local request, host, port
local function prepare()
  local caught
  local c = assert(merchantapi.new {
    base_url = getenv("MERCHANTAPI_BASE_URL"),
    api_key = getenv("MERCHANTAPI_API_KEY"),
    max_retries = 0,
    transport = function(req)
      caught = req
      return nil, { message = "caught", sent = false }
    end,
  })
  c:get_channel(CHANNEL_ID)
  local authority, path = match(caught.url, "^http://([^/]+)(.*)$")
  assert(authority, "bench: MERCHANTAPI_BASE_URL must be an http:// URL")
  host, port = match(authority, "^([^:]+):?(%d*)$")
  port = tonumber(port) or 80
  local out = { "GET ", path, " HTTP/1.1\r\nHost: ", authority, "\r\n" }
  for name, value in pairs(caught.headers) do
    out[#out + 1] = name .. ": " .. value .. "\r\n"
  end
  out[#out + 1] = "\r\n"
  request = table.concat(out)
end

function M.bare()
  if not request then
    prepare()
  end
  local sock = ngx.socket.tcp()
  sock:settimeouts(10000, 30000, 30000)
  local ok, err = sock:connect(host, port, { pool = "bench-bare" })
  if not ok then
    return fail(err)
  end
  ok, err = sock:send(request)
  if not ok then
    return fail(err)
  end
  local line
  line, err = sock:receive("*l")
  if not line then
    return fail(err)
  end
  local status = tonumber(sub(line, 10, 12))
  local length
  while true do
    line, err = sock:receive("*l")
    if not line then
      return fail(err)
    end
    if line == "" then
      break
    end
    local colon = find(line, ":", 1, true)
    if colon and lower(sub(line, 1, colon - 1)) == "content-length" then
      length = tonumber(match(line, "%d+", colon + 1))
    end
  end
  local body
  body, err = sock:receive(length or 0)
  if not body then
    return fail(err)
  end
  sock:setkeepalive(60000, 16)
  if status ~= 200 then
    return fail("status " .. tostring(status))
  end
  ngx.say("ok ", #body)
end

return M

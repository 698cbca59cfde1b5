--- The fault servers of tests/servers/ as a row of the fault matrix sees
-- them (spec/faults/fault_matrix_spec.lua): start, stop, base URL and what
-- reached them, shared by the rows of one file (started by the first row
-- that runs, stopped with the last).
--
--     local h2 = fault_servers.new("h2_fault.py", { tls = true })
--     row.start, row.stop, row.base_url, row.reached = h2.start, h2.stop, h2.base_url, h2.reached
--
-- Every list they serve is the sandbox's acct-22 (fetched from the sandbox
-- at start, paged by the server), so the matrix compares the same ids.
local test_server = require "support.test_server"

local concat, tonumber = table.concat, tonumber
local io_open = io.open

local M = {}

local read_file = require("helpers").read_file

-- The sandbox's acct-22, the whole list in one document, into a file.
local function fetch_reference(helpers, sandbox_url)
  local http = require "socket.http"
  local ltn12 = require "ltn12"
  local chunks = {}
  local ok, status = http.request({
    url = sandbox_url .. "/api/public/v1/accounts/acct-22/addresses"
      .. "?order=created_at&order_type=asc&page=1&per_page=100",
    headers = { authorization = "Bearer " .. helpers.API_KEY },
    sink = ltn12.sink.table(chunks),
  })
  assert(ok and status == 200, "acct-22 from the sandbox: " .. tostring(status))
  local path = os.tmpname()
  local f = assert(io_open(path, "wb"))
  f:write(concat(chunks))
  f:close()
  return path
end

local function unescape(s)
  return (s:gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end))
end

--- A server of tests/servers/<script> for rows.
-- @tparam string script e.g. "h2_fault.py"
-- @tparam table opts `tls` (true: HTTPS with the sandbox's test certificate;
--   its plain HTTP/1.1 port serves the drivers that speak nothing else)
-- @treturn table `start(ctx)`, `stop(ctx)`, `base_url(ctx, driver)`,
--   `reached(ctx, id)`, `cafile()` (the test CA, once started), `server`
--   (test_server's table, once started)
function M.new(script, opts)
  opts = opts or {}
  local s = { refs = 0 }

  function s.start(ctx)
    s.refs = s.refs + 1
    if s.server then
      return
    end
    local helpers = ctx.helpers or require "helpers"
    s.reference = fetch_reference(helpers, ctx.sandbox_url or helpers.base_url())
    local args = { "--addresses", s.reference }
    if opts.tls then
      s.ca = helpers.ca_file()
      local tls = s.ca:match("^(.*)/ca%.pem$")
      args[#args + 1] = "--cert"
      args[#args + 1] = tls .. "/server.pem"
      args[#args + 1] = "--key"
      args[#args + 1] = tls .. "/server.key"
    end
    s.server = test_server.start(script, args)
    if opts.tls then
      s.url = "https://localhost:" .. s.server.port
      s.plain_url = "http://127.0.0.1:" .. assert(tonumber(read_file(s.server.dir .. "/plain_port")))
    else
      s.url = "http://127.0.0.1:" .. s.server.port
    end
  end

  function s.stop()
    s.refs = s.refs - 1
    if s.refs > 0 or not s.server then
      return
    end
    s.server.stop()
    os.remove(s.reference)
    s.server = nil
  end

  --- The base URL for `driver`: the plain HTTP/1.1 port for the LuaSocket
  -- transport (its https checks no certificate), else the server's own (the
  -- cosocket transport offers no ALPN over TLS: HTTP/1.1 there).
  function s.base_url(_, driver)
    if s.plain_url and driver == "transport" then
      return s.plain_url
    end
    return s.url
  end

  --- How many requests for `id` (a path segment: a resource's id or an
  -- account; "<account>/page<N>": that account's page N) the server took on
  -- (answered, or failed after taking: never a stream refused or left above
  -- a GOAWAY's last_stream_id), over every protocol.
  function s.reached(_, id)
    local account, page = id:match("^(.*)/page(%d+)$")
    local want = account or id
    local n = 0
    for key, count in pairs(s.server.counts()) do
      local path = key:match("^processed %S+ %S+ (.*)$")
      if path then
        local p = path:match("^[^?]*")
        local found = false
        for seg in p:gmatch("[^/]+") do
          if unescape(seg) == want then
            found = true
          end
        end
        if found and page then
          found = tonumber(path:match("[?&]page=(%d+)")) == tonumber(page)
        end
        if found then
          n = n + math.floor(count)
        end
      end
    end
    return n
  end

  function s.cafile()
    return s.ca
  end

  return s
end

--- A row's fields start/stop/base_url/reached for server `s` (M.new), with
-- `row.opts.cafile` set at start when the server speaks TLS.
function M.attach(row, s)
  row.start = function(ctx)
    s.start(ctx)
    if s.cafile() then
      row.opts = row.opts or {}
      row.opts.cafile = s.cafile()
    end
  end
  row.stop = s.stop
  row.base_url = s.base_url
  row.reached = s.reached
  return row
end

return M

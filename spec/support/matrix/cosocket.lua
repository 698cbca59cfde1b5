--- The cosocket driver of the fault matrix (spec/faults/fault_matrix_spec.lua):
-- an nginx location (`content_by_lua_block { require("support.matrix.cosocket").row() }`)
-- that takes rows' cells as JSON, `{ units = { { opts = <client options>, cells =
-- { { specs = { <cell spec>, ... } }, ... } }, ... } }` (a unit: one row), makes one client per cell
-- over the OpenResty cosocket transport, runs each spec of the cell in a
-- light thread of its own (all of them at once, in this one worker), and
-- answers the results (spec/support/matrix/cell.lua) as JSON, in order.
local cjson = require "cjson.safe"
local merchantapi = require "merchantapi"
local ngx_transport = require "merchantapi.transport.ngx"
local cell = require "support.matrix.cell"

local ngx = ngx -- luacheck: globals ngx (inside nginx)

local M = {}

local function fail(status, message)
  ngx.status = status
  ngx.say(message)
  return ngx.exit(status)
end

--- content_by_lua handler: runs the cells of the request body.
function M.row()
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  local job = body and cjson.decode(body)
  if type(job) ~= "table" or type(job.units) ~= "table" then
    return fail(400, "matrix: a JSON body { units = { { opts, cells }, ... } } expected")
  end
  local threads, clients, results = {}, {}, {}
  for u, unit in ipairs(job.units) do
    results[u] = {}
    for i, c in ipairs(unit.cells) do
      local opts = {}
      for k, v in pairs(unit.opts or {}) do
        opts[k] = v
      end
      opts.transport = ngx_transport.request
      opts.cafile, opts.capath = nil, nil -- cosockets trust lua_ssl_trusted_certificate
      local client, err = merchantapi.new(opts)
      if not client then
        return fail(500, "matrix: merchantapi.new: " .. tostring(err))
      end
      clients[#clients + 1] = client
      results[u][i] = {}
      for t, spec in ipairs(c.specs) do
        threads[#threads + 1] = { results[u][i], t, ngx.thread.spawn(cell.run, client, spec) }
      end
    end
  end
  for _, th in ipairs(threads) do
    local ok, r = ngx.thread.wait(th[3])
    th[1][th[2]] = ok and r or cell.raised(r)
  end
  for _, client in ipairs(clients) do
    client:close()
  end
  if cjson.encode_empty_table_as_object then
    cjson.encode_empty_table_as_object(false)
  end
  ngx.header["Content-Type"] = "application/json"
  ngx.say(cjson.encode(results))
end

return M

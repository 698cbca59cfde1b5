--- Internal: `merchantapi request METHOD PATH`: calls any endpoint under the base URL.
-- @module merchantapi.cli.request
local term = require "merchantapi.cli.term"
local status = require "merchantapi.cli.status"
local output = require "merchantapi.cli.output"
local client = require "merchantapi.cli.client"

local request = { summary = "Call any endpoint: METHOD PATH under the base URL." }

--- Declares the command's arguments and options.
-- @param cmd the command's argparse parser.
function request.declare(cmd)
  cmd:argument("method", "GET, HEAD, POST, PUT, PATCH or DELETE."):argname("METHOD")
  cmd:argument("path", "The path, percent-encoded: /api/public/v1/..."):argname("PATH")
  -- the short names hidden: argparse would write each name on a line of its own
  cmd:option("--query", "A query parameter (repeatable; a key given twice repeats; or -q).")
    :argname("KEY=VALUE"):count("*"):hidden_name("-q")
  cmd:option("--body", "The body, sent byte for byte: JSON text, or @FILE (@- for stdin; or -d).")
    :argname("JSON|@FILE"):hidden_name("-d")
end

-- the --query words as the module's query table (a key given twice: a list)
local function query_of(words)
  local query
  for _, q in ipairs(words) do
    local k, v = q:match("^([^=]+)=(.*)$")
    if not k then
      term.die(status.EXIT.usage, "--query takes key=value, got '" .. q .. "'")
    end
    query = query or {}
    local have = query[k]
    if type(have) == "table" then have[#have + 1] = v else query[k] = have == nil and v or { have, v } end
  end
  return query
end

-- the body: the text, or @FILE's bytes (@- stdin)
local function body_of(body)
  if not body or body:sub(1, 1) ~= "@" then
    return body
  end
  local f, err = term.stdin, nil
  if body ~= "@-" then f, err = io.open(body:sub(2), "rb") end
  local text = (f or term.die(status.EXIT.usage, "cannot read --body " .. body .. ": " .. tostring(err))):read("*a")
  if f ~= term.stdin then f:close() end
  return text
end

-- whether a value is a list: an array, with .meta or not (a resource has string keys)
local function is_list(value)
  if type(value) ~= "table" then
    return false
  end
  for k in pairs(value) do
    if type(k) ~= "number" and k ~= "meta" then
      return false
    end
  end
  return true
end

--- Runs the command: writes the resource, or the list and its meta.
-- @tparam table o the parsed command line.
function request.run(o)
  local method = o.method:upper()
  local what = { method = method }
  local query, body = query_of(o.query), body_of(o.body)
  local value, err = client.new(o, what):request(method, o.path, { query = query, body = body })
  if not value then
    status.fail(err, what)
  elseif is_list(value) then
    local w = output.list(o.format, { "id", "type" })
    w.start()
    w.page(value)
    w.finish(value.meta, string.format("%d item%s", #value, #value == 1 and "" or "s"))
  else
    output.resource(value, o.format)
  end
end

return request

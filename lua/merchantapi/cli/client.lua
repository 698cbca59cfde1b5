--- Internal: the command-line tool's client, from its options and the environment.
-- `--verbose` turns on the module's own attempt line (the client option `debug`,
-- one formatter in the core) rather than writing one of its own.
-- @module merchantapi.cli.client
local merchantapi = require "merchantapi"
local core = require "merchantapi.core"
local term = require "merchantapi.cli.term"
local status = require "merchantapi.cli.status"

local client = {}

-- a converter of an option's text to a number; the limits are the module's (src/limits.c)
local function numeric(pattern, what)
  return function(s)
    local n = s:match(pattern) and tonumber(s)
    if not n then
      return nil, string.format("expected %s, got '%s'", what, s)
    end
    return math.tointeger and math.tointeger(n) or n
  end
end
--- An endpoint as the help shows it ("GET /api/public/v1/channels/ID"), from the core's table.
-- @tparam string name the name of a row of `core.endpoints`.
-- @treturn string the method and the path.
function client.endpoint(name)
  return core.endpoints[name].method .. " " .. core.path(name, "ID")
end

--- An argparse converter: an integer's digits.
client.integer = numeric("^%d+$", "an integer")
--- An argparse converter: seconds (a number, not negative).
client.seconds = numeric("^%d+%.?%d*$", "seconds (a number >= 0)")

-- the client's options: { kind, names, help, argname, convert, count, hidden alias }
local OPTIONS = {
  { "flag", "--json", "Write JSON: the flattened resource, or {\"data\":[...],\"meta\":{...}} "
    .. "for a list; exact numbers (decimal strings stay strings)." },
  { "flag", "--csv", "Write CSV (RFC 4180 quoting): a header, then one line per item." },
  { "option", "--base-url", "The service's base URL (default: $MERCHANTAPI_BASE_URL).", "URL" },
  { "option", "--api-key-file", "Read the api key from FILE, one line (default: $MERCHANTAPI_API_KEY).", "FILE" },
  -- -H: a hidden alias, so that the help shows one label on one line (argparse
  -- writes each name of an option with an argument on a line of its own)
  { "option", "--header", "Add 'Name: value' to each request (repeatable; or -H).",
    "HEADER", nil, "*", "-H" },
  { "option", "--timeout", "Seconds for one request (default "
    .. string.format("%g", core.defaults.timeout) .. ").", "SECONDS", client.seconds },
  { "option", "--deadline", "Seconds for one whole call, retries included.", "SECONDS", client.seconds },
  { "option", "--max-retries", "Retries after the first attempt (default "
    .. core.defaults.max_retries .. ").", "N", client.integer },
  { "flag", "-v --verbose", "Log every attempt on stderr (never the key nor a header)." },
}

--- Declares the client's options, which every command takes before or after its name.
-- @param p the top-level argparse parser.
-- @treturn string their names, for a command's help.
function client.declare(p)
  local names = {}
  for i, d in ipairs(OPTIONS) do
    local e = p[d[1]](p, d[2], d[3])
    if d[4] then e:argname(d[4]) end
    if d[5] then e:convert(d[5]) end
    if d[6] then e:count(d[6]) end
    if d[7] then e:hidden_name(d[7]) end
    names[i] = d[2]:match("%S+$")
  end
  return table.concat(names, ", ")
end

-- the key from a file: one line, its line end dropped; several lines are refused
local function read_key_file(path)
  local usage, f, err = status.EXIT.usage, io.open(path, "rb")
  local key = (f or term.die(usage, "cannot read --api-key-file: " .. tostring(err))):read("*a"):gsub("\r?\n$", "")
  f:close()
  if key == "" then
    term.die(usage, "--api-key-file " .. path .. " is empty")
  elseif key:find("[\r\n]") then
    term.die(usage, "--api-key-file " .. path .. " holds more than one line (the key alone is expected)")
  end
  return key
end

--- Makes the client of a command (a failure ends the tool).
-- @tparam table o the parsed command line (base_url, api_key_file, header, timeout, ...).
-- @tparam[opt] table what as for `merchantapi.cli.status.fail`, for the errors of making it.
-- @return the client.
function client.new(o, what)
  local base_url = o.base_url or term.getenv("MERCHANTAPI_BASE_URL")
  if base_url == nil or base_url == "" then
    term.die(status.EXIT.usage, "no base URL: set MERCHANTAPI_BASE_URL or pass --base-url")
  end
  local key, key_from = term.getenv("MERCHANTAPI_API_KEY"), "MERCHANTAPI_API_KEY"
  if o.api_key_file then
    key, key_from = read_key_file(o.api_key_file), "--api-key-file " .. o.api_key_file
  elseif key == "" or key == nil then
    key, key_from = nil, nil
  end
  local headers
  for _, h in ipairs(o.header) do
    local name, value = h:match("^([^:]*):[ \t]*(.-)[ \t]*$")
    if not name then -- not repeated: it may be a secret
      term.die(status.EXIT.usage, "--header takes 'Name: value' (one of them has no ':')")
    end
    headers = headers or {}
    headers[name] = value
  end
  if o.verbose then
    term.note(string.format("base URL %s; api key %s", base_url,
      key_from and ("from " .. key_from) or "none (no Authorization header)"))
  end
  local c, err = merchantapi.new({ base_url = base_url, api_key = key, headers = headers,
    timeout = o.timeout, max_retries = o.max_retries, deadline = o.deadline,
    debug = o.verbose or nil })
  return c or status.fail(err, what)
end

return client

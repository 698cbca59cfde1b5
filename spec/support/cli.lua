--- The command-line tool run for its specs (spec/cli/*_spec.lua):
-- as a process on the Lua the spec runs on (cli),
-- in this process (run: merchantapi.cli.run with streams of its own), under a
-- pseudo-terminal (cli_tty); every stdout and stderr it wrote kept in
-- `outputs` (cli_spec and output_spec check the key is in none); and the fixtures' scalars
-- looked for in its JSON, table and CSV output; and the describe of those
-- spec files (describe_tool), with the client their specs read (client).
local helpers = require "helpers"
local assert = require "luassert"
local busted = require "busted"

local format = string.format
local quote = helpers.shell_quote

local BIN = helpers.ROOT .. "/bin/merchantapi"
local KEY = helpers.API_KEY
local PAYOUT = helpers.PAYOUT_ID
local CHANNEL = helpers.CHANNEL_ID
local FIRST_ADDRESS = helpers.FIXTURE_ADDRESS

local cli_module = require "merchantapi.cli"
local EXIT = require("merchantapi.cli.status").EXIT

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local outputs = {} -- every stdout and stderr the tool wrote, for the key check

-- Runs the tool: args is a string of shell words.  opts: stdin (text),
-- env (a string of NAME=value words), key (false: no MERCHANTAPI_API_KEY),
-- prefix (a command put before the interpreter, e.g. /usr/bin/time ...).
-- Returns stdout, stderr, exit code.
local function cli(args, opts)
  opts = opts or {}
  local o, e, i = os.tmpname(), os.tmpname(), os.tmpname()
  write_file(i, opts.stdin or "")
  local env = format("MERCHANTAPI_BASE_URL=%s", quote(opts.base_url or helpers.base_url()))
  if opts.key ~= false then
    env = env .. " MERCHANTAPI_API_KEY=" .. quote(KEY)
  end
  local cmd = format("env -u MERCHANTAPI_API_KEY -u MERCHANTAPI_DEBUG %s %s %s %s %s %s <%s >%s 2>%s; echo $?",
    env, opts.env or "", opts.prefix or "", helpers.lua_command(), quote(BIN), args, i, o, e)
  local p = assert(io.popen(cmd))
  local code = tonumber(p:read("*a"):match("(%d+)%s*$"))
  p:close()
  local stdout, stderr = read_file(o), read_file(e)
  os.remove(o)
  os.remove(e)
  os.remove(i)
  outputs[#outputs + 1] = stdout
  outputs[#outputs + 1] = stderr
  return stdout, stderr, code
end

-- A stream for merchantapi.cli.run: what is written, and `input` to read.
local function stream(input)
  local b = { parts = {}, input = input or "" }
  function b.write(self, ...)
    for i = 1, select("#", ...) do
      self.parts[#self.parts + 1] = select(i, ...)
    end
    return self
  end
  function b.flush(self)
    return self
  end
  function b.read(self, how)
    local text = self.input
    if how == "*a" or how == "a" then
      self.input = ""
      return text
    elseif text == "" then
      return nil
    end
    local line, rest = text:match("^([^\n]*)\n?(.*)$")
    self.input = rest
    return line
  end
  return b
end

-- The words of a shell command line as cli() is given it: spaces, 'quoted' words, \'.
local function words(s)
  local list, word, i = {}, nil, 1
  while i <= #s do
    local c = s:sub(i, i)
    if c == "'" then
      local j = s:find("'", i + 1, true)
      word, i = (word or "") .. s:sub(i + 1, j - 1), j
    elseif c == "\\" then
      word, i = (word or "") .. s:sub(i + 1, i + 1), i + 1
    elseif c:match("%s") then
      list[#list + 1], word = word, nil
    else
      word = (word or "") .. c
    end
    i = i + 1
  end
  list[#list + 1] = word
  return list
end

-- The tool in this process (merchantapi.cli.run): as cli(), with opts.tty (stdin
-- and stderr are terminals) for what a terminal changes.
local function run(args, opts)
  opts = opts or {}
  local out, err = stream(), stream()
  local env = { MERCHANTAPI_BASE_URL = opts.base_url or helpers.base_url(), MERCHANTAPI_API_KEY = KEY }
  local code = cli_module.run(type(args) == "table" and args or words(args), {
    stdout = out, stderr = err, stdin = stream(opts.stdin),
    isatty = function() return opts.tty or false end,
    getenv = function(name) return env[name] end,
  })
  out, err = table.concat(out.parts), table.concat(err.parts)
  outputs[#outputs + 1] = out
  outputs[#outputs + 1] = err
  return out, err, code
end

-- The same under a pseudo-terminal (`script`): stdin, stdout and stderr are
-- the terminal; `input` is typed into it.  Returns what the terminal showed
-- and the exit code.
local function cli_tty(args, input)
  -- a sanitizer's preload goes to the tool's Lua only, not to `script`
  local preload = os.getenv("LD_PRELOAD")
  local cmd = format("env -u MERCHANTAPI_DEBUG %s MERCHANTAPI_BASE_URL=%s MERCHANTAPI_API_KEY=%s %s %s %s",
    preload and ("LD_PRELOAD=" .. quote(preload)) or "", quote(helpers.base_url()), quote(KEY),
    helpers.lua_command(), quote(BIN), args)
  local i = os.tmpname()
  write_file(i, input or "")
  local p = assert(io.popen(format("env -u LD_PRELOAD script -qec %s /dev/null <%s; echo \"exit:$?\"",
    quote(cmd), i)))
  local out = p:read("*a")
  p:close()
  os.remove(i)
  outputs[#outputs + 1] = out
  local body, code = out:match("^(.*)exit:(%d+)%s*$")
  return body or out, tonumber(code)
end

-- Under a sanitizer run the ASan runtime is preloaded into every child.
local function under_asan()
  return (os.getenv("LD_PRELOAD") or ""):find("asan") ~= nil
end

local function have(cmd)
  local _, ok = helpers.run("command -v " .. cmd .. " >/dev/null")
  return ok
end

local sandbox_config = helpers.sandbox_config

-- The scalar attributes of a fixture as written: { {name, text, kind} },
-- kind "string", "number", "boolean" (null ones left out), from every
-- "attributes" object of the document (data and included).
local function fixture_scalars(name)
  local list, inside = {}, false
  for line in helpers.fixture(name):gmatch("[^\n]+") do
    if line:match('"attributes":%s*{%s*$') then
      inside = true
    elseif inside and line:match("^%s*}") then
      inside = false
    elseif inside then
      local key, value = line:match('^%s*"([%w_]+)":%s*(.-),?%s*$')
      if key then
        local s = value:match('^"(.*)"$')
        if s then
          list[#list + 1] = { key, s, "string" }
        elseif value == "true" or value == "false" then
          list[#list + 1] = { key, value, "boolean" }
        elseif value:match("^%-?%d[%d.eE+-]*$") then
          list[#list + 1] = { key, value, "number" }
        end
      end
    end
  end
  assert(#list > 3, "no attributes found in " .. name)
  return list
end

-- Every scalar of the fixture in the tool's JSON: "name":"text" (numbers as
-- their exact text in a string), "name":true.
local function assert_json_has(json, scalars)
  for _, s in ipairs(scalars) do
    local want = s[3] == "boolean" and format('"%s":%s', s[1], s[2]) or format('"%s":"%s"', s[1], s[2])
    assert(json:find(want, 1, true), "expected " .. want .. " in:\n" .. json)
  end
end

local function escape_pattern(s)
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"))
end

-- Every scalar of the fixture on a line of the table: "[prefix.]name   text".
local function assert_table_has(text, scalars)
  for _, s in ipairs(scalars) do
    local pattern = "\n[%w.]-%f[%w]" .. escape_pattern(s[1]) .. " +" .. escape_pattern(s[2]) .. "\n"
    assert(("\n" .. text):find(pattern), "expected " .. s[1] .. " " .. s[2] .. " in:\n" .. text)
  end
end

-- RFC 4180: the records of a CSV text (fields unquoted).
local function parse_csv(text)
  local rows, row, field, i, n = {}, {}, {}, 1, #text
  local quoted = false
  while i <= n do
    local c = text:sub(i, i)
    if quoted then
      if c == '"' then
        if text:sub(i + 1, i + 1) == '"' then
          field[#field + 1] = '"'
          i = i + 1
        else
          quoted = false
        end
      else
        field[#field + 1] = c
      end
    elseif c == '"' then
      quoted = true
    elseif c == "," then
      row[#row + 1] = table.concat(field)
      field = {}
    elseif c == "\n" then
      row[#row + 1] = table.concat(field)
      rows[#rows + 1] = row
      row, field = {}, {}
    else
      field[#field + 1] = c
    end
    i = i + 1
  end
  assert(#field == 0 and #row == 0, "the CSV does not end with a line end")
  return rows
end

-- The CSV's records as tables keyed by the header's names.
local function csv_records(text)
  local rows = parse_csv(text)
  local header, records = rows[1], {}
  for r = 2, #rows do
    assert.equal(#header, #rows[r])
    local rec = {}
    for c, name in ipairs(header) do
      rec[name] = rows[r][c]
    end
    records[#records + 1] = rec
  end
  return records, header
end

-- Every scalar of the fixture in a CSV record, under "[prefix.]name".
local function assert_csv_has(record, scalars)
  for _, s in ipairs(scalars) do
    local found = false
    for name, value in pairs(record) do
      if (name == s[1] or name:sub(-#s[1] - 1) == "." .. s[1]) and value == s[2] then
        found = true
      end
    end
    assert(found, "expected " .. s[1] .. " = " .. s[2] .. " in the CSV record")
  end
end

-- The client of the specs that run the tool (describe_tool), open between
-- its setup and its teardown.
local client

-- The describe of a spec file of the tool (spec/cli/cli_spec.lua,
-- spec/cli/output_spec.lua): body() declares its specs inside
-- describe("merchantapi (the command-line tool)"), with a client
-- (helpers.client, read by client()) open around them and the sandbox reset
-- before each.
local function describe_tool(body)
  busted.describe("merchantapi (the command-line tool)", function()
    busted.setup(function()
      client = helpers.client()
    end)
    busted.before_each(function()
      helpers.reset()
    end)
    busted.teardown(function()
      client:close()
      client = nil
    end)
    body()
  end)
end

return {
  describe_tool = describe_tool,
  client = function() return assert(client, "no client: describe_tool's specs only") end,
  BIN = BIN,
  KEY = KEY,
  PAYOUT = PAYOUT,
  CHANNEL = CHANNEL,
  FIRST_ADDRESS = FIRST_ADDRESS,
  EXIT = EXIT,
  read_file = read_file,
  write_file = write_file,
  outputs = outputs,
  cli = cli,
  run = run,
  cli_tty = cli_tty,
  under_asan = under_asan,
  have = have,
  sandbox_config = sandbox_config,
  fixture_scalars = fixture_scalars,
  assert_json_has = assert_json_has,
  escape_pattern = escape_pattern,
  assert_table_has = assert_table_has,
  csv_records = csv_records,
  assert_csv_has = assert_csv_has,
}

-- The command-line tool against the sandbox: each command's output called in
-- this process (merchantapi.cli.run with streams of the spec's own), every
-- command in every format with the fixtures' numbers byte for byte, the exit
-- status of each error kind and of an unknown confirm, confirm asking on a
-- terminal; and bin/merchantapi run as a process on the Lua this spec runs on
-- ($LUA, with this process's module paths): confirm refusing without --yes off
-- a terminal (and asking on one: `script` gives it a pty), --all streaming
-- 25,000 addresses in bounded memory, --verbose, help, the sandbox, and the key
-- in no output.  The exit statuses are one table (merchantapi.cli.status),
-- which --help and the man page's EXIT STATUS must match.  man/merchantapi.1.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local cjson = require "cjson"

local format = string.format
local unpack = table.unpack or unpack
local quote = helpers.shell_quote
local count = helpers.count

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

describe("merchantapi (the command-line tool)", function()
  local client
  setup(function()
    client = helpers.client()
  end)
  before_each(function()
    helpers.reset()
  end)
  teardown(function()
    client:close()
  end)

  describe("output: exact numbers, byte for byte against the fixtures", function()
    it("channel: table, --json (the module's encoding of the same resource) and --csv", function()
      local scalars = fixture_scalars("get_channel.200")
      local json, err, code = run("channel " .. CHANNEL .. " --json")
      assert.equal(0, code, err)
      assert.equal("", err)
      assert.equal(merchantapi.encode(assert(client:get_channel(CHANNEL))) .. "\n", json)
      assert_json_has(json, scalars)
      assert.truthy(json:find('"balance":"6194.43"', 1, true))
      local tbl = run("channel " .. CHANNEL)
      assert_table_has(tbl, scalars)
      assert.matches("\ntargetAccount%.balance +6194%.43\n", tbl)
      local csv = run("--csv channel " .. CHANNEL)
      local records = csv_records(csv)
      assert.equal(1, #records)
      assert_csv_has(records[1], scalars)
      assert.equal("6194.43", records[1]["targetAccount.balance"])
    end)

    it("confirm --yes: the payout fixture's amount 250.10 stays 250.10, in each format", function()
      local scalars = fixture_scalars("confirm_payout.201")
      local json, err, code = run("confirm " .. PAYOUT .. " --yes --json")
      assert.equal(0, code, err)
      assert.equal("", err)
      assert_json_has(json, scalars)
      assert.truthy(json:find('"amount":"250.10"', 1, true))
      assert.equal(1, count(PAYOUT)) -- one PUT
      -- the same payout read back: table and CSV
      local tbl = run("payout " .. PAYOUT)
      assert_table_has(tbl, scalars)
      assert.matches("\namount +250%.10\n", tbl)
      local records = csv_records((run("payout " .. PAYOUT .. " --csv")))
      assert_csv_has(records[1], scalars)
      assert.equal("250.10", records[1].amount)
      assert.equal("251.02", records[1].amountCharged)
    end)

    it("numbers beyond a double: 30 digits, 18 decimals and an exponent keep their text", function()
      local json = run("confirm draft-big-numbers --yes --json")
      assert.truthy(json:find('"bigInteger":"123456789012345678901234567890"', 1, true), json)
      assert.truthy(json:find('"exponent":"1.5e-7"', 1, true), json)
      local records = csv_records((run("payout draft-big-numbers --csv")))
      assert.equal("123456789012345678901234567890", records[1].bigInteger)
      assert.equal("1.5e-7", records[1].exponent)
      json = run("confirm draft-18-decimals -y --json")
      assert.truthy(json:find('"amount":"0.123456789012345678"', 1, true), json)
      json = run("confirm draft-integer-amount -y --json")
      assert.truthy(json:find('"amount":"1200"', 1, true), json)
    end)

    it("addresses, one page: the fixture's address and meta, in each format", function()
      local scalars = fixture_scalars("list_addresses.200")
      -- the fixture is page 1 of acct-22 with per_page 1
      local json, err, code = run("addresses acct-22 --per-page 1 --json")
      assert.equal(0, code, err)
      local item = json:match('^{"data":%[\n(.-)\n%],"meta":')
      assert(item, json)
      assert_json_has(item, scalars)
      local meta = helpers.fixture("list_addresses.200"):match('.*"meta":%s*(%b{})'):gsub("%s", "")
      assert.equal('{"page":1,"per_page":1,"total":22}', meta)
      assert.equal('],"meta":' .. meta .. "}\n", json:sub(#json - #meta - 10))
      assert.same({ "data", "meta" }, helpers.keys(cjson.decode(json)))
      local records, header = csv_records((run("addresses acct-22 --per-page 1 --csv")))
      assert.same({ "id", "value", "network.code", "label", "createdAt", "network.name",
        "network.currencyCode", "network.id" }, { unpack(header, 1, 8) })
      assert.equal(1, #records)
      assert_csv_has(records[1], scalars)
      assert.equal(FIRST_ADDRESS, records[1].id)
      local tbl = run("addresses acct-22 --per-page 1")
      assert.matches("^ID +VALUE +NETWORK +LABEL +CREATED\n", tbl)
      assert.matches("\n" .. escape_pattern(FIRST_ADDRESS) .. "  TUbHdtAyfeiWTJPzF12gcBnpLtmLo3qgkS  "
        .. "ttrx:usdt  Apr 11  2025%-04%-11T07:19:09%.729Z\n", tbl)
      assert.matches("\npage 1: 1 address of 22 %(1 per page%)\n$", tbl)
    end)

    it("meta written as strings by the service reads as integers; a value being generated is empty", function()
      local json = run("addresses meta-strings-acct-22 --page 2 --per-page 5 --json")
      assert.matches('%],"meta":{"page":2,"per_page":5,"total":22}}\n$', json)
      local records = csv_records((run("addresses acct-generating --csv")))
      assert.equal(2, #records)
      assert.equal("", records[2].value)
      assert.matches("\nc4f1e0a2%-0b7d%-4a53%-9d7e%-52a8f3e1b6c9  %- ", (run("addresses acct-generating")))
    end)

    it("addresses --all: every page in order, the same bytes with --concurrency", function()
      local csv, err, code = run("addresses acct-22 --all --per-page 5 --csv")
      assert.equal(0, code, err)
      assert.equal("", err) -- no progress off a terminal
      assert.equal(5, count("acct-22"))
      local records = csv_records(csv)
      assert.equal(22, #records)
      assert.equal(FIRST_ADDRESS, records[1].id)
      for i = 2, 22 do
        assert.equal(format("00000022-0000-4000-8000-%012d", i), records[i].id)
      end
      assert.equal(csv, (run("addresses acct-22 --all --per-page 5 --csv --concurrency 3")))
      local json = run("addresses acct-22 --all --per-page 5 --json")
      local doc = cjson.decode(json)
      assert.equal(22, #doc.data)
      assert.same({ total = 22, received = 22, pages = 5, total_changed = false }, doc.meta)
      -- a line for the opening, one per address, one for the closing
      assert.equal(24, select(2, json:gsub("\n", "")))
      local tbl = run("addresses acct-22 --all --per-page 5")
      assert.matches("\n22 addresses\n$", tbl)
    end)

    it("request: GET as the endpoints, a list with its meta, POST bodies byte for byte, null", function()
      local json = run("request GET /api/public/v1/channels/" .. CHANNEL .. " --json")
      assert.equal(merchantapi.encode(assert(client:get_channel(CHANNEL))) .. "\n", json)
      json = run("request get /api/public/v1/accounts/acct-22/addresses -q page=2 -q per_page=3 --json")
      assert.matches('%],"meta":{"page":2,"per_page":3,"total":22}}\n$', json)
      assert.equal(3, #cjson.decode(json).data)
      local body = '{"data":{"type":"payouts","attributes":{"amount":250.10}}}'
      json = run("request POST /api/public/v1/echo --json --body " .. quote(body))
      assert.equal(body, cjson.decode(json).body)
      local path = os.tmpname()
      write_file(path, body)
      json = run("request PATCH /api/public/v1/echo --json -d @" .. quote(path))
      os.remove(path)
      assert.equal(body, cjson.decode(json).body)
      assert.equal("PATCH", cjson.decode(json).method)
      json = run("request POST /api/public/v1/echo --json -d @-", { stdin = body })
      assert.equal(body, cjson.decode(json).body)
      local out, err, code = run("request DELETE /api/public/v1/echo/no-content --json")
      assert.equal(0, code, err)
      assert.equal("null\n", out)
    end)

    it("RFC 4180 quoting: commas, quotes and line ends in a field", function()
      local body = '{"data":\n{"a":"x, \\"y\\""}}' -- a raw line end between two tokens
      local out = run("request POST /api/public/v1/echo --csv -d " .. quote(body))
      local records = csv_records(out)
      assert.equal(body, records[1].body)
      assert.truthy(out:find('"{""data"":\n{""a"":""x, \\""y\\""""}}"', 1, true), out)
    end)
  end)

  describe("exit codes and the one-line error", function()
    it("each error kind has its code", function()
      local cases = {
        { "usage", "channel" },                                        -- a missing argument
        { "usage", "--base-url ftp://127.0.0.1/ channel x" },          -- the module's usage error
        { "usage", "addresses acct-22 --per-page 0" },
        { "api", "channel nope" },
        { "http", "channel fault-html-502 --max-retries 0" },
        { "transport", "channel fault-no-response --max-retries 0" },
        { "decode", "channel fault-bad-json" },
        { "timeout", "payout draft-track-never --wait-txid=0" },
      }
      for _, c in ipairs(cases) do
        local out, err, code = run(c[2])
        assert.equal(EXIT[c[1]], code, c[2] .. ": " .. err)
        assert.matches("^merchantapi: [^\n]+\n$", err)
        assert.equal("", out)
      end
      -- a page that contradicts meta.total, after the pages before it
      local out, err, code = run("addresses fault-pages-overfull --all --per-page 5 --csv")
      assert.equal(EXIT.decode, code)
      assert.equal(11, select(2, out:gsub("\n", "")))
      assert.matches("\nmerchantapi: decode: page 3: 5 items, but meta.total 12 [^\n]+\n$", err)
      assert.equal(3, count("fault-pages-overfull"))
      out, err = run("channel nope")
      assert.equal("", out)
      assert.equal("merchantapi: 404 not_found: Not found (no channel nope) "
        .. "[GET /api/public/v1/channels/nope]\n", err)
    end)

    it("a confirm whose outcome stays unknown exits 8 and says how to check", function()
      -- fault-502-json: the confirm answers 502 and the read that would settle it too
      local out, err, code = run("confirm fault-502-json --yes --max-retries 0")
      local _
      assert.equal(EXIT.unknown, code)
      assert.equal("", out)
      assert.matches("^merchantapi: 502 bad_gateway: [^\n]+%[PUT /api/public/v1/payouts/fault%-502%-json%]\n"
        .. "merchantapi: outcome unknown: it may have gone through, and reading the payout failed too "
        .. "%(502 bad_gateway: [^\n]+%[GET [^\n]+%): check with `merchantapi payout fault%-502%-json` "
        .. "before confirming again\n$", err)
      assert.equal(2, count("fault-502-json")) -- one PUT, one GET; the PUT never resent
      -- carried out, then the connection dropped: unknown without settling ...
      _, err, code = run("confirm fault-applied-no-response --yes --no-settle")
      assert.equal(EXIT.unknown, code)
      assert.matches("\nmerchantapi: outcome unknown: it may have gone through: check with "
        .. "`merchantapi payout fault%-applied%-no%-response` before confirming again\n$", err)
      assert.equal(1, count("fault-applied-no-response"))
      -- ... and settled by the read, when settling is on: confirmed
      helpers.reset()
      out, err, code = run("confirm fault-applied-no-response --yes --json")
      assert.equal(0, code, err)
      assert.matches('"status":"processing"', out)
      assert.matches("reading the payout showed it confirmed", err)
      assert.equal(2, count("fault-applied-no-response"))
    end)

    it("a request that may move money exits 8 on an unknown outcome; a GET by its kind", function()
      local _, err, code = run("request PUT /api/public/v1/payouts/fault-502-json --max-retries 0")
      assert.equal(EXIT.unknown, code)
      assert.matches("outcome unknown: it may have gone through: read the resource before "
        .. "sending it again\n$", err)
      assert.equal(1, count("fault-502-json"))
      _, err, code = run("request GET /api/public/v1/payouts/fault-502-json --max-retries 0")
      assert.equal(EXIT.api, code)
      assert.matches("^merchantapi: 502 [^\n]+\n$", err)
    end)

    it("the other outcomes of a confirm, spelled out", function()
      -- not sent: a refused header (nothing leaves), and a port nobody listens on
      local _, err, code = run("confirm " .. PAYOUT .. " --yes -H 'Authorization: Bearer x'")
      assert.equal(EXIT.usage, code)
      assert.matches("\nmerchantapi: not sent: safe to retry\n$", err)
      local port = helpers.run(helpers.ROOT .. "/scripts/free-port"):match("%d+")
      _, err, code = run("confirm " .. PAYOUT .. " --yes --max-retries 0",
        { base_url = "http://127.0.0.1:" .. port })
      assert.equal(EXIT.transport, code)
      assert.matches("\nmerchantapi: not sent: safe to retry\n$", err)
      assert.equal(0, count(PAYOUT))
      -- rejected: a 422
      _, err, code = run("confirm draft-amount-below-minimum --yes")
      assert.equal(EXIT.api, code)
      assert.matches("^merchantapi: 422 amount_below_minimum: [^\n]+\n"
        .. "merchantapi: rejected by the service: not confirmed by this request\n$", err)
      -- unknown, settled as still a draft: not confirmed, safe to confirm again
      _, err, code = run("confirm fault-flaky-1-502 --yes --max-retries 0")
      assert.equal(EXIT.api, code)
      assert.matches("\nmerchantapi: not confirmed: the payout read after the failure is still a "
        .. "draft; confirming again is safe\n$", err)
      assert.equal(2, count("fault-flaky-1-502")) -- the PUT and the read that settled it
      local out
      out, err, code = run("confirm fault-flaky-1-502 --yes --json")
      assert.equal(0, code, err)
      assert.matches('"status":"processing"', out)
      assert.equal(3, count("fault-flaky-1-502"))
    end)
  end)

  describe("in process: merchantapi.cli.run", function()
    it("confirm on a terminal: shows the draft and asks; 'n' sends nothing (exit 1), 'y' confirms", function()
      local out, err, code = run("confirm " .. PAYOUT, { tty = true, stdin = "n\n" })
      assert.equal(EXIT.declined, code, err)
      assert.equal("", out)
      assert.equal("payout " .. PAYOUT .. ": 250.10 EUR to TJTuEYJ8P9to4Zhdw7zg55VPH3gzLaQDV6, status draft\n"
        .. "Confirm payout " .. PAYOUT .. "? This moves money. [y/N] merchantapi: not confirmed (nothing sent)\n", err)
      assert.equal(1, count(PAYOUT)) -- the read shown, no PUT
      out, err, code = run("confirm " .. PAYOUT .. " --json", { tty = true, stdin = "y\n" })
      assert.equal(EXIT.ok, code, err)
      assert.matches('"status":"processing"', out)
      assert.equal(3, count(PAYOUT))
    end)

    it("payout --wait-txid on a terminal: a line per read without a txid", function()
      local _, out, err, code
      out, err, code = run("payout draft-track-fast --wait-txid=0.2")
      assert.equal(EXIT.timeout, code, err) -- a draft never gets a txid
      assert.equal("", out)
      _, err, code = run("payout " .. PAYOUT .. " --wait-txid=0", { tty = true })
      assert.equal(EXIT.timeout, code)
      assert.matches("^merchantapi: payout " .. escape_pattern(PAYOUT) .. " is draft, no txid yet\n", err)
      _, err, code = run("payout x --wait-txid=soon")
      assert.equal(EXIT.usage, code)
      assert.equal("merchantapi: --wait-txid: expected seconds (a number >= 0), got 'soon'\n", err)
    end)

    it("usage errors, version and sandbox without its files", function()
      local _, out, err, code
      out, err, code = run("addresses acct-22 --concurrency 2")
      assert.same({ "", "merchantapi: --concurrency is for --all\n", EXIT.usage }, { out, err, code })
      _, err, code = run("--json --csv channel x")
      assert.same({ "merchantapi: --json and --csv: one output format at a time\n", EXIT.usage }, { err, code })
      _, err, code = run("channel x --per-page 2")
      assert.equal(EXIT.usage, code)
      assert.matches("^merchantapi: unknown option '%-%-per%-page'", err)
      _, err, code = run("addresses x --max-retries 1.5")
      assert.equal(EXIT.usage, code)
      assert.matches("expected an integer, got '1%.5'", err)
      out, err, code = run("version")
      assert.same({ "", EXIT.ok }, { err, code })
      assert.equal(format("merchantapi %s (%s)\n", merchantapi._VERSION, rawget(_G, "jit") and jit.version or _VERSION),
        out)
      out, err, code = run("sandbox")
      assert.same({ "", EXIT.tool }, { out, code })
      assert.matches("^merchantapi: the sandbox is not installed with this copy", err)
    end)

    it("the exit statuses are one table: --help and the man page's EXIT STATUS match it", function()
      local status = require "merchantapi.cli.status"
      local help = (cli("--help"))
      assert.truthy(help:find(status.HELP, 1, true), help)
      local man = read_file(helpers.ROOT .. "/man/merchantapi.1"):match("\n%.SH EXIT STATUS\n(.-)\n%.SH ")
      local codes = {}
      for n, text in man:gmatch("\n%.TP\n%.B (%d+)\n([^\n]*)") do
        codes[#codes + 1] = tonumber(n)
        local want = status.LIST[#codes]
        assert.equal(want[1], tonumber(n))
        assert.equal(want[3]:lower(), text:sub(1, #want[3]):lower(), "man page, status " .. n)
      end
      assert.equal(#status.LIST, #codes)
      -- a guide's table of them ("| code | meaning |" under a heading "Exit status"), where there is one
      for _, doc in ipairs({ "README.md", "docs/guide/shell.md", "docs/guide/cli.md" }) do
        local f = io.open(helpers.ROOT .. "/" .. doc, "rb")
        local rows = f and f:read("*a"):match("\n#+ Exit status\n.-\n| code | meaning |\n|[-|]+|\n(.-)\n\n")
        if f then f:close() end
        if rows then
          local listed = {}
          for n in rows:gmatch("| (%d+) |") do
            listed[#listed + 1] = tonumber(n)
          end
          assert.same(codes, listed, doc .. "'s exit status table")
        end
      end
      for _, s in ipairs(status.LIST) do
        assert.equal(s[1], EXIT[s[2]])
        assert.truthy(help:find(s[1] .. " " .. s[3], 1, true))
      end
    end)
  end)

  describe("confirm and the terminal", function()
    it("refuses without --yes when stdin is not a terminal, even with 'y' on it, sending nothing", function()
      for _, input in ipairs({ "", "y\n" }) do
        local out, err, code = cli("confirm " .. PAYOUT, { stdin = input })
        assert.equal(EXIT.usage, code)
        assert.equal("", out)
        assert.equal("merchantapi: confirm moves money: pass --yes when stdin is not a terminal "
          .. "(nothing was sent)\n", err)
      end
      assert.equal(0, count(PAYOUT))
      assert.equal("draft", assert(client:get_payout(PAYOUT)).status)
    end)

    it("asks on a terminal: 'n' sends nothing (exit 1), 'y' confirms", function()
      if not have("script") then
        pending("no `script` (bsdutils) for a pseudo-terminal")
        return
      end
      local shown, code = cli_tty("confirm " .. PAYOUT, "n\n")
      assert.equal(1, code, shown)
      assert.matches("250%.10 EUR to TJTuEYJ8P9to4Zhdw7zg55VPH3gzLaQDV6, status draft", shown)
      assert.matches("Confirm payout " .. escape_pattern(PAYOUT) .. "%? This moves money%. %[y/N%]", shown)
      assert.matches("not confirmed %(nothing sent%)", shown)
      assert.equal(1, count(PAYOUT)) -- the read that showed the draft, no PUT
      assert.equal("draft", assert(client:get_payout(PAYOUT)).status)
      shown, code = cli_tty("confirm " .. PAYOUT, "y\n")
      assert.equal(0, code, shown)
      assert.matches("\nstatus +processing\r?\n", shown)
      assert.equal(4, count(PAYOUT)) -- + this spec's read, the read shown, the one PUT
      assert.equal("processing", assert(client:get_payout(PAYOUT)).status)
    end)
  end)

  describe("addresses --all over 25,000 addresses", function()
    it("prints as the pages come: the first lines arrive long before the last page is asked for", function()
      local cmd = format("env MERCHANTAPI_BASE_URL=%s MERCHANTAPI_API_KEY=%s %s %s "
        .. "addresses acct-25000 --all --csv --per-page 100 2>/dev/null",
        quote(helpers.base_url()), quote(KEY), helpers.lua_command(), quote(BIN))
      local p = assert(io.popen(cmd))
      assert.equal("id,value,network.code,label,createdAt,network.name,network.currencyCode,"
        .. "network.id,network.type,type", p:read("*l"))
      assert.matches("^00025000%-0000%-4000%-8000%-000000000001,", p:read("*l"))
      -- the pipe is full long before 250 pages: the tool waits for us to read
      local asked = count("acct-25000")
      p:close()
      assert.is_true(asked < 50, "pages asked before the first lines were read: " .. asked)
    end)

    it("--csv holds one page at a time: peak RSS close to a 22-address listing's", function()
      if under_asan() then
        pending("not measured under AddressSanitizer (its quarantine keeps freed memory)")
        return
      end
      if not have("/usr/bin/time") then
        pending("no GNU time (package time) to measure the peak RSS")
        return
      end
      local function peak(account)
        local t = os.tmpname()
        local out, err, code = cli(format("addresses %s --all --csv --per-page 100", account),
          { prefix = "/usr/bin/time -f %M -o " .. quote(t) })
        assert.equal(0, code, err)
        local kib = tonumber(read_file(t):match("(%d+)%s*$"))
        os.remove(t)
        return kib, out
      end
      local small = peak("acct-22")
      local big, out = peak("acct-25000")
      local lines = select(2, out:gsub("\n", ""))
      assert.equal(25001, lines)
      assert.truthy(out:find("\n00025000-0000-4000-8000-000000025000,", 1, true))
      assert.equal(250, count("acct-25000"))
      -- what grows is the ids the pager keeps for its duplicate check (and the
      -- allocator's holes between them): 4-11 MiB on Lua 5.1-5.4 and LuaJIT
      assert.is_true(big < small * 2, format("peak RSS %d KiB for 25,000 vs %d KiB for 22", big, small))
      -- the control: the same walk collected with pager:all() in one process
      local t, script = os.tmpname(), os.tmpname()
      write_file(script, [[
local m = require "merchantapi"
local c = assert(m.new { base_url = arg[1], api_key = arg[2] })
local items = assert(c:addresses("acct-25000", { per_page = 100 }):all())
assert(#items == 25000)
]])
      local out2, ok2 = helpers.run(format("/usr/bin/time -f %%M -o %s %s %s %s %s", quote(t),
        helpers.lua_command(), quote(script), quote(helpers.base_url()), quote(KEY)), true)
      assert(ok2, out2)
      local all = tonumber(read_file(t):match("(%d+)%s*$"))
      os.remove(t)
      os.remove(script)
      assert.is_true(all - small > 2 * (big - small),
        format("holding every address: %d KiB, streaming: %d KiB, 22: %d KiB", all, big, small))
    end)

    it("progress on stderr only when it is a terminal; a failed page ends the output there", function()
      if have("script") then
        local shown, code = cli_tty("addresses acct-22 --all --per-page 5 --csv >/dev/null")
        assert.equal(0, code, shown)
        assert.truthy(shown:find("\rmerchantapi: 5 pages, 22 of 22 addresses", 1, true), shown)
      end
      local out, err, code = cli("addresses fault-page-3-500 --all --per-page 100 --csv --max-retries 0")
      assert.equal(EXIT.api, code)
      assert.equal(201, select(2, out:gsub("\n", "")))
      assert.matches("^merchantapi: the listing stopped after 200 addresses of 25000\n"
        .. "merchantapi: 500 sandbox_page_fault: [^\n]+\n$", err)
      assert.equal(3, count("fault-page-3-500"))
      out, err, code = cli("addresses fault-page-3-500 --all --per-page 100 --json --max-retries 0")
      assert.matches("stopped after 200 addresses", err)
      assert.equal(EXIT.api, code)
      assert.is_false(pcall(cjson.decode, out)) -- left unclosed: not a whole list
      assert.matches("^{\"data\":%[\n", out)
    end)
  end)

  describe("configuration and the key", function()
    it("the key from --api-key-file; never as an argument; none: the service's 401", function()
      local path = os.tmpname()
      write_file(path, KEY .. "\n")
      local _
      local out, err, code = cli("addresses acct-one --api-key-file " .. quote(path), { key = false })
      os.remove(path)
      assert.equal(0, code, err)
      assert.matches("\npage 1: 1 address of 1", out)
      for _, args in ipairs({ "--api-key=" .. KEY .. " channel x", "channel x --api-key " .. KEY }) do
        err, code = select(2, cli(args))
        assert.equal(EXIT.usage, code)
        assert.equal("merchantapi: the api key is never an argument (other users can read argv): "
          .. "set MERCHANTAPI_API_KEY or pass --api-key-file FILE\n", err)
      end
      _, err, code = cli("channel " .. CHANNEL, { key = false })
      assert.equal(EXIT.api, code)
      assert.matches("^merchantapi: 401 unauthorized", err)
      _, err, code = cli("channel " .. CHANNEL, { env = "MERCHANTAPI_BASE_URL=" })
      assert.equal(EXIT.usage, code)
      assert.equal("merchantapi: no base URL: set MERCHANTAPI_BASE_URL or pass --base-url\n", err)
    end)

    it("--verbose logs every attempt with the module's one line (MERCHANTAPI_DEBUG's), never the key", function()
      local _, err, code = cli("-v channel fault-flaky-1-503 --max-retries 1")
      assert.equal(0, code, err)
      assert.matches("^merchantapi: base URL [^\n]+; api key from MERCHANTAPI_API_KEY\n"
        .. "merchantapi: GET [^\n]+/channels/fault%-flaky%-1%-503 attempt 1/2: 503 %(api service_unavailable%) "
        .. "in [%d.]+ s, request id %x+, retry in [%d.]+ s\n"
        .. "merchantapi: GET [^\n]+ attempt 2/2: 200 in [%d.]+ s, request id %x+\n$", err)
      -- the same lines as the module writes under MERCHANTAPI_DEBUG=1 (times and ids aside)
      local function shape(text)
        return (text:gsub("^[^\n]*base URL[^\n]*\n", ""):gsub("[%d.]+ s", "T s"):gsub("request id %x+", "ID"))
      end
      helpers.reset()
      local _, debug_err = cli("channel fault-flaky-1-503 --max-retries 1", { env = "MERCHANTAPI_DEBUG=1" })
      helpers.reset()
      local _, verbose_err = cli("channel fault-flaky-1-503 --max-retries 1 --verbose")
      assert.equal(shape(debug_err), shape(verbose_err))
      _, err = cli("channel " .. CHANNEL .. " --verbose")
      assert.matches("attempt 1/3: 200", err)
    end)

    -- (every run of the tool in this file before this test; `merchantapi sandbox`,
    -- below, prints the sandbox's own key on purpose)
    it("the key is in no output, also when the server echoes it back", function()
      sandbox_config('{"echo_key":true}')
      local path = os.tmpname()
      write_file(path, KEY)
      for _, args in ipairs({
        "-v channel " .. CHANNEL, "-v channel nope", "-v --json channel fault-500 --max-retries 0",
        "-v confirm fault-502-json -y --max-retries 0", "-v addresses acct-22 --all --per-page 10 --csv",
        "-v request GET /api/public/v1/channels/" .. CHANNEL .. " --json",
        "-v --api-key-file " .. quote(path) .. " payout " .. PAYOUT,
      }) do
        cli(args)
      end
      os.remove(path)
      sandbox_config('{"echo_key":false}')
      for _, text in ipairs(outputs) do
        assert.is_nil(text:find(KEY, 1, true), "the key in:\n" .. text)
      end
      assert.is_true(#outputs > 60) -- every run of this file was checked
    end)
  end)

  describe("help, version, sandbox", function()
    it("--help for the tool and each command; version", function()
      local out, _, code = cli("--help")
      assert.equal(0, code)
      assert.matches("^Usage: merchantapi ", out)
      assert.matches("8 outcome unknown", out)
      for _, c in ipairs({ "confirm", "payout", "channel", "addresses", "request", "sandbox", "version" }) do
        local c_out, _, c_code = cli(c .. " --help")
        assert.equal(0, c_code)
        assert.matches("^Usage: merchantapi " .. c .. " ", c_out)
      end
      assert.matches("%-%-wait%-txid", (cli("help payout")))
      out, _, code = cli("version")
      assert.equal(0, code)
      assert.matches("^merchantapi " .. escape_pattern(merchantapi._VERSION) .. " %(", out)
      local _, err
      _, err, code = cli("")
      assert.equal(EXIT.usage, code)
      assert.matches("a command is required", err)
    end)

    it("sandbox: prints its URL and key, runs in the foreground, stops with nginx", function()
      if under_asan() then
        pending("nginx must not inherit the sanitizer's preload, which the tool's Lua needs here")
        return
      end
      local work = os.tmpname()
      os.remove(work)
      -- a prefix of its own: the Lua matrix runs this file in two lanes at once
      local prefix = helpers.ROOT .. "/build/sandbox-cli-" .. work:match("([^/]+)$")
      local cmd = format("(env MERCHANTAPI_BASE_URL= SANDBOX_PREFIX=%s %s %s sandbox --port auto "
        .. ">%s.out 2>%s.err; echo $? >%s.rc) >/dev/null 2>&1 &",
        quote(prefix), helpers.lua_command(), quote(BIN), work, work, work)
      assert(helpers.run(cmd, true) ~= nil)
      local url
      for _ = 1, 200 do -- until it answers, or the tool has exited
        local f = io.open(work .. ".out", "rb")
        local text = f and f:read("*a") or ""
        if f then f:close() end
        url = text:match("export MERCHANTAPI_BASE_URL=(%S+)\n")
        if url and select(2, helpers.run("curl -sf -o /dev/null " .. quote(url .. "/__sandbox/health"))) then
          break
        end
        f = io.open(work .. ".rc", "rb")
        if f then
          f:close()
          break
        end
        helpers.run("sleep 0.05")
      end
      local errors = read_file(work .. ".err")
      local shown = read_file(work .. ".out")
      local out, err, code = cli("channel " .. CHANNEL .. " --json", { base_url = url })
      assert.equal(0, code, err .. errors)
      helpers.run(format("env SANDBOX_PREFIX=%s %s stop", quote(prefix), quote(helpers.ROOT .. "/sandbox/run")))
      local rc
      for _ = 1, 200 do
        local f = io.open(work .. ".rc", "rb")
        rc = f and f:read("*a")
        if f then f:close() end
        if rc and rc ~= "" then break end
        helpers.run("sleep 0.05")
      end
      os.remove(work .. ".out")
      os.remove(work .. ".err")
      os.remove(work .. ".rc")
      helpers.run("rm -rf " .. quote(prefix))
      assert.matches("^export MERCHANTAPI_BASE_URL=http://127%.0%.0%.1:%d+\n"
        .. "export MERCHANTAPI_API_KEY=" .. KEY .. "\n$", shown)
      assert.equal(0, code, err)
      assert.matches('"balance":"6194.43"', out)
      assert.equal("0", (rc or ""):match("%d+"))
    end)
  end)
end)

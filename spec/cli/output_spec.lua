-- What the command-line tool prints, against the sandbox: every command in every
-- format with the fixtures' numbers byte for byte, the exit status and the
-- one-line error of each error kind and of an unknown confirm, and --all
-- streaming 25,000 addresses in bounded memory; the key in none of it.  The
-- tool as a user drives it: spec/cli/cli_spec.lua; the runs:
-- spec/support/cli.lua.  man/merchantapi.1.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local cjson = require "cjson"
local T = require "support.cli"

local format = string.format
local unpack = table.unpack or unpack
local quote = helpers.shell_quote
local count = helpers.count

T.describe_tool(function()
  describe("output: exact numbers, byte for byte against the fixtures", function()
    it("channel: table, --json (the module's encoding of the same resource) and --csv", function()
      local scalars = T.fixture_scalars("get_channel.200")
      local json, err, code = T.run("channel " .. T.CHANNEL .. " --json")
      assert.equal(0, code, err)
      assert.equal("", err)
      assert.equal(merchantapi.encode(assert(T.client():get_channel(T.CHANNEL))) .. "\n", json)
      T.assert_json_has(json, scalars)
      assert.truthy(json:find('"balance":"6194.43"', 1, true))
      local tbl = T.run("channel " .. T.CHANNEL)
      T.assert_table_has(tbl, scalars)
      assert.matches("\ntargetAccount%.balance +6194%.43\n", tbl)
      local csv = T.run("--csv channel " .. T.CHANNEL)
      local records = T.csv_records(csv)
      assert.equal(1, #records)
      T.assert_csv_has(records[1], scalars)
      assert.equal("6194.43", records[1]["targetAccount.balance"])
    end)

    it("confirm --yes: the payout fixture's amount 250.10 stays 250.10, in each format", function()
      local scalars = T.fixture_scalars("confirm_payout.201")
      local json, err, code = T.run("confirm " .. T.PAYOUT .. " --yes --json")
      assert.equal(0, code, err)
      assert.equal("", err)
      T.assert_json_has(json, scalars)
      assert.truthy(json:find('"amount":"250.10"', 1, true))
      assert.equal(1, count(T.PAYOUT)) -- one PUT
      -- the same payout read back: table and CSV
      local tbl = T.run("payout " .. T.PAYOUT)
      T.assert_table_has(tbl, scalars)
      assert.matches("\namount +250%.10\n", tbl)
      local records = T.csv_records((T.run("payout " .. T.PAYOUT .. " --csv")))
      T.assert_csv_has(records[1], scalars)
      assert.equal("250.10", records[1].amount)
      assert.equal("251.02", records[1].amountCharged)
    end)

    it("numbers beyond a double: 30 digits, 18 decimals and an exponent keep their text", function()
      local json = T.run("confirm draft-big-numbers --yes --json")
      assert.truthy(json:find('"bigInteger":"123456789012345678901234567890"', 1, true), json)
      assert.truthy(json:find('"exponent":"1.5e-7"', 1, true), json)
      local records = T.csv_records((T.run("payout draft-big-numbers --csv")))
      assert.equal("123456789012345678901234567890", records[1].bigInteger)
      assert.equal("1.5e-7", records[1].exponent)
      json = T.run("confirm draft-18-decimals -y --json")
      assert.truthy(json:find('"amount":"0.123456789012345678"', 1, true), json)
      json = T.run("confirm draft-integer-amount -y --json")
      assert.truthy(json:find('"amount":"1200"', 1, true), json)
    end)

    it("addresses, one page: the fixture's address and meta, in each format", function()
      local scalars = T.fixture_scalars("list_addresses.200")
      -- the fixture is page 1 of acct-22 with per_page 1
      local json, err, code = T.run("addresses acct-22 --per-page 1 --json")
      assert.equal(0, code, err)
      local item = json:match('^{"data":%[\n(.-)\n%],"meta":')
      assert(item, json)
      T.assert_json_has(item, scalars)
      local meta = helpers.fixture("list_addresses.200"):match('.*"meta":%s*(%b{})'):gsub("%s", "")
      assert.equal('{"page":1,"per_page":1,"total":22}', meta)
      assert.equal('],"meta":' .. meta .. "}\n", json:sub(#json - #meta - 10))
      assert.same({ "data", "meta" }, helpers.keys(cjson.decode(json)))
      local records, header = T.csv_records((T.run("addresses acct-22 --per-page 1 --csv")))
      assert.same({ "id", "value", "network.code", "label", "createdAt", "network.name",
        "network.currencyCode", "network.id" }, { unpack(header, 1, 8) })
      assert.equal(1, #records)
      T.assert_csv_has(records[1], scalars)
      assert.equal(T.FIRST_ADDRESS, records[1].id)
      local tbl = T.run("addresses acct-22 --per-page 1")
      assert.matches("^ID +VALUE +NETWORK +LABEL +CREATED\n", tbl)
      assert.matches("\n" .. T.escape_pattern(T.FIRST_ADDRESS) .. "  TUbHdtAyfeiWTJPzF12gcBnpLtmLo3qgkS  "
        .. "ttrx:usdt  Apr 11  2025%-04%-11T07:19:09%.729Z\n", tbl)
      assert.matches("\npage 1: 1 address of 22 %(1 per page%)\n$", tbl)
    end)

    it("meta written as strings by the service reads as integers; a value being generated is empty", function()
      local json = T.run("addresses meta-strings-acct-22 --page 2 --per-page 5 --json")
      assert.matches('%],"meta":{"page":2,"per_page":5,"total":22}}\n$', json)
      local records = T.csv_records((T.run("addresses acct-generating --csv")))
      assert.equal(2, #records)
      assert.equal("", records[2].value)
      assert.matches("\nc4f1e0a2%-0b7d%-4a53%-9d7e%-52a8f3e1b6c9  %- ", (T.run("addresses acct-generating")))
    end)

    it("addresses --all: every page in order, the same bytes with --concurrency", function()
      local csv, err, code = T.run("addresses acct-22 --all --per-page 5 --csv")
      assert.equal(0, code, err)
      assert.equal("", err) -- no progress off a terminal
      assert.equal(5, count("acct-22"))
      local records = T.csv_records(csv)
      assert.equal(22, #records)
      assert.equal(T.FIRST_ADDRESS, records[1].id)
      for i = 2, 22 do
        assert.equal(format("00000022-0000-4000-8000-%012d", i), records[i].id)
      end
      assert.equal(csv, (T.run("addresses acct-22 --all --per-page 5 --csv --concurrency 3")))
      local json = T.run("addresses acct-22 --all --per-page 5 --json")
      local doc = cjson.decode(json)
      assert.equal(22, #doc.data)
      assert.same({ total = 22, received = 22, pages = 5, total_changed = false }, doc.meta)
      -- a line for the opening, one per address, one for the closing
      assert.equal(24, select(2, json:gsub("\n", "")))
      local tbl = T.run("addresses acct-22 --all --per-page 5")
      assert.matches("\n22 addresses\n$", tbl)
    end)

    it("request: GET as the endpoints, a list with its meta, POST bodies byte for byte, null", function()
      local json = T.run("request GET /api/public/v1/channels/" .. T.CHANNEL .. " --json")
      assert.equal(merchantapi.encode(assert(T.client():get_channel(T.CHANNEL))) .. "\n", json)
      json = T.run("request get /api/public/v1/accounts/acct-22/addresses -q page=2 -q per_page=3 --json")
      assert.matches('%],"meta":{"page":2,"per_page":3,"total":22}}\n$', json)
      assert.equal(3, #cjson.decode(json).data)
      local body = '{"data":{"type":"payouts","attributes":{"amount":250.10}}}'
      json = T.run("request POST /api/public/v1/echo --json --body " .. quote(body))
      assert.equal(body, cjson.decode(json).body)
      local path = os.tmpname()
      T.write_file(path, body)
      json = T.run("request PATCH /api/public/v1/echo --json -d @" .. quote(path))
      os.remove(path)
      assert.equal(body, cjson.decode(json).body)
      assert.equal("PATCH", cjson.decode(json).method)
      json = T.run("request POST /api/public/v1/echo --json -d @-", { stdin = body })
      assert.equal(body, cjson.decode(json).body)
      local out, err, code = T.run("request DELETE /api/public/v1/echo/no-content --json")
      assert.equal(0, code, err)
      assert.equal("null\n", out)
    end)

    it("RFC 4180 quoting: commas, quotes and line ends in a field", function()
      local body = '{"data":\n{"a":"x, \\"y\\""}}' -- a raw line end between two tokens
      local out = T.run("request POST /api/public/v1/echo --csv -d " .. quote(body))
      local records = T.csv_records(out)
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
        local out, err, code = T.run(c[2])
        assert.equal(T.EXIT[c[1]], code, c[2] .. ": " .. err)
        assert.matches("^merchantapi: [^\n]+\n$", err)
        assert.equal("", out)
      end
      -- a page that contradicts meta.total, after the pages before it
      local out, err, code = T.run("addresses fault-pages-overfull --all --per-page 5 --csv")
      assert.equal(T.EXIT.decode, code)
      assert.equal(11, select(2, out:gsub("\n", "")))
      assert.matches("\nmerchantapi: decode: page 3: 5 items, but meta.total 12 [^\n]+\n$", err)
      assert.equal(3, count("fault-pages-overfull"))
      out, err = T.run("channel nope")
      assert.equal("", out)
      assert.equal("merchantapi: 404 not_found: Not found (no channel nope) "
        .. "[GET /api/public/v1/channels/nope]\n", err)
    end)

    it("a confirm whose outcome stays unknown exits 8 and says how to check", function()
      -- fault-502-json: the confirm answers 502 and the read that would settle it too
      local out, err, code = T.run("confirm fault-502-json --yes --max-retries 0")
      local _
      assert.equal(T.EXIT.unknown, code)
      assert.equal("", out)
      assert.matches("^merchantapi: 502 bad_gateway: [^\n]+%[PUT /api/public/v1/payouts/fault%-502%-json%]\n"
        .. "merchantapi: outcome unknown: it may have gone through, and reading the payout failed too "
        .. "%(502 bad_gateway: [^\n]+%[GET [^\n]+%): check with `merchantapi payout fault%-502%-json` "
        .. "before confirming again\n$", err)
      assert.equal(2, count("fault-502-json")) -- one PUT, one GET; the PUT never resent
      -- carried out, then the connection dropped: unknown without settling ...
      _, err, code = T.run("confirm fault-applied-no-response --yes --no-settle")
      assert.equal(T.EXIT.unknown, code)
      assert.matches("\nmerchantapi: outcome unknown: it may have gone through: check with "
        .. "`merchantapi payout fault%-applied%-no%-response` before confirming again\n$", err)
      assert.equal(1, count("fault-applied-no-response"))
      -- ... and settled by the read, when settling is on: confirmed
      helpers.reset()
      out, err, code = T.run("confirm fault-applied-no-response --yes --json")
      assert.equal(0, code, err)
      assert.matches('"status":"processing"', out)
      assert.matches("reading the payout showed it confirmed", err)
      assert.equal(2, count("fault-applied-no-response"))
    end)

    it("a request that may move money exits 8 on an unknown outcome; a GET by its kind", function()
      local _, err, code = T.run("request PUT /api/public/v1/payouts/fault-502-json --max-retries 0")
      assert.equal(T.EXIT.unknown, code)
      assert.matches("outcome unknown: it may have gone through: read the resource before "
        .. "sending it again\n$", err)
      assert.equal(1, count("fault-502-json"))
      _, err, code = T.run("request GET /api/public/v1/payouts/fault-502-json --max-retries 0")
      assert.equal(T.EXIT.api, code)
      assert.matches("^merchantapi: 502 [^\n]+\n$", err)
    end)

    it("the other outcomes of a confirm, spelled out", function()
      -- not sent: a refused header (nothing leaves), and a port nobody listens on
      local _, err, code = T.run("confirm " .. T.PAYOUT .. " --yes -H 'Authorization: Bearer x'")
      assert.equal(T.EXIT.usage, code)
      assert.matches("\nmerchantapi: not sent: safe to retry\n$", err)
      local port = helpers.run(helpers.ROOT .. "/scripts/free-port"):match("%d+")
      _, err, code = T.run("confirm " .. T.PAYOUT .. " --yes --max-retries 0",
        { base_url = "http://127.0.0.1:" .. port })
      assert.equal(T.EXIT.transport, code)
      assert.matches("\nmerchantapi: not sent: safe to retry\n$", err)
      assert.equal(0, count(T.PAYOUT))
      -- rejected: a 422
      _, err, code = T.run("confirm draft-amount-below-minimum --yes")
      assert.equal(T.EXIT.api, code)
      assert.matches("^merchantapi: 422 amount_below_minimum: [^\n]+\n"
        .. "merchantapi: rejected by the service: not confirmed by this request\n$", err)
      -- unknown, settled as still a draft: not confirmed, safe to confirm again
      _, err, code = T.run("confirm fault-flaky-1-502 --yes --max-retries 0")
      assert.equal(T.EXIT.api, code)
      assert.matches("\nmerchantapi: not confirmed: the payout read after the failure is still a "
        .. "draft; confirming again is safe\n$", err)
      assert.equal(2, count("fault-flaky-1-502")) -- the PUT and the read that settled it
      local out
      out, err, code = T.run("confirm fault-flaky-1-502 --yes --json")
      assert.equal(0, code, err)
      assert.matches('"status":"processing"', out)
      assert.equal(3, count("fault-flaky-1-502"))
    end)
  end)

  describe("addresses --all over 25,000 addresses", function()
    it("prints as the pages come: the first lines arrive long before the last page is asked for", function()
      local cmd = format("env MERCHANTAPI_BASE_URL=%s MERCHANTAPI_API_KEY=%s %s %s "
        .. "addresses acct-25000 --all --csv --per-page 100 2>/dev/null",
        quote(helpers.base_url()), quote(T.KEY), helpers.lua_command(), quote(T.BIN))
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
      if T.under_asan() then
        pending("not measured under AddressSanitizer (its quarantine keeps freed memory)")
        return
      end
      if not T.have("/usr/bin/time") then
        pending("no GNU time (package time) to measure the peak RSS")
        return
      end
      local function peak(account)
        local t = os.tmpname()
        local out, err, code = T.cli(format("addresses %s --all --csv --per-page 100", account),
          { prefix = "/usr/bin/time -f %M -o " .. quote(t) })
        assert.equal(0, code, err)
        local kib = tonumber(T.read_file(t):match("(%d+)%s*$"))
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
      T.write_file(script, [[
local m = require "merchantapi"
local c = assert(m.new { base_url = arg[1], api_key = arg[2] })
local items = assert(c:addresses("acct-25000", { per_page = 100 }):all())
assert(#items == 25000)
]])
      local out2, ok2 = helpers.run(format("/usr/bin/time -f %%M -o %s %s %s %s %s", quote(t),
        helpers.lua_command(), quote(script), quote(helpers.base_url()), quote(T.KEY)), true)
      assert(ok2, out2)
      local all = tonumber(T.read_file(t):match("(%d+)%s*$"))
      os.remove(t)
      os.remove(script)
      assert.is_true(all - small > 2 * (big - small),
        format("holding every address: %d KiB, streaming: %d KiB, 22: %d KiB", all, big, small))
    end)

    it("progress on stderr only when it is a terminal; a failed page ends the output there", function()
      if T.have("script") then
        local shown, code = T.cli_tty("addresses acct-22 --all --per-page 5 --csv >/dev/null")
        assert.equal(0, code, shown)
        assert.truthy(shown:find("\rmerchantapi: 5 pages, 22 of 22 addresses", 1, true), shown)
      end
      local out, err, code = T.cli("addresses fault-page-3-500 --all --per-page 100 --csv --max-retries 0")
      assert.equal(T.EXIT.api, code)
      assert.equal(201, select(2, out:gsub("\n", "")))
      assert.matches("^merchantapi: the listing stopped after 200 addresses of 25000\n"
        .. "merchantapi: 500 sandbox_page_fault: [^\n]+\n$", err)
      assert.equal(3, count("fault-page-3-500"))
      out, err, code = T.cli("addresses fault-page-3-500 --all --per-page 100 --json --max-retries 0")
      assert.matches("stopped after 200 addresses", err)
      assert.equal(T.EXIT.api, code)
      assert.is_false(pcall(cjson.decode, out)) -- left unclosed: not a whole list
      assert.matches("^{\"data\":%[\n", out)
    end)
  end)

  -- (every run of the tool in this file before this test)
  it("the key is in no output of this file", function()
    for _, text in ipairs(T.outputs) do
      assert.is_nil(text:find(T.KEY, 1, true), "the key in:\n" .. text)
    end
    assert.is_true(#T.outputs > 90) -- every run of this file was checked
  end)
end)

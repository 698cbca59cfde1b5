-- The command-line tool as a user meets it, run as a process on the Lua this
-- spec runs on: one page of a long list says on stderr that more follow (in
-- every format, stdout holding the page alone), the last page says nothing;
-- --help keeps its labels and descriptions in their columns; the man page's
-- SEE ALSO names a README section that exists.  man/merchantapi.1.
local helpers = require "helpers"
local cjson = require "cjson"
local T = require "support.cli"

local format = string.format

-- The runs of the tool (as a process, stdout, stderr, exit code) and the
-- file reads: spec/support/cli.lua.
local cli, read_file = T.cli, T.read_file

local function lines(text)
  local t = {}
  for line in text:gmatch("([^\n]*)\n") do
    t[#t + 1] = line
  end
  return t
end

local MORE_25000 = "merchantapi: 25 of 25,000 addresses (page 1); more pages follow: --all for every page\n"

describe("merchantapi addresses, one page", function()
  it("a page before the last says so on stderr, in every format; stdout holds the page alone", function()
    local out, err, code = cli("addresses acct-25000 --csv")
    assert.equal(0, code)
    assert.equal(MORE_25000, err)
    local csv = lines(out)
    assert.equal(26, #csv) -- the header and 25 addresses, nothing else
    assert.equal("id,", csv[1]:sub(1, 3))
    assert.falsy(out:find("--all", 1, true))

    out, err, code = cli("addresses acct-25000 --json")
    assert.equal(0, code)
    assert.equal(MORE_25000, err)
    local doc = cjson.decode(out)
    assert.equal(25, #doc.data)
    assert.same({ page = 1, per_page = 25, total = 25000 }, doc.meta)

    out, err, code = cli("addresses acct-25000")
    assert.equal(0, code)
    assert.equal(MORE_25000, err)
    local tbl = lines(out)
    assert.equal(27, #tbl) -- the heading, 25 addresses, the page's line
    assert.equal("page 1: 25 addresses of 25000 (25 per page)", tbl[27])
  end)

  it("any page before the last, the page asked for named", function()
    local _, err, code = cli("addresses acct-22 --per-page 10 --page 2 --csv")
    assert.equal(0, code)
    assert.equal("merchantapi: 10 of 22 addresses (page 2); more pages follow: --all for every page\n", err)
  end)

  it("without a total from the service, a full page may have others after it", function()
    local out, err, code = cli("addresses meta-no-total-acct-25000 --csv")
    assert.equal(0, code)
    assert.equal("merchantapi: 25 addresses (page 1); more pages may follow: --all for every page\n", err)
    assert.equal(26, #lines(out))
  end)

  it("the last page, an empty list and --all say nothing", function()
    for _, args in ipairs({ "addresses acct-22 --csv", "addresses acct-22 --per-page 10 --page 3 --json",
                            "addresses meta-no-total-acct-22 --per-page 5 --page 5",
                            "addresses acct-22 --per-page 11 --page 2", "addresses acct-empty",
                            "addresses acct-22 --all --per-page 5 --csv" }) do
      local _, err, code = cli(args)
      assert.equal(0, code, args)
      assert.equal("", err, args)
    end
  end)
end)

describe("merchantapi --help", function()
  -- a label at 3 spaces (and its description, when on its line, at 26), or a
  -- description's next line at 26
  local function aligned(line)
    if line:match("^" .. (" "):rep(25) .. "%S") then
      return true
    end
    local label = line:match("^   (%S.*)$")
    if not label then
      return false
    end
    return not label:find("  ", 1, true) or line:match("^   %S.-%S  +()%S") == 26
  end

  it("every label starts in one column and every description in another, for each command", function()
    for _, command in ipairs({ "", "confirm", "payout", "channel", "addresses", "request", "sandbox",
                               "version" }) do
      local out, _, code = cli(command .. " --help")
      assert.equal(0, code, command)
      local section, checked = nil, 0
      for _, line in ipairs(lines(out)) do
        if line:match("^%u%l+:$") then
          section = line
        elseif line == "" then
          section = nil
        elseif section == "Options:" or section == "Arguments:" or section == "Commands:" then
          checked = checked + 1
          assert.truthy(aligned(line), format("merchantapi %s--help: %q", command ~= "" and command .. " " or "", line))
        end
      end
      assert.truthy(checked > 0, out)
    end
    local out = cli("--help")
    assert.truthy(out:find("\n   --header HEADER       Add 'Name: value' to each request", 1, true), out)
  end)

  it("the short names the help leaves out still work: -H, -q, -d", function()
    local out, err, code = cli("request GET /api/public/v1/accounts/acct-22/addresses -q per_page=5 "
      .. "-H 'X-Listing-Spec: 1' --json")
    assert.equal(0, code, err)
    assert.equal(5, #cjson.decode(out).data)
    local _, err2, code2 = cli("request POST /api/public/v1/echo -d '{\"a\":1}' --json")
    assert.equal(0, code2, err2)
  end)
end)

describe("man/merchantapi.1", function()
  it("SEE ALSO names README sections that exist", function()
    local man = read_file(helpers.ROOT .. "/man/merchantapi.1")
    local see = assert(man:match("\n%.SH SEE ALSO\n(.-)\n%.SH ") or man:match("\n%.SH SEE ALSO\n(.*)$"))
    local readme = read_file(helpers.ROOT .. "/README.md")
    local named = 0
    for list in see:gmatch("README[^(]*%(([^)]*)%)") do
      for section in list:gmatch('"([^"]+)"') do
        named = named + 1
        assert.truthy(("\n" .. readme):find("\n## " .. section .. "\n", 1, true),
          "README.md has no section '" .. section .. "'")
      end
    end
    assert.truthy(named > 0, see)
    for path in see:gmatch("%.B ([%w_/.-]+%.md)") do
      assert.truthy(io.open(helpers.ROOT .. "/" .. path, "rb"), path)
    end
  end)
end)

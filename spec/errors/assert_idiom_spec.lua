-- `assert(call())` on every Lua: a failed call returns exactly
-- `nil, err, message` (docs/guide/errors.md, "A failed call"): err the error
-- table with the response at `err.res`, message its one-line `err.message`,
-- last because LuaJIT's `assert` raises its last argument.  Every kind of
-- failure of the module has that shape; `assert(call())` raises the message
-- on LuaJIT (a string) and the error table on Lua 5.3+ (printed by its
-- __tostring), in this process and in a child interpreter (the Lua this
-- spec runs on, $LUA).  Lua 5.1's and 5.2's `assert` refuse a table
-- message: there `merchantapi.assert` (spec/errors/error_idioms_spec.lua).  In nginx's error log:
-- tests/openresty/openresty_spec.lua.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local select = select
-- Lua's own assert (in a spec, `assert` is busted's luassert)
local lua_assert = type(_G.assert) == "function" and _G.assert or load("return assert")()

local NOT_FOUND = "merchantapi: 404 not_found: Not found (no channel nope) "
  .. "[GET /api/public/v1/channels/nope]"
local CLOSED = "merchantapi: usage: the client is closed [GET]"
local JIT = rawget(_G, "jit") ~= nil
local OLD = not JIT and (_VERSION == "Lua 5.1" or _VERSION == "Lua 5.2") -- a string-only assert

-- The results of a call, with their count.
local function results(...)
  return { n = select("#", ...), ... }
end

-- Checks that r (results) is a failure of the one shape; returns err.
local function assert_failure(r, name)
  assert.equal(3, r.n, name .. ": not three results")
  assert.is_nil(r[1], name)
  assert.equal("table", type(r[2]), name)
  assert.equal("string", type(r[3]), name)
  assert.equal(r[2].message, r[3], name)
  assert.equal(tostring(r[2]), r[3], name)
  return r[2]
end

describe("a failed call", function()
  local client
  setup(function()
    helpers.reset()
    client = helpers.client { max_retries = 0 }
  end)
  teardown(function()
    client:close()
  end)

  it("returns exactly nil, err, message, with the response at err.res", function()
    local err = assert_failure(results(client:get_channel("nope")), "get_channel")
    assert.equal(NOT_FOUND, err.message)
    assert.equal(404, err.res.status)
    assert.equal(404, err.status)
    assert.truthy(err.res.body:find("not_found", 1, true))
    assert.equal("table", type(err.res.headers))
  end)

  it("has the one shape whoever made it", function()
    local closed = helpers.client()
    closed:close()
    local cases = {
      ["an api error"] = results(client:get_channel("nope")),
      ["a closed client"] = results(closed:get_channel("x")),
      ["an id with a NUL byte"] = results(client:get_channel("a\0b")),
      ["request: a bad method"] = results(client:request("GETS", "/x")),
      ["request: a refused query"] = results(client:request("GET", "/x", { query = { a = 0.5 } })),
      ["request: an api error"] = results(client:request("GET", "/api/public/v1/channels/nope")),
      ["decode"] = results(merchantapi.decode("{")),
      ["decode: an error document"] = results(merchantapi.decode('{"errors":[{"status":"404"}]}')),
      ["encode"] = results(merchantapi.encode({ 0.5 })),
      ["new"] = results(merchantapi.new { base_url = "", api_key = "k" }),
      ["wait_for_txid: usage"] = results(client:wait_for_txid("")),
      ["wait_for_txid: not found"] = results(client:wait_for_txid("no-such-payout")),
      ["pager:next"] = results(client:addresses("fault-page-1-404"):next()),
      ["pager:all"] = results(client:addresses("fault-page-1-404"):all()),
      ["a custom transport"] = results(helpers.client {
        transport = function() return nil, "boom" end, max_retries = 0,
      }:get_channel("x")),
    }
    for name, r in pairs(cases) do
      assert_failure(r, name)
    end
    assert.equal("table", type(cases["decode: an error document"][2].res))
    assert.equal("table", type(cases["pager:all"][2].partial))
  end)

  helpers.both("has the one shape in a loop task", function()
    local err = assert_failure(results(client:get_channel("nope")), "loop")
    assert.equal(404, err.res.status)
  end)

  it("raises what `assert` of this Lua raises", function()
    local ok, raised = pcall(function() lua_assert(client:get_channel("nope")) end)
    assert.is_false(ok)
    if JIT then
      -- LuaJIT's assert raises its last argument: the message
      assert.equal(NOT_FOUND, raised)
    elseif OLD then
      assert.matches("bad argument #2 to '[%w_]+' %(string expected, got table%)", raised)
    else
      assert.equal("table", type(raised)) -- the error itself, fields and all
      assert.equal(NOT_FOUND, tostring(raised))
      assert.equal(404, raised.res.status)
    end
  end)
end)

describe("an uncaught assert(call()) in the standalone interpreter", function()
  setup(function()
    helpers.reset()
  end)

  -- Runs body in a child interpreter after `local client, m` are set up.
  local function run_child(body)
    return helpers.run_lua([[
local m = require "merchantapi"
local client = assert(m.new { base_url = arg[1], api_key = arg[2], max_retries = 0 })
]] .. body, { helpers.base_url(), helpers.API_KEY })
  end

  -- out holds message after the interpreter's "name: " prefix, on a line
  -- of its own.
  local function assert_message_line(out, message)
    local at = out:find(message .. "\n", 1, true)
    assert(at, "expected the one-line message in:\n" .. out)
    local line_start = out:sub(1, at - 1):match(".*\n()") or 1
    assert.matches("^[%w%._/%-]+: $", out:sub(line_start, at - 1))
  end

  for _, case in ipairs {
    { "with a response", 'assert(client:get_channel("nope"))', NOT_FOUND },
    { "without a response", 'client:close()\nassert(client:get_channel("x"))', CLOSED },
  } do
    it("prints the one-line message, " .. case[1] .. " (every Lua but 5.1 and 5.2)", function()
      local out, ok = run_child(case[2] .. '\nprint("not reached")')
      assert.is_false(ok)
      assert.is_nil(out:find("not reached", 1, true))
      assert.is_nil(out:find("error object is not a string", 1, true), out)
      if OLD then
        -- their assert takes only a string message: merchantapi.assert there
        assert.truthy(out:find("bad argument #2 to 'assert' (string expected, got table)", 1,
          true), out)
      else
        assert_message_line(out, case[3])
      end
    end)
  end
end)

-- The error table with the idioms of Lua code: `"x" .. err`, `err .. "x"`,
-- tostring, an uncaught `error(err)` and `merchantapi.assert(call())` as
-- the standalone interpreter prints them (`assert(call())`:
-- spec/errors/assert_idiom_spec.lua)
-- (a child interpreter: the Lua this spec runs on, $LUA), with every field
-- kept -- and every error table, whoever made it, with the one metatable.
local merchantapi = require "merchantapi"
local core = require "merchantapi.core"
local helpers = require "helpers"

local NOT_FOUND = "merchantapi: 404 not_found: Not found (no channel nope) "
  .. "[GET /api/public/v1/channels/nope]"

-- The child interpreter: "5.1", "5.2", "5.3", "5.4", "5.5" or "jit".
local function child_lua()
  local out, ok = helpers.run_lua('io.write(rawget(_G, "jit") and "jit" or _VERSION:sub(5))')
  assert(ok, out)
  return out
end

-- Runs `body` in a child interpreter after `local client, m` are set up
-- against the sandbox; returns its output (stdout and stderr) and whether
-- it exited 0.
local function run_child(body)
  return helpers.run_lua([[
local m = require "merchantapi"
local client = assert(m.new { base_url = arg[1], api_key = arg[2], max_retries = 0 })
]] .. body, { helpers.base_url(), helpers.API_KEY })
end

-- The message on a line of its own, after the interpreter's "name: " prefix
-- (its path, for a Lua run by path: build/lua5.5/bin/lua)
-- (and `where`, a position, when given); on LuaJIT and 5.1 a traceback follows.
local function assert_message_line(out, message, where)
  local at = out:find(message .. "\n", 1, true)
  assert(at, "expected the one-line message in:\n" .. out)
  local line_start = out:sub(1, at - 1):match(".*\n()") or 1
  assert.matches("^[%w%._/%-]+: " .. (where or "") .. "$", out:sub(line_start, at - 1))
end

describe("an error table", function()
  local client
  setup(function()
    helpers.reset()
    client = helpers.client()
  end)
  teardown(function()
    client:close()
  end)

  it("concatenates as its message on either side, and keeps its fields", function()
    local ch, err = client:get_channel("nope")
    assert.is_nil(ch)
    assert.equal(NOT_FOUND, err.message)
    assert.equal("failed: " .. NOT_FOUND, "failed: " .. err)
    assert.equal(NOT_FOUND .. " (giving up)", err .. " (giving up)")
    assert.equal("a " .. NOT_FOUND .. " b", "a " .. err .. " b")
    assert.equal("1" .. NOT_FOUND, 1 .. err)
    assert.equal(NOT_FOUND .. NOT_FOUND, err .. err)
    assert.equal(NOT_FOUND, tostring(err))
    assert.equal("api", err.kind)
    assert.equal(404, err.status)
    assert.equal("not_found", err.code)
    assert.is_false(err.retryable)
  end)

  it("keeps the confirm's outcome beside the message", function()
    local _, err = client:confirm_payout("draft-amount-below-minimum")
    assert.equal("rejected", err.outcome)
    assert.equal("PUT", err.method)
    assert.equal("failed: " .. err.message, "failed: " .. err)
  end)

  it("refuses to concatenate with what Lua itself refuses", function()
    local _, err = client:get_channel("nope")
    local ok, msg = pcall(function() return err .. {} end)
    assert.is_false(ok)
    assert.matches("attempt to concatenate a table value", msg, 1, true)
    ok, msg = pcall(function() return true .. err end)
    assert.is_false(ok)
    assert.matches("attempt to concatenate a boolean value", msg, 1, true)
  end)

  it("has the one metatable whoever made it: C, request, transport, wait, encode", function()
    local errors = {}
    local function add(name, v, err)
      assert(v == nil and type(err) == "table", name .. " did not fail")
      errors[name] = err
    end
    add("api (C)", client:get_channel("nope"))
    local c2 = helpers.client()
    c2:close()
    add("closed client (C)", c2:get_channel("x"))
    add("decode (C)", merchantapi.decode("{"))
    add("query (merchantapi.request)", client:request("GET", "/x", { query = { a = 0.5 } }))
    add("encode (merchantapi.request)", merchantapi.encode({ 0.5 }))
    add("wait_for_txid (merchantapi.wait)", client:wait_for_txid(""))
    local hooked
    hooked = helpers.client { on_request = function()
      add("hook (merchantapi.dispatch)", hooked:get_channel("x"))
    end }
    hooked:get_channel(helpers.CHANNEL_ID)
    hooked:close()
    local custom = helpers.client { transport = function() return nil, "boom" end }
    add("custom transport (C)", custom:get_channel("x"))
    custom:close()
    local n = 0
    for name, err in pairs(errors) do
      n = n + 1
      assert.equal(core.error_metatable, getmetatable(err), name)
      assert.equal("string", type(err.kind), name)
      assert.equal("string", type(err.message), name)
      assert.is_nil(err.message:find("[\r\n]"), name)
      assert.equal(err.message, tostring(err), name)
      assert.equal("x " .. err.message, "x " .. err, name)
      assert.equal(err.message .. " x", err .. " x", name)
    end
    assert.equal(8, n)
  end)
end)

describe("merchantapi.assert", function()
  local client
  setup(function()
    client = helpers.client()
  end)
  teardown(function()
    client:close()
  end)

  it("returns every argument on success", function()
    local a, b, c = merchantapi.assert(1, nil, "x")
    assert.same({ 1, nil, "x" }, { a, b, c })
    local ch, err, res = merchantapi.assert(client:get_channel(helpers.CHANNEL_ID))
    assert.equal(helpers.CHANNEL_ID, ch.id)
    assert.is_nil(err)
    assert.equal(200, res.status)
  end)

  it("raises the error's message as a string with the caller's position", function()
    local ok, raised = pcall(function()
      merchantapi.assert(client:get_channel("nope"))
    end)
    assert.is_false(ok)
    assert.equal("string", type(raised))
    assert.equal(NOT_FOUND, raised:match("error_idioms_spec%.lua:%d+: (.*)$"))
  end)

  it("raises a string message with the caller's position, and no message as assert does", function()
    local ok, raised = pcall(function() merchantapi.assert(nil, "plain") end)
    assert.is_false(ok)
    assert.matches("error_idioms_spec%.lua:%d+: plain$", raised)
    ok, raised = pcall(merchantapi.assert, false)
    assert.is_false(ok)
    assert.matches("assertion failed!$", raised)
  end)
end)

describe("an uncaught error in the standalone interpreter", function()
  local flavor
  setup(function()
    helpers.reset()
    flavor = child_lua()
  end)

  it("merchantapi.assert(call()) prints the one-line message on every Lua", function()
    local out, ok = run_child('local ch = m.assert(client:get_channel("nope"))\nprint("not reached")')
    assert.is_false(ok)
    assert.is_nil(out:find("not reached", 1, true))
    assert_message_line(out, NOT_FOUND, "%S+:%d+: ") -- the caller's position first
  end)

  it("error(err) prints the one-line message (Lua 5.2+, LuaJIT)", function()
    local out, ok = run_child('local _, err = client:get_channel("nope")\nerror(err)')
    assert.is_false(ok)
    if flavor == "5.1" then
      -- lua.c of 5.1 prints only strings: the README gives merchantapi.assert
      assert.truthy(out:find("(error object is not a string)", 1, true), out)
    else
      assert_message_line(out, NOT_FOUND)
    end
  end)

  it("print(\"failed: \" .. err) prints one line on every Lua", function()
    local out, ok = run_child('local _, err = client:get_channel("nope")\nprint("failed: " .. err)')
    assert.is_true(ok, out)
    assert.equal("failed: " .. NOT_FOUND .. "\n", out)
  end)
end)

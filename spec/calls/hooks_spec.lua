-- Observability: on_request / on_response for every attempt, over libcurl
-- and over a custom transport alike, and MERCHANTAPI_DEBUG's one line per
-- attempt on stderr, which never holds the key.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local socket_transport = require "support.socket_transport"

local KEY = helpers.API_KEY

local recorder = helpers.recorder

for _, over in ipairs({ { "libcurl", false }, { "a LuaSocket transport", socket_transport } }) do
  local name, transport = over[1], over[2]

  describe("hooks over " .. name, function()
    before_each(function()
      helpers.reset()
    end)

    helpers.both("see attempts 1..3 of a GET retried after two 503s", function()
      local r = recorder()
      local c = helpers.client({ max_retries = 2, transport = transport,
                                 on_request = r.on_request, on_response = r.on_response })
      local ch, err, res = c:get_channel("fault-flaky-2-503")
      assert.is_nil(err)
      assert.equal("fault-flaky-2-503", ch.id)
      local url = helpers.base_url() .. "/api/public/v1/channels/fault-flaky-2-503"
      assert.equal(3, #r.requests)
      assert.equal(3, #r.responses)
      for i = 1, 3 do
        local q, a = r.requests[i], r.responses[i]
        -- (the attempt's record beside them: spec/observe/records_spec.lua)
        assert.same({ method = "GET", url = url, attempt = i },
          { method = q.method, url = q.url, attempt = q.attempt })
        assert.equal("GET", a.method)
        assert.equal(url, a.url)
        assert.equal(i, a.attempt)
        assert.is_true(helpers.is_integer(a.attempt))
        assert.equal("number", type(a.elapsed))
        assert.is_true(a.elapsed >= 0 and a.elapsed < 5)
        assert.equal("string", type(a.request_id))
        assert.equal(32, #a.request_id)
      end
      assert.equal(503, r.responses[1].status)
      assert.equal(503, r.responses[2].status)
      assert.equal(200, r.responses[3].status)
      assert.equal("api", r.responses[1].error)
      assert.equal("api", r.responses[2].error)
      assert.is_nil(r.responses[3].error)
      assert.is_true(r.responses[1].retry_in >= 0 and r.responses[1].retry_in <= 0.5)
      assert.is_true(r.responses[2].retry_in >= 0 and r.responses[2].retry_in <= 1)
      assert.is_nil(r.responses[3].retry_in)
      -- the last attempt's request id is the response's
      assert.equal(res.request_id, r.responses[3].request_id)
      -- ids differ per attempt: three requests reached the sandbox
      assert.are_not.equal(r.responses[1].request_id, r.responses[2].request_id)
      assert.equal(3, helpers.count("fault-flaky-2-503"))
      c:close()
    end)

    helpers.both("see a failed confirm's single attempt, and a transport failure", function()
      local r = recorder()
      local c = helpers.client({ max_retries = 2, transport = transport,
                                 on_request = r.on_request, on_response = r.on_response })
      local _, err = c:confirm_payout("draft-amount-below-minimum")
      assert.equal("api", err.kind)
      assert.equal(1, #r.responses)
      assert.equal("PUT", r.responses[1].method)
      assert.equal(422, r.responses[1].status)
      assert.equal("api", r.responses[1].error)
      assert.equal(err.request_id, r.responses[1].request_id)
      local dead = assert(merchantapi.new({ base_url = "http://127.0.0.1:1", api_key = KEY,
                                            max_retries = 0, transport = transport or nil,
                                            on_response = r.on_response }))
      local _, derr = dead:get_channel("x")
      assert.equal("transport", derr.kind)
      local last = r.responses[#r.responses]
      assert.is_nil(last.status)
      assert.equal("transport", last.error)
      assert.is_nil(last.retry_in)
      c:close()
      dead:close()
    end)

    helpers.both("never change the result when they raise: the first error is reported", function()
      local calls = 0
      local c = helpers.client({ transport = transport,
        on_request = function() calls = calls + 1; error("request hook broke") end,
        on_response = function() calls = calls + 1; error({ "a table" }) end })
      local ch, err, res = c:get_channel(helpers.CHANNEL_ID)
      assert.is_nil(err)
      assert.equal(helpers.CHANNEL_ID, ch.id)
      assert.equal(2, calls)
      assert.matches("request hook broke", res.hook_error)
      local _, err2 = c:get_channel("no-such-channel")
      assert.equal("api", err2.kind)
      assert.equal(404, err2.status)
      assert.matches("request hook broke", err2.hook_error)
      c:close()
    end)

    helpers.both("report a hook raising nil or false too (a hook_error that reads as true)", function()
      local c = helpers.client({ transport = transport,
        on_request = function() error(nil) end,
        on_response = function() error(false) end })
      local ch, err, res = c:get_channel(helpers.CHANNEL_ID)
      assert.is_nil(err)
      assert.equal(helpers.CHANNEL_ID, ch.id)
      -- the first one; Lua 5.5 itself raises error(nil) as "<no error object>"
      assert.equal(_VERSION == "Lua 5.5" and "<no error object>" or "merchantapi: a hook raised nil",
        res.hook_error)
      local f = helpers.client({ transport = transport,
        on_response = function() error(false) end })
      local _, err2 = f:get_channel("no-such-channel")
      assert.equal("api", err2.kind)
      assert.equal("merchantapi: a hook raised false", err2.hook_error)
      c:close()
      f:close()
    end)

    helpers.both("may close the client: it closes once the call is over", function()
      local c
      c = helpers.client({ transport = transport, on_response = function() c:close() end })
      local ch = assert(c:get_channel(helpers.CHANNEL_ID))
      assert.equal(helpers.CHANNEL_ID, ch.id)
      local _, err = c:get_channel(helpers.CHANNEL_ID)
      assert.equal("usage", err.kind)
    end)
  end)
end

describe("hooks over libcurl", function()
  helpers.both("cannot call the client they observe (usage error), nor yield", function()
    local inner, yielded
    local c
    c = helpers.client({ on_request = function()
      inner = { c:get_channel(helpers.CHANNEL_ID) }
    end })
    assert(c:get_channel(helpers.CHANNEL_ID))
    assert.is_nil(inner[1])
    assert.equal("usage", inner[2].kind)
    local y = helpers.client({ on_request = function()
      coroutine.yield()
    end })
    local co = coroutine.create(function()
      local ch, _, res = y:get_channel(helpers.CHANNEL_ID)
      yielded = res.hook_error
      return ch
    end)
    local ok, ch = coroutine.resume(co)
    assert.is_true(ok)
    assert.equal(helpers.CHANNEL_ID, ch.id)
    assert.matches("yield", yielded)
    c:close()
    y:close()
  end)
end)

describe("MERCHANTAPI_DEBUG", function()
  -- a child (the variable is read when a client is made): a retried GET over
  -- libcurl and over a transport, ids holding the key, a refused confirm
  local CHILD = [[
    local merchantapi = require "merchantapi"
    local base, key = arg[1], arg[2]
    local transport = require "support.socket_transport"
    for _, t in ipairs({ false, transport }) do
      local c = assert(merchantapi.new({ base_url = base, api_key = key, max_retries = 2,
                                         transport = t or nil }))
      assert(c:get_channel("fault-flaky-2-503"))
      c:get_channel("x" .. key)
      c:confirm_payout(key)
      c:close()
    end
    local failing = function() return nil, "refused: Bearer " .. key end
    local d = assert(merchantapi.new({ base_url = base, api_key = key, max_retries = 0,
                                       transport = failing }))
    d:get_channel("y")
    print("done")
  ]]

  it("logs one line per attempt, with the key redacted and no header", function()
    helpers.reset()
    local out, ok = helpers.run_lua(CHILD, { helpers.base_url(), KEY }, "MERCHANTAPI_DEBUG=1")
    assert.is_true(ok, out)
    assert.matches("done", out)
    local lines = {}
    for line in out:gmatch("[^\n]+") do
      if line:find("^merchantapi: ") then
        lines[#lines + 1] = line
      end
    end
    -- per transport: 3 attempts of the flaky GET (reset between: the
    -- sandbox counts per id, so the second run sees 200 at once), 1 + 1;
    -- then the failing transport's 1
    assert.is_true(#lines >= 3 + 1 + 1 + 1 + 1 + 1 + 1, out)
    assert.matches("^merchantapi: GET http://.-/channels/fault%-flaky%-2%-503 attempt 1/3: 503 "
      .. "%(api service_unavailable%) in [%d.]+ s, request id %x+, retry in [%d.]+ s$", lines[1])
    assert.matches("attempt 2/3: 503", lines[2])
    assert.matches("attempt 3/3: 200 in [%d.]+ s, request id %x+$", lines[3])
    assert.matches("/channels/x%[REDACTED%] attempt 1/3: 404", out)
    assert.matches("PUT http://.-/payouts/%[REDACTED%] attempt 1/3: 404", out)
    assert.matches("no response %(transport: refused: Bearer %[REDACTED%]%)", out)
    assert.is_nil(out:find(KEY, 1, true), out)
    assert.is_nil(out:lower():find("authorization", 1, true), out)
  end)

  it("is off without the variable", function()
    local out, ok = helpers.run_lua([[
      local merchantapi = require "merchantapi"
      local c = assert(merchantapi.new({ base_url = arg[1], api_key = arg[2] }))
      assert(c:get_channel("60e05bc0-4690-4985-a08a-8acf00e48294"))
      print("done")
    ]], { helpers.base_url(), KEY }, "MERCHANTAPI_DEBUG=0")
    assert.is_true(ok, out)
    assert.is_nil(out:find("^merchantapi: ") or out:find("\nmerchantapi: "), out)
  end)
end)

-- The hook rule's one home (src/lua_transport.c): the core's observer
-- (libcurl, a loop) and a Lua transport's loop (lua/merchantapi/dispatch.lua)
-- both record through it, and every driver's results come from it.
describe("the hook rule (core.hook_raised, core.hook_results)", function()
  local core = require "merchantapi.core"

  it("keeps the first error a call's hooks raised, whatever its value", function()
    local state = {}
    core.hook_raised(state, false)
    core.hook_raised(state, "second")
    assert.is_true(state.hook_raised)
    assert.equal(false, state.hook_error)
    local res = {}
    local v, err, r = core.hook_results(state, "value", nil, res)
    assert.equal("value", v)
    assert.is_nil(err)
    assert.equal(res, r)
    assert.equal("merchantapi: a hook raised false", res.hook_error)
  end)

  it("sets hook_error on the error of a failed call, a raised nil named", function()
    local state = {}
    core.hook_raised(state, nil)
    core.hook_raised(state, { "later" })
    local e = { kind = "api" }
    local v, err, msg = core.hook_results(state, nil, e, "the message")
    assert.is_nil(v)
    assert.equal(e, err)
    assert.equal("the message", msg)
    assert.equal("merchantapi: a hook raised nil", e.hook_error)
  end)

  it("leaves the results alone without hooks or without a hook error", function()
    local res = {}
    assert.equal("v", (core.hook_results(nil, "v", nil, res)))
    assert.equal("v", (core.hook_results({}, "v", nil, res)))
    assert.is_nil(res.hook_error)
    local t = {}
    core.hook_raised(t, t) -- a table raised is kept as it is
    local e = {}
    core.hook_results(t, { "lists" }, e) -- a page walk: lists and its error
    assert.equal(t, e.hook_error)
  end)
end)

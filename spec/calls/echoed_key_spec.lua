-- A server that echoes the api key in every header it can (the sandbox's
-- echo_key mode: X-Request-Id, other header values, a header's name, error
-- documents' title and detail): the key reaches none of the hooks' info,
-- res.headers (names and values), res.request_id, the error's fields,
-- tostring(err) or a MERCHANTAPI_DEBUG line -- over libcurl and over a
-- custom transport, on successful, retried and failed attempts.  One
-- redaction (mapi_redact in the C core) makes every one of them: "[REDACTED]"
-- where the key stood.  The body is the one thing left as received.
local helpers = require "helpers"
local socket_transport = require "support.socket_transport"

local KEY = helpers.API_KEY

local function set_echo_key(on)
  local out = helpers.sandbox_config('{"echo_key":' .. tostring(on) .. "}")
  assert(out:find('"echo_key":' .. tostring(on), 1, true), out)
end

local assert_no_key = helpers.assert_no_key

-- The echo happened, and was redacted: in a value and in a header's name.
local function assert_echo_redacted(res, what)
  assert.equal("Bearer [REDACTED]", res.request_id, what)
  assert.equal("Bearer [REDACTED]", res.headers["x-echo-authorization"], what)
  assert.equal("1", res.headers["x-key-[REDACTED]"], what)
  assert_no_key(res.headers, what .. ": res.headers")
  assert_no_key(res.request_id, what .. ": res.request_id")
end

for _, over in ipairs({ { "libcurl", false }, { "a LuaSocket transport", socket_transport } }) do
  local name, transport = over[1], over[2]

  describe("a server echoing the key, over " .. name, function()
    local infos, client
    before_each(function()
      helpers.reset()
      set_echo_key(true)
      infos = {}
      local function hook(info)
        infos[#infos + 1] = info
      end
      client = helpers.client({ transport = transport, max_retries = 2,
                                on_request = hook, on_response = hook })
    end)
    after_each(function()
      client:close()
      helpers.reset() -- echo_key off
    end)

    it("never shows it on a success, a retried success or a pager walk", function()
      local ch, err, res = client:get_channel(helpers.CHANNEL_ID)
      assert.is_nil(err)
      assert.equal(helpers.CHANNEL_ID, ch.id)
      assert_echo_redacted(res, "get_channel")
      assert_no_key(ch, "the channel")

      ch, err, res = client:get_channel("fault-flaky-2-503")
      assert.is_nil(err)
      assert.equal("fault-flaky-2-503", ch.id)
      assert_echo_redacted(res, "the retried get_channel")
      assert.equal(3, helpers.count("fault-flaky-2-503"))

      local v, rerr, rres = client:request("GET", "/api/public/v1/echo")
      assert.is_nil(rerr)
      assert.is_table(v)
      assert_echo_redacted(rres, "request")

      local items = assert(client:addresses("acct-22", { per_page = 10 }):all())
      assert.equal(22, #items)
      assert.equal(3, helpers.count("acct-22"))

      -- 2 hooks per attempt: 1 + 3 + 1 + 3
      assert.equal(2 * 8, #infos)
      local ids = 0
      for _, info in ipairs(infos) do
        if info.request_id then
          ids = ids + 1
          assert.equal("Bearer [REDACTED]", info.request_id)
        end
      end
      assert.equal(8, ids) -- every on_response, the 503s' included
      assert_no_key(infos, "the hooks' info")
    end)

    it("never shows it in a failure: fields, entries, tostring, res", function()
      local cases = {
        { "GET 503 x3", 3, "fault-503", client:get_channel("fault-503") },
        { "GET 404", 1, "no-such-channel", client:get_channel("no-such-channel") },
        { "PUT 422", 1, "draft-amount-below-minimum",
          client:confirm_payout("draft-amount-below-minimum", { settle = false }) },
        { "PUT 500", 1, "fault-500", client:confirm_payout("fault-500", { settle = false }) },
      }
      for _, c in ipairs(cases) do
        local what, attempts, id, value, err = c[1], c[2], c[3], c[4], c[5]
        local res = err.res
        assert.is_nil(value, what)
        assert.equal("api", err.kind, what)
        assert.equal(attempts, err.attempts, what)
        assert.equal(attempts, helpers.count(id), what)
        assert.equal("Bearer [REDACTED]", err.request_id, what)
        assert_no_key(err, what .. ": err")
        assert.is_nil(tostring(err):find(KEY, 1, true), what)
        assert_echo_redacted(res, what)
      end
      -- the error documents' text, where the server wrote the key too
      local err = cases[1][5]
      assert.equal("Service Unavailable for Bearer [REDACTED]", err.title)
      assert.equal("sandbox fault (authorization: Bearer [REDACTED])", err.detail)
      assert.equal(err.detail, err.errors[1].detail)
      assert.truthy(tostring(err):find("Bearer [REDACTED]", 1, true))
      -- the body is the one thing left as received (res.body, res:document())
      assert.truthy(cases[1][5].res.body:find(KEY, 1, true))
      assert_no_key(infos, "the hooks' info")
    end)
  end)
end

describe("a server echoing the key, MERCHANTAPI_DEBUG", function()
  after_each(helpers.reset)

  it("writes no line holding it", function()
    helpers.reset()
    set_echo_key(true)
    local out, ok = helpers.run_lua([[
      local merchantapi = require "merchantapi"
      local transport = require "support.socket_transport"
      for _, t in ipairs({ false, transport }) do
        local c = assert(merchantapi.new({ base_url = arg[1], api_key = arg[2], max_retries = 2,
                                           transport = t or nil }))
        assert(c:get_channel("60e05bc0-4690-4985-a08a-8acf00e48294"))
        c:get_channel("fault-503")
        c:confirm_payout("fault-500", { settle = false })
        c:close()
      end
      print("done")
    ]], { helpers.base_url(), KEY }, "MERCHANTAPI_DEBUG=1")
    assert.is_true(ok, out)
    assert.matches("done", out)
    local lines = 0
    for line in out:gmatch("[^\n]+") do
      if line:find("^merchantapi: ") then
        lines = lines + 1
        assert.truthy(line:find("request id Bearer [REDACTED]", 1, true), line)
      end
    end
    assert.equal(2 * (1 + 3 + 1), lines, out)
    assert.is_nil(out:find(KEY, 1, true), out)
  end)
end)

-- Headers of one's own: `merchantapi.new{ headers = ... }` on every request,
-- a `headers` option per call (confirm_payout, get_channel, list_addresses,
-- the pager, get_payout, request) that adds to the client's and replaces
-- one of the same name; what crossed the wire (the sandbox's
-- /__sandbox/headers); the refused ones -- the client's own headers, names
-- that are not tokens, CR/LF/NUL -- with nothing sent (its request
-- counters).  Over libcurl and over a custom (LuaSocket) transport; the
-- hooks and MERCHANTAPI_DEBUG never show them.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local socket_transport = require "support.socket_transport"

local PAYOUT_ID = helpers.PAYOUT_ID
local CHANNEL_ID = helpers.CHANNEL_ID
local V1 = "/api/public/v1"

-- The client's own headers, in several cases, and the framing ones.
local FORBIDDEN = {
  "Authorization", "Content-Type", "Accept", "User-Agent", "Host", "Content-Length",
  "authorization", "CONTENT-TYPE", "accept", "USER-AGENT", "host", "content-length",
  "Transfer-Encoding", "Connection", "Expect",
}

-- Header names and values refused by the rule (CR, LF, NUL, not a token).
local BAD = {
  { ["X-Trace\r\nX-Evil"] = "v" },
  { ["X-Trace\n"] = "v" },
  { ["X-\0Trace"] = "v" },
  { ["X Trace"] = "v" },
  { ["X-Trace:"] = "v" },
  { [""] = "v" },
  { ["X-Trace"] = "v\r\nX-Evil: 1" },
  { ["X-Trace"] = "v\r" },
  { ["X-Trace"] = "v\nw" },
  { ["X-Trace"] = "v\0w" },
  { ["X-Trace"] = "v\1" },
  { ["X-Trace"] = " v" },
}

for _, t in ipairs({ { "libcurl", false }, { "a custom transport", socket_transport } }) do
  local label, transport = t[1], t[2]

  describe("headers of one's own over " .. label, function()
    local c
    before_each(function()
      helpers.reset()
      c = helpers.client({ transport = transport,
        headers = { ["X-Trace"] = "client-1", ["X-Client"] = "c1", ["X-Empty"] = "" } })
    end)
    after_each(function()
      c:close()
    end)

    -- the client's, with the call's x-trace and idempotency-key when call
    local function assert_seen(id, call)
      local h = assert(helpers.headers(id), "no request seen for " .. id)
      assert.equal(call and "call-7" or "client-1", h["x-trace"]) -- one value: replaced
      assert.equal("c1", h["x-client"])
      assert.equal("", h["x-empty"])
      assert.equal(call and "k-42" or nil, h["idempotency-key"])
      assert.equal("application/vnd.api+json", h["accept"]) -- still the client's own
      assert.matches("^merchantapi/", h["user-agent"])
    end
    local CALL = { headers = { ["x-TRACE"] = "call-7", ["Idempotency-Key"] = "k-42" } }

    it("sends the client's headers on every call", function()
      assert(c:get_channel(CHANNEL_ID))
      assert_seen(CHANNEL_ID, false)
      assert(c:confirm_payout(PAYOUT_ID))
      assert_seen(PAYOUT_ID, false)
      assert(c:get_payout("draft-integer-amount"))
      assert_seen("draft-integer-amount", false)
      assert(c:list_addresses("acct-one"))
      assert_seen("acct-one", false)
      assert(c:request("POST", V1 .. "/echo/x", { body = "{}" }))
      assert_seen("echo", false)
    end)

    it("adds a call's headers, replacing the client's of the same name", function()
      assert(c:get_channel(CHANNEL_ID, CALL))
      assert_seen(CHANNEL_ID, true)
      assert(c:confirm_payout(PAYOUT_ID, CALL))
      assert_seen(PAYOUT_ID, true)
      assert(c:get_payout("draft-integer-amount", CALL))
      assert_seen("draft-integer-amount", true)
      assert(c:list_addresses("acct-one", { per_page = 5, headers = CALL.headers }))
      assert_seen("acct-one", true)
      assert(c:request("PATCH", V1 .. "/echo/x", { body = "{}", headers = CALL.headers }))
      assert_seen("echo", true)
      assert(c:request("GET", V1 .. "/channels/" .. CHANNEL_ID, { headers = CALL.headers }))
      assert_seen(CHANNEL_ID, true)
      -- and the next call without them: the client's alone
      assert(c:get_channel(CHANNEL_ID))
      assert_seen(CHANNEL_ID, false)
    end)

    it("sends them with every page of the pager, one by one and concurrent", function()
      for _, conc in ipairs({ 1, 3 }) do
        helpers.reset()
        local items = assert(c:addresses("acct-22", { per_page = 5, concurrency = conc,
          headers = CALL.headers }):all())
        assert.equal(22, #items)
        assert.equal(5, helpers.count("acct-22"))
        assert_seen("acct-22", true)
      end
    end)

    it("refuses the client's own headers with a usage error, nothing sent", function()
      for _, name in ipairs(FORBIDDEN) do
        local h = { [name] = "Bearer other" }
        local p, err = c:confirm_payout(PAYOUT_ID, { headers = h })
        assert.is_nil(p)
        assert.equal("usage", err.kind)
        assert.equal("not_sent", err.outcome)
        assert.matches(name, err.message, 1, true)
        assert.is_nil(err.message:find("other", 1, true))
        local _, err2 = c:get_channel(CHANNEL_ID, { headers = h })
        assert.equal("usage", err2.kind)
        local _, err3 = c:get_payout(PAYOUT_ID, { headers = h })
        assert.equal("usage", err3.kind)
        local _, err4 = c:list_addresses("acct-22", { headers = h })
        assert.equal("usage", err4.kind)
        local _, err5 = c:request("PUT", V1 .. "/echo", { headers = h })
        assert.equal("usage", err5.kind)
        assert.equal("not_sent", err5.outcome)
        local items, err6 = c:addresses("acct-22", { concurrency = 2, headers = h }):all()
        assert.is_nil(items)
        assert.equal("usage", err6.kind)
        local bad, err7 = merchantapi.new({ base_url = helpers.base_url(), headers = h })
        assert.is_nil(bad)
        assert.equal("usage", err7.kind)
      end
      for _, id in ipairs({ PAYOUT_ID, CHANNEL_ID, "acct-22", "echo" }) do
        assert.equal(0, helpers.count(id))
      end
    end)

    it("refuses CR, LF, NUL and names that are not tokens, nothing sent", function()
      for _, h in ipairs(BAD) do
        local p, err = c:confirm_payout(PAYOUT_ID, { headers = h })
        assert.is_nil(p)
        assert.equal("usage", err.kind)
        assert.equal("not_sent", err.outcome)
        assert.is_nil(err.message:find("[\r\n%z]"))
        local _, err2 = c:get_channel(CHANNEL_ID, { headers = h })
        assert.equal("usage", err2.kind)
        local _, err3 = c:request("POST", V1 .. "/echo", { headers = h })
        assert.equal("usage", err3.kind)
        local bad, err4 = merchantapi.new({ base_url = helpers.base_url(), headers = h })
        assert.is_nil(bad)
        assert.equal("usage", err4.kind)
      end
      -- a name given twice, in two cases
      local _, err = c:get_channel(CHANNEL_ID, { headers = { ["X-A"] = "1", ["x-a"] = "2" } })
      assert.equal("usage", err.kind)
      for _, id in ipairs({ PAYOUT_ID, CHANNEL_ID, "echo" }) do
        assert.equal(0, helpers.count(id))
      end
    end)

    it("never shows them to the hooks", function()
      local infos = {}
      local h = helpers.client({ transport = transport,
        headers = { ["X-Secret-Trace"] = "trace-s3cr3t" },
        on_request = function(info) infos[#infos + 1] = info end,
        on_response = function(info) infos[#infos + 1] = info end })
      assert(h:get_channel(CHANNEL_ID, { headers = { ["X-Call"] = "call-s3cr3t" } }))
      h:close()
      assert.equal(2, #infos)
      for _, info in ipairs(infos) do
        assert.is_false(helpers.contains_string(info, "s3cr3t"))
        assert.is_false(helpers.contains_string(info, helpers.API_KEY))
        assert.is_nil(info.headers)
      end
    end)
  end)
end

describe("headers of one's own, argument types", function()
  it("raise on a headers option that is not a table of strings", function()
    local c = helpers.client()
    assert.has_error(function() c:get_channel(CHANNEL_ID, { headers = "X-A: 1" }) end)
    assert.has_error(function() c:get_channel(CHANNEL_ID, { headers = { ["X-A"] = 1 } }) end)
    assert.has_error(function() c:confirm_payout(PAYOUT_ID, { headers = { "X-A: 1" } }) end)
    assert.has_error(function() c:get_channel(CHANNEL_ID, { header = {} }) end)
    assert.has_error(function() c:request("GET", "/x", { headers = { X = true } }) end)
    assert.has_error(function()
      merchantapi.new({ base_url = helpers.base_url(), headers = { X = false } })
    end)
    c:close()
  end)
end)

describe("headers of one's own and MERCHANTAPI_DEBUG", function()
  it("never appear in the debug lines", function()
    helpers.reset()
    local out, ok = helpers.run_lua([[
      local merchantapi = require "merchantapi"
      local transport = require "support.socket_transport"
      for _, t in ipairs({ false, transport }) do
        local c = assert(merchantapi.new({ base_url = arg[1], api_key = arg[2], max_retries = 1,
          transport = t or nil, headers = { ["X-Secret-Trace"] = "trace-s3cr3t" } }))
        assert(c:get_channel("fault-flaky-1-503", { headers = { ["X-Call"] = "call-s3cr3t" } }))
        c:close()
      end
      print("done")
    ]], { helpers.base_url(), helpers.API_KEY }, "MERCHANTAPI_DEBUG=1")
    assert.is_true(ok, out)
    assert.matches("done", out)
    assert.matches("attempt 1/2: 503", out)
    assert.is_nil(out:find("s3cr3t", 1, true), out)
    assert.is_nil(out:lower():find("x-secret-trace", 1, true), out)
  end)
end)

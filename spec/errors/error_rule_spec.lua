-- "Is this an error document" is decided once, by the C core's rule
-- (mapi_doc_error_rule, JSON:API "Top Level"), for the C calls, the Lua
-- calls over libcurl or a custom transport, client:request and
-- merchantapi.decode alike: "errors": [] next to data is a success; data
-- and a non-empty errors[] under a 2xx is "decode"; errors without data is
-- "api".  tests/test_error_doc.c holds the same cases for C.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local socket_transport = require "support.socket_transport"

for _, over in ipairs({ { "libcurl", false }, { "a LuaSocket transport", socket_transport } }) do
  local name, transport = over[1], over[2]

  describe("the error-document rule over " .. name, function()
    local client
    before_each(function()
      helpers.reset()
      client = helpers.client({ transport = transport, max_retries = 2 })
    end)
    after_each(function()
      client:close()
    end)

    it("takes a 201 with a payout and \"errors\": [] as the confirmed payout, like C", function()
      local payout, err, res = client:confirm_payout("fault-empty-errors")
      assert.is_nil(err)
      assert.equal("fault-empty-errors", payout.id)
      assert.equal("processing", payout.status)
      assert.equal(201, res.status)
      assert.equal(1, helpers.count("fault-empty-errors"))
      local ch = assert(client:get_channel("fault-empty-errors"))
      assert.equal("fault-empty-errors", ch.id)
      local list = assert(client:list_addresses("fault-empty-errors"))
      assert.equal(22, #list)
      local v = assert(client:request("GET", "/api/public/v1/channels/fault-empty-errors"))
      assert.equal("fault-empty-errors", v.id)
      assert.equal(4, helpers.count("fault-empty-errors"))
    end)

    it("refuses data next to a non-empty errors[] under a 2xx as decode, with every field", function()
      -- settle = false: this is the confirm's own answer (settling is settle_deadline_spec's)
      local payout, err = client:confirm_payout("fault-data-and-errors", { settle = false })
      assert.is_nil(payout)
      local res = err.res
      assert.equal("decode", err.kind)
      assert.equal(201, err.status)
      assert.equal("unknown", err.outcome) -- answered 201: it may have been done
      assert.equal("PUT", err.method)
      assert.equal(helpers.base_url() .. "/api/public/v1/payouts/fault-data-and-errors", err.url)
      assert.equal(1, err.attempts)
      assert.is_false(err.retryable)
      assert.equal("sandbox_conflict", err.errors[1].code)
      assert.matches("both data and errors", tostring(err))
      assert.equal(201, res.status)
      assert.equal(1, helpers.count("fault-data-and-errors"))
      local ch, gerr = client:get_channel("fault-data-and-errors")
      assert.is_nil(ch)
      assert.equal("decode", gerr.kind)
      assert.equal(200, gerr.status)
      assert.is_nil(gerr.outcome)
      assert.equal(2, helpers.count("fault-data-and-errors")) -- decode is not retried
    end)
  end)
end

describe("merchantapi.decode by the same rule", function()
  local PAYOUT = '{"type":"payouts","id":"p1","attributes":{"amount":"1.5"}}'

  it("gives the resource when errors is empty", function()
    local v, err = merchantapi.decode('{"data":' .. PAYOUT .. ',"errors":[]}')
    assert.is_nil(err)
    assert.equal("p1", v.id)
    assert.equal("1.5", v.amount)
  end)

  it("gives an api error for errors without data", function()
    local v, err = merchantapi.decode('{"errors":[{"status":"409","code":"conflict"}]}')
    assert.is_nil(v)
    assert.equal("api", err.kind)
    assert.equal(409, err.status)
    assert.equal("conflict", err.code)
  end)

  it("gives a decode error, entries kept, for data and errors together", function()
    local v, err = merchantapi.decode('{"data":' .. PAYOUT
      .. ',"errors":[{"status":"409","code":"conflict"}]}')
    assert.is_nil(v)
    assert.equal("decode", err.kind)
    assert.is_nil(err.code)
    assert.equal("conflict", err.errors[1].code)
    assert.matches("both data and errors", err.message)
  end)
end)

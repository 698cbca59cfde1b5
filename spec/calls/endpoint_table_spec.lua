-- The core's endpoint table and defaults, as Lua sees them (core.endpoints,
-- core.defaults): one row per call, by index and by name, with the rules the
-- C core applies (src/calls.c, src/calls.h, src/base.h).
local core = require "merchantapi.core"

describe("core.endpoints", function()
  it("lists every endpoint once, each also under its name", function()
    local names = {}
    for i, row in ipairs(core.endpoints) do
      assert.are.equal(row, core.endpoints[row.name], "row " .. i)
      names[#names + 1] = row.name
      assert.is_string(row.method)
      assert.is_string(row.type)
      assert.is_boolean(row.lists)
      assert.is_boolean(row.moves_money)
      assert.are.equal(row.moves_money and "not_sent" or nil, core.not_sent(row.method))
    end
    assert.are.same({ "confirm_payout", "get_channel", "list_addresses", "get_payout" }, names)
  end)

  it("holds the rules of each call", function()
    local e = core.endpoints
    -- the rows' other columns (id name, key rule, decimal fields) are the
    -- core's alone: tests/test_calls.c
    assert.are.same({ "PUT", "payouts", false, true },
      { e.confirm_payout.method, e.confirm_payout.type, e.confirm_payout.lists,
        e.confirm_payout.moves_money })
    assert.is_true(e.list_addresses.lists)
    assert.are.equal("/api/public/v1/accounts/a%2Fb/addresses", core.path("list_addresses", "a/b"))
    assert.has_error(function() core.path("payout", "p1") end)
    -- the core's id rule (mapi_id_check), named with the row's method and outcome
    local path, err = core.path("confirm_payout", "..")
    assert.is_nil(path)
    assert.are.equal('payout_id must not be "." or ".."', err.title)
    assert.are.equal("PUT", err.method)
    assert.are.equal("not_sent", err.outcome)
  end)
end)

describe("core.defaults", function()
  it("gives the options' defaults written once in the core", function()
    assert.are.equal(30, core.defaults.timeout)
    assert.are.equal(10, core.defaults.connect_timeout)
    assert.are.equal(2, core.defaults.max_retries)
    assert.are.equal(16 * 1024 * 1024, core.defaults.max_body)
    assert.are.equal(64, core.defaults.max_depth)
    assert.are.equal(256 * 1024, core.defaults.max_header_bytes) -- not an option: the head's cap
  end)
end)

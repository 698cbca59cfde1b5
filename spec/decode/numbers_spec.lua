-- "Numbers are exact" (docs/contract.md): integers within +-2^53 are integers,
-- every other number is its source text, a payout's amount is always a
-- decimal string, pagination meta always an integer.  Crafted documents
-- through decode, then the sandbox's number drafts through confirm_payout.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local is_integer = helpers.is_integer

local function attrs(json_attrs, rtype)
  local body = '{"data":{"type":"' .. (rtype or "things") .. '","id":"1","attributes":{'
    .. json_attrs .. "}}}"
  return assert(merchantapi.decode(body))
end

describe("numbers in attributes", function()
  local r = attrs('"small":42,"neg":-7,"zero":0,"max":9007199254740992,"min":-9007199254740992,'
    .. '"over":9007199254740993,"under":-9007199254740993,"i64":9223372036854775807,'
    .. '"huge":123456789012345678901234567890,"frac":100.10,"exp":1.5e-7,"EXP":1E+2,'
    .. '"digits":0.123456789012345678,"negzero":-0.0,"trailing":2.50,"amount":1200')

  it("gives integers within +-2^53 as Lua integers", function()
    assert.equal(42, r.small)
    assert.equal(-7, r.neg)
    assert.equal(0, r.zero)
    assert.equal(9007199254740992, r.max)
    assert.equal(-9007199254740992, r.min)
    for _, k in ipairs({ "small", "neg", "zero", "max", "min" }) do
      assert.is_true(is_integer(r[k]), k)
    end
  end)

  it("gives integers beyond 2^53 as their decimal text", function()
    assert.equal("9007199254740993", r.over)
    assert.equal("-9007199254740993", r.under)
    assert.equal("9223372036854775807", r.i64)
    assert.equal("123456789012345678901234567890", r.huge)
  end)

  it("gives fractions and exponents as their exact source text", function()
    assert.equal("100.10", r.frac)
    assert.equal("1.5e-7", r.exp)
    assert.equal("1E+2", r.EXP)
    assert.equal("0.123456789012345678", r.digits)
    assert.equal("-0.0", r.negzero)
    assert.equal("2.50", r.trailing)
  end)

  it("leaves `amount` of other types alone", function()
    assert.equal(1200, r.amount)
    assert.is_true(is_integer(r.amount))
  end)

  it("applies the same rules inside nested values", function()
    local n = attrs('"nested":{"list":[9007199254740993, 1.10, 7]}')
    assert.same({ list = { "9007199254740993", "1.10", 7 } }, n.nested)
  end)
end)

describe("a payout's amount", function()
  local cases = {
    { "1200", "1200" },
    { "250.10", "250.10" },
    { '"250.10"', "250.10" },
    { '"1200"', "1200" },
    { "-12", "-12" },
    { "0.123456789012345678", "0.123456789012345678" },
    { "1.5e2", "150" },
    { "2.5E-3", "0.0025" },
    { "15e-1", "1.5" },
    { "1.50e+1", "15.0" },
    { "123456789012345678901234567890", "123456789012345678901234567890" },
  }
  for _, c in ipairs(cases) do
    it("is the decimal string " .. c[2] .. " for " .. c[1] .. " on the wire", function()
      local p = attrs('"amount":' .. c[1], "payouts")
      assert.equal("string", type(p.amount))
      assert.equal(c[2], p.amount)
    end)
  end
end)

describe("pagination meta", function()
  it("is always an integer", function()
    local list = assert(merchantapi.decode(
      '{"data":[],"meta":{"page":2.0,"per_page":"50","total":1e3,"other":1.5}}'))
    assert.equal(2, list.meta.page)
    assert.equal(50, list.meta.per_page)
    assert.equal(1000, list.meta.total)
    assert.is_true(is_integer(list.meta.page))
    assert.is_true(is_integer(list.meta.per_page))
    assert.is_true(is_integer(list.meta.total))
    assert.equal("1.5", list.meta.other)
  end)
end)

describe("numbers from the sandbox", function()
  local client
  setup(function()
    client = helpers.client()
    helpers.reset()
  end)
  teardown(function()
    client:close()
  end)

  it("keeps 250.10 of the fixture as \"250.10\"", function()
    local p = assert(client:confirm_payout(helpers.PAYOUT_ID))
    assert.equal("250.10", p.amount)
  end)

  it("keeps 18 decimals", function()
    local p, err = client:confirm_payout("draft-18-decimals")
    assert.is_nil(err)
    assert.equal("0.123456789012345678", p.amount)
  end)

  it("gives an integer amount as a decimal string", function()
    local p, err, res = client:confirm_payout("draft-integer-amount")
    assert.is_nil(err)
    assert.equal("1200", p.amount)
    assert.matches('"amount": 1200,', res.body, 1, true)
  end)

  it("keeps big integers and exponents as text", function()
    local p, err = client:confirm_payout("draft-big-numbers")
    assert.is_nil(err)
    assert.equal("123456789012345678901234567890", p.bigInteger)
    assert.equal("1.5e-7", p.exponent)
    assert.equal("250.10", p.amount)
  end)
end)

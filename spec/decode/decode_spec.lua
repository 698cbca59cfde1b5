-- merchantapi.decode: the resolution rules and shapes of docs/contract.md
-- ("Resources come back flattened and resolved", "The response object",
-- "Errors"), on the fixtures and on crafted documents.  No server needed.
local merchantapi = require "merchantapi"
local cjson = require "cjson"
local helpers = require "helpers"

local fixture, is_integer, keys = helpers.fixture, helpers.is_integer, helpers.keys

describe("module", function()
  it("has _NAME, _VERSION and the null sentinel", function()
    assert.equal("merchantapi", merchantapi._NAME)
    -- the version is written once, in the header
    local h = assert(io.open(helpers.ROOT .. "/src/merchantapi.h", "rb"))
    local version = h:read("*a"):match('#define MAPI_VERSION "([%d.]+)"')
    h:close()
    assert.matches("^%d+%.%d+%.%d+$", version)
    assert.equal(version, merchantapi._VERSION)
    assert.equal("userdata", type(merchantapi.null))
    assert.equal(cjson.null, merchantapi.null)
    assert.is_function(merchantapi.new)
    assert.is_function(merchantapi.decode)
    assert.is_function(merchantapi.paginate)
  end)

  it("raises when the body is not a string", function()
    assert.has_error(function() merchantapi.decode(42) end,
      "bad argument #1 to 'decode' (string expected, got number)")
    assert.has_error(function() merchantapi.decode() end)
  end)
end)

describe("decode of the payout fixture", function()
  local body = fixture("confirm_payout.201")
  local payout, err, res = merchantapi.decode(body)

  it("returns the payout with every attribute", function()
    assert.is_nil(err)
    assert.equal("6ecebf80-b210-413b-b396-df4760d142c5", payout.id)
    assert.equal("payouts", payout.type)
    assert.equal("user-4711-withdrawal-0193", payout.reference)
    assert.equal("processing", payout.status)
    assert.equal("TJTuEYJ8P9to4Zhdw7zg55VPH3gzLaQDV6", payout.address)
    assert.equal("2025-09-25T08:35:07.034Z", payout.createdAt)
    assert.equal("2025-09-25T08:40:07.034Z", payout.expiresAt)
    assert.is_false(payout.absorbPayoutFee)
    assert.is_true(payout.absorbNetworkFee)
    assert.equal("250.10", payout.amount)
    assert.equal("EUR", payout.currency)
    assert.equal("289.473612", payout.payAmount)
    assert.equal("ttrx:usdt", payout.payNetwork)
    assert.equal("Tron (TRC20)", payout.payNetworkName)
    assert.equal("1.000000", payout.networkFee)
    assert.equal("2.500000", payout.payoutFee)
    assert.equal("2.16", payout.displayFee)
    assert.equal("251.02", payout.amountCharged)
    assert.equal("0.863917", payout.payChargeRate)
    assert.equal("1.157430", payout.exchangeRate)
    assert.equal("on_chain", payout.paymentMethod)
  end)

  it("turns JSON null into absent fields", function()
    for _, name in ipairs({ "txid", "absorbFees", "receiverPartnerId", "partnerStatus",
                            "approvalStatus" }) do
      assert.is_nil(rawget(payout, name), name)
    end
    assert.is_nil(rawget(payout.accountCharged, "totalBalance"))
  end)

  it("resolves accountCharged and author from included", function()
    local account = payout.accountCharged
    assert.equal("13a85b45-8543-41c7-b963-394d4ea128ae", account.id)
    assert.equal("accounts", account.type)
    assert.equal("EUR", account.currencyCode)
    assert.equal("fiat", account.currencyType)
    assert.equal("EUR main", account.label)
    assert.equal("<bank_reference>", account.bankReference)
    assert.equal("6194.43", account.balance)
    assert.is_true(account.master)
    assert.is_true(account.bankWithdrawalAvailable)
    assert.equal("payouts-bot", payout.author.name)
    assert.equal("apiKeys", payout.author.type)
    assert.equal("2025-01-14T10:02:44.120Z", payout.author.createdAt)
  end)

  it("leaves relationships that are not expanded absent", function()
    assert.is_nil(rawget(payout.accountCharged, "company"))
    assert.is_nil(rawget(payout.accountCharged, "networks"))
    assert.is_nil(rawget(payout.accountCharged, "serviceBankCredentials"))
    assert.same({ "balance", "bankDepositAvailable", "bankReference", "bankWithdrawalAvailable",
                  "currencyCode", "currencyType", "id", "label", "master", "transferAvailable",
                  "type" }, keys(payout.accountCharged))
  end)

  it("gives a response object without status, with meta, jsonapi and body", function()
    assert.is_nil(res.status)
    assert.same({}, res.headers)
    assert.same({}, res.meta)
    assert.same({ version = "1.0" }, res.jsonapi)
    assert.equal(body, res.body)
  end)

  it("gives the whole document unflattened from res:document()", function()
    local doc = res:document()
    assert.equal(merchantapi.null, doc.data.attributes.txid)
    assert.equal(cjson.null, doc.data.attributes.absorbFees)
    assert.equal("250.10", doc.data.attributes.amount)
    assert.is_false(doc.data.attributes.absorbPayoutFee)
    assert.same({ type = "accounts", id = "13a85b45-8543-41c7-b963-394d4ea128ae" },
      doc.data.relationships.accountCharged.data)
    assert.equal(2, #doc.included)
    assert.same({ included = false }, doc.included[1].relationships.company.meta)
    assert.equal("1.0", doc.jsonapi.version)
    assert.equal(doc, res:document())   -- built once
    assert.equal(doc, res.document())   -- also without self
  end)
end)

describe("decode of the other fixtures", function()
  it("partner_pay payout: amount string, destination tag, partner fields", function()
    local p = assert(merchantapi.decode(fixture("confirm_payout.partner_pay.201")))
    assert.equal("1200", p.amount)
    assert.equal("rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe?dt=3942117", p.address)
    assert.equal("partner_pay", p.paymentMethod)
    assert.equal("354205155", p.receiverPartnerId)
    assert.equal("pending", p.partnerStatus)
    assert.is_false(p.absorbFees)
    assert.equal("48211.902311", p.accountCharged.totalBalance)
    assert.equal("USDT treasury", p.accountCharged.label)
  end)

  it("channel: targetAccount resolved", function()
    local ch = assert(merchantapi.decode(fixture("get_channel.200")))
    assert.equal("60e05bc0-4690-4985-a08a-8acf00e48294", ch.id)
    assert.equal("channels", ch.type)
    assert.equal("enabled", ch.status)
    assert.equal("BRL", ch.localCurrency)
    assert.equal("ttrx:usdt", ch.networkCode)
    assert.equal("https://hosted.example/channels/60e05bc0-4690-4985-a08a-8acf00e48294",
      ch.hostedPageUrl)
    assert.equal("6194.43", ch.targetAccount.balance)
    assert.is_true(ch.targetAccount.transferAvailable)
  end)

  it("address list: array with integer meta, network resolved", function()
    local list, err, res = merchantapi.decode(fixture("list_addresses.200"))
    assert.is_nil(err)
    assert.equal(1, #list)
    assert.equal("138928d2-769d-478f-9508-90b7e4f8942a", list[1].id)
    assert.equal("Apr 11", list[1].label)
    assert.equal("TUbHdtAyfeiWTJPzF12gcBnpLtmLo3qgkS", list[1].value)
    assert.equal("ttrx:usdt", list[1].network.code)
    assert.equal("Tron (TRC20)", list[1].network.name)
    assert.is_nil(rawget(list[1], "account"))
    assert.same({ page = 1, per_page = 1, total = 22 }, list.meta)
    assert.is_true(is_integer(list.meta.page))
    assert.is_true(is_integer(list.meta.per_page))
    assert.is_true(is_integer(list.meta.total))
    assert.equal(list.meta, res.meta)
  end)

  it("generating addresses: value nil, one network table shared", function()
    local list = assert(merchantapi.decode(fixture("list_addresses.generating.200")))
    assert.equal(2, #list)
    assert.equal("0xfff18888872fba23a2bd86ba25a1ec17ff8a7de7", list[1].value)
    assert.is_nil(list[2].value)
    assert.equal("Second Address", list[2].label)
    assert.equal(list[1].network, list[2].network)
    assert.equal("eth:usdc", list[2].network.code)
    assert.same({ page = 1, per_page = 25, total = 2 }, list.meta)
  end)
end)

describe("resolution rules on crafted documents", function()
  local doc = cjson.encode({
    data = {
      type = "payouts", id = "p1",
      attributes = { status = "processing" },
      relationships = {
        accountCharged = { data = { type = "accounts", id = "a1" } },
        author = { data = { type = "apiKeys", id = "k1" } },
        gone = { data = { type = "accounts", id = "missing" } },
        nothing = { data = cjson.null },
        hidden = { meta = { included = false } },
        none = { data = "EMPTY" },   -- becomes [] below
      },
    },
    included = {
      { type = "accounts", id = "a1", attributes = { label = "A" },
        relationships = {
          payout = { data = { type = "payouts", id = "p1" } },      -- back to the primary
          selfref = { data = { type = "accounts", id = "a1" } },
        } },
      { type = "apiKeys", id = "k1", attributes = { name = "bot" },
        relationships = {
          accounts = { data = { { type = "accounts", id = "a1" },
                                { type = "accounts", id = "missing" },
                                { type = "accounts", id = "a2" } } },
        } },
      { type = "accounts", id = "a2", attributes = { label = "B" } },
    },
  }):gsub('"EMPTY"', "[]")
  local p = assert(merchantapi.decode(doc))

  it("gives the same (type,id) the same table everywhere, cycles included", function()
    local a1 = p.accountCharged
    assert.equal("A", a1.label)
    assert.equal(a1, p.author.accounts[1])
    assert.equal(p, a1.payout)
    assert.equal(a1, a1.selfref)
    assert.equal(p, p.accountCharged.payout.accountCharged.payout)
  end)

  it("turns a linkage to a resource not in the document into a stub", function()
    assert.same({ id = "missing", type = "accounts" }, p.gone)
    assert.equal(p.gone, p.author.accounts[2])
  end)

  it("turns a to-many linkage into an array in document order", function()
    local accounts = p.author.accounts
    assert.equal(3, #accounts)
    assert.same({ "a1", "missing", "a2" }, helpers.ids(accounts))
    assert.equal("B", accounts[3].label)
  end)

  it("leaves data: null and not-expanded relationships absent, keeps an empty to-many", function()
    assert.is_nil(rawget(p, "nothing"))
    assert.is_nil(rawget(p, "hidden"))
    assert.same({}, p.none)
  end)

  it("never lets an attribute named id or type hide the identity: decode error naming it", function()
    -- JSON:API gives fields one namespace with type and id: such a document is refused
    -- (it was read with the attribute dropped before); spec/decode/fidelity_spec.lua has the rest
    for _, name in ipairs({ "id", "type" }) do
      local r, err = merchantapi.decode('{"data":{"type":"things","id":"t1","attributes":{"'
        .. name .. '":"fake","x":1}}}')
      assert.is_nil(r)
      assert.equal("decode", err.kind)
      assert.matches('things "t1" has a field named ' .. name .. ' in attributes', err.title,
        1, true)
    end
  end)

  it("resolves primary resources of a list against each other", function()
    local list = assert(merchantapi.decode(cjson.encode({
      data = {
        { type = "addresses", id = "x1", relationships = { next = { data = { type = "addresses", id = "x2" } } } },
        { type = "addresses", id = "x2", relationships = { next = { data = { type = "addresses", id = "x1" } } } },
      },
      meta = { page = 1, per_page = 2, total = 2 },
    })))
    assert.equal(list[2], list[1].next)
    assert.equal(list[1], list[2].next)
  end)

  it("gives an empty list for data: []", function()
    local list, err = merchantapi.decode('{"data":[],"meta":{"page":3,"per_page":10,"total":0}}')
    assert.is_nil(err)
    assert.equal(0, #list)
    assert.same({ page = 3, per_page = 10, total = 0 }, list.meta)
  end)

  it("keeps nested attribute objects and arrays, nulls absent", function()
    local r = assert(merchantapi.decode(
      '{"data":{"type":"t","id":"1","attributes":{"o":{"a":{"b":[1,"two",true]},"n":null},'
      .. '"arr":[1,null,3],"empty":{}}}}'))
    assert.same({ a = { b = { 1, "two", true } } }, r.o)
    assert.equal(1, r.arr[1])
    assert.is_nil(r.arr[2])
    assert.equal(3, r.arr[3])
    assert.same({}, r.empty)
  end)
end)

describe("errors from decode", function()
  local cases = {
    { "amount_below_minimum", "amount is below minimum", "amount: 5.5, minimum: 10.0",
      amount = "5.5", minimum = "10.0" },
    { "amount_above_maximum", "amount is above maximum", "amount: 250000.0, maximum: 100000.0",
      amount = "250000.0", maximum = "100000.0" },
    { "invalid_address", "Invalid address" },
    { "payout_invalid", "Invalid attribute", "Reference has already been taken",
      pointer = "/data/attributes/externalId" },
    { "account_has_insufficient_balance", "account has insufficient balance" },
    { "address_has_high_risk_score",
      "Funds cannot be sent to this address. Please try another address." },
  }
  for _, c in ipairs(cases) do
    local code, title, detail = c[1], c[2], c[3]
    it("turns the 422 " .. code .. " document into an api error", function()
      local value, err = merchantapi.decode(fixture("confirm_payout.422." .. code))
      assert.is_nil(value)
      local res = err.res
      assert.equal("api", err.kind)
      assert.equal(422, err.status)
      assert.equal(code, err.code)
      assert.equal(title, err.title)
      assert.equal(detail, err.detail)
      assert.equal(c.pointer, err.pointer)
      assert.equal(c.amount, err.amount)
      assert.equal(c.minimum, err.minimum)
      assert.equal(c.maximum, err.maximum)
      assert.is_false(err.retryable)
      assert.same({ { status = 422, code = code, title = title, detail = detail,
                      pointer = c.pointer } }, err.errors)
      assert.equal(err.message, tostring(err))
      assert.equal(fixture("confirm_payout.422." .. code), res.body)
    end)
  end

  it("formats tostring(err) as the contract shows", function()
    local _, err = merchantapi.decode(fixture("confirm_payout.422.amount_below_minimum"))
    assert.equal("merchantapi: 422 amount_below_minimum: amount is below minimum "
      .. "(amount: 5.5, minimum: 10.0)", tostring(err))
  end)

  it("keeps every entry of errors[], fields from the first", function()
    local _, err = merchantapi.decode('{"errors":[{"status":"409","code":"a","title":"A"},'
      .. '{"status":422,"code":"b","detail":"d","source":{"pointer":"/x"}}]}')
    assert.equal("api", err.kind)
    assert.equal(409, err.status)
    assert.equal("a", err.code)
    assert.same({ { status = 409, code = "a", title = "A" },
                  { status = 422, code = "b", detail = "d", pointer = "/x" } }, err.errors)
  end)

  local bad = {
    ["invalid JSON"] = "{bad",
    ["an empty body"] = "",
    ["a truncated document"] = fixture("get_channel.200"):sub(1, 100),
    ["JSON that is not JSON:API"] = '{"hello":"world"}',
    ["a top-level array"] = "[1,2]",
    ["nesting deeper than 64"] = ("["):rep(65) .. ("]"):rep(65),
    ["a resource without an id"] = '{"data":{"type":"t"}}',
  }
  for what, body in pairs(bad) do
    it("fails as decode on " .. what, function()
      local value, err = merchantapi.decode(body)
      assert.is_nil(value)
      assert.equal("decode", err.kind)
      assert.is_string(err.title)
      assert.matches("^merchantapi: decode: ", tostring(err))
      assert.same({}, err.errors)
      assert.is_false(err.retryable)
    end)
  end

  it("accepts nesting of 64", function()
    local body = '{"data":{"type":"t","id":"1","attributes":{"x":' .. ("["):rep(61)
      .. ("]"):rep(61) .. "}}}"
    local r = assert(merchantapi.decode(body))
    local depth, v = 0, r.x
    while type(v) == "table" and v[1] ~= nil do
      depth, v = depth + 1, v[1]
    end
    assert.equal(60, depth)
  end)
end)

-- The binding keeps the Lua string of each member name from one document to
-- the next by the name's number in its document (lua_binding.h, "Anchored
-- strings"): another document numbering other names alike gets its own.
describe("member names across documents", function()
  local function doc(names, type_)
    local attrs = {}
    for i, name in ipairs(names) do
      attrs[#attrs + 1] = ('"%s":%d'):format(name, i)
    end
    return ('{"data":{"type":"%s","id":"1","attributes":{%s}}}'):format(type_ or "t",
      table.concat(attrs, ","))
  end

  it("gives each document its own names, numbered alike or not", function()
    local a = assert(merchantapi.decode(doc({ "abc", "label", "value" })))
    -- the same numbers, other names: of the same length, and longer
    local b = assert(merchantapi.decode(doc({ "abd", "lab", "values" }, "u")))
    assert.same({ "abc", "id", "label", "type", "value" }, keys(a))
    assert.same({ "abd", "id", "lab", "type", "values" }, keys(b))
    assert.equal(1, b.abd)
    assert.equal(2, b.lab)
    assert.equal(3, b.values)
    assert.equal("u", b.type)
    assert.is_nil(b.abc)
    assert.is_nil(b.label)
    -- and the first document's names again
    local c = assert(merchantapi.decode(doc({ "abc", "label", "value" })))
    assert.same({ abc = 1, label = 2, value = 3, id = "1", type = "t" }, c)
  end)

  it("gives long names as they are", function()
    local long1, long2 = ("a"):rep(100), ("a"):rep(99) .. "b"
    local a = assert(merchantapi.decode(doc({ long1, "x" })))
    local b = assert(merchantapi.decode(doc({ long2, "x" })))
    assert.same({ [long1] = 1, x = 2, id = "1", type = "t" }, a)
    assert.same({ [long2] = 1, x = 2, id = "1", type = "t" }, b)
  end)

  it("keeps every name of a document with more than 256 of them", function()
    local names = {}
    for i = 1, 600 do
      names[i] = "n" .. i
    end
    local r = assert(merchantapi.decode(doc(names)))
    for i = 1, 600 do
      assert.equal(i, r["n" .. i])
    end
    local s = assert(merchantapi.decode(doc({ "n2", "n1" })))
    assert.same({ n2 = 1, n1 = 2, id = "1", type = "t" }, s)
  end)
end)

-- merchantapi.decode: nothing a document says is lost silently.  Ids, types and
-- member names are byte strings (a \u0000 is kept, and resources that differ
-- only after it stay two tables); the field rules of JSON:API (one namespace
-- for attributes, relationships, type and id; attributes and relationships are
-- objects) are decode errors naming the member; the same (type, id) twice is
-- one table, merged when the copies agree and a decode error naming the
-- resource when they do not; JSON:API 1.1 lid; raw control characters inside
-- strings are decode errors (RFC 8259); an error object's non-string detail is
-- kept as its JSON text.  No server needed.
local merchantapi = require "merchantapi"

local decode = merchantapi.decode

-- decode must fail as "decode" with every needle in the title
local function refused(body, ...)
  local value, err = decode(body)
  assert.is_nil(value)
  assert.is_table(err)
  assert.equal("decode", err.kind)
  assert.matches("^merchantapi: decode: ", tostring(err))
  for _, needle in ipairs({ ... }) do
    assert.truthy(err.title:find(needle, 1, true), err.title .. " lacks " .. needle)
  end
  return err
end

local function resource(fields)
  return '{"data":{"type":"payouts","id":"p1",' .. fields .. '}}'
end

describe("byte strings", function()
  it("keeps ids that differ only after a NUL byte apart: two accounts, two balances", function()
    local list = assert(decode('{"data":['
      .. '{"type":"accounts","id":"a\\u0000x","attributes":{"balance":"1.00"}},'
      .. '{"type":"accounts","id":"a\\u0000y","attributes":{"balance":"2.00"}}],'
      .. '"included":[{"type":"accounts","id":"a","attributes":{"balance":"3.00"}}]}'))
    assert.equal(2, #list)
    assert.equal("a\0x", list[1].id)
    assert.equal("a\0y", list[2].id)
    assert.are_not.equal(list[1], list[2])
    assert.equal("1.00", list[1].balance)
    assert.equal("2.00", list[2].balance)
  end)

  it("resolves linkages by the whole id, NUL bytes included", function()
    local p = assert(decode('{"data":{"type":"payouts","id":"p1","relationships":{'
      .. '"one":{"data":{"type":"accounts","id":"a\\u0000x"}},'
      .. '"two":{"data":{"type":"accounts","id":"a\\u0000y"}}}},'
      .. '"included":[{"type":"accounts","id":"a\\u0000x","attributes":{"n":1}},'
      .. '{"type":"accounts","id":"a\\u0000y","attributes":{"n":2}}]}'))
    assert.equal(1, p.one.n)
    assert.equal(2, p.two.n)
  end)

  it("keeps types and member names with NUL bytes as they are", function()
    local r = assert(decode('{"data":{"type":"t\\u0000u","id":"1","attributes":'
      .. '{"bal\\u0000ance":"1.00","balance":"2.00","o":{"k\\u0000":true,"k":false}}}}'))
    assert.equal("t\0u", r.type)
    assert.equal("1.00", r["bal\0ance"])
    assert.equal("2.00", r.balance)
    assert.is_true(r.o["k\0"])
    assert.is_false(r.o.k)
  end)

  it("gives NUL bytes in res:document() too", function()
    local _, _, res = decode('{"data":null,"meta":{"a\\u0000b":"c\\u0000d"}}')
    assert.equal("c\0d", res:document().meta["a\0b"])
  end)
end)

describe("the field rules", function()
  it("refuses an attribute and a relationship of the same name, naming it", function()
    -- a relationship named amount once turned payout.amount into a table
    refused(resource('"attributes":{"amount":"250.10"},'
      .. '"relationships":{"amount":{"data":{"type":"amounts","id":"x"}}}'),
      'payouts "p1" has an attribute and a relationship named "amount"')
  end)

  it("refuses fields named id or type in attributes and relationships", function()
    refused(resource('"attributes":{"id":"fake"}'), 'payouts "p1"', "field named id in attributes")
    refused(resource('"attributes":{"type":"fake"}'), "field named type in attributes")
    refused(resource('"relationships":{"id":{"data":null}}'), "field named id in relationships")
    refused(resource('"relationships":{"type":{"meta":{}}}'), "field named type in relationships")
  end)

  it("refuses attributes and relationships that are not objects", function()
    for _, v in ipairs({ "[]", '"x"', "1", "true" }) do
      refused(resource('"attributes":' .. v), "the attributes member of payouts \"p1\"",
        "not an object")
      refused(resource('"relationships":' .. v), "the relationships member of payouts \"p1\"",
        "not an object")
    end
    refused(resource('"relationships":{"author":"k1"}'),
      'relationship "author" of payouts "p1" is not an object')
  end)

  it("reads null attributes and relationships as none", function()
    local p = assert(decode(resource('"attributes":null,"relationships":null')))
    assert.same({ id = "p1", type = "payouts" }, p)
  end)
end)

describe("the same resource twice", function()
  it("is one table with what both copies said when they agree", function()
    local p = assert(decode('{"data":{"type":"payouts","id":"p1","attributes":{"status":"draft"},'
      .. '"relationships":{"account":{"data":{"type":"accounts","id":"a1"}}}},'
      .. '"included":[{"type":"accounts","id":"a1","attributes":{"label":"A"}},'
      .. '{"type":"accounts","id":"a1","attributes":{"balance":"6194.43","label":"A"}},'
      .. '{"type":"payouts","id":"p1","attributes":{"amount":"250.10"},'
      .. '"relationships":{"author":{"data":{"type":"apiKeys","id":"k1"}}}}]}'))
    assert.equal("draft", p.status)
    assert.equal("250.10", p.amount)
    assert.equal("A", p.account.label)
    assert.equal("6194.43", p.account.balance)
    assert.same({ id = "k1", type = "apiKeys" }, p.author)
  end)

  it("is a decode error naming the resource and the member when the copies differ", function()
    refused('{"data":{"type":"accounts","id":"a1","attributes":{"balance":"6194.43"}},'
      .. '"included":[{"type":"accounts","id":"a1","attributes":{"balance":"0.00"}}]}',
      'accounts "a1" comes twice', 'attributes member "balance"')
    refused('{"data":null,"included":[{"type":"t","id":"1","attributes":{"n":1}},'
      .. '{"type":"t","id":"1","attributes":{"n":1.0}}]}',
      't "1" comes twice', 'attributes member "n"')
    refused('{"data":[{"type":"t","id":"1","relationships":{"r":{"data":null}}},'
      .. '{"type":"t","id":"1","relationships":{"r":{"data":{"type":"u","id":"2"}}}}]}',
      't "1" comes twice', 'relationships member "r"')
  end)
end)

describe("JSON:API 1.1 lid", function()
  it("identifies a resource that has no id, in linkage and included", function()
    local order = assert(decode('{"data":{"type":"orders","id":"o1","relationships":{'
      .. '"items":{"data":[{"type":"items","lid":"new-1"},{"type":"items","lid":"new-2"}]}}},'
      .. '"included":[{"type":"items","lid":"new-1","attributes":{"qty":2}}]}'))
    assert.equal(2, #order.items)
    assert.same({ lid = "new-1", type = "items", qty = 2 }, order.items[1])
    assert.is_nil(order.items[1].id)
    assert.same({ lid = "new-2", type = "items" }, order.items[2]) -- a stub
  end)

  it("refuses one lid on two resources", function()
    refused('{"data":[{"type":"t","id":"1","lid":"x"},{"type":"t","id":"2","lid":"x"}]}',
      't lid "x" names two resources')
  end)
end)

describe("control characters", function()
  it("refuses raw control characters inside strings (RFC 8259)", function()
    for _, c in ipairs({ "\0", "\t", "\n", "\r", "\1", "\31" }) do
      refused('{"meta":{"note":"a' .. c .. 'b"}}', "control character")
      refused('{"meta":{"no' .. c .. 'te":1}}', "control character")
    end
  end)

  it("reads them escaped", function()
    local _, _, res = decode('{"data":null,"meta":{"note":"a\\tb\\nc\\u0001"}}')
    assert.equal("a\tb\nc\1", res.meta.note)
  end)
end)

describe("error documents", function()
  it("keeps a detail that is not a string as its JSON text", function()
    local _, err = decode('{"errors":[{"status":"422","code":"payout_invalid","title":"Invalid",'
      .. '"detail":[{"field":"amount","message":"is too low"}]}]}')
    assert.equal("api", err.kind)
    assert.equal('[{"field":"amount","message":"is too low"}]', err.detail)
    assert.equal(err.detail, err.errors[1].detail)
  end)
end)

describe("numbers", function()
  it("keeps integers beyond 64 bits digit for digit", function()
    local r = assert(decode('{"data":{"type":"t","id":"1","attributes":'
      .. '{"big":123456789012345678901234567890,"neg":-98765432109876543210}}}'))
    assert.equal("123456789012345678901234567890", r.big)
    assert.equal("-98765432109876543210", r.neg)
  end)

  it("refuses numbers outside RFC 8259's grammar and content after the document", function()
    for _, n in ipairs({ "1.", "01", "NaN", "-", "+1", ".5", "1e" }) do
      refused('{"meta":{"n":' .. n .. '}}', "invalid JSON")
    end
    refused('{"meta":{}} x', "after the document")
    refused('{"meta":{}}\0', "after the document")
  end)
end)

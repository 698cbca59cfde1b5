-- Links and meta at every level JSON:API allows them -- document, resource,
-- relationship, resource linkage -- reachable from what `decode` and the
-- calls return without a key added to the flattened resource tables:
-- `list.links` / `res.links`, `merchantapi.links(resource)`,
-- `merchantapi.meta(resource)`, `merchantapi.relationship(resource, name)`
-- (`data`, `links`, `meta`, `linkage`) and `merchantapi.relationships`.  A
-- relationship that was not loaded (no `data`) is told apart from
-- `data: null`.  Documents without primary data give the same values through
-- `decode` and `client:request`; a failed call's `res` carries `meta`,
-- `jsonapi` and `links` as a successful one does; an error object's detail
-- that is not a string reaches Lua as its JSON text; JSON:API 1.1 `lid`
-- resolves linkages in the flattened tables.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local decode, null = merchantapi.decode, merchantapi.null
local format = string.format

local function keys(t)
  local out = {}
  for k in pairs(t) do
    out[#out + 1] = tostring(k)
  end
  table.sort(out)
  return out
end

-- A list of two addresses: links and meta on the document, the resources,
-- their relationships and a linkage; an included network; a relationship
-- not loaded (meta.included = false), one with data null, a to-many one.
local LIST = [[{
 "data":[
  {"type":"addresses","id":"a1","attributes":{"label":"one","value":"T1"},
   "links":{"self":"https://api.example/addresses/a1"},
   "meta":{"score":0.50,"big":123456789012345678901,"count":3,"gone":null},
   "relationships":{
    "account":{"meta":{"included":false},"links":{"related":"https://api.example/accounts/x"}},
    "network":{"data":{"type":"network","id":"n1","meta":{"primary":true}},
               "links":{"self":"https://api.example/addresses/a1/relationships/network"}},
    "owner":{"data":null,"meta":{"why":"unassigned"}},
    "tags":{"data":[{"type":"tags","id":"t1"},{"type":"tags","id":"t2","meta":{"weight":2}}]}}},
  {"type":"addresses","id":"a2","attributes":{"label":"two"},
   "relationships":{"network":{"data":{"type":"network","id":"n1"}}}}],
 "included":[{"type":"network","id":"n1","attributes":{"code":"btc:btc"},
              "links":{"self":{"href":"https://api.example/networks/n1","meta":{"v":1}}}}],
 "links":{"self":"https://api.example/addresses?page=1","next":"https://api.example/addresses?page=2",
          "prev":null},
 "meta":{"total":40},
 "jsonapi":{"version":"1.1"}}]]

describe("document links", function()
  it("are list.links and res.links, next to meta; null links are absent", function()
    local list, err, res = decode(LIST)
    assert.is_nil(err)
    local want = { self = "https://api.example/addresses?page=1",
                   next = "https://api.example/addresses?page=2" }
    assert.same(want, list.links)
    assert.same(want, res.links)
    assert.same({ total = 40 }, list.meta)
    assert.same({ version = "1.1" }, res.jsonapi)
  end)

  it("are res.links for a single resource, and absent without links", function()
    local r, _, res = decode('{"data":{"type":"t","id":"1"},"links":{"self":"/t/1"}}')
    assert.same({ self = "/t/1" }, res.links)
    assert.same({ "id", "type" }, keys(r))
    local list, _, res2 = decode('{"data":[]}')
    assert.is_nil(list.links)
    assert.is_nil(res2.links)
  end)
end)

describe("resource links and meta", function()
  local list
  before_each(function()
    list = assert(decode(LIST))
  end)

  it("are merchantapi.links and merchantapi.meta, not keys of the resource table", function()
    local a1 = list[1]
    assert.same({ "id", "label", "network", "tags", "type", "value" }, keys(a1))
    assert.same({ self = "https://api.example/addresses/a1" }, merchantapi.links(a1))
    local meta = merchantapi.meta(a1)
    -- numbers by the usual rules: exact text for fractions and big integers
    assert.same({ score = "0.50", big = "123456789012345678901", count = 3 }, meta)
    assert.is_nil(rawget(a1, "links"))
    assert.is_nil(rawget(a1, "meta"))
  end)

  it("reach included resources, link objects included", function()
    local n1 = list[1].network
    assert.equal("btc:btc", n1.code)
    assert.same({ self = { href = "https://api.example/networks/n1", meta = { v = 1 } } },
      merchantapi.links(n1))
    assert.is_nil(merchantapi.meta(n1))
  end)

  it("are nil for a resource without them and for tables the module did not make", function()
    assert.is_nil(merchantapi.links(list[2]))
    assert.is_nil(merchantapi.meta(list[2]))
    assert.is_nil(merchantapi.links({ id = "a1", type = "addresses" }))
    assert.is_nil(merchantapi.relationship({ network = list[2].network }, "network"))
    assert.is_nil(merchantapi.links(list)) -- the list is not a resource: list.links
  end)

  it("raise on an argument that is not a table", function()
    assert.has_error(function() merchantapi.links("a1") end,
      "bad argument #1 to 'links' (table expected, got string)")
    assert.has_error(function() merchantapi.meta(nil) end)
    assert.has_error(function() merchantapi.relationship(list[1], 1) end,
      "bad argument #2 to 'relationship' (string expected, got number)")
  end)

  it("are the union of both copies of a resource that came twice", function()
    local l = assert(decode('{"data":[{"type":"t","id":"1","links":{"self":"/t/1"}}],'
      .. '"included":[{"type":"t","id":"1","meta":{"rev":7}}]}'))
    assert.same({ self = "/t/1" }, merchantapi.links(l[1]))
    assert.same({ rev = 7 }, merchantapi.meta(l[1]))
  end)

  it("leave every table of a large list in place under an eager garbage collector", function()
    -- Many decodes of a long list with the collector always running: some
    -- collection ends in the middle of some decode.  (The collectors of Lua
    -- 5.2 and 5.3 are far slower so set: a lighter run on all but 5.4.)
    local n, rounds = 300, 20
    if _VERSION == "Lua 5.4" then
      n, rounds = 3000, 100
    end
    local parts = {}
    for i = 1, n do
      parts[i] = format('{"type":"t","id":"%d","relationships":{"n":{"data":{"type":"n","id":"%d"}},'
        .. '"x":{"meta":{"included":false}}}}', i, i % 7)
    end
    local body = '{"data":[' .. table.concat(parts, ",") .. ']}'
    local lengths = {}
    local big
    helpers.with_eager_gc(function()
      for r = 1, rounds do
        big = assert(decode(body))
        lengths[#big] = (lengths[#big] or 0) + 1
        collectgarbage("step", r % 5)
      end
    end)
    assert.same({ [n] = rounds }, lengths)
    for i = 1, n do
      assert.equal(tostring(i), big[i].id)
      assert.equal(tostring(i % 7), big[i].n.id)
    end
    assert.same({ included = false }, merchantapi.relationship(big[n], "x").meta)
  end)

  it("stay readable after the list and res are gone, and keep no resource alive", function()
    local a1 = list[1]
    list = nil
    collectgarbage()
    collectgarbage()
    assert.same({ self = "https://api.example/addresses/a1" }, merchantapi.links(a1))
    assert.equal("btc:btc", merchantapi.relationship(a1, "network").data.code)
    local weak = setmetatable({ a1 }, { __mode = "v" })
    a1 = nil -- luacheck: ignore 311
    collectgarbage()
    collectgarbage()
    assert.is_nil(weak[1])
  end)
end)

describe("merchantapi.relationship", function()
  local list
  before_each(function()
    list = assert(decode(LIST))
  end)

  it("gives a to-one relationship's resolved table, links and linkage with its meta", function()
    local a1 = list[1]
    local rel = merchantapi.relationship(a1, "network")
    assert.equal(a1.network, rel.data) -- the same table
    assert.equal(list[2].network, rel.data)
    assert.same({ self = "https://api.example/addresses/a1/relationships/network" }, rel.links)
    assert.is_nil(rel.meta)
    assert.same({ type = "network", id = "n1", meta = { primary = true } }, rel.linkage)
  end)

  it("gives a to-many relationship's array and each linkage's meta", function()
    local a1 = list[1]
    local rel = merchantapi.relationship(a1, "tags")
    assert.equal(a1.tags, rel.data)
    assert.equal(2, #rel.data)
    assert.same({ id = "t2", type = "tags" }, rel.data[2]) -- a stub
    assert.same({ { type = "tags", id = "t1" }, { type = "tags", id = "t2", meta = { weight = 2 } } },
      rel.linkage)
  end)

  it("tells a relationship that was not loaded from data: null", function()
    local a1 = list[1]
    -- both are nil in the flattened table
    assert.is_nil(a1.account)
    assert.is_nil(a1.owner)
    local account = merchantapi.relationship(a1, "account")
    assert.is_nil(account.data) -- not loaded: nothing is known
    assert.is_nil(account.linkage)
    assert.same({ included = false }, account.meta)
    assert.same({ related = "https://api.example/accounts/x" }, account.links)
    local owner = merchantapi.relationship(a1, "owner")
    assert.equal(null, owner.data) -- loaded, and empty
    assert.equal(null, owner.linkage)
    assert.same({ why = "unassigned" }, owner.meta)
  end)

  it("is nil for an attribute and for a name the resource does not have", function()
    assert.is_nil(merchantapi.relationship(list[1], "label"))
    assert.is_nil(merchantapi.relationship(list[1], "nothing"))
    assert.is_nil(merchantapi.relationship(list[1].network, "network"))
  end)

  it("lists every relationship with merchantapi.relationships, in document order", function()
    local rels, names = merchantapi.relationships(list[1])
    assert.same({ "account", "network", "owner", "tags" }, names)
    assert.is_nil(rels.account.data)
    assert.equal(null, rels.owner.data)
    assert.equal(list[1].network, rels.network.data)
    local none, none_names = merchantapi.relationships(list[1].network)
    assert.same({}, none)
    assert.same({}, none_names)
  end)

  it("reads names with NUL bytes", function()
    local r = assert(decode('{"data":{"type":"t","id":"1","relationships":{'
      .. '"a\\u0000b":{"data":{"type":"t","id":"2"},"meta":{"m":1}},"a":{"meta":{"m":2}}}}}'))
    assert.same({ m = 1 }, merchantapi.relationship(r, "a\0b").meta)
    assert.equal(r["a\0b"], merchantapi.relationship(r, "a\0b").data)
    assert.same({ m = 2 }, merchantapi.relationship(r, "a").meta)
  end)
end)

describe("JSON:API 1.1 lid in the flattened tables", function()
  it("resolves linkages by lid to the very table of the resource, in data and included", function()
    local list = assert(decode('{"data":['
      .. '{"type":"orders","lid":"o1","relationships":{"items":{"data":['
      .. '{"type":"items","lid":"i1"},{"type":"items","id":"7"}]},'
      .. '"next":{"data":{"type":"orders","lid":"o2"}}}},'
      .. '{"type":"orders","lid":"o2","attributes":{"n":2}}],'
      .. '"included":[{"type":"items","lid":"i1","attributes":{"qty":2}},'
      .. '{"type":"items","id":"7","lid":"i7","attributes":{"qty":3}}]}'))
    local o1, o2 = list[1], list[2]
    assert.equal(o2, o1.next) -- the primary table, not a copy
    assert.same({ type = "orders", lid = "o2", n = 2 }, o2)
    assert.same({ type = "items", lid = "i1", qty = 2 }, o1.items[1])
    assert.same({ type = "items", id = "7", lid = "i7", qty = 3 }, o1.items[2])
    local rel = merchantapi.relationship(o1, "items")
    assert.equal(o1.items, rel.data)
    assert.same({ { type = "items", lid = "i1" }, { type = "items", id = "7" } }, rel.linkage)
  end)

  it("keeps a lid that names no resource of the document as a stub", function()
    local r = assert(decode('{"data":{"type":"orders","id":"1","relationships":{'
      .. '"item":{"data":{"type":"items","lid":"new"}}}}}'))
    assert.same({ type = "items", lid = "new" }, r.item)
  end)
end)

describe("documents without primary data", function()
  local BODIES = {
    ["data: null"] = '{"data":null,"meta":{"n":1},"jsonapi":{"version":"1.1"},"links":{"self":"/x"}}',
    ["a meta-only document"] = '{"meta":{"n":2.50}}',
  }
  for what, body in pairs(BODIES) do
    it("give merchantapi.null and the same res through decode and client:request: " .. what,
      function()
        local v1, e1, r1 = decode(body)
        local c = assert(merchantapi.new { base_url = "http://127.0.0.1:1", transport = function()
          return { status = 200, headers = { ["Content-Type"] = "application/vnd.api+json" },
                   body = body }
        end })
        local v2, e2, r2 = c:request("GET", "/x")
        assert.equal(null, v1)
        assert.equal(v1, v2)
        assert.is_nil(e1)
        assert.equal(e1, e2)
        assert.same(r1.meta, r2.meta)
        assert.same(r1.jsonapi, r2.jsonapi)
        assert.same(r1.links, r2.links)
        assert.equal(body, r1.body)
        assert.equal(r1.body, r2.body)
        assert.same(r1:document(), r2:document())
        assert.is_not_nil(r1.meta)
      end)
  end
end)

describe("a failed call's res", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)
  after_each(function()
    client:close()
  end)

  it("carries meta, jsonapi and links of an error document, and a non-string detail as JSON", function()
    local v, err = client:request("POST", "/api/public/v1/echo/error", { body = "{}" })
    assert.is_nil(v)
    local res = err.res
    assert.equal("api", err.kind)
    assert.equal(422, err.status)
    assert.equal("validation_failed", err.code)
    assert.equal('[{"field":"amount","message":"is too low"}]', err.detail)
    assert.equal(err.detail, err.errors[1].detail)
    assert.equal("/data/attributes/amount", err.pointer)
    assert.equal(422, res.status)
    assert.equal("POST", res.meta.method)
    assert.equal(res.request_id, res.meta.request_id)
    assert.same({ version = "1.1" }, res.jsonapi)
    assert.same({ self = "/api/public/v1/echo/error" }, res.links)
    assert.equal(1, helpers.count("echo"))
  end)

  it("carries the meta of a 2xx document the call refused", function()
    local body = '{"data":{"type":"payouts","id":"p"},"meta":{"why":"wrong type"}}'
    local c = assert(merchantapi.new { base_url = "http://127.0.0.1:1", transport = function()
      return { status = 200, headers = {}, body = body }
    end })
    local v, err = c:get_channel("x")
    assert.is_nil(v)
    local res = err.res
    assert.equal("decode", err.kind)
    assert.same({ why = "wrong type" }, res.meta)
  end)

  it("has no meta when the answer is not a JSON:API document", function()
    local c = assert(merchantapi.new { base_url = "http://127.0.0.1:1", transport = function()
      return { status = 502, headers = { ["Content-Type"] = "text/html" }, body = "<html>bad</html>" }
    end, max_retries = 0 })
    local v, err = c:get_channel("x")
    assert.is_nil(v)
    local res = err.res
    assert.equal("http", err.kind)
    assert.equal(502, res.status)
    assert.equal("<html>bad</html>", res.body)
    assert.is_nil(res.meta)
    assert.is_nil(res.jsonapi)
    assert.is_nil(res.links)
  end)

  it("is the same over libcurl and a custom transport", function()
    local _, err1 = client:request("GET", "/api/public/v1/echo/error")
    local res1 = err1.res
    local body = res1.body
    local c = assert(merchantapi.new { base_url = "http://127.0.0.1:1", transport = function()
      return { status = 422, headers = { ["Content-Type"] = "application/vnd.api+json" }, body = body }
    end })
    local _, err2 = c:request("GET", "/api/public/v1/echo/error")
    local res2 = err2.res
    assert.equal('[{"field":"amount","message":"is too low"}]', err2.detail)
    assert.same(res1.meta, res2.meta)
    assert.same(res1.jsonapi, res2.jsonapi)
    assert.same(res1.links, res2.links)
  end)
end)

describe("over the sandbox", function()
  it("a listed address tells its unloaded account from its loaded network", function()
    helpers.reset()
    local client = helpers.client()
    local list = assert(client:list_addresses("acct-22", { page = 2, per_page = 3 }))
    client:close()
    local address = list[1]
    assert.is_nil(address.account)
    local account = merchantapi.relationship(address, "account")
    assert.is_nil(account.data)
    assert.same({ included = false }, account.meta)
    local network = merchantapi.relationship(address, "network")
    assert.equal(address.network, network.data)
    assert.equal(address.network.id, network.linkage.id)
    assert.equal("network", network.linkage.type)
    assert.is_nil(list.links) -- the service's lists have none
  end)
end)

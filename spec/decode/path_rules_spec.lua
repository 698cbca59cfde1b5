-- Two rules that once differed by path: a client call (over libcurl,
-- client:request, a custom transport), the pages (one at a time and several
-- at once) and merchantapi.decode.
--   - Counts: in a list, meta.page, per_page and total that are counts read
--     as integers on every path; anything else refuses the document as
--     "decode" naming the member where the library relies on the counts
--     (the list calls and their pager: src/mapping.c), and is kept as it
--     came on the other paths (spec/decode/list_counts_spec.lua).
--   - Objects: a top-level meta, links or jsonapi, and a resource's or a
--     relationship's links or meta, is an object (null: absent); anything
--     else refuses the document as "decode" (the parser's rule).  JSON:API
--     requires objects, and a money client does not guess what a malformed
--     document meant, nor hides it behind a nil.
-- The sandbox's `meta-<member>=<text>` and `top-<member>=<text>` account ids
-- (sandbox/README.md, "Addresses") serve such lists.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local escape = merchantapi.escape

local format = string.format

local FRACTION = "expected meta.total to be a non-negative integer, got a fraction"

local function list_path(id)
  return "/api/public/v1/accounts/" .. escape(id) .. "/addresses"
end

-- What each path gives for the list of account `id` (per_page 5): value,
-- err; and whether the path relies on the counts.
local PATHS = {
  { "a list call", function(c, id) return c:list_addresses(id, { per_page = 5 }) end, true },
  { "client:request", function(c, id)
    return c:request("GET", list_path(id), { query = { per_page = 5 } })
  end, false },
  { "the pager, one page at a time", function(c, id)
    return c:addresses(id, { per_page = 5 }):all()
  end, true },
  { "the pager, four pages at once", function(c, id)
    return c:addresses(id, { per_page = 5, concurrency = 4 }):all()
  end, true },
}

describe("one rule on every path:", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client({ max_retries = 0 })
  end)
  after_each(function()
    client:close()
  end)

  for _, p in ipairs(PATHS) do
    local name, call, relies = p[1], p[2], p[3]

    if relies then
      it(name .. " refuses meta.total = 1.5", function()
        local v, err = call(client, "meta-total=1.5")
        assert.is_nil(v)
        assert.equal("decode", err.kind)
        assert.equal(FRACTION, err.title)
      end)
    else
      it(name .. " keeps meta.total = 1.5 as it came", function()
        local v, err = call(client, "meta-total=1.5")
        assert.is_nil(err)
        assert.equal("1.5", v.meta.total)
      end)
    end

    it(name .. " takes meta.total = 1e1 as the count 10", function()
      local v, err = call(client, "meta-total=1e1")
      assert.is_nil(err)
      if v.meta then -- the pager's result has no meta
        assert.equal(10, v.meta.total)
      end
    end)

    for _, member in ipairs({ "links", "meta" }) do
      for _, text in ipairs({ '"x"', "[]", "7" }) do
        it(format("%s refuses a top-level %s = %s", name, member, text), function()
          local v, err = call(client, format("top-%s=%s", member, text))
          assert.is_nil(v)
          assert.equal("decode", err.kind)
          assert.equal(format("not JSON:API: %s is not an object", member), err.title)
        end)
      end
    end

    it(name .. " takes a top-level links = null as no links", function()
      local v, err = call(client, "top-links=null")
      assert.is_nil(err)
      assert.is_nil(v.links)
    end)
  end
end)

describe("one rule on every path: a custom transport", function()
  local JSONAPI = { ["Content-Type"] = "application/vnd.api+json" }
  local function client_answering(body)
    return helpers.client({ max_retries = 0, transport = function()
      return { status = 200, headers = JSONAPI, body = body }
    end })
  end

  it("refuses a top-level jsonapi that is not an object", function()
    local c = client_answering('{"data":null,"jsonapi":"1.0"}')
    local v, err = c:request("GET", "/api/public/v1/anything")
    c:close()
    assert.is_nil(v)
    assert.equal("decode", err.kind)
    assert.equal("not JSON:API: jsonapi is not an object", err.title)
  end)

  it("keeps meta.total = 1.5 in a list of client:request; list_addresses refuses it", function()
    local c = client_answering('{"data":[],"meta":{"total":1.5}}')
    local v, err = c:request("GET", "/api/public/v1/anything")
    local v2, err2 = c:list_addresses("acct-22")
    c:close()
    assert.is_nil(err)
    assert.equal("1.5", v.meta.total)
    assert.is_nil(v2)
    assert.equal(FRACTION, err2.title)
  end)
end)

describe("one rule on every path: merchantapi.decode", function()
  local RES = '{"type":"t","id":"1"%s}'

  it("keeps meta.total = 1.5 in a list as it came, as client:request does", function()
    local v, err, res = merchantapi.decode('{"data":[],"meta":{"page":1,"total":1.5}}')
    assert.is_nil(err)
    assert.equal("1.5", v.meta.total)
    assert.equal("1.5", res.meta.total)
    assert.equal(1, res.meta.page)
  end)

  it("takes the counts of a list as integers, and a non-list's meta as it came", function()
    local list = assert(merchantapi.decode('{"data":[],"meta":{"page":"2","total":1e1}}'))
    assert.equal(2, list.meta.page)
    assert.equal(10, list.meta.total)
    local _, _, res = assert(merchantapi.decode('{"meta":{"total":1.5,"page":"2"}}'))
    assert.equal("1.5", res.meta.total)
    assert.equal("2", res.meta.page)
  end)

  for _, member in ipairs({ "meta", "links", "jsonapi" }) do
    for _, text in ipairs({ '"x"', "[]", "7", "true" }) do
      it(format("refuses a top-level %s = %s", member, text), function()
        local v, err = merchantapi.decode(format('{"data":null,"%s":%s}', member, text))
        assert.is_nil(v)
        assert.equal("decode", err.kind)
        assert.equal(format("not JSON:API: %s is not an object", member), err.title)
      end)
    end
  end

  for _, member in ipairs({ "links", "meta" }) do
    it("refuses a resource's " .. member .. " that is not an object", function()
      local v, err = merchantapi.decode(format('{"data":' .. RES .. '}', format(',"%s":"x"', member)))
      assert.is_nil(v)
      assert.equal("decode", err.kind)
      assert.equal(format('not JSON:API: the %s member of t "1" is not an object', member),
        err.title)
    end)

    it("refuses a relationship's " .. member .. " that is not an object", function()
      local rel = format(',"relationships":{"r":{"data":null,"%s":[1]}}', member)
      local v, err = merchantapi.decode(format('{"data":' .. RES .. '}', rel))
      assert.is_nil(v)
      assert.equal("decode", err.kind)
      assert.equal(format('not JSON:API: the %s of relationship "r" of t "1" is not an object',
        member), err.title)
    end)
  end

  it("takes members that are null as absent, objects as they came", function()
    local rel = ',"links":null,"meta":{"m":1},"relationships":{"r":{"data":null,"links":null}}'
    local v, err, res = merchantapi.decode(format('{"data":' .. RES
      .. ',"meta":null,"links":{"self":"/t/1"},"jsonapi":null}', rel))
    assert.is_nil(err)
    assert.is_nil(res.meta)
    assert.is_nil(res.jsonapi)
    assert.equal("/t/1", res.links.self)
    assert.same({ m = 1 }, merchantapi.meta(v))
    assert.is_nil(merchantapi.links(v))
  end)
end)

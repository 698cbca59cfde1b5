-- merchantapi.encode (the JSON of table bodies), merchantapi.escape, a
-- URL's origin (core.url_parts) and the query strings of client:request, without a server: the bytes each
-- value becomes, and every value that is refused with the JSON pointer
-- that names it.
local merchantapi = require "merchantapi"
local request = require "merchantapi.request"

local encode = merchantapi.encode

-- The usage error of a refused value.
local function refused(value)
  local text, err = encode(value)
  assert.is_nil(text)
  assert.equal("usage", err.kind)
  return err
end

describe("merchantapi.encode", function()
  it("writes scalars", function()
    assert.equal('"250.10"', encode("250.10"))
    assert.equal("42", encode(42))
    assert.equal("-7", encode(-7))
    assert.equal("0", encode(0))
    assert.equal("0", encode(-0.0))
    assert.equal("3", encode(3.0)) -- an integral float is an integer
    assert.equal("9007199254740992", encode(2 ^ 53))
    assert.equal("-9007199254740992", encode(-(2 ^ 53)))
    assert.equal("true", encode(true))
    assert.equal("false", encode(false))
    assert.equal("null", encode(merchantapi.null))
  end)

  if math.type then
    it("writes every Lua integer exactly (5.3+)", function()
      assert.equal("9223372036854775807", encode(math.maxinteger))
      assert.equal("-9223372036854775808", encode(math.mininteger))
      assert.equal("123456789012345678", encode(123456789012345678))
    end)
  end

  it("escapes quotes, backslashes and control bytes, and passes unicode through", function()
    assert.equal('"a\\"b\\\\c/d"', encode('a"b\\c/d'))
    assert.equal('"\\b\\f\\n\\r\\t"', encode("\b\f\n\r\t"))
    assert.equal('"\\u0000\\u0001\\u001f\127"', encode("\0\1\31\127"))
    assert.equal('"Zürich ✓ 😀 \226\128\168"', encode("Zürich ✓ 😀 \226\128\168")) -- U+2028 as is
  end)

  it("sorts object keys bytewise and writes arrays in order", function()
    assert.equal('{"A":1,"B":2,"_":3,"a":4,"aa":5,"b":6,"é":7}',
      encode { b = 6, a = 4, aa = 5, ["é"] = 7, _ = 3, B = 2, A = 1 })
    assert.equal('[3,1,2]', encode { 3, 1, 2 })
    assert.equal('[{"x":[]},[[null]]]', encode { { x = merchantapi.array() }, { { merchantapi.null } } })
    -- the same table twice (not a cycle) is written twice
    local shared = { 1 }
    assert.equal('{"a":[1],"b":[1]}', encode { a = shared, b = shared })
  end)

  it("writes an empty table as {} unless it is marked as an array", function()
    assert.equal("{}", encode {})
    assert.equal("[]", encode(merchantapi.array()))
    assert.equal("[1,2]", encode(merchantapi.array { 1, 2 }))
    local t = {}
    assert.equal(t, merchantapi.array(t))
  end)

  it("knows cjson's null, empty_array and array_mt", function()
    local cjson = require "cjson" -- spec/helpers.lua needs it too
    assert.equal(cjson.null, merchantapi.null)
    assert.equal('[null]', encode { cjson.null })
    if cjson.empty_array then
      assert.equal('{"a":[]}', encode { a = cjson.empty_array })
    end
    if cjson.array_mt then
      assert.equal("[]", encode(setmetatable({}, cjson.array_mt)))
    end
  end)

  it("refuses money as a float, and other numbers without an exact JSON form", function()
    local err = refused { data = { attributes = { amount = 250.1 } } }
    assert.equal("/data/attributes/amount", err.pointer)
    assert.truthy(err.detail:find('decimal string ("250.10")', 1, true))
    assert.truthy(tostring(err):find("250.1 is not an integer", 1, true))
    assert.equal("", refused(0.5).pointer)
    assert.equal("/1", refused({ 1, 0 / 0 }).pointer)
    assert.equal("/0", refused({ math.huge }).pointer)
    assert.equal("/x", refused({ x = -math.huge }).pointer)
    assert.truthy(refused({ x = 2 ^ 60 + 0.0 }).detail:find("beyond 2^53", 1, true))
  end)

  it("refuses tables that are not arrays or objects, and cycles", function()
    assert.truthy(refused({ 1, nil, 3 }).detail:find("holes", 1, true))
    assert.truthy(refused({ [2] = "x" }).detail:find("holes", 1, true))
    assert.truthy(refused({ 1, a = 2 }).detail:find("both string and integer keys", 1, true))
    assert.equal("/1.5", refused({ [1.5] = 1 }).pointer)
    assert.equal("/0", refused({ [0] = 1 }).pointer)
    assert.truthy(refused(merchantapi.array { a = 1 }).detail:find("both", 1, true))
    local a = { list = {} }
    a.list[1] = a
    local err = refused(a)
    assert.equal("/list/0", err.pointer)
    assert.truthy(err.detail:find("cycle", 1, true))
  end)

  it("refuses invalid UTF-8 in strings and keys", function()
    for _, s in ipairs { "\255", "\192\128", "\224\128\128", "\237\160\128", "\244\144\128\128",
      "\245\128\128\128", "ab\195", "\226\130", "\128" } do
      local err = refused { s = s }
      assert.equal("/s", err.pointer)
      assert.truthy(err.detail:find("UTF-8", 1, true))
    end
    assert.equal("/bad\255", refused({ ["bad\255"] = 1 }).pointer)
    assert.equal('"\240\144\128\128"', encode("\240\144\128\128")) -- U+10000 is fine
  end)

  it("refuses functions, userdata other than null, threads, and nesting past 64", function()
    assert.truthy(refused({ f = print }).detail:find("function", 1, true))
    assert.truthy(refused({ io.stdout }).detail:find("userdata", 1, true))
    assert.truthy(refused({ coroutine.create(function() end) }).detail:find("thread", 1, true))
    local deep = {}
    local t = deep
    for _ = 1, 63 do
      t[1] = {}
      t = t[1]
    end
    assert.equal(string.rep("[", 63) .. "{}" .. string.rep("]", 63), encode(deep)) -- 64 levels
    t[1] = {}
    assert.truthy(refused(deep).detail:find("deeper than 64", 1, true))
  end)
end)

describe("merchantapi.escape", function()
  it("keeps the unreserved set and encodes every other byte", function()
    assert.equal("AZaz09-._~", merchantapi.escape("AZaz09-._~"))
    assert.equal("a%2Fb%3Fc%20d%25%2B%26%3D%23", merchantapi.escape("a/b?c d%+&=#"))
    assert.equal("%C3%A9%00%0D%0A", merchantapi.escape("é\0\r\n"))
    assert.equal("..", merchantapi.escape("..")) -- unreserved: a ".." id is refused by the path check
    assert.equal("", merchantapi.escape(""))
    -- the core's encoder (src/url.c) in pieces through a luaL_Buffer: longer than one piece
    assert.equal(("%C3%A9%2Fx"):rep(5000), merchantapi.escape(("é/x"):rep(5000)))
    assert.equal(require("merchantapi.core").escape, merchantapi.escape)
  end)
end)

describe("core.url_parts", function()
  local url_parts = require("merchantapi.core").url_parts
  local function parts(url)
    return { url_parts(url) }
  end

  it("gives scheme and host in lower case and the port, the scheme's by default", function()
    assert.same({ "https", "api.example", 443, "/v2" }, parts("HTTPS://API.example/v2?x#y"))
    assert.same({ "http", "127.0.0.1", 80, "" }, parts("http://127.0.0.1"))
    assert.same({ "http", "h", 8080, "/x" }, parts("http://user:pw@h:8080/x"))
    assert.same({ "https", "::1", 8443, "/a" }, parts("https://[::1]:8443/a"))
    assert.same({ "https", "::1", 443, "" }, parts("https://[::1]:"))
    assert.same({ "ftp", "h", 21, "" }, parts("ftp://h:21"))
  end)

  it("gives the path without trailing slashes: the base URL's one rule (src/url.c)", function()
    assert.same({ "https", "h", 443, "/api/v1" }, parts("https://h/api/v1//?q=/#/"))
    assert.same({ "https", "h", 443, "" }, parts("https://h/"))
    assert.same({ "https", "h", 443, "" }, parts("https://h///"))
    assert.same({ "https", "h", 443, "/a//b" }, parts("https://h/a//b/"))
  end)

  it("gives no port for another scheme without one, or a port not 1 .. 65535", function()
    for _, url in ipairs({ "ftp://h", "https://h:0", "https://h:65536", "https://h:8a", "https://[::1]x" }) do
      local scheme, _, port = url_parts(url)
      assert.truthy(scheme, url)
      assert.is_nil(port, url)
    end
    assert.same({ nil, "not a URL with scheme://" }, parts("//h/x"))
  end)
end)

describe("query strings", function()
  it("sorts keys bytewise and repeats array values", function()
    assert.equal("A=1&a=x&a=y&b=true&c=false&d=-3",
      request.query_string { d = -3, c = false, b = true, a = { "x", "y" }, A = 1 })
    assert.equal("", request.query_string {})
    assert.equal("k=", request.query_string { k = "" })
  end)

  it("refuses values without a query form", function()
    assert.is_nil((request.query_string { a = 1.5 }))
    assert.is_nil((request.query_string { a = { x = 1 } }))
    assert.is_nil((request.query_string { a = print }))
    assert.is_nil((request.query_string { [1] = "x" }))
    local _, msg = request.query_string { a = { 1, { 2 } } }
    assert.truthy(msg:find("query.a", 1, true))
  end)
end)

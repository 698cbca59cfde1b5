-- client:request, the generic call, against the sandbox: the same results
-- as the endpoints, the exact bytes a body and a query reach the server
-- with (the echo endpoint returns them byte for byte), documents without
-- primary data, the retry rules per method, and usage errors that send
-- nothing.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count = helpers.count
local CHANNELS = "/api/public/v1/channels/"
local PAYOUTS = "/api/public/v1/payouts/"
local ECHO = "/api/public/v1/echo"

describe("client:request", function()
  local client

  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)

  after_each(function()
    client:close()
  end)

  describe("GET", function()
    it("reads the channel exactly as get_channel does", function()
      local generic, err, res = client:request("GET", CHANNELS .. helpers.CHANNEL_ID)
      assert.is_nil(err)
      local channel = assert(client:get_channel(helpers.CHANNEL_ID))
      assert.same(channel, generic)
      assert.equal("channels", generic.type)
      assert.equal("6194.43", generic.targetAccount.balance)
      assert.equal(200, res.status)
      assert.equal(helpers.fixture("get_channel.200"), res.body)
      assert.equal(2, count(helpers.CHANNEL_ID))
    end)

    it("lists addresses as list_addresses does, one table per (type, id)", function()
      local path = "/api/public/v1/accounts/acct-22/addresses"
      local generic, err = client:request("GET", path, { query = { page = 1, per_page = 6 } })
      assert.is_nil(err)
      local list = assert(client:list_addresses("acct-22", { page = 1, per_page = 6 }))
      assert.same(list, generic)
      assert.same({ page = 1, per_page = 6, total = 22 }, generic.meta)
      assert.is_true(helpers.is_integer(generic.meta.total))
      -- the same network is the same table in one document
      local by_id, shared = {}, 0
      for _, address in ipairs(generic) do
        local seen = by_id[address.network.id]
        if seen then
          assert.is_true(rawequal(seen, address.network))
          shared = shared + 1
        end
        by_id[address.network.id] = address.network
      end
      assert.is_true(shared >= 3)
    end)

    it("returns any primary type, payouts with their amount as a decimal string", function()
      local payout, err = client:request("GET", PAYOUTS .. "draft-integer-amount")
      assert.is_nil(err)
      assert.equal("payouts", payout.type)
      assert.equal("draft", payout.status)
      assert.equal("1200", payout.amount)
      local echo = assert(client:request("GET", ECHO))
      assert.equal("echoes", echo.type)
    end)

    it("retries a 503 like the GET endpoints", function()
      local c = helpers.client { max_retries = 1 }
      local channel, err = c:request("GET", CHANNELS .. "fault-flaky-1-503")
      c:close()
      assert.is_nil(err)
      assert.equal("fault-flaky-1-503", channel.id)
      assert.equal(2, count("fault-flaky-1-503"))
    end)

    it("fails with the error document and its status, without an outcome", function()
      local value, err = client:request("GET", CHANNELS .. "no-such-channel")
      assert.is_nil(value)
      local res = err.res
      assert.equal("api", err.kind)
      assert.equal(404, err.status)
      assert.equal("not_found", err.code)
      assert.is_nil(err.outcome)
      assert.equal("GET", err.method)
      assert.equal(helpers.base_url() .. CHANNELS .. "no-such-channel", err.url)
      assert.equal(404, res.status)
    end)
  end)

  describe("bodies and queries", function()
    it("sends a table body as the exact JSON expected", function()
      local body = {
        data = {
          type = "payouts",
          attributes = {
            amount = "250.10", -- a decimal string stays a string
            count = 42,
            negative = -7,
            big = 9007199254740992, -- 2^53
            zero = 0,
            yes = true,
            no = false,
            none = merchantapi.null,
            text = "Zürich ✓ 😀 \"q\" \\ /\n\t\1",
            nested = { { 1, 2, { deep = "x" } }, {}, merchantapi.array() },
            ["B"] = 1, ["_"] = 2, ["a"] = 3, ["é"] = 4,
          },
        },
      }
      local expected = '{"data":{"attributes":{' ..
        '"B":1,"_":2,"a":3,"amount":"250.10","big":9007199254740992,"count":42,' ..
        '"negative":-7,"nested":[[1,2,{"deep":"x"}],{},[]],"no":false,"none":null,' ..
        '"text":"Zürich ✓ 😀 \\"q\\" \\\\ /\\n\\t\\u0001","yes":true,"zero":0,"é":4},' ..
        '"type":"payouts"}}'
      local echo, err, res = client:request("POST", ECHO, { body = body })
      assert.is_nil(err)
      assert.equal(201, res.status)
      assert.equal("POST", echo.method)
      assert.equal("application/vnd.api+json", echo.contentType)
      assert.equal(expected, echo.body)
      assert.equal(expected, merchantapi.encode(body))
      assert.equal(1, count("echo"))
    end)

    it("sends a string body byte for byte", function()
      local raw = '{ "amount": 250.10,\n  "x": [1, 2.50e3], "u": "\\u00e9" }\r\n'
      local echo, err = client:request("PUT", ECHO .. "/x", { body = raw })
      assert.is_nil(err)
      assert.equal("PUT", echo.method)
      assert.equal(raw, echo.body)
      local patched = assert(client:request("PATCH", ECHO, { body = "" }))
      assert.equal("PATCH", patched.method)
      assert.equal("", patched.body)
    end)

    it("sends DELETE, and a POST without a body, with an empty body", function()
      local deleted, err, res = client:request("DELETE", ECHO .. "/a%2Fb")
      assert.is_nil(err)
      assert.equal(200, res.status)
      assert.equal("DELETE", deleted.method)
      assert.equal("/api/public/v1/echo/a%2Fb", deleted.path)
      assert.equal("", deleted.body)
      local posted = assert(client:request("POST", ECHO))
      assert.equal("", posted.body)
    end)

    it("encodes the query: sorted keys, percent-encoded keys and values, repeated arrays", function()
      local echo, err = client:request("GET", ECHO, { query = {
        b = "x y/z", a = { 1, 2 }, flag = true, ["k&="] = "v=&?", ["ü"] = "é", empty = {},
        ["filter[status]"] = "processing",
      } })
      assert.is_nil(err)
      assert.equal("a=1&a=2&b=x%20y%2Fz&filter%5Bstatus%5D=processing&flag=true&" ..
        "k%26%3D=v%3D%26%3F&%C3%BC=%C3%A9", echo.query)
      assert.equal(ECHO, echo.path)
      assert.is_nil(echo.body)
    end)

    it("appends the query to one the path already has", function()
      local echo = assert(client:request("GET", ECHO .. "?z=9&page[size]=2", { query = { a = 1 } }))
      assert.equal("z=9&page[size]=2&a=1", echo.query)
      local bare = assert(client:request("GET", ECHO, { query = {} }))
      assert.is_nil(bare.query)
    end)

    it("refuses a fraction, NaN and other values with no JSON form, sending nothing", function()
      local cyclic = {}
      cyclic.self = cyclic
      local cases = {
        { { data = { attributes = { amount = 250.1 } } }, "/data/attributes/amount", "decimal string" },
        { { n = 0 / 0 }, "/n", "not finite" },
        { { n = math.huge }, "/n", "not finite" },
        { { list = { 1, 2, [4] = 4 } }, "/list", "holes" },
        { { mixed = { 1, x = 2 } }, "/mixed", "both string and integer keys" },
        { cyclic, "/self", "cycle" },
        { { s = "\255" }, "/s", "UTF-8" },
        { { f = print }, "/f", "function" },
        { { ["a/b~"] = { 0.5 } }, "/a~1b~0/0", "decimal string" },
        { { [true] = 1 }, "/true", "key of type boolean" },
      }
      for _, case in ipairs(cases) do
        local value, err = client:request("POST", ECHO, { body = case[1] })
        assert.is_nil(value)
        assert.equal("usage", err.kind)
        assert.equal(case[2], err.pointer)
        assert.truthy(err.detail:find(case[3], 1, true), err.detail)
        assert.equal("not_sent", err.outcome)
        assert.equal("POST", err.method)
        assert.truthy(tostring(err):find("^merchantapi: usage: "))
      end
      local value, err = client:request("GET", ECHO, { query = { amount = 1.5 } })
      assert.is_nil(value)
      assert.equal("usage", err.kind)
      assert.truthy(err.detail:find("query.amount", 1, true))
      assert.is_nil(err.outcome)
      assert.equal(0, count("echo"))
    end)
  end)

  describe("documents without primary data", function()
    it("returns merchantapi.null for data: null, with the response", function()
      local value, err, res = client:request("PATCH", ECHO .. "/data-null", { body = { a = 1 } })
      assert.is_nil(err)
      assert.equal(merchantapi.null, value)
      assert.truthy(value) -- a success is always truthy
      assert.equal(200, res.status)
      assert.equal("PATCH", res.meta.method)
      assert.equal('{"a":1}', res.meta.body)
      assert.equal(merchantapi.null, res:document().data)
    end)

    it("returns merchantapi.null for a 204 without a body", function()
      local value, err, res = client:request("DELETE", ECHO .. "/no-content")
      assert.is_nil(err)
      assert.equal(merchantapi.null, value)
      assert.equal(204, res.status)
      assert.equal("", res.body)
      assert.is_nil(res.meta)
    end)

    it("answers HEAD with the headers only, and the connection serves what follows", function()
      local got = assert(client:request("GET", ECHO))
      local value, err, res = client:request("HEAD", ECHO)
      assert.is_nil(err)
      assert.equal(merchantapi.null, value)
      assert.equal(200, res.status)
      assert.equal("", res.body)
      assert.equal("application/vnd.api+json", res.headers["content-type"])
      assert.truthy(tonumber(res.headers["content-length"]) > 100)
      local again = assert(client:request("GET", ECHO))
      assert.equal("GET", again.method)
      assert.not_equal(got.id, again.id)
      local posted = assert(client:request("POST", ECHO, { body = "{}" }))
      assert.equal("{}", posted.body)
      assert.equal(4, count("echo"))
    end)
  end)

  describe("methods other than GET and HEAD", function()
    it("are not retried after a 503, and say the outcome is unknown", function()
      local c = helpers.client { max_retries = 2 }
      local value, err = c:request("PUT", PAYOUTS .. "fault-flaky-1-503")
      c:close()
      assert.is_nil(value)
      assert.equal("api", err.kind)
      assert.equal(503, err.status)
      assert.is_false(err.retryable) -- it may have been carried out: not safe to send again
      assert.equal("unknown", err.outcome)
      assert.equal(1, err.attempts)
      assert.equal(1, count("fault-flaky-1-503"))
    end)

    it("are retried after a 429, and a PUT confirms like confirm_payout", function()
      local c = helpers.client { max_retries = 2 }
      local payout, err, res = c:request("PUT", PAYOUTS .. "fault-flaky-1-429")
      c:close()
      assert.is_nil(err)
      assert.equal(201, res.status)
      assert.equal("processing", payout.status)
      assert.equal("250.10", payout.amount)
      assert.equal("EUR", payout.accountCharged.currencyCode)
      assert.equal(2, count("fault-flaky-1-429"))
    end)

    it("say rejected for a 4xx", function()
      local value, err = client:request("POST", PAYOUTS .. helpers.PAYOUT_ID)
      assert.is_nil(value)
      assert.equal(405, err.status)
      assert.equal("rejected", err.outcome)
      assert.equal("POST", err.method)
    end)
  end)

  describe("usage errors", function()
    it("refuses paths that leave the base URL or are not encoded, sending nothing", function()
      local bad = {
        "http://other.example/api", "api/public/v1/echo", "//other.example/x",
        "/api/public/v1/../v1/echo", "/api/public/v1/echo/..", "/api/./echo",
        "/api/public/v1/%2e%2E/echo", "/api/public/v1/.%2e", "/api/public/v1/echo\r\nX-Evil: 1",
        "/api/public/v1/echo\n", "/api/public/v1/echo\0x", "/api/public/v1/echo x",
        "/api/public/v1/echo#frag", "/api/public/v1/échó", "/api/public/v1/echo%zz",
        "/api/public/v1/echo%4", "/api/public/v1/echo?a=\r\n",
      }
      for _, path in ipairs(bad) do
        local value, err = client:request("POST", path)
        assert.is_nil(value, path)
        assert.equal("usage", err.kind, path)
        assert.equal("not_sent", err.outcome, path)
      end
      assert.equal(0, count("echo"))
    end)

    it("allows dots that are not whole segments, and brackets in the query", function()
      local echo = assert(client:request("GET", ECHO .. "/a..b/.c/..d%2E?x=..&y[0]=/"))
      assert.equal("/api/public/v1/echo/a..b/.c/..d%2E", echo.path)
      assert.equal("x=..&y[0]=/", echo.query)
    end)

    it("refuses other methods and a body on GET or HEAD", function()
      for _, method in ipairs { "get", "TRACE", "OPTIONS", "CONNECT", "", "G ET" } do
        local value, err = client:request(method, ECHO)
        assert.is_nil(value)
        assert.equal("usage", err.kind)
      end
      for _, method in ipairs { "GET", "HEAD" } do
        local value, err = client:request(method, ECHO, { body = "{}" })
        assert.is_nil(value)
        assert.equal("usage", err.kind)
        assert.truthy(err.title:find("takes no body", 1, true))
      end
      assert.equal(0, count("echo"))
    end)

    it("raises on argument type mistakes", function()
      assert.has_error(function() client:request(nil, ECHO) end)
      assert.has_error(function() client:request("GET", 42) end)
      assert.has_error(function() client:request("GET", ECHO, "x") end)
      assert.has_error(function() client:request("GET", ECHO, { header = {} }) end)
      assert.has_error(function() client:request("GET", ECHO, { headers = "X-A: 1" }) end)
      assert.has_error(function() client:request("GET", ECHO, { query = "a=1" }) end)
      assert.has_error(function() client:request("POST", ECHO, { body = 42 }) end)
    end)

    it("fails on a closed client", function()
      client:close()
      local value, err = client:request("POST", ECHO)
      assert.is_nil(value)
      assert.equal("usage", err.kind)
      assert.equal("not_sent", err.outcome)
      assert.equal(0, count("echo"))
    end)
  end)
end)

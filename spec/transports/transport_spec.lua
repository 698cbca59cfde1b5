-- Custom transports (merchantapi.new{transport = fn}): the endpoint, error,
-- number and page specs run again over a LuaSocket transport; the request a
-- transport is handed; results equal to libcurl's; and the decisions of the
-- core -- retries, outcome, caps -- over a fake transport that answers what
-- a test needs.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local socket_transport = require "support.socket_transport"

local KEY = helpers.API_KEY

-- Runs a spec file inside the describe block being defined, in this file's
-- environment (busted's describe, it, ... ; require shares helpers).
local env = rawget(_G, "getfenv") and getfenv(1) or _ENV
local function run_spec_file(path)
  local chunk
  if rawget(_G, "setfenv") then
    chunk = assert(loadfile(path))
    setfenv(chunk, env)
  else
    chunk = assert(loadfile(path, "t", env))
  end
  chunk()
end

describe("the endpoint specs over a LuaSocket transport", function()
  -- set while the blocks are defined (clients made there) and while they run
  setup(function()
    helpers.transport = socket_transport
  end)
  teardown(function()
    helpers.transport = nil
  end)
  helpers.transport = socket_transport
  for _, name in ipairs({ "calls/endpoints", "errors/errors", "decode/numbers", "pages/pages" }) do
    describe(name, function()
      run_spec_file(helpers.ROOT .. "/spec/" .. name .. "_spec.lua")
    end)
  end
  helpers.transport = nil
end)

-- A transport that records each request and answers from `answers`
-- (a list of responses or { nil, err }, the last one repeated).
local function fake(answers)
  local t = { requests = {} }
  t.fn = function(request)
    t.requests[#t.requests + 1] = request
    local a = answers[math.min(#t.requests, #answers)]
    if a.fail ~= nil then
      return nil, a.fail
    end
    return a
  end
  return t
end

local CHANNEL_DOC = helpers.fixture("get_channel.200")
-- The channel document answering for channel `id` (the client checks the id).
local function channel_doc(id)
  return (CHANNEL_DOC:gsub('"id": "' .. helpers.CHANNEL_ID:gsub("%p", "%%%0") .. '"',
    '"id": "' .. id .. '"', 1))
end
local PAYOUT_DOC = helpers.fixture("confirm_payout.201")
local JSONAPI = { ["Content-Type"] = "application/vnd.api+json" }
local function err_doc(status, code)
  return ('{"errors":[{"status":"%d","code":"%s","title":"t"}]}'):format(status, code)
end

local function client(t, opts)
  local o = { base_url = "http://127.0.0.1:1", api_key = KEY, max_retries = 0, transport = t.fn }
  for k, v in pairs(opts or {}) do
    o[k] = v
  end
  if o.api_key == false then
    o.api_key = nil
  end
  return assert(merchantapi.new(o))
end

describe("the request a transport is handed", function()
  it("has the method, URL and headers libcurl would send", function()
    local t = fake({ { status = 200, headers = JSONAPI, body = channel_doc("a/b c") } })
    local c = client(t, { timeout = 7, connect_timeout = 3, max_body = 1000000 })
    assert(c:get_channel("a/b c"))
    local r = t.requests[1]
    assert.equal("GET", r.method)
    assert.equal("http://127.0.0.1:1/api/public/v1/channels/a%2Fb%20c", r.url)
    assert.equal("Bearer " .. KEY, r.headers.Authorization)
    assert.equal("application/vnd.api+json", r.headers.Accept)
    assert.equal("application/vnd.api+json", r.headers["Content-Type"])
    assert.matches("^merchantapi/0%.1%.0 libcurl/[%d.]+ ", r.headers["User-Agent"])
    assert.matches((rawget(_G, "jit") and jit.version or _VERSION):gsub("%p", "%%%0") .. "$",
      r.headers["User-Agent"])
    assert.is_nil(r.body)
    assert.equal(7, r.timeout)
    assert.equal(3, r.connect_timeout)
    assert.equal(1000000, r.max_body)
    assert.is_false(r.fresh_connection)
    assert.equal(1, r.attempt)
    c:close()
  end)

  it("is a PUT on a fresh connection for the confirm, with the query of a list", function()
    local t = fake({ { status = 201, headers = JSONAPI, body = PAYOUT_DOC } })
    local c = client(t)
    assert(c:confirm_payout(helpers.PAYOUT_ID))
    assert.equal("PUT", t.requests[1].method)
    assert.is_true(t.requests[1].fresh_connection)
    local l = fake({ { status = 200, headers = JSONAPI, body = helpers.fixture("list_addresses.200") } })
    local c2 = client(l)
    assert(c2:list_addresses("acct 1", { page = 2, per_page = 5, order_type = "desc" }))
    assert.equal("http://127.0.0.1:1/api/public/v1/accounts/acct%201/addresses"
      .. "?order_type=desc&page=2&per_page=5", l.requests[1].url)
    c:close()
    c2:close()
  end)

  it("has no Authorization without a key", function()
    local t = fake({ { status = 200, headers = JSONAPI, body = CHANNEL_DOC } })
    local c = client(t, { api_key = false })
    assert(c:get_channel(helpers.CHANNEL_ID))
    assert.is_nil(t.requests[1].headers.Authorization)
  end)

  it("is not made for a call that fails its checks", function()
    local t = fake({ { status = 200, headers = JSONAPI, body = CHANNEL_DOC } })
    local c = client(t)
    local v, err = c:get_channel("")
    assert.is_nil(v)
    assert.equal("usage", err.kind)
    local p, perr = c:list_addresses("a", { page = 0 })
    assert.is_nil(p)
    assert.equal("usage", perr.kind)
    assert.equal(0, #t.requests)
    assert.has_error(function() c:get_channel(42) end)
  end)
end)

describe("a call over a transport", function()
  -- the core client under the merchantapi client
  local function built(c)
    return c._c:_calls_built()
  end

  it("is built once by the core, retries and the confirm's settling read included", function()
    local t = fake({ { status = 503, headers = JSONAPI, body = err_doc(503, "unavailable") },
      { status = 200, headers = JSONAPI, body = CHANNEL_DOC } })
    local c = client(t, { max_retries = 1 })
    assert.equal(0, built(c))
    assert(c:get_channel(helpers.CHANNEL_ID))
    assert.equal(2, #t.requests) -- two attempts ...
    assert.equal(1, built(c))    -- ... of one call, built once
    local p = fake({ { fail = { message = "reset", sent = true } },
      { status = 200, headers = JSONAPI, body = PAYOUT_DOC } })
    local c2 = client(p)
    c2:confirm_payout(helpers.PAYOUT_ID) -- unknown outcome, settled by a read
    assert.equal(2, #p.requests)
    assert.equal("GET", p.requests[2].method)
    assert.equal(1, built(c2))
    c:close()
    c2:close()
  end)

  it("is built once for every method a transport carries, and not at all when refused",
    function()
    local t = fake({ { status = 200, headers = JSONAPI, body = PAYOUT_DOC } })
    local c = client(t)
    c:get_payout(helpers.PAYOUT_ID)
    assert.equal(1, built(c))
    c:request("GET", "/api/public/v1/payouts/" .. helpers.PAYOUT_ID)
    assert.equal(2, built(c))
    local l = fake({ { status = 200, headers = JSONAPI, body = helpers.fixture("list_addresses.200") } })
    local c2 = client(l)
    assert(c2:list_addresses("acct"))
    assert.equal(1, built(c2))
    assert.is_nil((c2:list_addresses("", {})))
    assert.is_nil((c2:get_channel("..")))
    assert.equal(1, built(c2))
    assert.equal(1, #l.requests)
    c:close()
    c2:close()
  end)
end)

describe("results over a transport", function()
  before_each(function()
    helpers.reset()
  end)

  local function strip(res)
    local h = {}
    for k, v in pairs(res.headers) do
      if k ~= "date" and k ~= "x-request-id" and k ~= "connection" and k ~= "keep-alive" then
        h[k] = v
      end
    end
    return { status = res.status, headers = h, body = res.body, meta = res.meta,
             jsonapi = res.jsonapi }
  end

  local function err_fields(err)
    if not err then
      return nil
    end
    return { kind = err.kind, status = err.status, code = err.code, title = err.title,
             detail = err.detail, errors = err.errors, retryable = err.retryable,
             outcome = err.outcome, method = err.method, url = err.url,
             attempts = err.attempts, amount = err.amount, minimum = err.minimum,
             message = err.message }
  end

  it("equal libcurl's, value for value and error for error", function()
    local curl = helpers.client({ transport = false })
    local sock = helpers.client({ transport = socket_transport })
    local calls = {
      { "get_channel", helpers.CHANNEL_ID }, { "get_channel", "no-such-channel" },
      { "get_channel", "fault-wrong-type" }, { "get_channel", "fault-bad-json" },
      { "get_channel", "fault-html-502" }, { "get_channel", "fault-redirect" },
      { "confirm_payout", "draft-amount-below-minimum" },
      { "list_addresses", "acct-22", { page = 2, per_page = 5 } },
      { "list_addresses", helpers.ACCOUNT_ID, { per_page = 3 } },
    }
    for _, call in ipairs(calls) do
      local name = call[1]
      local v1, e1, r1 = curl[name](curl, call[2], call[3])
      local v2, e2, r2 = sock[name](sock, call[2], call[3])
      r1, r2 = v1 and r1 or e1.res, v2 and r2 or e2.res -- a failure's response: err.res
      assert.same(v1, v2, name .. " " .. call[2])
      assert.same(err_fields(e1), err_fields(e2), name .. " " .. call[2])
      assert.equal(r1 == nil, r2 == nil)
      if r1 then
        assert.same(strip(r1), strip(r2), name .. " " .. call[2])
      end
    end
    curl:close()
    sock:close()
  end)

  it("keep numbers exact on every Lua", function()
    local t = fake({ { status = 200, headers = JSONAPI, body = [[
      {"data":{"type":"channels","id":"n","attributes":{"small":9007199254740992,
       "big":9007199254740993,"huge":123456789012345678901234567890,"frac":100.10}}}]] } })
    local ch = assert(client(t):get_channel("n"))
    assert.equal(9007199254740992, ch.small)
    assert.is_true(helpers.is_integer(ch.small))
    assert.equal("9007199254740993", ch.big)
    assert.equal("123456789012345678901234567890", ch.huge)
    assert.equal("100.10", ch.frac)
  end)

  it("take headers in any case, repeated headers as arrays, and fill res", function()
    local t = fake({ { status = 200, body = CHANNEL_DOC, headers = {
      ["CONTENT-TYPE"] = "application/vnd.api+json", ["X-Request-Id"] = "rid-1",
      ["Set-Cookie"] = { "a=1", "b=2" }, ["X-Number"] = 5 } } })
    local ch, err, res = client(t):get_channel(helpers.CHANNEL_ID)
    assert.is_nil(err)
    assert.equal(helpers.CHANNEL_ID, ch.id)
    assert.equal(200, res.status)
    assert.equal("rid-1", res.request_id)
    assert.equal("b=2", res.headers["set-cookie"])
    assert.equal("5", res.headers["x-number"])
    assert.equal(CHANNEL_DOC, res.body)
    assert.is_true(res.elapsed >= 0)
  end)

  it("fail a body over max_body as decode", function()
    local t = fake({ { status = 200, headers = JSONAPI, body = CHANNEL_DOC } })
    local v, err = client(t, { max_body = 100 }):get_channel("x")
    assert.is_nil(v)
    assert.equal("decode", err.kind)
    assert.equal(200, err.status)
    assert.matches("max_body", err.title)
  end)

  it("raise on a malformed answer of the transport, and on its own errors", function()
    local c = client(fake({ { status = "200", body = "" } }))
    assert.has_error(function() c:get_channel("x") end)
    local c2 = client(fake({ { status = 200, body = {} } }))
    assert.has_error(function() c2:get_channel("x") end)
    local c3 = assert(merchantapi.new({ base_url = "http://127.0.0.1:1", transport = function()
      error("transport bug")
    end }))
    assert.has_error(function() c3:get_channel("x") end, nil)
  end)
end)

describe("retries over a transport", function()
  it("retry a GET answered 503, then succeed, sleeping between attempts", function()
    local t = fake({ { status = 503, headers = JSONAPI, body = err_doc(503, "unavailable") },
                     { status = 503, headers = { ["Retry-After"] = "0" }, body = "" },
                     { status = 200, headers = JSONAPI, body = CHANNEL_DOC } })
    local ch, err = client(t, { max_retries = 2 }):get_channel(helpers.CHANNEL_ID)
    assert.is_nil(err)
    assert.equal(helpers.CHANNEL_ID, ch.id)
    assert.equal(3, #t.requests)
    assert.same({ 1, 2, 3 }, { t.requests[1].attempt, t.requests[2].attempt, t.requests[3].attempt })
  end)

  it("give up after max_retries with attempts and the last error", function()
    local t = fake({ { fail = "connection reset" } })
    local v, err = client(t, { max_retries = 1 }):get_channel("x")
    assert.is_nil(v)
    assert.equal("transport", err.kind)
    assert.equal("connection reset", err.title)
    assert.is_true(err.retryable)
    assert.equal(2, err.attempts)
    assert.is_nil(err.outcome)
    assert.equal(2, #t.requests)
    assert.matches("^merchantapi: transport: connection reset %[GET /api/public/v1/channels/x%]$",
      tostring(err))
  end)

  it("retry a confirm that provably was not sent, outcome not_sent", function()
    local t = fake({ { fail = { message = "connection refused", sent = false } } })
    local v, err = client(t, { max_retries = 2 }):confirm_payout("p")
    assert.is_nil(v)
    assert.equal("not_sent", err.outcome)
    assert.equal(3, err.attempts)
    assert.equal(3, #t.requests)
  end)

  -- (without settling: the read of the payout that follows an unknown
  -- outcome is spec/calls/settle_deadline_spec.lua's)
  it("never retry a confirm that may have been sent: outcome unknown", function()
    for _, failure in ipairs({ "timeout", { message = "reset", sent = true }, { message = "x" } }) do
      local t = fake({ { fail = failure } })
      local v, err = client(t, { max_retries = 2, settle = false }):confirm_payout("p")
      assert.is_nil(v)
      assert.equal("unknown", err.outcome)
      assert.equal(1, err.attempts)
      assert.equal(1, #t.requests)
    end
  end)

  it("never retry a confirm answered 503; retry one answered 429", function()
    local t = fake({ { status = 503, headers = JSONAPI, body = err_doc(503, "unavailable") } })
    local _, err = client(t, { max_retries = 2, settle = false }):confirm_payout("p")
    assert.equal("unknown", err.outcome)
    assert.equal(1, #t.requests)
    local t2 = fake({ { status = 429, headers = { ["Retry-After"] = "0" }, body = err_doc(429, "rate") },
                      { status = 201, headers = JSONAPI, body = PAYOUT_DOC } })
    local p = assert(client(t2, { max_retries = 2 }):confirm_payout(helpers.PAYOUT_ID))
    assert.equal("processing", p.status)
    assert.equal(2, #t2.requests)
  end)

  it("honour Retry-After between attempts", function()
    local t = fake({ { status = 429, headers = { ["Retry-After"] = "1" }, body = "" },
                     { status = 200, headers = JSONAPI, body = CHANNEL_DOC } })
    local t0 = helpers.now()
    assert(client(t, { max_retries = 1 }):get_channel(helpers.CHANNEL_ID))
    assert.is_true(helpers.now() - t0 >= 0.95)
  end)
end)

describe("the pager over a transport", function()
  it("yields every address once, also when asked for concurrency", function()
    local sock = helpers.client({ transport = socket_transport })
    local curl = helpers.client({ transport = false })
    for _, concurrency in ipairs({ 1, 3 }) do
      local a = assert(sock:addresses("acct-22", { per_page = 5, concurrency = concurrency }):all())
      local b = assert(curl:addresses("acct-22", { per_page = 5 }):all())
      assert.equal(22, #a)
      assert.same(helpers.ids(b), helpers.ids(a))
    end
    sock:close()
    curl:close()
  end)

  it("raises the error object from each(), as over libcurl", function()
    local t = fake({ { status = 200, headers = JSONAPI, body = helpers.fixture("list_addresses.200") },
                     { status = 500, headers = JSONAPI, body = err_doc(500, "boom") } })
    local c = client(t)
    local ok, err = pcall(function()
      for _ in c:addresses("a", { per_page = 2 }):each() do -- luacheck: ignore 512
      end
    end)
    assert.is_false(ok)
    assert.equal("api", err.kind)
    assert.equal("boom", err.code)
  end)
end)

describe("a client with a transport", function()
  it("serves calls from several coroutines at once", function()
    -- a transport that yields once before answering, like a cosocket
    local t = function(request)
      coroutine.yield(request.url)
      return { status = 200, headers = JSONAPI, body = CHANNEL_DOC }
    end
    local c = assert(merchantapi.new({ base_url = "http://127.0.0.1:1", transport = t }))
    local results = {}
    local cos = {}
    for i = 1, 3 do
      cos[i] = coroutine.create(function()
        results[i] = c:get_channel(helpers.CHANNEL_ID).id
      end)
      assert(coroutine.resume(cos[i]))
    end
    for i = 3, 1, -1 do
      assert(coroutine.resume(cos[i]))
      assert.equal("dead", coroutine.status(cos[i]))
    end
    assert.same({ helpers.CHANNEL_ID, helpers.CHANNEL_ID, helpers.CHANNEL_ID }, results)
    c:close()
  end)

  it("closes only after the calls under way are over", function()
    local c
    local t = function()
      c:close() -- from inside a call: deferred
      return { status = 200, headers = JSONAPI, body = CHANNEL_DOC }
    end
    c = assert(merchantapi.new({ base_url = "http://127.0.0.1:1", transport = t }))
    local ch, err = c:get_channel(helpers.CHANNEL_ID)
    assert.is_nil(err)
    assert.equal(helpers.CHANNEL_ID, ch.id)
    local _, err2 = c:get_channel("x")
    assert.equal("usage", err2.kind)
    assert.matches("closed", err2.title)
  end)
end)

-- The framing rule of every transport (src/framing.c, the core's one rule):
-- over the OpenResty cosocket transport (a scripted cosocket,
-- spec/support/fake_cosocket.lua) and over a custom Lua transport, an answer
-- whose framing is refused fails exactly as on libcurl's path
-- (tests/test_http.c, tests/test_framing.c): `decode` with the head kept,
-- the same title, status, request id, method and URL, outcome `unknown` for
-- a confirm; a body cut before its end is `transport`, never `decode`.
local merchantapi = require "merchantapi"
local fake_cosocket = require "support.fake_cosocket"

local BASE = "http://127.0.0.1:8080"
local CHANNEL = '{"data":{"type":"channels","id":"c1","attributes":{}}}'
local PAYOUT = '{"data":{"type":"payouts","id":"p1","attributes":{"status":"processing"}}}'
local CHANNEL_URL = BASE .. "/api/public/v1/channels/c1"
local PAYOUT_URL = BASE .. "/api/public/v1/payouts/p1"

-- Runs fn(client) with the global ngx a scripted cosocket answering `raw`
-- to every request; returns what fn returns and the fake.
local function over_cosocket(raw, fn)
  local fake = fake_cosocket.ngx(raw)
  local saved = rawget(_G, "ngx")
  rawset(_G, "ngx", fake)
  local ok, a, b, c = pcall(function()
    local client = assert(merchantapi.new { base_url = BASE, api_key = "sk_test", max_retries = 0,
      transport = require("merchantapi.transport.ngx").new() })
    return fn(client)
  end)
  rawset(_G, "ngx", saved)
  if not ok then
    error(a, 0)
  end
  return a, b, c, fake
end

-- A client whose custom transport hands in `res` for every request.
local function over_custom(res)
  local count = { n = 0 }
  local client = assert(merchantapi.new { base_url = BASE, api_key = "sk_test", max_retries = 0,
    transport = function()
      count.n = count.n + 1
      return res
    end })
  return client, count
end

local function head(status, lines)
  return "HTTP/1.1 " .. status .. "\r\nContent-Type: application/vnd.api+json\r\n"
    .. table.concat(lines, "\r\n") .. "\r\n\r\n"
end

-- The fields every path fills alike for a refused head.
local function assert_refused(err, title, status, method, url, rid)
  assert.equal("decode", err.kind)
  assert.equal(title, err.title)
  assert.equal(status, err.status)
  assert.equal(method, err.method)
  assert.equal(url, err.url)
  assert.equal(rid, err.request_id)
  assert.equal(1, err.attempts)
end

describe("framing over the cosocket transport", function()
  it("refuses two different Content-Lengths, as libcurl's path does", function()
    -- before: the transport took the last one and read the channel
    local v, err, _, fake = over_cosocket(head("200 OK", { "Content-Length: 2",
      "X-Request-Id: rid-cl", "Content-Length: " .. #CHANNEL }) .. CHANNEL,
      function(c) return c:get_channel("c1") end)
    assert.is_nil(v)
    assert_refused(err, "conflicting Content-Length headers", 200, "GET", CHANNEL_URL, "rid-cl")
    assert.is_nil(err.outcome)
    assert.equal(0, fake.kept) -- the connection is not pooled with a body unread
    assert.equal(1, #fake.sent)
  end)

  it("refuses Content-Length with Transfer-Encoding, and codings other than chunked", function()
    local v, err = over_cosocket(head("200 OK", { "Content-Length: 3",
      "Transfer-Encoding: chunked" }) .. (string.format("%x", #CHANNEL)) .. "\r\n" .. CHANNEL
      .. "\r\n0\r\n\r\n", function(c) return c:get_channel("c1") end)
    assert.is_nil(v)
    assert_refused(err, "Content-Length and Transfer-Encoding together", 200, "GET", CHANNEL_URL)

    v, err = over_cosocket(head("200 OK", { "Transfer-Encoding: gzip, chunked" }) .. "0\r\n\r\n",
      function(c) return c:get_channel("c1") end)
    assert.is_nil(v)
    assert_refused(err, "unsupported Transfer-Encoding (only chunked)", 200, "GET", CHANNEL_URL)
  end)

  it("refuses a Content-Length that is not a number as decode, not transport", function()
    local v, err = over_cosocket(head("200 OK", { "Content-Length: 6x3" }) .. CHANNEL,
      function(c) return c:get_channel("c1") end)
    assert.is_nil(v)
    assert_refused(err, "invalid Content-Length header", 200, "GET", CHANNEL_URL)
  end)

  it("fails a refused confirm answer with outcome unknown, sent once", function()
    local v, err, _, fake = over_cosocket(head("201 Created", { "X-Request-Id: rid-put",
      "Content-Length: 2, 3" }) .. "{}",
      function(c) return c:confirm_payout("p1", { settle = false }) end)
    assert.is_nil(v)
    assert_refused(err, "invalid Content-Length header", 201, "PUT", PAYOUT_URL, "rid-put")
    assert.equal("unknown", err.outcome)
    assert.equal(1, #fake.sent)
  end)

  it("fails a body cut before its Content-Length or its last chunk as transport", function()
    local v, err = over_cosocket(head("200 OK", { "Content-Length: " .. #CHANNEL })
      .. CHANNEL:sub(1, 10), function(c) return c:get_channel("c1") end)
    assert.is_nil(v)
    assert.equal("transport", err.kind)
    assert.equal("GET", err.method)
    assert.equal(CHANNEL_URL, err.url)

    v, err = over_cosocket(head("200 OK", { "Transfer-Encoding: chunked" })
      .. string.format("%x", #CHANNEL) .. "\r\n" .. CHANNEL .. "\r\n",
      function(c) return c:get_channel("c1") end)
    assert.is_nil(v)
    assert.equal("transport", err.kind)

    v, err = over_cosocket(head("201 Created", { "Content-Length: " .. #PAYOUT })
      .. PAYOUT:sub(1, 20), function(c) return c:confirm_payout("p1", { settle = false }) end)
    assert.is_nil(v)
    assert.equal("transport", err.kind)
    assert.equal("unknown", err.outcome)
  end)

  it("refuses a repeated equal length and a list of equal ones (RFC 9110 8.6: either may be)",
    function()
      local v, err = over_cosocket(head("200 OK", { "Content-Length: " .. #CHANNEL,
        "Content-Length: 0" .. #CHANNEL }) .. CHANNEL, function(c) return c:get_channel("c1") end)
      assert.is_nil(v)
      assert_refused(err, "conflicting Content-Length headers", 200, "GET", CHANNEL_URL)
      v, err = over_cosocket(head("200 OK", { "Content-Length: " .. #CHANNEL .. ", " .. #CHANNEL })
        .. CHANNEL, function(c) return c:get_channel("c1") end)
      assert.is_nil(v)
      assert_refused(err, "invalid Content-Length header", 200, "GET", CHANNEL_URL)
    end)

  it("reads a chunked body", function()
    local v, err = over_cosocket(head("200 OK", { "Transfer-Encoding: Chunked" })
      .. string.format("%x", #CHANNEL) .. "\r\n" .. CHANNEL .. "\r\n0\r\n\r\n",
      function(c) return c:get_channel("c1") end)
    assert.is_nil(err)
    assert.equal("c1", v.id)
  end)
end)

describe("framing of what a custom transport hands in", function()
  it("refuses two different Content-Lengths: a transport cannot bypass the rule", function()
    local c, count = over_custom { status = 200, body = CHANNEL, headers = {
      ["Content-Length"] = { "2", tostring(#CHANNEL) }, ["X-Request-Id"] = "rid-x" } }
    local v, err = c:get_channel("c1")
    assert.is_nil(v)
    assert_refused(err, "conflicting Content-Length headers", 200, "GET", CHANNEL_URL, "rid-x")
    assert.equal(1, count.n)
  end)

  it("refuses Content-Length with Transfer-Encoding; a confirm so answered is unknown", function()
    local c = over_custom { status = 201, body = PAYOUT, headers = {
      ["content-length"] = #PAYOUT, ["transfer-encoding"] = "chunked" } }
    local v, err = c:confirm_payout("p1", { settle = false })
    assert.is_nil(v)
    assert_refused(err, "Content-Length and Transfer-Encoding together", 201, "PUT", PAYOUT_URL)
    assert.equal("unknown", err.outcome)
  end)

  it("fails a body shorter than its Content-Length as transport, longer as decode", function()
    local c, count = over_custom { status = 200, body = CHANNEL:sub(1, 10), headers = {
      ["Content-Length"] = tostring(#CHANNEL), ["X-Request-Id"] = "rid-cut" } }
    local v, err = c:get_channel("c1")
    assert.is_nil(v)
    assert.equal("transport", err.kind)
    assert.equal("body cut short", err.title)
    assert.equal("rid-cut", err.request_id)
    assert.equal(CHANNEL_URL, err.url)
    assert.equal(1, count.n)

    c = over_custom { status = 201, body = PAYOUT:sub(1, 10), headers = {
      ["Content-Length"] = tostring(#PAYOUT) } }
    v, err = c:confirm_payout("p1", { settle = false })
    assert.is_nil(v)
    assert.equal("transport", err.kind)
    assert.equal("unknown", err.outcome) -- never retried: it may have been received

    c = over_custom { status = 200, body = CHANNEL .. " ", headers = {
      ["Content-Length"] = tostring(#CHANNEL) } }
    v, err = c:get_channel("c1")
    assert.is_nil(v)
    assert.equal("decode", err.kind)
    assert.equal("body longer than its Content-Length", err.title)
  end)
end)

describe("core.framing", function()
  local core = require "merchantapi.core"
  it("tells a transport how the body is framed, by the core's rule", function()
    assert.same({ "length", 38 }, { core.framing("38") })
    assert.same({ "length", 38 }, { core.framing(" 038 ") })
    assert.same({ nil, "conflicting Content-Length headers" }, { core.framing({ "38", "038" }) })
    assert.same({ nil, "invalid Content-Length header" }, { core.framing("38, 38") })
    assert.same({ "chunked" }, { core.framing(nil, "chunked") })
    assert.same({ "close" }, { core.framing() })
    assert.same({ nil, "conflicting Content-Length headers" }, { core.framing({ "1", "2" }) })
    assert.same({ nil, "invalid Content-Length header" }, { core.framing("-1") })
    assert.same({ nil, "Content-Length and Transfer-Encoding together" },
      { core.framing("5", "chunked") })
    assert.same({ nil, "unsupported Transfer-Encoding (only chunked)" },
      { core.framing(nil, { "chunked", "chunked" }) })
  end)
end)

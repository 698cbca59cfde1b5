-- merchantapi.transport.ngx outside nginx, over a scripted cosocket
-- (spec/support/fake_cosocket.lua): the bytes it sends, and how it reads the
-- status line, the header lines (plain searches since the pattern
-- `^([^:]+):%s*(.-)%s*$` was a tenth of each request in OpenResty) and the
-- body.  tests/suites/50-openresty runs it inside nginx against the sandbox.
local fake_cosocket = require "support.fake_cosocket"

local BODY = '{"data":{"type":"channels","id":"c1"}}'

local function with_ngx(answer, fn)
  local fake = fake_cosocket.ngx(answer)
  local saved = rawget(_G, "ngx")
  rawset(_G, "ngx", fake)
  local ok, err = pcall(fn, fake)
  rawset(_G, "ngx", saved)
  if not ok then
    error(err, 0)
  end
  return fake
end

local function request(overrides)
  local r = {
    method = "GET", url = "http://api.example:8080/v1/channels/c1?x=1",
    headers = { Accept = "application/vnd.api+json" },
    timeout = 30, connect_timeout = 10, max_body = 1000, fresh_connection = false, attempt = 1,
  }
  for k, v in pairs(overrides or {}) do
    r[k] = v
  end
  return r
end

describe("merchantapi.transport.ngx", function()
  local transport
  setup(function()
    transport = require("merchantapi.transport.ngx").new()
  end)

  it("sends the request line, Host and every header, and reads a Content-Length body", function()
    local res
    local fake = with_ngx("HTTP/1.1 200 OK\r\nContent-Length: " .. #BODY .. "\r\n\r\n" .. BODY,
      function()
        res = assert(transport(request()))
      end)
    assert.equal("GET /v1/channels/c1?x=1 HTTP/1.1\r\nHost: api.example:8080\r\n"
      .. "Accept: application/vnd.api+json\r\n\r\n", fake.sent[1])
    assert.same({ host = "api.example", port = 8080, pool = "http://api.example:8080" },
      fake.connects[1])
    assert.equal(200, res.status)
    assert.equal(BODY, res.body)
    assert.equal(1, fake.kept)
  end)

  it("sends a body with its length, and opens fresh connections in their own pool", function()
    local fake = with_ngx("HTTP/1.1 204 No Content\r\n\r\n", function()
      assert(transport(request { method = "PUT", body = "{}", fresh_connection = true,
        url = "https://api.example/p/1", headers = {} }))
    end)
    assert.equal("PUT /p/1 HTTP/1.1\r\nHost: api.example\r\nContent-Length: 2\r\n"
      .. "Connection: close\r\n\r\n{}", fake.sent[1])
    assert.equal("https://api.example:443:fresh", fake.connects[1].pool)
    assert.equal(0, fake.kept)
  end)

  it("reads a head no further than its cap, however long a line (one of 2 MiB)", function()
    local res
    local fake = with_ngx("HTTP/1.1 200 OK\r\nX-Long: " .. string.rep("l", 2 * 1048576)
      .. "\r\nContent-Length: 2\r\n\r\n{}", function()
        res = assert(transport(request()))
      end)
    local cap = require("merchantapi.core").defaults.max_header_bytes
    assert.equal(200, res.status)
    assert.is_true(res.head_bytes > cap)
    assert.is_true(fake.sock.pos <= cap + 2, "read " .. fake.sock.pos - 1 .. " bytes")
    assert.equal(0, fake.kept)
  end)

  it("reads a chunked body's lines no further than their room (a size line of 2 MiB)", function()
    local long = string.rep("0", 2 * 1048576) .. "2"
    for _, body in ipairs {
      long .. "\r\n{}\r\n0\r\n\r\n",                                 -- the size line
      "2\r\n{}" .. long .. "\r\n0\r\n\r\n",                           -- the chunk's end
      "2\r\n{}\r\n0\r\nX-T: " .. long .. "\r\n\r\n",                 -- a trailer
    } do
      local res, err
      local fake = with_ngx("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" .. body,
        function()
          res, err = transport(request())
        end)
      assert.is_nil(res)
      assert.is_true(err.sent)
      assert.matches("over %d+ bytes", err.message)
      assert.is_true(fake.sock.pos <= 300 * 1024, "read " .. fake.sock.pos - 1 .. " bytes")
    end
  end)

  it("reads header lines: names lower-cased, spaces and tabs around values dropped", function()
    local res
    with_ngx("HTTP/1.1 200 OK\r\n"
      .. "Content-Type:application/vnd.api+json\r\n"
      .. "X-Request-Id: \t abc def \t \r\n"
      .. "X-Empty:\r\n"
      .. "X-Spaces:    \r\n"
      .. "Set-Cookie: a=1\r\n"
      .. "SET-COOKIE: b=2\r\n"
      .. "X-Folded: one\r\n"
      .. " \t two  \r\n"
      .. "X-Colon: a:b: c\r\n"
      .. "no colon here\r\n"
      .. ": no name\r\n"
      .. "Content-Length: 2\r\n\r\n{}", function()
        res = assert(transport(request()))
      end)
    assert.same({
      ["content-type"] = "application/vnd.api+json",
      ["x-request-id"] = "abc def",
      ["x-empty"] = "",
      ["x-spaces"] = "",
      ["set-cookie"] = { "a=1", "b=2" },
      ["x-folded"] = "one two",
      ["x-colon"] = "a:b: c",
      ["content-length"] = "2",
    }, res.headers)
    assert.equal("{}", res.body)
  end)

  it("skips interim 1xx answers and reads chunked bodies", function()
    local res
    with_ngx("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
      .. "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\nTrailer: x\r\n\r\n", function()
        res = assert(transport(request()))
      end)
    assert.equal(201, res.status)
    assert.equal("abcde", res.body)
  end)

  it("closes instead of pooling after Connection: close or HTTP/1.0", function()
    local fake = with_ngx("HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 2\r\n\r\n{}",
      function() assert(transport(request())) end)
    assert.equal(0, fake.kept)
    assert.equal(1, fake.closed)
    local fake2 = with_ngx("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
      function() assert(transport(request())) end)
    assert.equal(0, fake2.kept)
  end)

  it("fails on an answer that is not HTTP/1.x and on a body cut short", function()
    with_ngx("SSH-2.0-OpenSSH\r\n\r\n", function()
      local res, err = transport(request())
      assert.is_nil(res)
      assert.equal("not an HTTP/1.x status line", err.message)
      assert.is_true(err.sent)
    end)
    with_ngx("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", function()
      local res, err = transport(request())
      assert.is_nil(res)
      assert.matches("reading the body", err.message)
    end)
  end)

  it("sets the socket's timeouts again only when the clock moved", function()
    local fake = with_ngx("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nContent-Length: 2\r\n\r\n{}",
      function() assert(transport(request { timeout = 5, connect_timeout = 2 })) end)
    assert.same({ { 2000, 5000, 5000 } }, fake.timeouts)
  end)
end)

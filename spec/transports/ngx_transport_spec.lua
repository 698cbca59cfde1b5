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

  it("sends a traced request as the lines every request repeats, its traceparent, the rest", function()
    -- joined, each request would be a new string differing from the last only
    -- where LuaJIT's string hash does not read, all of them with one hash; the
    -- pieces are strings made before (the traceparent is the request's own)
    local tps = { "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                  "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01" }
    local fake = with_ngx("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", function(f)
      f.sent_parts = {}
      for _, tp in ipairs(tps) do
        assert(transport(request { headers = { Accept = "application/vnd.api+json", traceparent = tp } }))
      end
    end)
    for i, tp in ipairs(tps) do
      assert.equal("GET /v1/channels/c1?x=1 HTTP/1.1\r\nHost: api.example:8080\r\n"
        .. "Accept: application/vnd.api+json\r\ntraceparent: " .. tp .. "\r\n\r\n", fake.sent[i])
      assert.same({ "GET /v1/channels/c1?x=1 HTTP/1.1\r\nHost: api.example:8080\r\n"
        .. "Accept: application/vnd.api+json", "\r\ntraceparent: ", tp, "\r\n\r\n" },
        fake.sent_parts[i])
    end
  end)

  it("reads a head no further than its caps, however long a line (one of 2 MiB)", function()
    local res
    local cap = require("merchantapi.core").defaults.max_header_bytes
    local fake = with_ngx("HTTP/1.1 200 OK\r\nX-Long: " .. string.rep("l", 2 * 1048576)
      .. "\r\nContent-Length: 2\r\n\r\n{}", function()
        res = assert(transport(request()))
      end)
    assert.equal(200, res.status)
    assert.equal("response header line too long", res:error()) -- libcurl's cap of a line
    assert.is_true(fake.sock.pos <= 100 * 1024 + 65536 + 1, "read " .. fake.sock.pos - 1 .. " bytes")
    assert.equal(0, fake.kept)
    fake = with_ngx("HTTP/1.1 200 OK\r\n" .. string.rep("X-Many: 0123456789\r\n", 20000)
      .. "Content-Length: 2\r\n\r\n{}", function()
        res = assert(transport(request()))
      end)
    assert.equal("response headers over " .. cap .. " bytes", res:error())
    assert.is_true(fake.sock.pos <= cap + 65536 + 1, "read " .. fake.sock.pos - 1 .. " bytes")
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
      if res then -- the trailer: counted with the head, refused as libcurl's path does
        assert.matches("response headers over", res:error())
      else
        assert.is_true(err.sent)
        assert.equal("Failure when receiving data from the peer", err.message)
      end
      assert.is_true(fake.sock.pos <= 300 * 1024 + 65536, "read " .. fake.sock.pos - 1 .. " bytes")
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
      .. "X-Colon: a:b: c\r\n"
      .. "Content-Length: 2\r\n\r\n{}", function()
        res = assert(transport(request()))
      end)
    assert.same({
      ["content-type"] = "application/vnd.api+json",
      ["x-request-id"] = "abc def",
      ["x-empty"] = "",
      ["x-spaces"] = "",
      ["set-cookie"] = { "a=1", "b=2" },
      ["x-colon"] = "a:b: c",
      ["content-length"] = "2",
    }, res.headers)
    assert.equal("{}", res.body)
  end)

  it("refuses a line that is not name: value, and a folded one, as libcurl's path does", function()
    for _, line in ipairs { "no colon here", "X-Folded: one\r\n two", "X/Y: 1" } do
      local res
      with_ngx("HTTP/1.1 200 OK\r\n" .. line .. "\r\nContent-Length: 2\r\n\r\n{}", function()
        res = assert(transport(request()))
      end)
      assert.equal("malformed response header line", res:error())
    end
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
      assert.equal("Weird server reply", err.message)
      assert.is_true(err.sent)
    end)
    with_ngx("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", function()
      local res, err = transport(request())
      assert.is_nil(res)
      assert.equal("Transferred a partial file", err.message)
    end)
  end)

  it("sets the socket's timeouts again only when the clock moved", function()
    local fake = with_ngx("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nContent-Length: 2\r\n\r\n{}",
      function() assert(transport(request { timeout = 5, connect_timeout = 2 })) end)
    assert.same({ { 2000, 5000, 5000 } }, fake.timeouts)
  end)

  it("ends a trickle (a byte every 0.25 s) at the deadline: every read within what is left",
    function()
      -- nginx restarts the timer of one receive(n) whenever a byte comes: a
      -- read had to return at each byte for the deadline to hold
      local answer = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" .. string.rep("x", 100)
      for _, at in ipairs { "head", "body" } do
        local res, err
        local fake = with_ngx(answer, function(f)
          f.step, f.interval = 1, 0.25
          if at == "body" then -- the head at once, then the body trickles
            f.answer = answer:sub(1, 40)
            f.hold = true
            f.clock = 1000
          end
          res, err = transport(request { timeout = 2, connect_timeout = 1 })
        end)
        assert.is_nil(res)
        assert.is_true(err.sent)
        assert.matches("timeout", err.message)
        local took = fake.clock - 1000
        assert.is_true(took >= 2 and took <= 2.1, at .. ": ended after " .. took .. " s")
      end
    end)

  it("ends a confirm whose answer trickles at its timeout as transport, outcome unknown",
    function()
      local merchantapi = require "merchantapi"
      local PAYOUT = '{"data":{"type":"payouts","id":"p1","attributes":{"status":"processing"}}}'
      local v, err
      local fake = with_ngx("HTTP/1.1 201 Created\r\nContent-Length: " .. #PAYOUT .. "\r\n\r\n"
        .. PAYOUT, function(f)
          f.step, f.interval = 1, 0.25
          local client = assert(merchantapi.new { base_url = "http://127.0.0.1:8080",
            api_key = "sk_test", max_retries = 0, timeout = 1, deadline = 2,
            transport = transport })
          v, err = client:confirm_payout("p1", { settle = false })
        end)
      assert.is_nil(v)
      assert.equal("transport", err.kind)
      assert.equal("unknown", err.outcome)
      local took = fake.clock - 1000
      assert.is_true(took >= 1 and took <= 1.1, "ended after " .. took .. " s")
      assert.equal(1, #fake.sent)
    end)
  it("reads into the reader whose last answer a client took, never into one still held",
    function()
      local merchantapi = require "merchantapi"
      local f = assert(io.open((os.getenv("MERCHANTAPI_FIXTURES") or "fixtures")
        .. "/get_channel.200.json", "rb"))
      local doc = f:read("*a")
      f:close()
      local ok = "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.api+json\r\nContent-Length: "
        .. #doc .. "\r\n\r\n" .. doc
      local id = "60e05bc0-4690-4985-a08a-8acf00e48294"
      with_ngx(ok, function(fake)
        -- the transport called by itself: each answer its own reader, kept
        local a = assert(transport(request { max_body = 65536 }))
        local b = assert(transport(request { max_body = 65536 }))
        assert.are_not.equal(a, b)
        assert.equal(200, a.status)
        assert.equal(doc, a.body)
        -- a client takes each answer at once: the next request reads into
        -- the same reader, from its first byte
        local readers = {}
        local client = assert(merchantapi.new { base_url = "http://127.0.0.1:8080",
          api_key = "sk_test", max_retries = 0, transport = function(req)
            local res, err = transport(req)
            readers[#readers + 1] = res
            return res, err
          end })
        local channel = assert(client:get_channel(id))
        assert.equal(id, channel.id)
        fake.answer = "HTTP/1.1 404 Not Found\r\nX-Request-Id: r404\r\nContent-Length: 0\r\n\r\n"
        local v, err = client:get_channel(id)
        assert.is_nil(v)
        assert.equal(404, err.status)
        fake.answer = ok
        channel = assert(client:get_channel(id))
        assert.equal("TJTuEYJ8P9to4Zhdw7zg55VPH3gzLaQDV6", channel.address)
        assert.equal(3, #readers)
        assert.equal(readers[1], readers[2])
        assert.equal(readers[1], readers[3])
        assert.is_nil(readers[1].status) -- the answer is the exchange's
        -- the answers held above are untouched
        assert.equal(200, a.status)
        assert.equal(doc, a.body)
        assert.equal(doc, b.body)
      end)
    end)
end)

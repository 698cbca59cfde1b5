-- No hidden resends, against a real HTTP/2 server (tests/servers/h2_fault.py:
-- TLS, ALPN h2 and http/1.1) that takes a request and then resets its stream
-- with HTTP_1_1_REQUIRED (before or after its :status) or REFUSED_STREAM --
-- the resets after which libcurl sends the request again by itself.  A
-- request that may move money goes over HTTP/1.1 and crosses the wire
-- once; a GET keeps HTTP/2, and every request of it that leaves is an
-- attempt: counted in err.attempts, seen by the hooks, logged by
-- MERCHANTAPI_DEBUG.  The server counts what it receives per protocol.
-- The client's cases run blocking and inside a loop task (the loop's
-- multi-socket transfers), each way on ids of its own.
local helpers = require "helpers"
local test_server = require "support.test_server"

local KEY = helpers.API_KEY
local PAYOUTS = "/api/public/v1/payouts/"
local CHANNELS = "/api/public/v1/channels/"
local FAULTS = { "h2-1.1-required", "h2-1.1-required-late", "h2-refused" }

-- id as the loop's run of a case asks for it (the server counts per path
-- for the whole file, and matches a fault by the end of a segment).
local function tagged(way, id)
  return way == "loop" and "loop-" .. id or id
end

local recorder = helpers.recorder

describe("over HTTP/2 (a server that resets streams)", function()
  local server, base, ca

  setup(function()
    ca = assert(helpers.ca_file(), "the sandbox's test CA (sandbox/run makes it)")
    local tls = ca:match("^(.*)/ca%.pem$")
    server = test_server.start("h2_fault.py", { "--cert", tls .. "/server.pem",
                                                "--key", tls .. "/server.key" })
    base = "https://localhost:" .. server.port
  end)

  teardown(function()
    if server then
      server.stop()
    end
  end)

  local function client(opts)
    local o = { base_url = base, api_key = KEY, cafile = ca, max_retries = 0, transport = false }
    for k, v in pairs(opts or {}) do
      o[k] = v
    end
    return helpers.client(o)
  end

  -- Requests the server received for method and path, per protocol.
  local function received(method, path)
    return server.count("h2 " .. method .. " " .. path),
      server.count("http/1.1 " .. method .. " " .. path)
  end

  describe("libcurl on its own (the curl tool)", function()
    -- what the client must not do: shows the server's faults are real
    for _, id in ipairs(FAULTS) do
      it("sends a PUT answered " .. id .. " more than once", function()
        local path = PAYOUTS .. "curl/" .. id
        local out = helpers.run(("curl -s -o /dev/null --cacert %s -X PUT -d '' %s"):format(
          helpers.shell_quote(ca), helpers.shell_quote(base .. path)))
        local h2, h1 = received("PUT", path)
        if id == "h2-refused" then
          assert.equal(6, h2, out) -- refused, then sent 5 more times
          assert.equal(0, h1, out)
        else
          assert.equal(1, h2, out) -- then sent again over HTTP/1.1
          assert.equal(1, h1, out)
        end
      end)
    end
  end)

  describe("a PUT", function()
    for _, fault in ipairs(FAULTS) do
      helpers.both("that HTTP/2 would reset with " .. fault .. " crosses the wire once, over HTTP/1.1",
        function(way)
          local id = tagged(way, fault)
          local r = recorder()
          local c = client({ max_retries = 2, on_request = r.on_request,
                             on_response = r.on_response })
          local payout, err = c:confirm_payout(id)
          assert.is_nil(err)
          assert.equal(id, payout.id)
          local h2, h1 = received("PUT", PAYOUTS .. id)
          assert.equal(0, h2)
          assert.equal(1, h1)
          assert.equal(1, #r.requests)
          assert.equal(1, #r.responses)
          assert.equal(201, r.responses[1].status)
          c:close()
        end)

      helpers.both("through client:request (" .. fault .. ") too", function(way)
        local c = client({ max_retries = 2 })
        local path = PAYOUTS .. "request-" .. tagged(way, fault)
        local doc, err, res = c:request("PUT", path, { body = { data = { type = "payouts" } } })
        assert.is_nil(err)
        assert.is_table(doc)
        assert.equal(201, res.status)
        local h2, h1 = received("PUT", path)
        assert.equal(0, h2)
        assert.equal(1, h1)
        c:close()
      end)
    end

    helpers.both("and a POST, PATCH and DELETE go over HTTP/1.1 as well", function(way)
      local c = client()
      local path = PAYOUTS .. tagged(way, "m-h2-refused")
      for _, method in ipairs({ "POST", "PATCH", "DELETE" }) do
        c:request(method, path)
        local h2, h1 = received(method, path)
        assert.equal(0, h2, method)
        assert.equal(1, h1, method)
      end
      c:close()
    end)
  end)

  describe("a GET", function()
    helpers.both("keeps HTTP/2", function(way)
      local c = client()
      local id = tagged(way, "plain-1")
      local ch = assert(c:get_channel(id))
      assert.equal(id, ch.id)
      assert(c:get_channel(id))
      local h2, h1 = received("GET", CHANNELS .. id)
      assert.equal(2, h2)
      assert.equal(0, h1)
      c:close()
    end)

    for _, fault in ipairs(FAULTS) do
      helpers.both("reset with " .. fault .. " is one attempt, never sent again by libcurl", function(way)
        local id = tagged(way, fault)
        local c = client({ max_retries = 0 })
        local ch, err = c:get_channel(id)
        assert.is_nil(ch)
        assert.equal("transport", err.kind)
        assert.equal(42, err.curl_code)
        assert.equal("libcurl was about to send the request again: stopped", err.title)
        assert.equal(1, err.attempts)
        assert.is_true(err.retryable)
        assert.is_nil(err.outcome) -- a confirm's question only
        assert.equal("GET", err.method)
        assert.equal(base .. CHANNELS .. id, err.url)
        local h2, h1 = received("GET", CHANNELS .. id)
        assert.equal(1, h2)
        assert.equal(0, h1)
        c:close()
      end)
    end

    helpers.both("reset is retried as an attempt of its own, over HTTP/1.1, seen by the hooks", function(way)
      local r = recorder()
      local c = client({ max_retries = 1, on_request = r.on_request,
                         on_response = r.on_response })
      local id = tagged(way, "r-h2-1.1-required-late")
      local ch, err = c:get_channel(id)
      assert.is_nil(err)
      assert.equal(id, ch.id)
      assert.equal(2, #r.requests)
      assert.equal(2, #r.responses)
      assert.equal("transport", r.responses[1].error)
      assert.is_nil(r.responses[1].status)
      -- the resend libcurl was stopped from making goes out at once: no backoff
      assert.equal(0, r.responses[1].retry_in)
      assert.equal(2, r.responses[2].attempt)
      assert.equal(200, r.responses[2].status)
      local h2, h1 = received("GET", CHANNELS .. id)
      assert.equal(1, h2)
      assert.equal(1, h1)
      c:close()
    end)

    helpers.both("pages fetched concurrently over HTTP/2: each request that leaves is an attempt",
      function(way)
        local acct = tagged(way, "acct-h2-refused")
        local attempts = {}
        local c = client({ max_retries = 1, on_request = function(info)
          attempts[info.url] = (attempts[info.url] or 0) + 1
        end })
        local ids = {}
        local pager = c:addresses(acct, { per_page = 2, concurrency = 3 })
        while true do -- next(), not each(): on Lua 5.1 a for's iterator cannot yield
          local a, err = pager:next()
          assert.is_nil(err)
          if a == nil then
            break
          end
          ids[#ids + 1] = a.id
        end
        assert.same({ acct .. "-1-0", acct .. "-1-1", acct .. "-2-0",
                      acct .. "-2-1", acct .. "-3-0", acct .. "-3-1" }, ids)
        local refused = 0
        for page = 1, 3 do
          local path = "/api/public/v1/accounts/" .. acct .. "/addresses?order=created_at"
            .. "&order_type=asc&page=" .. page .. "&per_page=2"
          local h2, h1 = received("GET", path)
          -- an HTTP/2 request refused, then HTTP/1.1 (a page may also find the
          -- HTTP/1.1 connection another page left and go there at once)
          assert.is_true(h2 <= 1, path)
          assert.equal(attempts[base .. path], h2 + h1, path)
          refused = refused + h2
        end
        assert.is_true(refused >= 2) -- page 1 alone, then at least one of the others
        c:close()
      end)

    it("is logged by MERCHANTAPI_DEBUG once per request that left", function()
      local out, ok = helpers.run_lua([[
        local merchantapi = require "merchantapi"
        local c = assert(merchantapi.new({ base_url = arg[1], api_key = arg[2], cafile = arg[3],
                                           max_retries = 1 }))
        assert(c:get_channel("d-h2-refused"))
        print("done")
      ]], { base, KEY, ca }, "MERCHANTAPI_DEBUG=1")
      assert.is_true(ok, out)
      assert.matches("GET https://localhost:%d+/api/public/v1/channels/d%-h2%-refused attempt "
        .. "1/2: no response %(transport: libcurl was about to send the request again: "
        .. "stopped%) in [%d.]+ s, retry in 0%.000 s\n", out)
      assert.matches("attempt 2/2: 200 in", out)
      local h2, h1 = received("GET", CHANNELS .. "d-h2-refused")
      assert.equal(1, h2)
      assert.equal(1, h1)
    end)
  end)
end)

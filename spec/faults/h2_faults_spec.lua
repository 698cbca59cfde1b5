-- The fault servers the matrix's HTTP/2 and framing rows play
-- (spec/support/matrix/rows_h2.lua, rows_framing.lua): each fault is real
-- on the wire (the curl tool, libcurl on its own, meets it; the raw bytes of
-- a framing fault), and what the blocking client makes of it is seen where
-- the matrix does not look: how many requests left (the hooks), over which
-- protocol, and how many the server received and processed.
local helpers = require "helpers"
local fault_servers = require "support.matrix.fault_servers"

local CHANNELS = "/api/public/v1/channels/"
local PAYOUTS = "/api/public/v1/payouts/"

local recorder = helpers.recorder

describe("tests/servers/h2_fault.py", function()
  local h2, ctx, ca

  setup(function()
    ctx = { helpers = helpers, sandbox_url = helpers.base_url() }
    h2 = fault_servers.new("h2_fault.py", { tls = true })
    h2.start(ctx)
    ca = h2.cafile()
  end)

  teardown(function()
    if h2 then
      h2.stop(ctx)
    end
  end)

  -- received, processed for one method and path, per protocol
  local function counted(proto, method, path)
    local key = proto .. " " .. method .. " " .. path
    return h2.server.count(key), h2.server.count("processed " .. key)
  end

  -- The curl tool on url: its exit code and the status it got ("000": none).
  local function curl(url)
    local out = helpers.run(("curl -s -o /dev/null -w '%%{http_code}' --max-time 5 --cacert %s %s;"
      .. " echo \" $?\""):format(helpers.shell_quote(ca), helpers.shell_quote(url)))
    local status, code = out:match("(%d%d%d) (%d+)")
    return tonumber(code), status
  end

  describe("meets libcurl on its own (the curl tool) with", function()
    it("RST_STREAM before and after the headers: an error, the request processed once", function()
      for _, fault in ipairs({ "h2-rst-before", "h2-rst-after" }) do
        local path = CHANNELS .. "curl-" .. fault
        assert.is_true(curl(h2.base_url() .. path) ~= 0, fault)
        assert.same({ 1, 1 }, { counted("h2", "GET", path) }, fault)
      end
    end)

    it("REFUSED_STREAM on the first connection: libcurl's own resend is answered", function()
      local path = CHANNELS .. "curl-h2-refuse-first"
      local code, status = curl(h2.base_url() .. path)
      assert.equal(0, code)
      assert.equal("200", status)
      assert.same({ 2, 1 }, { counted("h2", "GET", path) }) -- refused, then processed
    end)

    it("GOAWAY below the stream: never processed", function()
      local path = CHANNELS .. "curl-h2-goaway-low"
      local code = curl(h2.base_url() .. path)
      assert.is_true(code ~= 0)
      assert.same({ 1, 0 }, { counted("h2", "GET", path) })
    end)

    it("a graceful GOAWAY: the stream is answered", function()
      local path = CHANNELS .. "curl-h2-goaway"
      assert.same({ 0, "200" }, { curl(h2.base_url() .. path) })
      assert.same({ 1, 1 }, { counted("h2", "GET", path) })
    end)

    it("a connection cut mid-body: an error after the status", function()
      local path = CHANNELS .. "curl-h2-cut"
      local code, status = curl(h2.base_url() .. path)
      assert.is_true(code ~= 0)
      assert.equal("200", status)
      assert.same({ 1, 1 }, { counted("h2", "GET", path) })
    end)

    it("a fault for page 3 of a list: the other pages answered, over HTTP/1.1 too", function()
      local list = "/api/public/v1/accounts/curl-page-3-h2-rst-before/addresses?per_page=5&page="
      assert.same({ 0, "200" }, { curl(h2.base_url() .. list .. "2") })
      assert.is_true(curl(h2.base_url() .. list .. "3") ~= 0)
      assert.same({ 0, "200" }, { curl(h2.base_url(nil, "transport") .. list .. "3") })
    end)
  end)

  describe("through the blocking client", function()
    local function client(opts)
      local o = { base_url = h2.base_url(), api_key = helpers.API_KEY, cafile = ca,
                  max_retries = 1, timeout = 3 }
      for k, v in pairs(opts or {}) do
        o[k] = v
      end
      return helpers.client(o)
    end

    it("a PUT never meets HTTP/2's faults: once, over HTTP/1.1", function()
      for _, fault in ipairs({ "h2-rst-before", "h2-refuse-first", "h2-goaway-low", "h2-cut" }) do
        local r = recorder()
        local c = client({ on_request = r.on_request })
        local id = "bp-" .. fault
        local payout, err = c:confirm_payout(id, { settle = false })
        assert.is_nil(err, fault)
        assert.equal(id, payout.id)
        assert.equal(1, #r.requests, fault)
        assert.same({ 1, 1 }, { counted("http/1.1", "PUT", PAYOUTS .. id) }, fault)
        assert.same({ 0, 0 }, { counted("h2", "PUT", PAYOUTS .. id) }, fault)
        assert.equal(1, h2.reached(ctx, id))
        c:close()
      end
    end)

    it("a GET refused, or left above a GOAWAY's last_stream_id, is sent again: "
      .. "two attempts in the hooks, processed once", function()
      for _, fault in ipairs({ "h2-refuse-first", "h2-goaway-low" }) do
        local r = recorder()
        local c = client({ on_request = r.on_request, on_response = r.on_response })
        local id = "b-" .. fault
        local ch, err = c:get_channel(id)
        assert.is_nil(err, fault)
        assert.equal(id, ch.id)
        assert.equal(2, #r.requests, fault)
        assert.equal(2, #r.responses, fault)
        assert.equal("transport", r.responses[1].error, fault)
        assert.equal(200, r.responses[2].status, fault)
        assert.equal(1, h2.reached(ctx, id), fault)
        local h2_received = counted("h2", "GET", CHANNELS .. id)
        local h1_received = counted("http/1.1", "GET", CHANNELS .. id)
        assert.equal(2, h2_received + h1_received, fault)
        c:close()
      end
    end)

    it("a GET whose body was cut with its connection is `transport`, retried on another one",
      function()
        local r = recorder()
        local c = client({ on_request = r.on_request, on_response = r.on_response })
        local ch, err = c:get_channel("b-h2-cut")
        assert.is_nil(err)
        assert.equal("b-h2-cut", ch.id)
        assert.equal(2, #r.requests)
        assert.equal("transport", r.responses[1].error)
        assert.equal(200, r.responses[2].status)
        assert.equal(2, h2.reached(ctx, "b-h2-cut"))
        c:close()
      end)

    -- issue 19: nginx's keepalive_requests over HTTP/2 (a GOAWAY at every
    -- connection's third request) under the concurrent pages: every page
    -- must hold its own items.  40 pages of 50 (bodies over one DATA frame):
    -- before each event loop kept its own connections (libcurl's cache was
    -- shared by the client's handle and the pages' multi), most listings at
    -- concurrency 4 or 8 had pages swapped (page 26's slot holding page 27's
    -- items), all attempts 1, each page answered once with its own items.
    it("pages at concurrency 4 and 8, a GOAWAY at every third request: every page its own items",
      function()
        local seen = {}
        for _, conc in ipairs({ 4, 8 }) do
          for run = 1, 2 do
            local c = client({ max_retries = 3 })
            local acct = ("p40-h2-goaway-every~%d-%d"):format(conc, run)
            local items, err = c:addresses(acct, { per_page = 50, concurrency = conc }):all()
            c:close()
            assert.is_nil(err)
            assert.equal(2000, #items)
            for k, item in ipairs(items) do
              local page = math.floor((k - 1) / 50) + 1
              local want = ("%s-%d-%d"):format(acct, page, (k - 1) % 50)
              if item.id ~= want then
                seen[#seen + 1] = ("concurrency %d: page %d's slot holds %s"):format(conc,
                  page, item.id)
                break
              end
            end
            if #seen > 0 then
              break
            end
          end
        end
        assert.same({}, seen)
      end)

    it("a GET whose stream was reset is `transport`, retried once", function()
      for _, fault in ipairs({ "h2-rst-before", "h2-rst-after" }) do
        local r = recorder()
        local c = client({ on_request = r.on_request })
        local id = "b-" .. fault
        local ch, err = c:get_channel(id)
        assert.is_nil(ch, fault)
        assert.equal("transport", err.kind, fault)
        assert.equal(2, err.attempts, fault)
        assert.is_true(err.retryable, fault)
        assert.equal(2, #r.requests, fault)
        assert.equal(2, h2.reached(ctx, id), fault)
        c:close()
      end
    end)
  end)
end)

describe("tests/servers/h1_framing.py", function()
  local h1, ctx

  setup(function()
    ctx = { helpers = helpers, sandbox_url = helpers.base_url() }
    h1 = fault_servers.new("h1_framing.py")
    h1.start(ctx)
  end)

  teardown(function()
    if h1 then
      h1.stop(ctx)
    end
  end)

  -- The raw answer to GET path (until the server closes, at most 3 s).
  local function raw(path)
    local socket = require "socket"
    local s = assert(socket.tcp())
    s:settimeout(3)
    assert(s:connect("127.0.0.1", tonumber(h1.base_url():match(":(%d+)$"))))
    assert(s:send("GET " .. path .. " HTTP/1.1\r\nHost: x\r\n\r\n"))
    local data, err, partial = s:receive("*a")
    s:close()
    return data or partial, err
  end

  it("frames each fault as it says, byte by byte", function()
    local two = raw(CHANNELS .. "raw-h1-two-lengths")
    local head, body = two:match("^(.-\r\n)\r\n(.*)$")
    local lengths = {}
    for n in head:gmatch("Content%-Length: (%d+)\r\n") do
      lengths[#lengths + 1] = tonumber(n)
    end
    assert.same({ #body, #body + 5 }, lengths)

    local both = raw(CHANNELS .. "raw-h1-length-chunked")
    assert.matches("\r\nContent%-Length: %d+\r\n", both)
    assert.matches("\r\nTransfer%-Encoding: chunked\r\n", both)
    assert.matches("\r\n0\r\n\r\n$", both)

    local cut = raw(CHANNELS .. "raw-h1-cut-chunk")
    local size, rest = cut:match("\r\n\r\n(%x+)\r\n(.*)$")
    assert.equal(math.floor(tonumber(size, 16) / 2), #rest)

    local short_head, got = raw(CHANNELS .. "raw-h1-short-body"):match("^(.-\r\n)\r\n(.*)$")
    local length = tonumber(short_head:match("\r\nContent%-Length: (%d+)\r\n"))
    assert.equal(math.floor(length / 2), #got)

    assert.equal(1, h1.reached(ctx, "raw-h1-two-lengths"))
  end)

  it("answers other requests normally, on a kept-alive connection", function()
    local c = helpers.client({ base_url = h1.base_url(), max_retries = 0 })
    assert.equal("plain", assert(c:get_channel("plain")).id)
    local list = assert(c:list_addresses("acct", { per_page = 5 }))
    assert.equal(5, #list)
    -- page 3 cut: the items of pages 1 and 2, then the error
    local items, err = c:addresses("acct-page-3-h1-short-body", { per_page = 5 }):all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal("transport", err.kind)
    assert.equal(10, #partial)
    assert.equal(1, h1.reached(ctx, "acct-page-3-h1-short-body/page3"))
    assert.equal(1, h1.reached(ctx, "acct-page-3-h1-short-body/page2"))
    c:close()
  end)

  it("two Content-Lengths that disagree are `decode`; a confirm's outcome `unknown`", function()
    local c = helpers.client({ base_url = h1.base_url(), max_retries = 1 })
    local ch, err = c:get_channel("b-h1-two-lengths")
    assert.is_nil(ch)
    assert.equal("decode", err.kind)
    assert.equal(1, err.attempts)
    assert.equal(200, err.status)
    local p, perr = c:confirm_payout("bp-h1-two-lengths", { settle = false })
    assert.is_nil(p)
    assert.equal("decode", perr.kind)
    assert.equal("unknown", perr.outcome)
    assert.equal(201, perr.status)
    assert.equal(1, h1.reached(ctx, "bp-h1-two-lengths"))
    c:close()
  end)

  it("a chunk cut, then the connection closed, is `transport`, never `decode`", function()
    local c = helpers.client({ base_url = h1.base_url(), max_retries = 1 })
    local ch, err = c:get_channel("b-h1-cut-chunk")
    assert.is_nil(ch)
    assert.equal("transport", err.kind)
    assert.equal(2, err.attempts)
    assert.equal(2, h1.reached(ctx, "b-h1-cut-chunk"))
    local p, perr = c:confirm_payout("bp-h1-cut-chunk", { settle = false })
    assert.is_nil(p)
    assert.equal("transport", perr.kind)
    assert.equal("unknown", perr.outcome)
    assert.equal(1, h1.reached(ctx, "bp-h1-cut-chunk"))
    c:close()
  end)
end)

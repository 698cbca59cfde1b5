-- merchantapi.new, the client object, argument checking (raises) versus
-- run-time failures (nil, err), close/__gc/__close, and the api key never
-- showing.  The transport cases use a closed local port, __gc the sandbox;
-- the rest needs no server.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local KEY = "sk_live_SECRET_never_shown_7d3f"
local DEAD = "http://127.0.0.1:1" -- nothing listens on port 1

describe("merchantapi.new", function()
  it("raises when opts is not a table", function()
    assert.has_error(function() merchantapi.new("https://x") end,
      "bad argument #1 to 'new' (table expected, got string)")
    assert.has_error(function() merchantapi.new() end)
  end)

  it("raises on an unknown option", function()
    local ok, e = pcall(merchantapi.new, { base_url = DEAD, bogus = 1 })
    assert.is_false(ok)
    assert.matches("unknown option 'bogus' to 'new'", e, 1, true)
  end)

  it("raises on an option of the wrong type", function()
    local wrong = {
      { base_url = 42 }, { base_url = DEAD, api_key = true }, { base_url = DEAD, timeout = "30" },
      { base_url = DEAD, connect_timeout = {} }, { base_url = DEAD, max_retries = 1.5 },
      { base_url = DEAD, max_retries = "2" }, { base_url = DEAD, max_body = 1.25 },
      { base_url = DEAD, cafile = 1 }, { base_url = DEAD, capath = false },
    }
    for _, opts in ipairs(wrong) do
      assert.has_error(function() merchantapi.new(opts) end)
    end
  end)

  it("reports the position of the caller", function()
    local ok, e = pcall(function() merchantapi.new({ base_url = DEAD, nope = 1 }) end)
    assert.is_false(ok)
    assert.matches("client_spec%.lua:%d+: unknown option 'nope'", e)
  end)

  local usage = {
    ["a missing base_url"] = { { api_key = KEY }, "base_url is required" },
    ["a base_url that is not http(s)"] = { { base_url = "ftp://example.com" } },
    ["http:// to a host that is not loopback"] = { { base_url = "http://example.com" } },
    ["a base_url with a newline"] = { { base_url = "https://example.com\n/x" } },
    ["an api_key with CR LF"] = { { base_url = DEAD, api_key = KEY .. "\r\nX-Evil: 1" } },
    ["an api_key with a NUL byte"] = { { base_url = DEAD, api_key = KEY .. "\0tail" } },
    ["a negative timeout"] = { { base_url = DEAD, timeout = -1 } },
    ["a negative max_retries"] = { { base_url = DEAD, max_retries = -1 } },
    ["a max_body of 0"] = { { base_url = DEAD, max_body = 0 } },
  }
  for what, case in pairs(usage) do
    it("returns a usage error for " .. what, function()
      local c, err = merchantapi.new(case[1])
      assert.is_nil(c)
      assert.equal("usage", err.kind)
      if case[2] then
        assert.equal(case[2], err.title)
      end
      assert.matches("^merchantapi: usage: ", tostring(err))
      assert.is_false(helpers.contains_string(err, KEY), "the api key leaked into the error")
      assert.is_false(helpers.contains_string(err, "SECRET"))
    end)
  end
end)

describe("the client object", function()
  it("shows the base URL in tostring, never the api key", function()
    local c = assert(merchantapi.new({ base_url = "http://127.0.0.1:18099/", api_key = KEY }))
    assert.equal("merchantapi.client (http://127.0.0.1:18099)", tostring(c))
    assert.is_nil(tostring(c):find("SECRET", 1, true))
    assert.is_false(helpers.contains_string(c, KEY))
    c:close()
  end)

  it("keeps the base URL as the core checked it: no trailing slashes", function()
    local c = assert(merchantapi.new({ base_url = "http://127.0.0.1:18099/api/v1//" }))
    assert.equal("http://127.0.0.1:18099/api/v1", c.base_url)
    assert.equal(c.base_url, c._c:base_url())
    c:close()
    assert.is_nil(c._c:base_url())
  end)

  it("closes twice safely; calls after close return a usage error", function()
    local c = assert(merchantapi.new({ base_url = DEAD }))
    c:close()
    c:close()
    local v, err = c:get_channel("x")
    assert.is_nil(v)
    assert.equal("usage", err.kind)
    assert.equal("merchantapi: usage: the client is closed [GET]", tostring(err))
    v, err = c:confirm_payout("x")
    assert.is_nil(v)
    assert.equal("usage", err.kind)
    assert.equal("not_sent", err.outcome)
    v, err = c:list_addresses("x")
    assert.is_nil(v)
    assert.equal("usage", err.kind)
    local _, e = c:addresses("x"):all()
    assert.equal("usage", e.kind)
  end)

  it("left unclosed, is collected and gives its connections back (__gc)", function()
    collectgarbage() -- what earlier cases left is gone before counting
    local before = helpers.open_fds()
    local weak = setmetatable({}, { __mode = "v" })
    for i = 1, 10 do
      local c = helpers.client()
      assert(c:get_channel(helpers.CHANNEL_ID)) -- a kept-alive connection to the sandbox
      weak[i] = c
    end
    assert.is_true(helpers.open_fds() >= before + 10, "no connection was kept open")
    collectgarbage()
    collectgarbage()
    assert.is_nil(next(weak), "a client dropped without close() was not collected")
    assert.equal(before, helpers.open_fds())
  end)

  if _VERSION == "Lua 5.4" then
    it("is closed by a to-be-closed variable (Lua 5.4)", function()
      local chunk = assert(load([[
        local merchantapi = ...
        local kept
        do
          local c <close> = assert(merchantapi.new({ base_url = "http://127.0.0.1:1" }))
          kept = c
        end
        return kept:get_channel("x")
      ]]))
      local v, err = chunk(merchantapi)
      assert.is_nil(v)
      assert.equal("merchantapi: usage: the client is closed [GET]", tostring(err))
    end)
  end

  describe("argument checks", function()
    local c = assert(merchantapi.new({ base_url = DEAD, max_retries = 0 }))

    it("raise when an id is not a string", function()
      assert.has_error(function() c:confirm_payout(42) end,
        "bad argument #1 to 'confirm_payout' (string expected, got number)")
      assert.has_error(function() c:get_channel(nil) end,
        "bad argument #1 to 'get_channel' (string expected, got nil)")
      assert.has_error(function() c:list_addresses({}) end,
        "bad argument #1 to 'list_addresses' (string expected, got table)")
      assert.has_error(function() c:addresses(7) end,
        "bad argument #1 to 'addresses' (string expected, got number)")
    end)

    it("are the core's: one message from the client and its core object", function()
      -- names and types checked once, in C, from the endpoint's row (src/lua_options.c)
      for _, obj in ipairs({ c, c._c }) do
        assert.has_error(function() obj:get_channel("a", { bogus = 1 }) end,
          "unknown option 'bogus' to 'get_channel'")
        assert.has_error(function() obj:get_channel("a", { settle = true }) end,
          "unknown option 'settle' to 'get_channel'")
        assert.has_error(function() obj:get_payout("a", { deadline = "1" }) end,
          "bad option 'deadline' to 'get_payout' (number expected, got string)")
        assert.has_error(function() obj:list_addresses("a", { per_page = 2.5 }) end,
          "bad option 'per_page' to 'list_addresses' (integer expected, got 2.5)")
        assert.has_error(function() obj:confirm_payout("a", { settle = 1 }) end,
          "bad option 'settle' to 'confirm_payout' (boolean expected, got 1)")
        assert.has_error(function() obj:get_channel("a", { headers = { X = 1 } }) end,
          "bad option 'headers' to 'get_channel' (string names and values expected, "
          .. "got string = number)")
      end
      assert.has_error(function() c._c:list_addresses_pages("a", { page = 2 }, 1, 1, 1) end,
        "unknown option 'page' to 'list_addresses_pages'")
      assert.has_error(function() c:request("GET", "/x", { max_retries = 1 }) end,
        "unknown option 'max_retries' to 'request'")
      assert.has_error(function() c:request("GET", "/x", { query = "a=1" }) end,
        "bad option 'query' to 'request' (table expected, got string)")
      assert.has_error(function() c:addresses("a", { headers = "x" }) end,
        "bad option 'headers' to 'addresses' (table expected, got string)")
      assert.has_error(function() merchantapi.new({ base_url = DEAD, user_agent = "x" }) end,
        "unknown option 'user_agent' to 'new'")
      assert.has_error(function() merchantapi.new({ base_url = DEAD, max_retries = 1.5 }) end,
        "bad option 'max_retries' to 'new' (integer expected, got 1.5)")
    end)

    it("raise at the caller's line, through the client or its core object", function()
      local ok, e = pcall(function() local r = c:get_channel("a", { bogus = 1 }) return r end)
      assert.is_false(ok)
      assert.matches("^[^:]*client_spec%.lua:%d+: unknown option 'bogus' to 'get_channel'$", e)
      ok, e = pcall(function() local r = c._c:get_channel("a", { deadline = {} }) return r end)
      assert.is_false(ok)
      assert.matches("^[^:]*client_spec%.lua:%d+: bad option 'deadline' to 'get_channel'", e)
      -- a caller's file under a directory named merchantapi is still the caller's
      local chunk = assert((rawget(_G, "loadstring") or load)(
        "local c = ... local r = c:get_channel('a', { bogus = 1 }) return r",
        "@/srv/merchantapi/app/handler.lua"))
      ok, e = pcall(chunk, c)
      assert.is_false(ok)
      assert.equal("/srv/merchantapi/app/handler.lua:1: unknown option 'bogus' to 'get_channel'", e)
    end)

    it("raise on unknown list options and wrong types", function()
      assert.has_error(function() c:list_addresses("a", { bogus = 1 }) end,
        "unknown option 'bogus' to 'list_addresses'")
      assert.has_error(function() c:list_addresses("a", { page = "1" }) end)
      assert.has_error(function() c:list_addresses("a", { per_page = 2.5 }) end)
      assert.has_error(function() c:list_addresses("a", { order = 1 }) end)
      assert.has_error(function() c:list_addresses("a", "page=1") end)
      assert.has_error(function() c:addresses("a", { bogus = 1 }) end)
      assert.has_error(function() c:addresses("a", { per_page = 0 }) end)
    end)

    it("return usage errors for invalid values", function()
      local TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
      local cases = {
        { function() return c:get_channel("") end, "channel_id is empty" },
        { function() return c:confirm_payout("") end },
        { function() return c:list_addresses("") end },
        { function() return c:get_channel("a\0b") end, "the id contains a NUL byte" },
        { function() return c:list_addresses("a", { page = 0 }) end, "page must be an integer >= 1" },
        { function() return c:list_addresses("a", { per_page = -5 }) end },
        { function() return c:list_addresses("a", { order_type = "sideways" }) end },
        -- a string option holding a NUL byte: refused by the core's own check
        { function() return c:list_addresses("a", { order = "created_at\0x" }) end,
          'order must be "created_at"' },
        { function() return c:request("GET", "/x", { traceparent = TP .. "\0x" }) end },
        { function() return c:get_channel("a", { traceparent = TP, tracestate = "k=v\0x" }) end,
          "tracestate holds a byte that is not printable ASCII" },
      }
      for i, case in ipairs(cases) do
        local v, err = case[1]()
        assert.is_nil(v, "case " .. i)
        assert.equal("usage", err.kind, "case " .. i)
        if case[2] then
          assert.equal(case[2], err.title, "case " .. i)
        end
      end
    end)
  end)
end)

describe("transport failures", function()
  local c = assert(merchantapi.new({ base_url = DEAD, api_key = KEY, max_retries = 0 }))

  it("are returned, retryable, with method and url", function()
    local v, err = c:get_channel("ch-1")
    assert.is_nil(v)
    local res = err.res
    assert.is_nil(res)
    assert.equal("transport", err.kind)
    assert.is_true(err.retryable)
    assert.is_nil(err.status)
    assert.equal("GET", err.method)
    assert.equal(DEAD .. "/api/public/v1/channels/ch-1", err.url)
    assert.same({}, err.errors)
    assert.matches("^merchantapi: transport: .*%[GET /api/public/v1/channels/ch%-1%]$", tostring(err))
    assert.is_false(helpers.contains_string(err, KEY))
  end)

  it("of a confirm that never left say not_sent", function()
    local v, err = c:confirm_payout("p-1")
    assert.is_nil(v)
    assert.equal("transport", err.kind)
    assert.equal("not_sent", err.outcome)
    assert.equal("PUT", err.method)
    assert.is_false(helpers.contains_string(err, KEY))
  end)

  it("end a pager: each() raises, all() returns", function()
    local ok, e = pcall(function()
      for _ in c:addresses("acct-22"):each() do end
    end)
    assert.is_false(ok)
    assert.equal("transport", e.kind)
    local items, err = c:addresses("acct-22"):all()
    assert.is_nil(items)
    assert.equal("transport", err.kind)
  end)
end)

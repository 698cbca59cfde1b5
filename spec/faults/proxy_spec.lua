-- Proxies only when asked (the `proxy` option): the environment's proxy
-- variables are ignored unless `proxy = "env"`, a proxy is used when given,
-- and the api key never crosses anything but loopback in clear -- a proxy
-- that is not a loopback host is refused for an http:// base URL before
-- anything is sent.  A forward proxy of the test's own
-- (tests/servers/http_proxy.py) counts what reaches it; the sandbox counts
-- what reaches the service.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local test_server = require "support.test_server"

local KEY = helpers.API_KEY
local count = helpers.count

-- Every variable libcurl would read, pointing at url.
local function proxy_env(url)
  local vars = {}
  for _, name in ipairs({ "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                          "all_proxy", "ALL_PROXY" }) do
    vars[#vars + 1] = name .. "=" .. url
  end
  return table.concat(vars, " ") .. " no_proxy= NO_PROXY="
end

-- A child that confirms arg[3] and reads channel arg[4] at base arg[1]
-- with proxy arg[2] ("" for none), and prints what came back.
local CHILD = [[
  local merchantapi = require "merchantapi"
  local proxy = arg[2] ~= "" and arg[2] or nil
  local c, err = merchantapi.new({ base_url = arg[1], api_key = arg[5], proxy = proxy,
                                   max_retries = 0 })
  if not c then
    print("new: " .. err.kind .. ": " .. err.title)
    return
  end
  local p, perr = c:confirm_payout(arg[3])
  print("confirm: " .. (p and p.id or perr.message))
  local ch, cerr = c:get_channel(arg[4])
  print("channel: " .. (ch and ch.id or cerr.message))
]]

-- A local address that is not loopback (the first of `hostname -I`), or nil.
local function outside_address()
  local out = helpers.run("hostname -I 2>/dev/null")
  for addr in out:gmatch("%S+") do
    if addr:match("^%d+%.%d+%.%d+%.%d+$") and not addr:match("^127%.") then
      return addr
    end
  end
  return nil
end

describe("proxies", function()
  local proxy, proxy_url, base

  setup(function()
    proxy = test_server.start("http_proxy.py")
    proxy_url = "http://127.0.0.1:" .. proxy.port
    base = helpers.base_url()
  end)

  teardown(function()
    if proxy then
      proxy.stop()
    end
  end)

  before_each(function()
    helpers.reset()
  end)

  local function through_proxy()
    local n = 0
    for _, v in pairs(proxy.counts()) do
      n = n + v
    end
    return n
  end

  it("from the environment are ignored unless asked for", function()
    local before = through_proxy()
    local out, ok = helpers.run_lua(CHILD, { base, "", helpers.PAYOUT_ID, helpers.CHANNEL_ID,
                                             KEY }, proxy_env(proxy_url))
    assert.is_true(ok, out)
    assert.matches("confirm: " .. helpers.PAYOUT_ID, out, 1, true)
    assert.matches("channel: " .. helpers.CHANNEL_ID, out, 1, true)
    assert.equal(before, through_proxy()) -- the proxy received nothing
    assert.equal(1, count(helpers.PAYOUT_ID))
  end)

  it("from the environment are used with proxy = \"env\" (a loopback one here)", function()
    local out, ok = helpers.run_lua(CHILD, { base, "env", helpers.PAYOUT_ID, helpers.CHANNEL_ID,
                                             KEY }, proxy_env(proxy_url))
    assert.is_true(ok, out)
    assert.matches("confirm: " .. helpers.PAYOUT_ID, out, 1, true)
    local put = "PUT " .. base .. "/api/public/v1/payouts/" .. helpers.PAYOUT_ID
    assert.equal(1, proxy.count(put))
    assert.equal(1, proxy.count("authorization " .. put))
    assert.equal(1, proxy.count("GET " .. base .. "/api/public/v1/channels/" .. helpers.CHANNEL_ID))
    assert.equal(1, count(helpers.PAYOUT_ID))
  end)

  it("from the environment are skipped for hosts no_proxy lists", function()
    local before = through_proxy()
    local out, ok = helpers.run_lua(CHILD, { base, "env", helpers.PAYOUT_ID, helpers.CHANNEL_ID,
                                             KEY }, "http_proxy=" .. proxy_url
                                                    .. " no_proxy=example.com,127.0.0.0/8")
    assert.is_true(ok, out)
    assert.matches("confirm: " .. helpers.PAYOUT_ID, out, 1, true)
    assert.equal(before, through_proxy())
    assert.equal(1, count(helpers.PAYOUT_ID))
  end)

  -- the GETs of acct-22's pages that went through the proxy so far
  local function pages_through_proxy()
    local pages = 0
    for key, v in pairs(proxy.counts()) do
      if key:find("^GET .*/accounts/acct%-22/addresses") then
        pages = pages + v
      end
    end
    return pages
  end

  helpers.both("given as an option carries every call, pages included", function()
    local put = "PUT " .. base .. "/api/public/v1/payouts/" .. helpers.PAYOUT_ID
    local puts, pages = proxy.count(put), pages_through_proxy()
    local c = helpers.client({ proxy = proxy_url, transport = false })
    assert(c:confirm_payout(helpers.PAYOUT_ID))
    assert(c:get_channel(helpers.CHANNEL_ID))
    local items = assert(c:addresses("acct-22", { per_page = 10, concurrency = 2 }):all())
    assert.equal(22, #items)
    c:close()
    assert.equal(puts + 1, proxy.count(put))
    assert.equal(1, count(helpers.PAYOUT_ID))
    -- pages 2 and 3 concurrently: through the proxy as well
    assert.equal(pages + 3, pages_through_proxy())
    assert.equal(3, count("acct-22"))
  end)

  helpers.both("tunnels an https:// base URL with CONNECT: the key stays inside TLS", function()
    local ca = helpers.ca_file()
    local tls = helpers.tls_url()
    local c = assert(merchantapi.new({ base_url = tls, api_key = KEY, cafile = ca,
                                       proxy = proxy_url, max_retries = 0 }))
    local before = proxy.count("CONNECT " .. tls:match("^https://(.*)$"))
    assert(c:confirm_payout(helpers.PAYOUT_ID))
    c:close()
    assert.equal(before + 1, proxy.count("CONNECT " .. tls:match("^https://(.*)$")))
    for key in pairs(proxy.counts()) do
      assert.is_nil(key:find("^authorization CONNECT"), key)
      assert.is_nil(key:find(tls, 1, true), key) -- no request in clear to the proxy
    end
    assert.equal(1, count(helpers.PAYOUT_ID))
  end)

  describe("refused before anything is sent", function()
    local outside, listener

    setup(function()
      outside = outside_address()
      if outside then
        listener = test_server.start("http_proxy.py", { "--host", outside })
      end
    end)

    teardown(function()
      if listener then
        listener.stop()
      end
    end)

    -- a proxy that is not loopback: a listener there when the machine has
    -- such an address, else one where nothing listens
    local function outside_url()
      return listener and ("http://" .. outside .. ":" .. listener.port)
        or "http://192.0.2.1:3128"
    end

    local function nothing_reached_it()
      if listener then
        assert.same({}, listener.counts())
      end
      assert.equal(0, count(helpers.PAYOUT_ID))
    end

    it("a proxy that is not a loopback host for an http:// base URL (usage)", function()
      local c, err = merchantapi.new({ base_url = base, api_key = KEY, proxy = outside_url() })
      assert.is_nil(c)
      assert.equal("usage", err.kind)
      assert.equal("proxy is not a loopback host: over an http:// base_url the api key "
        .. "would cross it in clear", err.title)
      assert.is_nil(err.message:find(outside_url(), 1, true)) -- never the value: it may hold a password
      nothing_reached_it()
    end)

    it("the same from the environment with proxy = \"env\" (usage, naming the variable)",
      function()
        local out, ok = helpers.run_lua(CHILD, { base, "env", helpers.PAYOUT_ID,
                                                 helpers.CHANNEL_ID, KEY },
                                        "http_proxy=" .. outside_url())
        assert.is_true(ok, out)
        assert.matches("new: usage: http_proxy is not a loopback host", out, 1, true)
        assert.is_nil(out:find("confirm:", 1, true))
        nothing_reached_it()
      end)

    it("a proxy that is not http://, or has a path; a proxy with a custom transport", function()
      for _, p in ipairs({ "socks5://127.0.0.1:1080", "https://127.0.0.1:3128",
                           "http://127.0.0.1:3128/path", "127.0.0.1:3128", "http://",
                           "http://127.0.0.1:0", "http://u:p@127.0.0.1:99999" }) do
        local c, err = merchantapi.new({ base_url = base, api_key = KEY, proxy = p })
        assert.is_nil(c, p)
        assert.equal("usage", err.kind, p)
        assert.matches("^proxy ", err.title, p)
      end
      local c, err = merchantapi.new({ base_url = base, api_key = KEY, proxy = proxy_url,
                                       transport = function() end })
      assert.is_nil(c)
      assert.equal("usage", err.kind)
      assert.matches("custom transport", err.title)
      nothing_reached_it()
    end)
  end)
end)

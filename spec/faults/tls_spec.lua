-- TLS against the sandbox's HTTPS ports (sandbox/README.md, "HTTPS"): peer
-- and host verification always on, so the untrusted port fails as
-- "transport" (a confirm as "not_sent": the request never left, and the
-- sandbox counter proves it), while `cafile` or `capath` naming the test CA
-- makes every call work over HTTPS.  And the https-only rule of `new`.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count = helpers.count
local CURLE_PEER_FAILED_VERIFICATION = 60

-- The results of a call, packed.
local function call_results(...)
  return { n = select("#", ...), ... }
end

-- Asserts a failed TLS verification (r: packed results) and returns the error.
local function assert_untrusted(r, method)
  local value, err = r[1], r[2]
  assert.is_nil(value)
  local res = err.res
  assert.is_nil(res)
  assert.equal("transport", err.kind)
  assert.equal(CURLE_PEER_FAILED_VERIFICATION, err.curl_code)
  assert.is_nil(err.status)
  assert.is_true(err.retryable)
  assert.equal(method, err.method)
  return err
end

describe("TLS verification", function()
  local ca
  setup(function()
    ca = helpers.ca_file()
  end)
  before_each(helpers.reset)

  it("an untrusted certificate fails a confirm as transport, outcome not_sent, nothing arrived", function()
    local client = assert(merchantapi.new({ base_url = helpers.untrusted_url(),
                                            api_key = helpers.API_KEY, max_retries = 1 }))
    local err = assert_untrusted(call_results(client:confirm_payout(helpers.PAYOUT_ID)), "PUT")
    client:close()
    assert.equal("not_sent", err.outcome)
    assert.equal(2, err.attempts) -- provably never sent: safe to retry, and retried
    assert.matches("self%-signed certificate", err.detail)
    -- the sandbox shares its state across ports: no request reached it
    assert.equal(0, count(helpers.PAYOUT_ID))
  end)

  it("an untrusted certificate fails GETs as transport, even with the test CA as cafile", function()
    local client = assert(merchantapi.new({ base_url = helpers.untrusted_url(), cafile = ca,
                                            api_key = helpers.API_KEY, max_retries = 0 }))
    local err = assert_untrusted(call_results(client:get_channel(helpers.CHANNEL_ID)), "GET")
    assert.is_nil(err.outcome)
    assert_untrusted(call_results(client:list_addresses("acct-22")), "GET")
    client:close()
    assert.equal(0, count(helpers.CHANNEL_ID))
    assert.equal(0, count("acct-22"))
  end)

  it("the system store does not know the test CA: transport, not_sent", function()
    local client = assert(merchantapi.new({ base_url = helpers.tls_url(),
                                            api_key = helpers.API_KEY, max_retries = 0 }))
    local err = assert_untrusted(call_results(client:confirm_payout(helpers.PAYOUT_ID)), "PUT")
    client:close()
    assert.equal("not_sent", err.outcome)
    assert.equal(0, count(helpers.PAYOUT_ID))
  end)

  it("cafile naming the test CA: confirm, get and list over HTTPS", function()
    local client = assert(merchantapi.new({ base_url = helpers.tls_url(), cafile = ca,
                                            api_key = helpers.API_KEY, max_retries = 0 }))
    local payout, err, res = client:confirm_payout(helpers.PAYOUT_ID)
    assert.is_nil(err)
    assert.equal(201, res.status)
    assert.equal("processing", payout.status)
    assert.equal("250.10", payout.amount)
    assert.equal("EUR", payout.accountCharged.currencyCode)
    local channel = assert(client:get_channel(helpers.CHANNEL_ID))
    assert.equal(helpers.CHANNEL_ID, channel.id)
    assert.equal("6194.43", channel.targetAccount.balance)
    local list = assert(client:list_addresses("acct-22", { per_page = 10, page = 3 }))
    assert.equal(2, #list)
    assert.equal(22, list.meta.total)
    local all = assert(client:addresses("acct-22", { per_page = 5 }):all())
    assert.equal(22, #all)
    -- a second confirm is refused by the service, not by TLS
    local again, err2 = client:confirm_payout(helpers.PAYOUT_ID)
    assert.is_nil(again)
    assert.equal("payout_not_draft", err2.code)
    client:close()
    assert.equal(2, count(helpers.PAYOUT_ID))
    assert.equal(1, count(helpers.CHANNEL_ID))
    assert.equal(6, count("acct-22"))
  end)

  it("the certificate names 127.0.0.1 too: host verification passes by IP", function()
    local url = helpers.tls_url():gsub("localhost", "127.0.0.1")
    local client = assert(merchantapi.new({ base_url = url, cafile = ca, api_key = helpers.API_KEY }))
    assert.is_table((client:get_channel(helpers.CHANNEL_ID)))
    client:close()
  end)

  it("capath: a hashed directory holding the test CA works as well", function()
    local dir = os.tmpname()
    os.remove(dir)
    local q = helpers.shell_quote
    local out, ok = helpers.run(("mkdir %s && cp %s %s/ca.pem && env -u LD_PRELOAD openssl rehash %s")
      :format(q(dir), q(ca), q(dir), q(dir)))
    if not ok then
      helpers.run("rm -rf " .. q(dir))
      error("openssl rehash failed: " .. out)
    end
    local client = assert(merchantapi.new({ base_url = helpers.tls_url(), capath = dir,
                                            api_key = helpers.API_KEY, max_retries = 0 }))
    local channel, err = client:get_channel(helpers.CHANNEL_ID)
    local payout, perr = client:confirm_payout(helpers.PAYOUT_ID)
    client:close()
    -- and an empty capath trusts nothing
    os.remove(dir .. "/ca.pem")
    helpers.run("rm -f " .. q(dir) .. "/*.0")
    local empty = assert(merchantapi.new({ base_url = helpers.tls_url(), capath = dir,
                                           api_key = helpers.API_KEY, max_retries = 0 }))
    local none, nerr = empty:get_channel(helpers.CHANNEL_ID)
    empty:close()
    helpers.run("rm -rf " .. q(dir))
    assert.is_nil(err)
    assert.equal(helpers.CHANNEL_ID, channel.id)
    assert.is_nil(perr)
    assert.equal("processing", payout.status)
    assert.is_nil(none)
    assert.equal("transport", nerr.kind)
  end)
end)

describe("the https-only rule of new", function()
  it("refuses http:// to a host that is not loopback, as usage", function()
    for _, url in ipairs({ "http://api.example.com", "http://10.0.0.1:8089", "http://192.168.1.1",
                           "http://127.0.0.1.example.com", "http://localhost.example.com",
                           "http://[::2]:80", "HTTP://api.example.com", "ftp://127.0.0.1" }) do
      local client, err = merchantapi.new({ base_url = url, api_key = helpers.API_KEY })
      assert.is_nil(client, url)
      assert.equal("usage", err.kind, url)
      assert.is_false(err.retryable)
    end
  end)

  it("accepts https:// anywhere and http:// to loopback hosts", function()
    for _, url in ipairs({ "https://api.example.com", "https://10.0.0.1:8443/prefix",
                           "http://127.0.0.1:8089", "http://127.1.2.3", "http://localhost:8089",
                           "http://[::1]:8089" }) do
      local client, err = merchantapi.new({ base_url = url, api_key = helpers.API_KEY })
      assert.is_nil(err, url)
      assert.is_table(client, url)
      client:close()
    end
  end)
end)

-- The api key never shows: not in an error string, not in any field of an
-- error table (walked recursively, keys too), not in tostring(client), not
-- in a raised error's message, not in a MERCHANTAPI_DEBUG line or what the
-- observing hooks are given (both must be there), whatever failed and
-- even when the server echoes the key back.  And new() refuses an api key
-- or base URL holding CR, LF or NUL (header injection) as "usage".
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local KEY = helpers.API_KEY
local DEAD = "http://127.0.0.1:9"

local assert_no_key = helpers.assert_no_key

describe("the api key in errors", function()
  before_each(helpers.reset)

  it("shows in no field and no string of an error of any kind", function()
    local client = helpers.client({ max_retries = 1, timeout = 0.5 })
    local small = helpers.client({ max_body = 100 })
    local dead = assert(merchantapi.new({ base_url = DEAD, api_key = KEY, max_retries = 0 }))
    local untrusted = assert(merchantapi.new({ base_url = helpers.untrusted_url(), api_key = KEY,
                                               max_retries = 0 }))
    local closed = helpers.client()
    closed:close()
    local cases = {
      api_422 = { client:confirm_payout("draft-amount-below-minimum") },
      api_404 = { client:get_channel("no-such-channel") },
      api_503_retried = { client:get_channel("fault-503") },
      api_429 = { client:confirm_payout("fault-flaky-5-429") },
      http_302 = { client:get_channel("fault-redirect") },
      http_502_html = { client:list_addresses("fault-html-502") },
      decode_json = { client:confirm_payout("fault-bad-json") },
      decode_type = { client:get_channel("fault-wrong-type") },
      decode_cap = { small:get_channel(helpers.CHANNEL_ID) },
      transport_refused = { dead:confirm_payout(helpers.PAYOUT_ID) },
      transport_tls = { untrusted:confirm_payout(helpers.PAYOUT_ID) },
      transport_timeout = { client:confirm_payout("fault-slow-first-byte") },
      transport_reset = { client:get_channel("fault-reset") },
      usage_empty_id = { client:confirm_payout("") },
      usage_bad_page = { client:list_addresses("acct-22", { page = 0 }) },
      usage_closed = { closed:get_channel(helpers.CHANNEL_ID) },
      pager = { client:addresses("fault-500"):all() },
    }
    for name, r in pairs(cases) do
      local err = r[2]
      assert.is_table(err, name)
      assert.is_string(err.kind, name)
      assert_no_key(err, name)
      assert.is_nil(tostring(err):find("Bearer", 1, true), name)
    end
    for _, c in ipairs({ client, small, dead, untrusted }) do
      c:close()
    end
  end)

  it("is redacted where the server echoes it back (an id holding the key)", function()
    local client = helpers.client()
    local calls = {
      { "GET", "/api/public/v1/channels/", "no channel", client:get_channel(KEY) },
      { "PUT", "/api/public/v1/payouts/", "no payout", client:confirm_payout(KEY) },
      { "GET", "/api/public/v1/accounts/", "no account", client:list_addresses(KEY) },
    }
    client:close()
    for _, c in ipairs(calls) do
      local method, path, detail, value, err = c[1], c[2], c[3], c[4], c[5]
      local res = err.res
      assert.is_nil(value)
      assert.equal("api", err.kind)
      assert.equal(404, err.status)
      assert.equal(method, err.method)
      -- the server wrote the key into its detail, and the URL carried it
      assert.truthy(res.body:find(KEY, 1, true))
      assert.equal(detail .. " [REDACTED]", err.detail)
      assert.equal(detail .. " [REDACTED]", err.errors[1].detail)
      assert.equal(helpers.base_url() .. path .. "[REDACTED]" .. (method == "GET" and
        path:find("accounts") and "/addresses" or ""), err.url)
      assert.truthy(err.message:find("[REDACTED]", 1, true))
      assert_no_key(err, method .. " " .. path)
    end
  end)

  it("never shows in tostring(client) nor in the client table", function()
    local client = helpers.client()
    assert.is_nil(tostring(client):find(KEY, 1, true))
    assert.is_false(helpers.contains_string(client, KEY))
    client:close()
    assert.is_nil(tostring(client):find(KEY, 1, true))
  end)
end)

describe("the api key in raised errors", function()
  local function raised(fn, ...)
    local ok, e = pcall(fn, ...)
    assert.is_false(ok)
    return e
  end

  it("an option mistake next to the key does not quote it", function()
    local msgs = {
      raised(merchantapi.new, { base_url = DEAD, api_key = KEY, timeout = "30" }),
      raised(merchantapi.new, { base_url = 42, api_key = KEY }),
      raised(merchantapi.new, { base_url = DEAD, api_key = KEY, bogus = true }),
    }
    for _, m in ipairs(msgs) do
      assert.is_nil(tostring(m):find(KEY, 1, true), tostring(m))
    end
  end)

  it("a key of the wrong type is named by its type, never by its value", function()
    local m = raised(merchantapi.new, { base_url = DEAD, api_key = 4111111111111111 })
    assert.equal("bad option 'api_key' to 'new' (string expected, got number)", m:match("bad option.*$"))
    assert.is_nil(m:find("4111111111111111", 1, true))
  end)

  it("the error object a pager raises carries no key", function()
    local client = helpers.client()
    local ok, e = pcall(function()
      for _ in client:addresses("fault-500"):each() do end -- luacheck: ignore 512
    end)
    client:close()
    assert.is_false(ok)
    assert.equal("api", e.kind)
    assert_no_key(e, "the raised error")
  end)
end)

describe("CR, LF and NUL in the key or the base URL", function()
  local BASE = helpers.base_url()
  for _, c in ipairs({ { "CR", "\r" }, { "LF", "\n" }, { "NUL", "\0" } }) do
    local name, ch = c[1], c[2]

    it("an api key with " .. name .. " is refused by new as usage", function()
      for _, key in ipairs({ KEY .. ch, ch .. KEY, KEY .. ch .. "X-Injected: 1" }) do
        local client, err = merchantapi.new({ base_url = BASE, api_key = key })
        assert.is_nil(client)
        assert.equal("usage", err.kind)
        assert.truthy(err.title:find("api_key", 1, true), err.title)
        assert_no_key(err, "the usage error")
      end
    end)

    it("a base URL with " .. name .. " is refused by new as usage", function()
      for _, url in ipairs({ BASE .. ch, BASE .. ch .. "Host: evil", BASE .. "/x" .. ch .. "y" }) do
        local client, err = merchantapi.new({ base_url = url, api_key = KEY })
        assert.is_nil(client)
        assert.equal("usage", err.kind)
        assert.truthy(err.title:find("base_url", 1, true), err.title)
        assert_no_key(err, "the usage error")
      end
    end)
  end
end)

describe("the api key in diagnostics", function()
  -- A child process (the variable is read when a client is made) making a
  -- success, an echo of the key, a retried 503 and a refused connection.
  local CHILD = [[
    local merchantapi = require "merchantapi"
    local base, key = arg[1], arg[2]
    local c = assert(merchantapi.new({ base_url = base, api_key = key, max_retries = 1 }))
    c:get_channel("60e05bc0-4690-4985-a08a-8acf00e48294")
    c:get_channel(key)
    c:confirm_payout(key)
    c:list_addresses("fault-503")
    c:close()
    local d = assert(merchantapi.new({ base_url = "http://127.0.0.1:9", api_key = key,
                                       max_retries = 0 }))
    d:confirm_payout("x")
    d:close()
    print("done")
  ]]

  it("no MERCHANTAPI_DEBUG line holds the key", function()
    helpers.reset()
    local out, ok = helpers.run_lua(CHILD, { helpers.base_url(), KEY }, "MERCHANTAPI_DEBUG=1")
    assert.is_true(ok, out)
    local lines = 0
    for line in out:gmatch("[^\n]+") do
      if line:find("^merchantapi: ") then
        lines = lines + 1
      end
    end
    -- no line at all would pass the checks below: the debug log must be there
    assert.is_true(lines >= 5, "MERCHANTAPI_DEBUG=1 wrote " .. lines .. " lines:\n" .. out)
    assert.is_nil(out:find(KEY, 1, true), out)
    assert.is_nil(out:lower():find("bearer", 1, true), out)
    assert.is_nil(out:lower():find("authorization", 1, true), out)
  end)

  it("the on_request / on_response hooks get no key", function()
    local seen = {}
    local function hook(...)
      seen[#seen + 1] = { ... }
    end
    local client = assert(merchantapi.new({ base_url = helpers.base_url(), api_key = KEY,
                                            max_retries = 1, on_request = hook,
                                            on_response = hook }))
    client:get_channel(helpers.CHANNEL_ID)
    client:get_channel(KEY)
    client:confirm_payout(KEY)
    client:list_addresses("fault-503")
    client:close()
    assert.is_true(#seen >= 8, "hooks called " .. #seen .. " times")
    assert.is_false(helpers.contains_string(seen, KEY))
  end)
end)

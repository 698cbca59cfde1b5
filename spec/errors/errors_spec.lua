-- The error table against the sandbox: every 422 code of the interface with
-- its fields, HTTP-level failures, decode failures, retries, and the api key
-- showing nowhere.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count = helpers.count

local ERROR_FIELDS = { "kind", "status", "code", "title", "detail", "pointer", "errors", "amount",
                       "minimum", "maximum", "retryable", "outcome", "method", "url", "request_id" }

describe("422 errors of confirm_payout", function()
  local client
  setup(function()
    helpers.reset()
    client = helpers.client()
  end)
  teardown(function()
    client:close()
  end)

  local cases = {
    { "draft-amount-below-minimum", "amount_below_minimum", "amount is below minimum",
      "amount: 5.5, minimum: 10.0", amount = "5.5", minimum = "10.0" },
    { "draft-amount-above-maximum", "amount_above_maximum", "amount is above maximum",
      "amount: 250000.0, maximum: 100000.0", amount = "250000.0", maximum = "100000.0" },
    { "draft-invalid-address", "invalid_address", "Invalid address" },
    { "draft-payout-invalid", "payout_invalid", "Invalid attribute",
      "Reference has already been taken", pointer = "/data/attributes/externalId" },
    { "draft-insufficient-balance", "account_has_insufficient_balance",
      "account has insufficient balance" },
    { "draft-high-risk-address", "address_has_high_risk_score",
      "Funds cannot be sent to this address. Please try another address." },
  }
  for _, c in ipairs(cases) do
    local id, code, title, detail = c[1], c[2], c[3], c[4]
    helpers.both(code .. " has every field", function()
      local p, err = client:confirm_payout(id)
      assert.is_nil(p)
      local res = err.res
      assert.equal("api", err.kind)
      assert.equal(422, err.status)
      assert.equal(code, err.code)
      assert.equal(title, err.title)
      assert.equal(detail, err.detail)
      assert.equal(c.pointer, err.pointer)
      assert.equal(c.amount, err.amount)
      assert.equal(c.minimum, err.minimum)
      assert.equal(c.maximum, err.maximum)
      assert.same({ { status = 422, code = code, title = title, detail = detail,
                      pointer = c.pointer } }, err.errors)
      assert.is_false(err.retryable)
      assert.equal("rejected", err.outcome)
      assert.equal("PUT", err.method)
      assert.equal(helpers.base_url() .. "/api/public/v1/payouts/" .. id, err.url)
      assert.equal(res.headers["x-request-id"], err.request_id)
      assert.equal(422, res.status)
      assert.equal(helpers.fixture("confirm_payout.422." .. code), res.body)
      assert.equal(err.message, tostring(err))
    end)
  end

  helpers.both("formats tostring(err) as the contract shows", function()
    local _, err = client:confirm_payout("draft-amount-below-minimum")
    assert.equal("merchantapi: 422 amount_below_minimum: amount is below minimum "
      .. "(amount: 5.5, minimum: 10.0) [PUT /api/public/v1/payouts/draft-amount-below-minimum]",
      tostring(err))
  end)

  helpers.both("gives the error table only the contract's fields plus message, res and diagnostics", function()
    local _, err = client:confirm_payout("draft-payout-invalid")
    local allowed = { message = true, res = true, attempts = true, retry_after = true, curl_code = true }
    for _, f in ipairs(ERROR_FIELDS) do
      allowed[f] = true
    end
    for k in pairs(err) do
      assert.is_true(allowed[k] == true, "unexpected field " .. tostring(k))
    end
    assert.equal(1, err.attempts)
  end)
end)

describe("HTTP-level failures", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)
  after_each(function()
    client:close()
  end)

  helpers.both("does not follow a redirect: kind http, status 302", function()
    local v, err = client:get_channel("fault-redirect")
    assert.is_nil(v)
    local res = err.res
    assert.equal("http", err.kind)
    assert.equal(302, err.status)
    assert.is_false(err.retryable)
    assert.same({}, err.errors)
    assert.equal(302, res.status)
    assert.matches("^http://other%-host%.invalid/", res.headers["location"])
    assert.equal(1, count("fault-redirect"))
  end)

  helpers.both("reports an HTML 502 as kind http, retryable", function()
    local v, err = client:get_channel("fault-html-502")
    assert.is_nil(v)
    local res = err.res
    assert.equal("http", err.kind)
    assert.equal(502, err.status)
    assert.is_true(err.retryable)
    assert.is_nil(err.code)
    assert.equal("text/html", res.headers["content-type"])
    assert.matches("502 Bad Gateway", res.body, 1, true)
    local doc, derr = res:document()
    assert.is_nil(doc)
    assert.equal("decode", derr.kind)
  end)

  helpers.both("reports a JSON:API 503 as kind api, retryable", function()
    local v, err = client:get_channel("fault-503")
    assert.is_nil(v)
    assert.equal("api", err.kind)
    assert.equal(503, err.status)
    assert.equal("service_unavailable", err.code)
    assert.is_true(err.retryable)
  end)

  helpers.both("reports a cut JSON body as kind decode", function()
    local v, err = client:get_channel("fault-bad-json")
    assert.is_nil(v)
    local res = err.res
    assert.equal("decode", err.kind)
    assert.equal(200, err.status)
    assert.is_false(err.retryable)
    assert.equal(200, res.status)
  end)

  helpers.both("reports a document of the wrong type as kind decode", function()
    local v, err = client:get_channel("fault-wrong-type")
    assert.is_nil(v)
    assert.equal("decode", err.kind)
  end)

  helpers.both("reports JSON that is not JSON:API as kind decode", function()
    local v, err = client:get_channel("fault-not-jsonapi")
    assert.is_nil(v)
    assert.equal("decode", err.kind)
  end)

  helpers.both("reports a body over max_body as kind decode", function()
    local small = helpers.client({ max_body = 1000 })
    local v, err = small:get_channel(helpers.CHANNEL_ID)
    assert.is_nil(v)
    assert.equal("decode", err.kind)
    small:close()
  end)
end)

describe("retries", function()
  before_each(function()
    helpers.reset()
  end)

  helpers.both("retries a GET answered 503 and succeeds", function()
    local client = helpers.client({ max_retries = 2 })
    local ch, err = client:get_channel("fault-flaky-1-503")
    assert.is_nil(err)
    assert.equal("fault-flaky-1-503", ch.id)
    assert.equal(2, count("fault-flaky-1-503"))
    client:close()
  end)

  helpers.both("gives up after max_retries", function()
    local client = helpers.client({ max_retries = 1 })
    local ch, err = client:get_channel("fault-flaky-5-502")
    assert.is_nil(ch)
    assert.equal(502, err.status)
    assert.is_true(err.retryable)
    assert.equal(2, err.attempts)
    assert.equal(2, count("fault-flaky-5-502"))
    client:close()
  end)

  helpers.both("does not retry a confirm answered 503", function()
    local client = helpers.client({ max_retries = 2, settle = false }) -- the confirm alone
    local p, err = client:confirm_payout("fault-flaky-1-503")
    assert.is_nil(p)
    assert.equal(503, err.status)
    assert.equal("unknown", err.outcome)
    assert.equal(1, count("fault-flaky-1-503"))
    client:close()
  end)
end)

describe("the api key", function()
  helpers.both("shows in no error field, message or client string", function()
    helpers.reset()
    local key = helpers.API_KEY
    local client = helpers.client()
    local dead = assert(merchantapi.new({ base_url = "http://127.0.0.1:1", api_key = key,
                                          max_retries = 0 }))
    local results = {
      { client:confirm_payout("draft-amount-below-minimum") },
      { client:confirm_payout("no-such-draft") },
      { client:get_channel("fault-redirect") },
      { client:get_channel("fault-html-502") },
      { client:get_channel("fault-bad-json") },
      { client:get_channel("") },
      { client:list_addresses("acct-22", { page = 0 }) },
      { dead:get_channel("x") },
      { dead:confirm_payout("x") },
      { merchantapi.new({ base_url = "http://127.0.0.1:1", api_key = key .. "\n" }) },
    }
    for i, r in ipairs(results) do
      local err = r[2]
      assert.is_table(err, "result " .. i)
      assert.is_false(helpers.contains_string(err, key), "api key in error " .. i)
      assert.is_nil(tostring(err):find(key, 1, true))
      if err.res then
        assert.is_false(helpers.contains_string(err.res.headers, key))
      end
    end
    assert.is_nil(tostring(client):find(key, 1, true))
    assert.is_nil(tostring(dead):find(key, 1, true))
    client:close()
    dead:close()
  end)
end)

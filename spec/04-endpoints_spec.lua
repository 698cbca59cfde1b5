-- The three endpoints against the sandbox: values of the returned tables,
-- the response object, ids as path segments, 404 and 401.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local is_integer, count = helpers.is_integer, helpers.count

describe("endpoints", function()
  local client

  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)

  after_each(function()
    client:close()
  end)

  describe("confirm_payout", function()
    it("confirms the on-chain draft and resolves its relationships", function()
      local p, err, res = client:confirm_payout(helpers.PAYOUT_ID)
      assert.is_nil(err)
      assert.equal(helpers.PAYOUT_ID, p.id)
      assert.equal("payouts", p.type)
      assert.equal("processing", p.status)
      assert.equal("250.10", p.amount)
      assert.equal("EUR", p.currency)
      assert.is_nil(p.txid)
      assert.equal("on_chain", p.paymentMethod)
      assert.equal(helpers.ACCOUNT_ID, p.accountCharged.id)
      assert.equal("EUR", p.accountCharged.currencyCode)
      assert.equal("6194.43", p.accountCharged.balance)
      assert.equal("payouts-bot", p.author.name)
      assert.is_nil(p.accountCharged.company)
      assert.equal(1, count(helpers.PAYOUT_ID))
      -- the response object
      assert.equal(201, res.status)
      assert.is_true(is_integer(res.status))
      assert.equal("application/vnd.api+json", res.headers["content-type"])
      assert.is_nil(res.headers["Content-Type"])
      assert.equal(res.headers["x-request-id"], res.request_id)
      assert.equal("number", type(res.elapsed))
      assert.is_true(res.elapsed >= 0 and res.elapsed < 30)
      assert.same({}, res.meta)
      assert.same({ version = "1.0" }, res.jsonapi)
      assert.equal(helpers.fixture("confirm_payout.201"), res.body)
      local doc = res:document()
      assert.equal(merchantapi.null, doc.data.attributes.txid)
      assert.equal("processing", doc.data.attributes.status)
      assert.equal(helpers.ACCOUNT_ID, doc.included[1].id)
    end)

    it("fails a second confirm with payout_not_draft", function()
      assert(client:confirm_payout(helpers.PAYOUT_ID))
      local p, err, res = client:confirm_payout(helpers.PAYOUT_ID)
      assert.is_nil(p)
      assert.equal("api", err.kind)
      assert.equal(422, err.status)
      assert.equal("payout_not_draft", err.code)
      assert.equal("payout is not a draft", err.title)
      assert.is_false(err.retryable)
      assert.equal("rejected", err.outcome)
      assert.equal("PUT", err.method)
      assert.equal(helpers.base_url() .. "/api/public/v1/payouts/" .. helpers.PAYOUT_ID, err.url)
      assert.equal(422, res.status)
      assert.equal("payout_not_draft", res:document().errors[1].code)
      assert.equal(2, count(helpers.PAYOUT_ID))
    end)

    it("confirms the partner_pay draft", function()
      local p, err = client:confirm_payout(helpers.PARTNER_PAY_ID)
      assert.is_nil(err)
      assert.equal("1200", p.amount)
      assert.equal("partner_pay", p.paymentMethod)
      assert.equal("354205155", p.receiverPartnerId)
      assert.equal("rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe?dt=3942117", p.address)
      assert.equal("USDT", p.accountCharged.currencyCode)
      assert.equal(p.author.id, "0b6f3c4e-2d1a-4f7e-9c55-8e2b7a1d9f30")
    end)

    it("answers 404 not_found for an unknown payout", function()
      local p, err, res = client:confirm_payout("no-such-draft")
      assert.is_nil(p)
      assert.equal("api", err.kind)
      assert.equal(404, err.status)
      assert.equal("not_found", err.code)
      assert.equal("rejected", err.outcome)
      assert.equal(404, res.status)
    end)
  end)

  describe("get_channel", function()
    it("reads the channel with its target account", function()
      local ch, err, res = client:get_channel(helpers.CHANNEL_ID)
      assert.is_nil(err)
      assert.equal(helpers.CHANNEL_ID, ch.id)
      assert.equal("channels", ch.type)
      assert.equal("enabled", ch.status)
      assert.equal("EUR", ch.targetCurrency)
      assert.equal("USDT", ch.payCurrency)
      assert.equal("TJTuEYJ8P9to4Zhdw7zg55VPH3gzLaQDV6", ch.address)
      assert.equal("ecd05fb9-76e6-42e7-b86e-5a7e18f4da6d", ch.reference)
      assert.equal("6194.43", ch.targetAccount.balance)
      assert.is_true(ch.targetAccount.bankDepositAvailable)
      assert.equal(200, res.status)
    end)

    it("reads a disabled channel", function()
      local ch = assert(client:get_channel("ch-disabled"))
      assert.equal("ch-disabled", ch.id)
      assert.equal("disabled", ch.status)
    end)

    it("sends the id as one percent-encoded path segment", function()
      local id = "echo-a/b?c d"
      local ch, err, res = client:get_channel(id)
      assert.is_nil(err)
      assert.equal(id, ch.id)
      assert.equal("/api/public/v1/channels/echo-a%2Fb%3Fc%20d", res.meta.received_path)
    end)

    it("keeps unreserved characters and encodes UTF-8 bytes", function()
      local _, _, res = client:get_channel("echo-A.z_0~-é")
      assert.equal("/api/public/v1/channels/echo-A.z_0~-%C3%A9", res.meta.received_path)
    end)

    it("answers 404 not_found for an unknown channel", function()
      local ch, err = client:get_channel("no-such-channel")
      assert.is_nil(ch)
      assert.equal("api", err.kind)
      assert.equal(404, err.status)
      assert.equal("not_found", err.code)
      assert.is_nil(err.outcome)
    end)
  end)

  describe("list_addresses", function()
    it("lists a page with integer meta and resolved networks", function()
      local list, err, res = client:list_addresses("acct-22", { page = 2, per_page = 5 })
      assert.is_nil(err)
      assert.equal(5, #list)
      assert.same({ page = 2, per_page = 5, total = 22 }, list.meta)
      assert.is_true(is_integer(list.meta.page))
      assert.is_true(is_integer(list.meta.per_page))
      assert.is_true(is_integer(list.meta.total))
      for i = 1, 5 do
        assert.equal(string.format("00000022-0000-4000-8000-%012d", i + 5), list[i].id)
        assert.equal("addresses", list[i].type)
        assert.equal("Address " .. (i + 5), list[i].label)
        assert.is_string(list[i].value)
        assert.equal("network", list[i].network.type)
        assert.is_string(list[i].network.code)
        assert.is_nil(list[i].account)
      end
      assert.equal(list.meta, res.meta)
      assert.equal(200, res.status)
    end)

    it("gives the fixture address first, its network resolved", function()
      local list = assert(client:list_addresses("acct-22", { per_page = 1 }))
      assert.equal("138928d2-769d-478f-9508-90b7e4f8942a", list[1].id)
      assert.equal("TUbHdtAyfeiWTJPzF12gcBnpLtmLo3qgkS", list[1].value)
      assert.equal("ttrx:usdt", list[1].network.code)
      assert.same({ page = 1, per_page = 1, total = 22 }, list.meta)
    end)

    it("shares one table per network across the page", function()
      local list = assert(client:list_addresses("acct-22", { per_page = 22 }))
      local by_id = {}
      for _, a in ipairs(list) do
        local n = a.network
        if by_id[n.id] then
          assert.equal(by_id[n.id], n)
        end
        by_id[n.id] = n
      end
      assert.equal(3, #helpers.keys(by_id))
    end)

    it("orders newest first with order_type desc", function()
      local list = assert(client:list_addresses("acct-22",
        { order = "created_at", order_type = "desc", per_page = 3 }))
      assert.same({ "00000022-0000-4000-8000-000000000022", "00000022-0000-4000-8000-000000000021",
                    "00000022-0000-4000-8000-000000000020" }, helpers.ids(list))
    end)

    it("leaves value nil while the address is generated", function()
      local list = assert(client:list_addresses("acct-generating"))
      assert.equal(2, #list)
      assert.equal("0xfff18888872fba23a2bd86ba25a1ec17ff8a7de7", list[1].value)
      assert.is_nil(list[2].value)
      assert.equal("Second Address", list[2].label)
      assert.equal(list[1].network, list[2].network)
      assert.same({ page = 1, per_page = 25, total = 2 }, list.meta)
    end)

    it("lists an empty account", function()
      local list, err = client:list_addresses("acct-empty")
      assert.is_nil(err)
      assert.equal(0, #list)
      assert.same({ page = 1, per_page = 25, total = 0 }, list.meta)
    end)

    it("answers 404 for an unknown account", function()
      local list, err = client:list_addresses("no-such-account")
      assert.is_nil(list)
      assert.equal(404, err.status)
      assert.equal("not_found", err.code)
    end)
  end)

  describe("without an api key", function()
    it("gets 401 on every endpoint", function()
      local anon = helpers.client({ api_key = false })
      local calls = {
        function() return anon:confirm_payout(helpers.PAYOUT_ID) end,
        function() return anon:get_channel(helpers.CHANNEL_ID) end,
        function() return anon:list_addresses("acct-22") end,
      }
      for i, call in ipairs(calls) do
        local v, err, res = call()
        assert.is_nil(v, "call " .. i)
        assert.equal("api", err.kind)
        assert.equal(401, err.status)
        assert.equal("unauthorized", err.code)
        assert.is_false(err.retryable)
        assert.equal(401, res.status)
        assert.equal('Bearer realm="sandbox"', res.headers["www-authenticate"])
      end
      anon:close()
      -- and the draft was not confirmed
      assert(client:confirm_payout(helpers.PAYOUT_ID))
    end)

    it("gets 401 with a wrong key, which shows nowhere", function()
      local bad = helpers.client({ api_key = "sk_wrong_key_4711" })
      local v, err, res = bad:list_addresses("acct-22")
      assert.is_nil(v)
      assert.equal(401, err.status)
      assert.is_false(helpers.contains_string(err, "sk_wrong_key_4711"))
      assert.is_nil(res.body:find("sk_wrong_key_4711", 1, true))
      bad:close()
    end)
  end)
end)

-- Option limits have one home, the core (src/limits.c): from Lua the same
-- bad values are refused with the same `usage` titles as from C
-- (tests/test_limits.c asserts these strings from the C API), and nothing
-- is sent -- the sandbox sees no request, a confirm so refused is
-- `outcome = "not_sent"`.  Lua itself checks only Lua types.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local ACCOUNT = "acct-22"

local function seconds(name)
  return name .. " must be a number of seconds > 0 (at most 1e9)"
end
local RETRIES = "max_retries must be an integer from 0 to 100"
local BODY = "max_body must be a number of bytes >= 1"
local PAGE = "page must be an integer >= 1"
local PER_PAGE = "per_page must be an integer >= 1"
local ORDER = 'order must be "created_at"'
local ORDER_TYPE = 'order_type must be "asc" or "desc"'

describe("option limits, the core's for C and Lua alike", function()
  it("refuses the client options C refuses, with C's titles", function()
    local cases = {
      { { timeout = -1 }, seconds("timeout") },
      { { timeout = 0 / 0 }, seconds("timeout") },
      { { connect_timeout = -1 }, seconds("connect_timeout") },
      { { deadline = -1 }, seconds("deadline") },
      { { deadline = 0 / 0 }, seconds("deadline") },
      { { deadline = math.huge }, seconds("deadline") },
      -- 0 given in Lua is a deadline of no time (in a C struct 0 is "not given")
      { { deadline = 0 }, seconds("deadline") },
      { { max_retries = -1 }, RETRIES },
      { { max_retries = 101 }, RETRIES },
      { { max_retries = 1000000 }, RETRIES },
      { { max_body = 0 }, BODY },
    }
    for i, case in ipairs(cases) do
      local opts = { base_url = "http://127.0.0.1:1" }
      for k, v in pairs(case[1]) do
        opts[k] = v
      end
      local c, err = merchantapi.new(opts)
      assert.is_nil(c, "case " .. i)
      assert.equal("usage", err.kind, "case " .. i)
      assert.equal(case[2], err.title, "case " .. i)
    end
  end)

  it("refuses a list's parameters before anything is sent", function()
    helpers.reset()
    local c = helpers.client()
    local cases = {
      { { order_type = "foo" }, ORDER_TYPE },
      { { order = "label" }, ORDER },
      { { order = "" }, ORDER },
      { { page = -1 }, PAGE },
      { { page = 0 }, PAGE },
      { { per_page = -5 }, PER_PAGE },
      { { deadline = 0 / 0 }, seconds("deadline") },
    }
    for i, case in ipairs(cases) do
      local list, err = c:list_addresses(ACCOUNT, case[1])
      assert.is_nil(list, "case " .. i)
      assert.equal("usage", err.kind, "case " .. i)
      assert.equal(case[2], err.title, "case " .. i)
      -- checked once, by the core's builder (calls.c), which names the method
      assert.equal("GET", err.method, "case " .. i)
      assert.equal("merchantapi: usage: " .. case[2] .. " [GET]", tostring(err), "case " .. i)
    end
    local _, err = c:get_channel("")
    assert.equal("channel_id is empty", err.title)
    assert.equal("GET", err.method)
    assert.equal(0, helpers.count(ACCOUNT))
  end)

  it("refuses a confirm's deadline as not_sent, and sends nothing", function()
    helpers.reset()
    local c = helpers.client()
    for _, deadline in ipairs({ -1, 0, 0 / 0 }) do
      local payout, err = c:confirm_payout(helpers.PAYOUT_ID, { deadline = deadline, settle = false })
      assert.is_nil(payout)
      assert.equal("usage", err.kind)
      assert.equal(seconds("deadline"), err.title)
      assert.equal("not_sent", err.outcome)
      assert.equal("PUT", err.method)
    end
    local _, err = c:request("PUT", "/api/public/v1/payouts/" .. helpers.PAYOUT_ID, { deadline = -1 })
    assert.equal(seconds("deadline"), err.title)
    assert.equal("not_sent", err.outcome)
    assert.equal(0, helpers.count(helpers.PAYOUT_ID))
  end)
end)

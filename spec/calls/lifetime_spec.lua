-- A client nobody else holds stays open for the whole of a call made on it:
-- `merchantapi.new{...}:get_channel(id)` with the collector running at every
-- step, over a custom transport (whose attempts run in Lua, with waits
-- between them) and over libcurl.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local CHANNEL_DOC = helpers.fixture("get_channel.200")
local JSONAPI = { ["Content-Type"] = "application/vnd.api+json" }

local with_eager_gc = helpers.with_eager_gc

describe("a client that only the call holds", function()
  it("is not closed under a call over a transport (429, then 200)", function()
    local attempts = 0
    local function transport()
      attempts = attempts + 1
      if attempts % 2 == 1 then
        return { status = 429, headers = { ["Retry-After"] = "0" }, body = "" }
      end
      return { status = 200, headers = JSONAPI, body = CHANNEL_DOC }
    end
    with_eager_gc(function()
      for _ = 1, 2000 do
        local channel, err = merchantapi.new({ base_url = "http://127.0.0.1:1", api_key = "k",
          transport = transport, max_retries = 2 }):get_channel(helpers.CHANNEL_ID)
        assert(channel, tostring(err))
        assert.equal(helpers.CHANNEL_ID, channel.id)
      end
    end)
    assert.equal(4000, attempts)
  end)

  it("is not closed under a call over libcurl", function()
    local url = helpers.base_url()
    with_eager_gc(function()
      for _ = 1, 50 do
        local channel, err = merchantapi.new({ base_url = url, api_key = helpers.API_KEY })
          :get_channel(helpers.CHANNEL_ID)
        assert(channel, tostring(err))
        assert.equal("6194.43", channel.targetAccount.balance)
      end
    end)
  end)
end)

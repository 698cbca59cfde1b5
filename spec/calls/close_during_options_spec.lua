-- Lua code that runs while a call reads its options (an options table's
-- __index, a finalizer that an allocation of the call runs) may close the
-- client or drop it and collect: the call then either holds its client to
-- the end (close waits) or fails before it sends anything with the usage
-- error "the client is closed" (lua_client.c, the close rule) -- never a
-- client freed under the call.  The sanitizer run (tests/suites/20-sanitize)
-- is what sees a use after free here.
local helpers = require "helpers"

local count = helpers.count
local CLOSED = "the client is closed"

-- An options table whose every missing key closes `client` first.
local function closing(client, opts)
  return setmetatable(opts or {}, { __index = function()
    client:close()
  end })
end

local function assert_closed(err, method)
  assert.equal("usage", err.kind)
  assert.equal(CLOSED, err.title)
  assert.equal(method, err.method)
end

describe("a client closed while a call reads its options", function()
  before_each(helpers.reset)

  it("get_channel: the usage error, nothing sent", function()
    local client = helpers.client { transport = false }
    local channel, err = client:get_channel(helpers.CHANNEL_ID, closing(client))
    assert.is_nil(channel)
    assert_closed(err, "GET")
    assert.equal(0, count(helpers.CHANNEL_ID))
  end)

  it("get_channel through a custom transport (client:prepare): the same", function()
    local sent = 0
    local client = helpers.client { transport = function() sent = sent + 1 end }
    local channel, err = client:get_channel(helpers.CHANNEL_ID, closing(client))
    assert.is_nil(channel)
    assert_closed(err, "GET")
    assert.equal(0, sent)
  end)

  it("confirm_payout: the usage error, outcome not_sent, nothing sent", function()
    local client = helpers.client { transport = false }
    local payout, err = client:confirm_payout(helpers.PAYOUT_ID, closing(client, { settle = true }))
    assert.is_nil(payout)
    assert_closed(err, "PUT")
    assert.equal("not_sent", err.outcome)
    assert.equal(0, count(helpers.PAYOUT_ID))
  end)

  it("list_addresses_pages (the core's, as the pager's concurrent fetcher calls it)", function()
    local client = helpers.client { transport = false }
    local lists, err = client._c:list_addresses_pages(helpers.ACCOUNT_ID,
      closing(client, { per_page = 2 }), 1, 3, 2)
    assert.same({}, lists)
    assert_closed(err, "GET")
    client = helpers.client { transport = false }
    local b
    b, err = client._c:prepare("list_addresses_pages", helpers.ACCOUNT_ID,
      closing(client, { per_page = 2 }), 1, 3, 2)
    assert.same({}, b)
    assert_closed(err, "GET")
    assert.equal(0, count(helpers.ACCOUNT_ID))
  end)

  it("client:addresses{...}:all() with concurrency: the pages under way end, then closed", function()
    local client
    local closed = false
    client = helpers.client { transport = false, on_request = function()
      if not closed then
        closed = true
        client:close() -- from the first page's attempt: that call holds the client
      end
    end }
    local items, err = client:addresses("acct-22",
      closing(client, { per_page = 1, concurrency = 3 })):all()
    assert.is_true(closed)
    assert.is_nil(items)
    assert_closed(err, "GET")
    assert.equal(1, #err.partial) -- the first page's one address
    assert.equal(1, count("acct-22")) -- the first page only
  end)

  it("client:request: the usage error, nothing sent", function()
    local client = helpers.client { transport = false }
    local value, err = client:request("GET", "/api/public/v1/channels/" .. helpers.CHANNEL_ID,
      closing(client))
    assert.is_nil(value)
    assert_closed(err, "GET")
    assert.equal(0, count(helpers.CHANNEL_ID))
  end)
end)

describe("a client dropped and collected while a call reads its options", function()
  before_each(helpers.reset)

  it("stays open for the call (it is the call's own argument)", function()
    local holder = { client = helpers.client { transport = false } }
    local weak = setmetatable({ holder.client, holder.client._c }, { __mode = "v" })
    local opts = setmetatable({}, { __index = function()
      holder.client = nil -- the last reference but the call's own
      collectgarbage()
      collectgarbage()
    end })
    local channel, err = holder.client:get_channel(helpers.CHANNEL_ID, opts)
    assert(channel, tostring(err))
    assert.equal(helpers.CHANNEL_ID, channel.id)
    assert.equal(1, count(helpers.CHANNEL_ID))
    collectgarbage()
    collectgarbage()
    assert.is_nil(next(weak)) -- collected once the call ended
  end)

  it("a finalizer that closes the client, run by the call's own allocations", function()
    local sent, closed = 0, 0
    helpers.with_eager_gc(function()
      for i = 1, 1000 do
        local client = helpers.client { transport = false }
        local opts = setmetatable({}, { __index = function()
          -- garbage at once: its finalizer runs at a later allocation, in the core's reading
          -- or building of the call
          setmetatable({}, { __gc = function() client:close() end })
        end })
        local channel, err
        if i % 2 == 0 then
          channel, err = client:get_channel(helpers.CHANNEL_ID, opts)
        else
          channel, err = client:request("GET", "/api/public/v1/channels/" .. helpers.CHANNEL_ID,
            opts)
        end
        if channel then
          sent = sent + 1
        else
          assert_closed(err, "GET")
          closed = closed + 1
        end
      end
    end)
    assert.equal(1000, sent + closed)
    assert.equal(sent, count(helpers.CHANNEL_ID)) -- one request per call that did not fail
  end)
end)

describe("an exchange whose response table's __index ends its attempt", function()
  it("is refused after the read (the attempt ended), no freed client used", function()
    local client = helpers.client { transport = false }
    local x = assert(client._c:prepare("get_channel", helpers.CHANNEL_ID))
    x:request(true)
    local nested = x
    local res = setmetatable({ status = 200, body = "{}" }, { __index = function()
      local y = nested
      nested = nil
      if y then
        y:failure("gone", true) -- the attempt ends, and so the call (max_retries 0)
        client:close() -- waits for the exchange
        y:result() -- lets go of the client: closed now
      end
    end })
    assert.has_error(function()
      x:response(res, true)
    end, "merchantapi: exchange used out of order (no attempt begun)")
  end)
end)

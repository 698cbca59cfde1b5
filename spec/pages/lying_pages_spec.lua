-- Pages never lie silently (the pager, lua/merchantapi/pager.lua), against
-- the sandbox's lying lists (sandbox/README.md, "Addresses"), at
-- concurrency 1 and 4, over libcurl (the C core's concurrent fetch) and a
-- custom transport: the walk ends with a "decode" error naming the page,
-- after the items of the pages before it, having sent no more requests
-- than the pages it had asked for -- never a 250-page run.
local helpers = require "helpers"
local socket_transport = require "support.socket_transport"

local count, format = helpers.count, string.format

local acct25000_id = helpers.acct25000_id

-- id, per_page, the page that breaks, its title, items before it, requests
-- at concurrency 1 and at 4 (page 1 alone, then up to 4 at once, never past
-- the last page meta.total gives).
local CASES = {
  { "fault-pages-alternate", 100, 3,
    "page 3: id " .. acct25000_id(1) .. " again, already yielded on page 1", 200, 3, 5 },
  { "fault-pages-shrink", 5, 2, "page 2: meta.total went from 22 to 21: an item deleted "
    .. "between two pages moves the later ones back, and one of them was skipped", 5, 2, 5 },
  { "fault-pages-short", 5, 2, "page 2: 2 items, but meta.total 22 and 5 per page announce 5: "
    .. "a short page before the last", 5, 2, 5 },
  { "fault-pages-overfull", 5, 3,
    "page 3: 5 items, but meta.total 12 and 5 per page leave 2 for it", 10, 3, 3 },
}

for _, over in ipairs({ { "libcurl", false }, { "a LuaSocket transport", socket_transport } }) do
  local name, transport = over[1], over[2]

  describe("lying pages over " .. name, function()
    local client
    before_each(function()
      helpers.reset()
      client = helpers.client({ transport = transport })
    end)
    after_each(function()
      client:close()
    end)

    for _, concurrency in ipairs({ 1, 4 }) do
      for _, c in ipairs(CASES) do
        local id, per_page, page, title, before = c[1], c[2], c[3], c[4], c[5]
        local requests = concurrency == 1 and c[6] or c[7]
        helpers.both(format("%s at concurrency %d: decode on page %d after %d items, %d requests",
          id, concurrency, page, before, requests), function()
          local pager = client:addresses(id, { per_page = per_page, concurrency = concurrency })
          local items, err = pager:all()
          assert.is_nil(items)
          local partial = err.partial
          assert.equal("decode", err.kind)
          assert.equal(page, err.page)
          assert.equal(title, err.title)
          assert.equal("merchantapi: decode: " .. title, tostring(err))
          assert.equal(before, #partial)
          assert.equal(before, partial.received)
          assert.equal(requests, count(id))
          -- sticky: the same error again, nothing more sent
          local item, again = pager:next()
          assert.is_nil(item)
          assert.equal(err, again)
          assert.equal(requests, count(id))
        end)
      end

      helpers.both(format("raises it from each() at concurrency %d after the items before it", concurrency),
        function()
          local n = 0
          local ok, err = pcall(function()
            for _ in client:addresses("fault-pages-alternate",
                { per_page = 100, concurrency = concurrency }):each() do
              n = n + 1
            end
          end)
          assert.is_false(ok)
          assert.equal("decode", err.kind)
          assert.equal(3, err.page)
          assert.equal(200, n)
        end, { yields_in_pcall = true, yields_in_iterator = true })

      helpers.both(format("says what was announced and what came at concurrency %d", concurrency), function()
        local items = assert(client:addresses("acct-22",
          { per_page = 5, concurrency = concurrency }):all())
        assert.equal(22, #items)
        assert.equal(22, items.announced)
        assert.equal(22, items.received)
        assert.is_false(items.total_changed)
        assert.equal(5, count("acct-22"))
        local some = assert(client:addresses("acct-22",
          { per_page = 5, max_pages = 2, concurrency = concurrency }):all())
        assert.equal(10, #some)
        assert.equal(22, some.announced) -- max_pages: fewer came than were announced
        assert.equal(10, some.received)
      end)
    end
  end)
end

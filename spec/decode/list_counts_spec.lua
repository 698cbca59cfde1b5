-- Page counts where the library relies on them (docs/contract.md, "Numbers
-- are exact"; the rule's one home: src/mapping.c, check_list_counts).
--   - The list calls -- list_addresses, client:addresses and its pager (one
--     page at a time and several at once) -- refuse a list whose meta.page,
--     per_page or total is present and not a count: "decode" naming the
--     member, nothing retried.
--   - Every other path keeps a list's meta as data, as JSON:API leaves it
--     free-form (another server's lists carry meta.page = { offset, limit,
--     total }): client:request, client:paginate, merchantapi.paginate,
--     merchantapi.decode.  A member that is a count still reads as an integer.
-- Each over libcurl, a loop task and a custom transport (helpers.drivers).
-- The sandbox's `meta-<member>=<JSON text>` accounts serve acct-22's list
-- with that member written as the text (sandbox/README.md, "Addresses").
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local escape = merchantapi.escape
local unpack = table.unpack or unpack

local OFFSET = '{"offset":0,"limit":10,"total":40}' -- jsonapi-server's meta.page
local CASES = {
  { id = "meta-page=" .. OFFSET, member = "page", shown = OFFSET,
    value = { offset = 0, limit = 10, total = 40 },
    title = "expected meta.page to be a non-negative integer, got an object" },
  { id = 'meta-total="x"', member = "total", shown = '"x"', value = "x",
    title = "expected meta.total to be a non-negative integer, got a string that is not plain digits" },
}

local function list_path(id)
  return "/api/public/v1/accounts/" .. escape(id) .. "/addresses"
end

-- acct-22's 22 addresses in order (the lists served are acct-22's): the
-- ids of i .. j.
local ACCT22
local function acct22_ids(i, j)
  if not ACCT22 then
    local c = helpers.client({ transport = false })
    ACCT22 = helpers.ids(assert(c:list_addresses("acct-22", { per_page = 22 })))
    c:close()
    assert.equal(22, #ACCT22)
  end
  return { unpack(ACCT22, i, j) }
end

for _, d in ipairs(helpers.drivers()) do
  local driver, run, transport = d[1], d[2], d[3]

  describe("page counts, " .. driver .. ":", function()
    local client
    before_each(function()
      helpers.reset()
      client = helpers.client({ max_retries = 0, transport = transport })
    end)
    after_each(function()
      client:close()
    end)

    for _, case in ipairs(CASES) do
      local id, member = case.id, case.member

      describe("meta." .. member .. " = " .. case.shown, function()
        -- the list calls: refused, naming the member, sent once
        local REFUSING = {
          { "list_addresses", function() return client:list_addresses(id, { per_page = 5 }) end },
          { "client:addresses():all()", function()
            return client:addresses(id, { per_page = 5 }):all()
          end },
          { "client:addresses({ concurrency = 4 }):all()", function()
            return client:addresses(id, { per_page = 5, concurrency = 4 }):all()
          end },
        }
        for _, r in ipairs(REFUSING) do
          it(r[1] .. " refuses it as decode naming the member", function()
            local v, err = run(r[2])
            assert.is_nil(v)
            assert.equal("decode", err.kind)
            assert.equal(case.title, err.title)
            assert.equal(200, err.status)
            assert.equal(1, helpers.count(id)) -- not retried, no page after it
          end)
        end

        it("client:request keeps it as data, the counts as integers", function()
          local list, err, res = run(function()
            return client:request("GET", list_path(id), { query = { per_page = 5 } })
          end)
          assert.is_nil(err)
          assert.same(acct22_ids(1, 5), helpers.ids(list))
          assert.same(case.value, list.meta[member])
          assert.same(case.value, res.meta[member])
          assert.equal(5, list.meta.per_page)
          if member ~= "total" then
            assert.equal(22, list.meta.total)
          end
        end)

        it("client:paginate keeps it as data and stops without links.next", function()
          local p = client:paginate(list_path(id), { query = { per_page = 5 } })
          local first, err = run(function() return p:next() end)
          assert.is_nil(err)
          assert.equal(acct22_ids(1, 1)[1], first.id)
          assert.same(case.value, p.meta[member])
          local items = assert(run(function() return p:all() end))
          assert.same(acct22_ids(2, 5), helpers.ids(items))
          assert.equal(1, p.pages_fetched)
          assert.is_nil(p.announced) -- client:paginate reads no meta
          assert.equal(1, helpers.count(id))
        end)

        it("merchantapi.paginate over client:request walks by the counts that are counts",
          function()
            local seen
            local p = merchantapi.paginate(function(params)
              local list, err = client:request("GET", list_path(id),
                { query = { page = params.page, per_page = params.per_page } })
              seen = list and list.meta[member]
              return list, err
            end, { per_page = 5 })
            local items, err = run(function() return p:all() end)
            assert.is_nil(err)
            assert.same(acct22_ids(1, 22), helpers.ids(items))
            assert.same(case.value, seen)
            -- meta.total 22 where it is a count; else the short page 5 ends the walk
            if member == "total" then
              assert.is_nil(items.announced)
            else
              assert.equal(22, items.announced)
            end
            assert.equal(5, helpers.count(id))
          end)
      end)
    end
  end)
end

describe("page counts, merchantapi.decode:", function()
  it("keeps a list's meta as data, the counts as integers", function()
    local list, err, res = merchantapi.decode('{"data":[{"type":"t","id":"1"}],"meta":{"page":'
      .. OFFSET .. ',"per_page":"10","total":"x"}}')
    assert.is_nil(err)
    assert.equal("1", list[1].id)
    assert.same({ offset = 0, limit = 10, total = 40 }, list.meta.page)
    assert.equal("x", list.meta.total)
    assert.equal(10, list.meta.per_page)
    assert.same(list.meta.page, res.meta.page)
  end)

  it("keeps a fraction or a negative count as it came", function()
    local list = assert(merchantapi.decode('{"data":[],"meta":{"total":1.5,"page":-1}}'))
    assert.equal("1.5", list.meta.total)
    assert.equal(-1, list.meta.page)
  end)
end)

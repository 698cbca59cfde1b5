-- client:addresses(account_id, opts): the pager against the sandbox's
-- accounts (docs/contract.md "Lists and pages").
local helpers = require "helpers"

local count = helpers.count
local FIXTURE_ADDRESS, acct22_id = helpers.FIXTURE_ADDRESS, helpers.acct22_id

describe("the address pager", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)
  after_each(function()
    client:close()
  end)

  it("yields acct-22's 22 addresses once each, oldest first", function()
    local got, seen = {}, {}
    for address in client:addresses("acct-22", { per_page = 5 }):each() do
      assert.is_nil(seen[address.id], "duplicate " .. address.id)
      seen[address.id] = true
      got[#got + 1] = address.id
      assert.is_string(address.network.code)
    end
    assert.equal(22, #got)
    for i = 1, 22 do
      assert.equal(acct22_id(i), got[i])
    end
    assert.equal(5, count("acct-22")) -- 5+5+5+5+2: no request for a sixth page
  end)

  it("yields them newest first with order_type desc", function()
    local items = assert(client:addresses("acct-22", { per_page = 10, order_type = "desc" }):all())
    assert.equal(22, #items)
    for i = 1, 22 do
      assert.equal(acct22_id(23 - i), items[i].id)
    end
    assert.equal(3, count("acct-22"))
  end)

  it("stops on the total when the last page is full", function()
    local items = assert(client:addresses("acct-22", { per_page = 11 }):all())
    assert.equal(22, #items)
    assert.equal(2, count("acct-22"))
  end)

  it("uses the server's page size without per_page", function()
    local items = assert(client:addresses("acct-22"):all())
    assert.equal(22, #items)
    assert.equal(1, count("acct-22")) -- 22 < 25: the first page is short
  end)

  it("gives pages in the list_addresses shape", function()
    local sizes, pages = {}, {}
    for list in client:addresses("acct-22", { per_page = 10 }):pages() do
      sizes[#sizes + 1] = #list
      pages[#pages + 1] = list.meta.page
      assert.equal(22, list.meta.total)
      assert.equal(10, list.meta.per_page)
    end
    assert.same({ 10, 10, 2 }, sizes)
    assert.same({ 1, 2, 3 }, pages)
  end)

  it("walks acct-25000 with per_page 1000: 25,000 unique ids in 25 requests", function()
    local seen, n, last = {}, 0, nil
    for address in client:addresses("acct-25000", { per_page = 1000 }):each() do
      local id = address.id
      assert(not seen[id], "duplicate id")
      seen[id] = true
      n = n + 1
      if n == 1 then
        assert.equal("00025000-0000-4000-8000-000000000001", id)
      end
      last = id
    end
    assert.equal(25000, n)
    assert.equal("00025000-0000-4000-8000-000000025000", last)
    assert.equal(25, count("acct-25000"))
  end)

  it("gives nothing for acct-empty after one request", function()
    local items, err = client:addresses("acct-empty", { per_page = 10 }):all()
    assert.is_nil(err)
    assert.equal(0, #items)
    assert.equal(0, items.announced)
    assert.equal(0, items.received)
    assert.equal(1, count("acct-empty"))
    local n = 0
    for _ in client:addresses("acct-empty"):each() do
      n = n + 1
    end
    assert.equal(0, n)
  end)

  it("gives the one address of acct-one", function()
    local pager = client:addresses("acct-one", { per_page = 10 })
    local first = pager:next()
    assert.equal(FIXTURE_ADDRESS, first.id)
    assert.equal("ttrx:usdt", first.network.code)
    local item, err = pager:next()
    assert.is_nil(item)
    assert.is_nil(err)
    assert.equal(1, count("acct-one"))
  end)

  it("starts at start_page and stops after max_pages", function()
    local items = assert(client:addresses("acct-22",
      { per_page = 3, start_page = 2, max_pages = 2 }):all())
    assert.same({ acct22_id(4), acct22_id(5), acct22_id(6), acct22_id(7), acct22_id(8),
                  acct22_id(9) }, helpers.ids(items))
    assert.equal(2, count("acct-22"))
  end)

  it("raises the error table from each() for an unknown account", function()
    local ok, err = pcall(function()
      for _ in client:addresses("no-such-account"):each() do end
    end)
    assert.is_false(ok)
    assert.equal("api", err.kind)
    assert.equal(404, err.status)
    assert.equal("not_found", err.code)
    local items, err2 = client:addresses("no-such-account"):all()
    assert.is_nil(items)
    assert.equal(404, err2.status)
  end)

  it("returns the server's refusal of a query from all()", function()
    -- the sandbox takes pages of at most 1000 (the client sends any per_page >= 1:
    -- the interface shows no largest page size; another order is refused before
    -- sending, spec/calls/limits_spec.lua)
    local items, err = client:addresses("acct-22", { per_page = 5000 }):all()
    assert.is_nil(items)
    assert.equal("api", err.kind)
    assert.equal(400, err.status)
    assert.equal("invalid_parameter", err.code)
  end)
end)

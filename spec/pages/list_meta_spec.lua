-- Lists as the real service renders them: pagination meta written as strings
-- of digits ("page": "1"), or left out ("meta": {}).  The sandbox's
-- `meta-<mode>-<account>` and `meta-<member>=<text>` account ids
-- (sandbox/README.md, "Addresses") give these renderings over several pages.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count, format, is_integer = helpers.count, string.format, helpers.is_integer

local acct22_ids, collect = helpers.acct22_ids, helpers.collect

-- client:addresses' pager, with its batch fetcher counted: the calls made
-- to fetch several pages at once, as { first_page, count, concurrency }.
local function spied_pager(client, account_id, opts)
  local core, batches = client._c, {}
  local pager = merchantapi.paginate(function(params)
    return core:list_addresses(account_id, params)
  end, opts, function(params, first_page, n, concurrency)
    batches[#batches + 1] = { first_page, n, concurrency }
    return core:list_addresses_pages(account_id, params, first_page, n, concurrency)
  end)
  return pager, batches
end

describe("list_addresses with the real service's meta", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)
  after_each(function()
    client:close()
  end)

  it("reads page, per_page and total written as strings of digits as integers", function()
    local list, err, res = client:list_addresses("meta-strings-acct-22", { page = 2, per_page = 5 })
    assert.is_nil(err)
    assert.same(acct22_ids(6, 10), helpers.ids(list))
    assert.same({ page = 2, per_page = 5, total = 22 }, list.meta)
    assert.is_true(is_integer(list.meta.page))
    assert.is_true(is_integer(list.meta.per_page))
    assert.is_true(is_integer(list.meta.total))
    assert.equal(1, list.meta.page - 1) -- arithmetic works: a number, not a string
    assert.equal(list.meta, res.meta)
    assert.equal(1, count("meta-strings-acct-22"))
  end)

  it("keeps meta: {} as it came, nothing invented", function()
    local list, err, res = client:list_addresses("meta-empty-acct-22", { per_page = 5 })
    assert.is_nil(err)
    assert.same(acct22_ids(1, 5), helpers.ids(list))
    assert.same({}, list.meta)
    assert.same({}, res.meta)
  end)

  it("keeps a meta without total as it came", function()
    local list = assert(client:list_addresses("meta-no-total-acct-22", { page = 5, per_page = 5 }))
    assert.same(acct22_ids(21, 22), helpers.ids(list))
    assert.same({ page = 5, per_page = 5 }, list.meta)
  end)

  it("gives no meta for a list without one", function()
    local list, err = client:list_addresses("meta-none-acct-22", { per_page = 5 })
    assert.is_nil(err)
    assert.equal(5, #list)
    assert.is_nil(list.meta)
  end)

  -- the raw JSON text of one member (acct-22's list; the others are integers)
  local accepted = {
    { "total", "22", 22 },
    { "total", '"22"', 22 },
    { "total", '"0"', 0 },
    { "total", "22.0", 22 },
    { "total", "2.2e1", 22 },
    { "page", "1E0", 1 },
    { "per_page", '"5"', 5 },
    { "total", '"9223372036854775807"', "9223372036854775807" }, -- beyond 2^53: its text
    { "total", "null", nil },
  }
  for _, c in ipairs(accepted) do
    local member, text, want = c[1], c[2], c[3]
    it(format("reads meta.%s = %s as %s", member, text, tostring(want)), function()
      local id = format("meta-%s=%s", member, text)
      local list, err = client:list_addresses(id, { per_page = 5 })
      assert.is_nil(err)
      assert.equal(5, #list)
      assert.equal(want, list.meta[member])
      if type(want) == "number" then
        assert.is_true(is_integer(list.meta[member]))
      end
    end)
  end

  local refused = {
    { "total", '"01"', "a string that is not plain digits" },
    { "page", '""', "a string that is not plain digits" },
    { "per_page", '"+5"', "a string that is not plain digits" },
    { "total", '"-1"', "a string that is not plain digits" },
    { "page", '"1.0"', "a string that is not plain digits" },
    { "per_page", '" 5"', "a string that is not plain digits" },
    { "total", '"22 "', "a string that is not plain digits" },
    { "total", '"1e3"', "a string that is not plain digits" },
    { "total", '"0x16"', "a string that is not plain digits" },
    { "total", '"2\\u00002"', "a string that is not plain digits" },
    { "total", '"9223372036854775808"', "a string of digits beyond 64 bits" },
    { "total", "-22", "a negative number" },
    { "page", "-1.5", "a negative number" },
    { "page", "1.5", "a fraction" },
    { "total", "2.25e1", "a fraction" },
    { "total", "9223372036854775808", "a number beyond 64 bits" },
    { "total", "1e19", "a number beyond 64 bits" },
    { "per_page", "true", "a boolean" },
    { "total", "{}", "an object" },
    { "page", "[1]", "an array" },
  }
  for _, c in ipairs(refused) do
    local member, text, what = c[1], c[2], c[3]
    it(format("refuses meta.%s = %s as decode naming the member", member, text), function()
      local id = format("meta-%s=%s", member, text)
      local list, err = client:list_addresses(id, { per_page = 5 })
      assert.is_nil(list)
      assert.equal("decode", err.kind)
      assert.equal(format("expected meta.%s to be a non-negative integer, got %s", member, what),
        err.title)
      assert.truthy(err.message:find("meta." .. member, 1, true))
      assert.equal(200, err.status)
      assert.is_false(err.retryable)
      assert.equal(1, count(id)) -- not retried
    end)
  end
end)

describe("the pager over the real service's meta", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)
  after_each(function()
    client:close()
  end)

  describe("with string meta", function()
    it("pages through acct-22 one page after the other", function()
      local pages, sizes = {}, {}
      for list in client:addresses("meta-strings-acct-22", { per_page = 5 }):pages() do
        pages[#pages + 1] = list.meta.page
        sizes[#sizes + 1] = #list
        assert.is_true(is_integer(list.meta.page))
        assert.equal(22, list.meta.total)
        assert.equal(5, list.meta.per_page)
      end
      assert.same({ 1, 2, 3, 4, 5 }, pages)
      assert.same({ 5, 5, 5, 5, 2 }, sizes)
      assert.equal(5, count("meta-strings-acct-22")) -- no sixth page
    end)

    it("stops on the string total when the last page is full", function()
      assert.same(acct22_ids(1, 22),
        collect(client:addresses("meta-strings-acct-22", { per_page = 11 })))
      assert.equal(2, count("meta-strings-acct-22"))
    end)

    it("fetches the pages after the first concurrently, by the string total", function()
      local pager, batches = spied_pager(client, "meta-strings-acct-22",
        { per_page = 5, concurrency = 4 })
      assert.same(acct22_ids(1, 22), collect(pager))
      assert.same({ { 2, 4, 4 } }, batches) -- page 1 alone, then 2..5 together
      assert.equal(5, count("meta-strings-acct-22"))
      helpers.reset()
      assert.same(acct22_ids(1, 22), collect(client:addresses("meta-strings-acct-22",
        { per_page = 3, concurrency = 8 })))
      assert.equal(8, count("meta-strings-acct-22"))
    end)

    it("walks acct-25000 concurrently with string meta", function()
      local ids = collect(client:addresses("meta-strings-acct-25000",
        { per_page = 1000, concurrency = 8 }))
      assert.equal(25000, #ids)
      assert.equal("00025000-0000-4000-8000-000000000001", ids[1])
      assert.equal("00025000-0000-4000-8000-000000025000", ids[25000])
      assert.equal(25, count("meta-strings-acct-25000"))
    end)
  end)

  describe("with empty meta", function()
    it("stops on the short page, without error", function()
      local pager = client:addresses("meta-empty-acct-22", { per_page = 5 })
      local items, err = pager:all()
      assert.is_nil(err)
      assert.same(acct22_ids(1, 22), helpers.ids(items))
      assert.same({}, pager.meta)
      assert.equal(5, count("meta-empty-acct-22"))
    end)

    it("stops on the empty page when the last page is full", function()
      assert.same(acct22_ids(1, 22),
        collect(client:addresses("meta-empty-acct-22", { per_page = 11 })))
      assert.equal(3, count("meta-empty-acct-22")) -- 11, 11, then an empty page
    end)

    it("stops on the empty page without per_page (the page size is not known)", function()
      assert.same(acct22_ids(1, 22), collect(client:addresses("meta-empty-acct-22")))
      assert.equal(2, count("meta-empty-acct-22")) -- the server's 25: 22, then none
    end)

    it("gives each page with the meta it came with", function()
      local n = 0
      for list in client:addresses("meta-empty-acct-22", { per_page = 10 }):pages() do
        n = n + 1
        assert.same({}, list.meta)
      end
      assert.equal(3, n)
    end)

    it("falls back to one page after the other with concurrency: no total, no guess", function()
      local pager, batches = spied_pager(client, "meta-empty-acct-22",
        { per_page = 5, concurrency = 8 })
      assert.same(acct22_ids(1, 22), collect(pager))
      assert.same({}, batches)
      assert.equal(5, count("meta-empty-acct-22")) -- nothing fetched past the end
      helpers.reset()
      assert.same(acct22_ids(1, 22), collect(client:addresses("meta-empty-acct-22",
        { per_page = 11, concurrency = 4 })))
      assert.equal(3, count("meta-empty-acct-22"))
    end)

    it("does the same without meta, or without meta.total", function()
      for _, id in ipairs({ "meta-none-acct-22", "meta-no-total-acct-22" }) do
        local pager, batches = spied_pager(client, id, { per_page = 5, concurrency = 4 })
        assert.same(acct22_ids(1, 22), collect(pager))
        assert.same({}, batches)
        assert.equal(5, count(id))
      end
      -- without per_page: meta.per_page (25) still tells that 22 is a short page
      helpers.reset()
      assert.same(acct22_ids(1, 22),
        collect(client:addresses("meta-no-total-acct-22", { concurrency = 4 })))
      assert.equal(1, count("meta-no-total-acct-22"))
    end)

    it("gives nothing for an empty account after one request", function()
      local items, err = client:addresses("meta-empty-acct-empty", { concurrency = 4 }):all()
      assert.is_nil(err)
      assert.equal(0, #items)
      assert.equal(0, items.received) -- and no total was announced
      assert.is_nil(items.announced)
      assert.equal(1, count("meta-empty-acct-empty"))
    end)
  end)

  it("ends with the decode error of a refused member", function()
    local items, err = client:addresses('meta-total="01"', { per_page = 5 }):all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal(0, #partial)
    assert.equal(0, partial.received)
    assert.equal("decode", err.kind)
    assert.equal("expected meta.total to be a non-negative integer, got a string that is not "
      .. "plain digits", err.title)
    assert.equal(1, count('meta-total="01"'))
  end)
end)

describe("merchantapi.paginate over lists without meta.total (no server)", function()
  -- 12 items "1".."12"; meta as `meta(page, per_page)` gives it
  local function fetcher(meta)
    local calls = {}
    return function(params)
      calls[#calls + 1] = params.page
      local list = {}
      for i = (params.page - 1) * 5 + 1, math.min(params.page * 5, 12) do
        list[#list + 1] = { id = tostring(i) }
      end
      list.meta = meta(params.page)
      return list
    end, calls
  end

  it("never calls fetch_pages and stops on the short page", function()
    for _, meta in ipairs({
      function() return {} end,
      function() return nil end,
      function(page) return { page = page, per_page = 5 } end,
    }) do
      local fetch, calls = fetcher(meta)
      local items = assert(merchantapi.paginate(fetch, { per_page = 5, concurrency = 4 },
        function() error("fetch_pages called without a total") end):all())
      assert.equal(12, #items)
      assert.same({ 1, 2, 3 }, calls)
    end
  end)
end)

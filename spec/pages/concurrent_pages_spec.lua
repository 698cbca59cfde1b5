-- The pager's `concurrency` (docs/contract.md, "Lists and pages"): once the
-- first page has told the total, later pages are fetched several at a time
-- by the C core (mapi_list_addresses_pages), and the items still come out in
-- page order, each once, with the same stop, duplicate and error rules.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count = helpers.count

local acct25000_id, collect = helpers.acct25000_id, helpers.collect

describe("concurrent pages against the sandbox", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)
  after_each(function()
    client:close()
  end)

  it("yields acct-25000's 25,000 addresses in the order and number of the sequential pager", function()
    local sequential = collect(client:addresses("acct-25000", { per_page = 100 }))
    assert.equal(250, count("acct-25000"))
    helpers.reset()
    local concurrent = collect(client:addresses("acct-25000", { per_page = 100, concurrency = 8 }))
    assert.equal(250, count("acct-25000")) -- no page fetched twice, none past the end
    assert.equal(25000, #sequential)
    assert.equal(25000, #concurrent)
    for i = 1, 25000 do
      if sequential[i] ~= concurrent[i] or concurrent[i] ~= acct25000_id(i) then
        assert.equal(acct25000_id(i), concurrent[i], "item " .. i)
        assert.equal(sequential[i], concurrent[i], "item " .. i)
      end
    end
  end)

  it("hands out pages in page order with resolved relationships", function()
    local pages, n = {}, 0
    for list in client:addresses("acct-25000", { per_page = 1000, concurrency = 4 }):pages() do
      pages[#pages + 1] = list.meta.page
      assert.equal(1000, #list)
      assert.equal(25000, list.meta.total)
      for i = 1, #list do
        n = n + 1
        assert.equal(acct25000_id(n), list[i].id)
      end
      assert.is_string(list[1].network.code)
      -- one network table per (type, id) within a page
      assert.equal(list[1].network, list[4].network)
    end
    assert.same({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                  21, 22, 23, 24, 25 }, pages)
    assert.equal(25, count("acct-25000"))
  end)

  it("keeps start_page and max_pages", function()
    local ids = collect(client:addresses("acct-25000",
      { per_page = 10, start_page = 3, max_pages = 7, concurrency = 4 }))
    assert.equal(70, #ids)
    assert.equal(acct25000_id(21), ids[1])
    assert.equal(acct25000_id(90), ids[70])
    assert.equal(7, count("acct-25000"))
  end)

  it("stops with the error of page k after the items of pages 1..k-1 (each)", function()
    local got = {}
    local ok, err = pcall(function()
      for address in client:addresses("fault-page-3-500", { per_page = 10, concurrency = 4 }):each() do
        got[#got + 1] = address.id
      end
    end)
    assert.is_false(ok)
    assert.equal(20, #got)
    for i = 1, 20 do
      assert.equal(acct25000_id(i), got[i])
    end
    assert.equal("api", err.kind)
    assert.equal(500, err.status)
    assert.equal("sandbox_page_fault", err.code)
    assert.equal("page 3 answers 500", err.detail)
    assert.equal("GET", err.method)
    assert.truthy(err.url:find("page=3", 1, true))
    assert.is_false(err.retryable)
    assert.equal(1, err.attempts)
    assert.equal("merchantapi.error", getmetatable(err).__name)
  end)

  it("gives the same error from all() and next(), sticky, with the partial items", function()
    local pager = client:addresses("fault-page-4-500", { per_page = 5, concurrency = 8 })
    local items, err = pager:all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal(500, err.status)
    assert.equal(15, #partial)
    assert.equal(acct25000_id(15), partial[15].id)
    local item, err2 = pager:next()
    assert.is_nil(item)
    assert.equal(err, err2)
  end)

  it("fails on page 1 exactly like the sequential pager", function()
    local items, err = client:addresses("fault-page-1-404", { per_page = 5, concurrency = 8 }):all()
    assert.is_nil(items)
    assert.equal(404, err.status)
    assert.equal(1, count("fault-page-1-404"))
  end)

  it("retries a failing page by the GET rules inside the concurrent fetch", function()
    local c = helpers.client({ max_retries = 1 })
    local items, err = c:addresses("fault-page-3-503", { per_page = 5, concurrency = 4 }):all()
    c:close()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal(503, err.status)
    assert.is_true(err.retryable)
    assert.equal(2, err.attempts) -- the first attempt and one retry
    assert.equal(10, #partial)
    -- page 1 alone, then pages 2..5 together, then page 3 once more
    assert.equal(6, count("fault-page-3-503"))
  end)

  it("returns usage errors of the batch call without sending", function()
    local lists, err = client._c:list_addresses_pages("acct-22", nil, 0, 3, 2)
    assert.same({}, lists)
    assert.equal("usage", err.kind)
    -- the core's rule (pages.c), as for C, named with the method
    assert.equal("first_page must be >= 1 and the pages must stay in range", err.title)
    assert.equal("GET", err.method)
    lists, err = client._c:list_addresses_pages("", { per_page = 5 }, 1, 3, 2)
    assert.same({}, lists)
    assert.equal("usage", err.kind)
    assert.equal(0, count("acct-22"))
  end)

  -- A concurrency above the core's cap of one batch (core.defaults.pages_max,
  -- 1000 pages) fetches that many at a time: page 1, pages 2..1001 in one
  -- batch, then page 1002 -- never a usage error after page 1.
  helpers.both("walks acct-25000 by 20 with concurrency = 2000, above the cap of a batch",
    function()
      local p = client:addresses("acct-25000", { per_page = 20, concurrency = 2000,
        max_pages = 1002 })
      local items, err = p:all()
      assert.is_nil(err)
      assert.equal(1002 * 20, #items)
      for i = 1, #items do
        if items[i].id ~= acct25000_id(i) then
          assert.equal(acct25000_id(i), items[i].id, "item " .. i)
        end
      end
      assert.equal(25000, items.announced)
      assert.equal(1002, p.pages_fetched)
      assert.equal(1002, count("acct-25000")) -- each page once
    end)
end)

describe("concurrent pages over HTTPS (HTTP/2 when the sandbox offers it)", function()
  -- the sandbox's HTTPS port with its test CA (found in setup, as the TLS specs do)
  local ca
  setup(function()
    ca = helpers.ca_file()
  end)

  it("yields the same items as over plain HTTP", function()
    helpers.reset()
    local c = assert(merchantapi.new {
      base_url = helpers.tls_url(),
      api_key = helpers.API_KEY,
      cafile = ca,
      max_retries = 0,
    })
    local ids = collect(c:addresses("acct-25000", { per_page = 500, concurrency = 8 }))
    c:close()
    assert.equal(25000, #ids)
    for i = 1, 25000, 499 do
      assert.equal(acct25000_id(i), ids[i])
    end
    assert.equal(acct25000_id(25000), ids[25000])
    assert.equal(50, count("acct-25000"))
  end)
end)

describe("paginate with fetch_pages (no server)", function()
  local pager = require "merchantapi.pager"

  -- A fake list over ids "1".."n"; `shift` items are inserted at the front
  -- after the first page was served (offsets move, the next page repeats).
  local function server(n, opts)
    opts = opts or {}
    local s = { calls = {}, batches = {} }
    local served = 0
    local function page_list(page, per_page)
      local offset = served > 0 and (opts.shift or 0) or 0
      served = served + 1
      local list = {}
      local first = (page - 1) * per_page + 1 - offset
      for i = first, math.min(first + per_page - 1, n - offset) do
        list[#list + 1] = { id = tostring(i) }
      end
      list.meta = { page = page, per_page = per_page, total = n + offset }
      return list
    end
    function s.fetch(params)
      s.calls[#s.calls + 1] = params.page
      if opts.fail_on == params.page then
        return nil, { kind = "api", status = 500, page = params.page }
      end
      return page_list(params.page, params.per_page)
    end
    function s.fetch_pages(params, first, npages, concurrency)
      s.batches[#s.batches + 1] = { first, npages, concurrency }
      assert.is_nil(params.page)
      local lists = {}
      for p = first, first + npages - 1 do
        if opts.fail_on == p then
          return lists, { kind = "api", status = 500, page = p }
        end
        lists[#lists + 1] = page_list(p, params.per_page)
      end
      return lists
    end
    return s
  end

  local function ids(p)
    local out = {}
    for item in p:each() do
      out[#out + 1] = item.id
    end
    return out
  end

  it("fetches page 1 alone, then batches of `concurrency` up to the last page", function()
    local s = server(47)
    local got = ids(pager.paginate(s.fetch, { per_page = 5, concurrency = 4 }, s.fetch_pages))
    local want = ids(pager.paginate(server(47).fetch, { per_page = 5 }))
    assert.same(want, got)
    assert.equal(47, #got)
    assert.same({ 1, 10 }, s.calls) -- a batch of one is a single call
    assert.same({ { 2, 4, 4 }, { 6, 4, 4 } }, s.batches)
  end)

  it("never calls fetch_pages with concurrency 1", function()
    local s = server(12)
    assert.equal(12, #ids(pager.paginate(s.fetch, { per_page = 5 }, s.fetch_pages)))
    assert.same({ 1, 2, 3 }, s.calls)
    assert.same({}, s.batches)
  end)

  it("ends on a repeated id as without concurrency, after the pages before it", function()
    local s = server(30, { shift = 2 })
    local items, err = pager.paginate(s.fetch, { per_page = 10, concurrency = 3 },
      s.fetch_pages):all()
    local s1 = server(30, { shift = 2 })
    local items1, err1 = pager.paginate(s1.fetch, { per_page = 10 }):all()
    assert.is_nil(items)
    assert.is_nil(items1)
    local partial, partial1 = err.partial, err1.partial
    assert.equal("decode", err.kind)
    assert.equal(2, err.page)
    assert.equal("page 2: id 9 again, already yielded on page 1", err.title)
    assert.equal(err1.title, err.title)
    assert.equal(10, #partial)
    assert.same(helpers.ids(partial1), helpers.ids(partial))
    assert.same({ 1 }, s.calls) -- page 1 alone, then pages 2..3 (the last) in one batch
    assert.same({ { 2, 2, 3 } }, s.batches)
    assert.same({ 1, 2 }, s1.calls)
  end)

  it("ends with page k's error after pages 1..k-1", function()
    local s = server(100, { fail_on = 4 })
    local items, err = pager.paginate(s.fetch, { per_page = 10, concurrency = 8 },
      s.fetch_pages):all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal(4, err.page)
    assert.equal(30, #partial)
    assert.equal("30", partial[30].id)
  end)

  it("cuts a batch at the core's cap (1000 pages) whatever the concurrency", function()
    local s = server(25000)
    local p = pager.paginate(s.fetch, { per_page = 20, max_pages = 1003, concurrency = 2000 },
      s.fetch_pages)
    assert.equal(1003 * 20, #ids(p))
    assert.same({ 1 }, s.calls)
    assert.same({ { 2, 1000, 2000 }, { 1002, 2, 2000 } }, s.batches)
  end)

  it("respects max_pages in the batch size", function()
    local s = server(100)
    local got = ids(pager.paginate(s.fetch, { per_page = 10, max_pages = 3, concurrency = 8 },
      s.fetch_pages))
    assert.equal(30, #got)
    assert.same({ { 2, 2, 8 } }, s.batches)
  end)
end)

describe("merchantapi.paginate with fetch_pages", function()
  it("passes fetch_pages through and refuses one that is not callable", function()
    local batches = 0
    local function fetch(params)
      local list = { { id = tostring(params.page) } }
      list.meta = { page = params.page, per_page = 1, total = 5 }
      return list
    end
    local function fetch_pages(params, first, npages)
      batches = batches + 1
      local lists = {}
      for p = first, first + npages - 1 do
        lists[#lists + 1] = fetch({ page = p, per_page = params.per_page })
      end
      return lists
    end
    local items = assert(merchantapi.paginate(fetch, { per_page = 1, concurrency = 4 },
      fetch_pages):all())
    assert.same({ "1", "2", "3", "4", "5" }, helpers.ids(items))
    assert.equal(1, batches)
    assert.has_error(function()
      merchantapi.paginate(fetch, nil, 42)
    end, "bad argument #3 to 'paginate' (function or nil expected, got number)")
  end)
end)

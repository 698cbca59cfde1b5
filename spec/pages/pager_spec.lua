-- merchantapi.paginate over fake fetchers: the pager of docs/contract.md
-- ("Lists and pages") and its stop rules.  No server needed.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local ids = helpers.ids

-- A fake list endpoint over `items` (ids "1".."n" by default).
--   opts.total = false     no meta.total
--   opts.no_meta           no meta at all
--   opts.ignore_page       always answers page 1
--   opts.max_per_page      clamps per_page (and says so in meta.per_page)
--   opts.fail_on = k, err  answers page k with nil, err
--   opts.short             answers at most this many items, whatever per_page
local function server(n, opts)
  opts = opts or {}
  local s = { calls = {}, items = {} }
  for i = 1, n do
    s.items[i] = { id = tostring(i), type = "addresses" }
  end
  function s.fetch(params)
    s.calls[#s.calls + 1] = params
    if #s.calls > 100 then
      error("the pager did not stop after 100 pages", 0) -- fail, never hang
    end
    if opts.fail_on and params.page == opts.fail_on then
      return nil, opts.err
    end
    local page = opts.ignore_page and 1 or params.page
    local per_page = params.per_page or 25
    if opts.max_per_page and per_page > opts.max_per_page then
      per_page = opts.max_per_page
    end
    local list = {}
    local first = (page - 1) * per_page + 1
    for i = first, math.min(first + per_page - 1, #s.items) do
      list[#list + 1] = s.items[i]
      if opts.short and #list >= opts.short then
        break
      end
    end
    if not opts.no_meta then
      list.meta = { page = page, per_page = per_page }
      if opts.total ~= false then
        list.meta.total = #s.items
      end
    end
    return list
  end
  return s
end

local function range(a, b)
  local out = {}
  for i = a, b do
    out[#out + 1] = tostring(i)
  end
  return out
end

local collect_each = helpers.collect

describe("paginate", function()
  it("walks every page, in order, with the default query", function()
    local s = server(22)
    assert.same(range(1, 22), collect_each(merchantapi.paginate(s.fetch, { per_page = 5 })))
    assert.equal(5, #s.calls) -- 5,5,5,5,2: the short page ends it
    for i, p in ipairs(s.calls) do
      assert.same({ page = i, per_page = 5, order = "created_at", order_type = "asc" }, p)
    end
  end)

  it("passes order and order_type through", function()
    local s = server(3)
    merchantapi.paginate(s.fetch, { order = "created_at", order_type = "desc" }):all()
    assert.same({ page = 1, order = "created_at", order_type = "desc" }, s.calls[1])
  end)

  it("stops once page * per_page >= total", function()
    local s = server(20)
    assert.same(range(1, 20), collect_each(merchantapi.paginate(s.fetch, { per_page = 5 })))
    assert.equal(4, #s.calls)
  end)

  it("without a total, stops on the empty page after full ones", function()
    local s = server(20, { total = false })
    local items = merchantapi.paginate(s.fetch, { per_page = 5 }):all()
    assert.same(range(1, 20), ids(items))
    assert.equal(5, #s.calls)
    assert.equal(5, s.calls[5].page)
  end)

  it("stops on a short page", function()
    local s = server(100, { total = false, short = 3 })
    local items = merchantapi.paginate(s.fetch, { per_page = 5 }):all()
    assert.same({ "1", "2", "3" }, ids(items))
    assert.equal(1, #s.calls)
  end)

  it("uses the page size the server reports, not the one asked for", function()
    local s = server(25, { max_per_page = 10 })
    local items = merchantapi.paginate(s.fetch, { per_page = 50 }):all()
    assert.same(range(1, 25), ids(items))
    assert.equal(3, #s.calls)
  end)

  it("without per_page, uses meta.per_page", function()
    local s = server(60)
    local items = merchantapi.paginate(s.fetch):all()
    assert.equal(60, #items)
    assert.equal(3, #s.calls)
    assert.is_nil(s.calls[1].per_page)
  end)

  it("ends with decode on page 2 of a server that ignores page (with a total)", function()
    local s = server(100, { ignore_page = true })
    local items, err = merchantapi.paginate(s.fetch, { per_page = 5 }):all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal("decode", err.kind)
    assert.equal(2, err.page)
    assert.equal("page 2: id 1 again, already yielded on page 1", err.title)
    assert.same(range(1, 5), ids(partial))
    assert.equal(100, partial.announced)
    assert.equal(5, partial.received)
    assert.equal(2, #s.calls)
  end)

  it("ends with decode on page 2 of a server that ignores page (no meta at all)", function()
    local s = server(100, { ignore_page = true, no_meta = true })
    local got = {}
    local ok, err = pcall(function()
      for item in merchantapi.paginate(s.fetch, { per_page = 5 }):each() do
        got[#got + 1] = item.id
      end
    end)
    assert.is_false(ok)
    assert.equal("decode", err.kind)
    assert.equal(2, err.page)
    assert.same(range(1, 5), got)
    assert.equal(2, #s.calls)
  end)

  it("ends with decode when an insert shifts offsets and a page repeats an id", function()
    -- newest first: 10..1; a new address 11 arrives after page 1 was read
    local s = server(0)
    for i = 10, 1, -1 do
      s.items[#s.items + 1] = { id = tostring(i) }
    end
    local pager = merchantapi.paginate(function(params)
      if params.page == 2 then
        table.insert(s.items, 1, { id = "11" })
      end
      return s.fetch(params)
    end, { per_page = 4, order_type = "desc" })
    local pages = {}
    local ok, err = pcall(function()
      for list in pager:pages() do
        pages[#pages + 1] = ids(list)
      end
    end)
    assert.is_false(ok)
    assert.same({ { "10", "9", "8", "7" } }, pages)
    assert.equal("decode", err.kind)
    assert.equal(2, err.page)
    assert.equal("page 2: id 7 again, already yielded on page 1", err.title)
    assert.equal(2, #s.calls)
  end)

  it("stops after max_pages", function()
    local s = server(100)
    local items = merchantapi.paginate(s.fetch, { per_page = 10, max_pages = 3 }):all()
    assert.same(range(1, 30), ids(items))
    assert.equal(3, #s.calls)
  end)

  it("starts at start_page", function()
    local s = server(22)
    local items = merchantapi.paginate(s.fetch, { per_page = 5, start_page = 3 }):all()
    assert.same(range(11, 22), ids(items))
    assert.equal(3, s.calls[1].page)
  end)

  it("accepts concurrency and gives the same result", function()
    local s = server(22)
    local items = merchantapi.paginate(s.fetch, { per_page = 5, concurrency = 4 }):all()
    assert.same(range(1, 22), ids(items))
  end)

  it("gives an empty array for an empty list after one request", function()
    local s = server(0)
    local items, err = merchantapi.paginate(s.fetch, { per_page = 5 }):all()
    assert.is_nil(err)
    assert.equal(0, #items)
    assert.equal(0, items.announced)
    assert.equal(0, items.received)
    assert.equal(1, #s.calls)
  end)

  it("ends when fetch_page returns nil without an error", function()
    local n = 0
    local pager = merchantapi.paginate(function()
      n = n + 1
      if n == 1 then
        return { { id = "a" }, { id = "b" } }
      end
      return nil
    end)
    assert.same({ "a", "b" }, ids(pager:all()))
    assert.equal(2, n)
  end)
end)

describe("pages that contradict themselves", function()
  -- A scripted list: pages[p] = { ids = {...}, total = T|nil, per_page = N|nil }.
  local function scripted(pages)
    local s = { calls = 0 }
    function s.fetch(params)
      s.calls = s.calls + 1
      local spec = pages[params.page] or { ids = {} }
      local list = {}
      for i, id in ipairs(spec.ids) do
        list[i] = type(id) == "table" and id or { id = id, type = "addresses" }
      end
      list.meta = { page = params.page, per_page = spec.per_page, total = spec.total }
      return list
    end
    return s
  end

  local function walk(pages, opts)
    local s = scripted(pages)
    local items, err = merchantapi.paginate(s.fetch, opts or { per_page = 2 }):all()
    return items, err, err and err.partial, s.calls
  end

  it("ends on a negative meta.total", function()
    local items, err, partial, calls = walk({ { ids = { "a" }, total = -1 } })
    assert.is_nil(items)
    assert.equal("decode", err.kind)
    assert.equal(1, err.page)
    assert.equal("page 1: meta.total is -1", err.title)
    assert.equal(0, #partial)
    assert.equal(1, calls)
  end)

  it("ends on items under meta.total 0", function()
    local _, err, _, calls = walk({ { ids = { "a", "b" }, total = 0 } })
    assert.equal("page 1: 2 items, but meta.total 0 and 2 per page leave 0 for it", err.title)
    assert.equal(1, calls)
  end)

  it("ends on a last page shorter than the total says", function()
    local _, err, partial, calls = walk({
      { ids = { "a", "b" }, total = 4 }, { ids = { "c" }, total = 4 } })
    assert.equal(2, err.page)
    assert.equal("page 2: 1 items, but meta.total 4 and 2 per page announce 2: "
      .. "a short page before the last", err.title)
    assert.equal(2, #partial)
    assert.equal(4, partial.announced)
    assert.equal(2, partial.received)
    assert.equal(2, calls)
  end)

  it("ends on an empty page before the last", function()
    local _, err, _, calls = walk({ { ids = { "a", "b" }, total = 6 }, { ids = {}, total = 6 } })
    assert.equal(2, err.page)
    assert.matches("0 items, but meta.total 6", err.title)
    assert.equal(2, calls)
  end)

  it("ends on an id a page before the one before yielded", function()
    local _, err, partial, calls = walk({
      { ids = { "a", "b" } }, { ids = { "c", "d" } }, { ids = { "e", "a" } } })
    assert.equal(3, err.page)
    assert.equal("page 3: id a again, already yielded on page 1", err.title)
    assert.equal(4, #partial)
    assert.is_nil(partial.announced) -- no total: the id rule still holds
    assert.equal(3, calls)
  end)

  it("ends on an id twice on one page", function()
    local _, err = walk({ { ids = { "a", "a" }, total = 2 } })
    assert.equal("page 1: id a again, already yielded on page 1", err.title)
  end)

  it("takes one id under two types as two items, and items without id as they come", function()
    local items = assert(walk({
      { ids = { "a", { id = "a", type = "network" } } }, { ids = { { label = "x" } } } }))
    assert.equal(3, #items)
    assert.equal(3, items.received)
  end)

  it("goes on when the total grows (items created while walking), and says so", function()
    local items, err, _, calls = walk({
      { ids = { "a", "b" }, total = 4 }, { ids = { "c", "d" }, total = 5 }, { ids = { "e" }, total = 5 } })
    assert.is_nil(err)
    assert.same({ "a", "b", "c", "d", "e" }, ids(items))
    assert.equal(5, items.announced)
    assert.equal(5, items.received)
    assert.is_true(items.total_changed)
    assert.equal(3, calls)
  end)

  it("says nothing changed on a steady walk", function()
    local items = assert(walk({ { ids = { "a", "b" }, total = 3 }, { ids = { "c" }, total = 3 } }))
    assert.equal(3, items.announced)
    assert.equal(3, items.received)
    assert.is_false(items.total_changed)
  end)

  it("sets the same fields on the pager", function()
    local s = scripted({ { ids = { "a", "b" }, total = 3 }, { ids = { "c" }, total = 3 } })
    local pager = merchantapi.paginate(s.fetch, { per_page = 2 })
    assert.equal(0, pager.received)
    assert.equal("a", pager:next().id)
    assert.equal(3, pager.announced)
    assert.equal(2, pager.received) -- the first page was accepted whole
    assert.same({ "b", "c" }, ids(pager:all()))
    assert.equal(3, pager.received)
  end)
end)

describe("pager errors", function()
  local boom = setmetatable({ kind = "http", status = 503 }, {
    __tostring = function() return "boom" end })

  it("each() raises the error object after the pages before it", function()
    local s = server(50, { fail_on = 3, err = boom })
    local got = {}
    local ok, e = pcall(function()
      for item in merchantapi.paginate(s.fetch, { per_page = 5 }):each() do
        got[#got + 1] = item.id
      end
    end)
    assert.is_false(ok)
    assert.equal(boom, e)
    assert.same(range(1, 10), got)
    assert.equal(3, #s.calls)
  end)

  it("pages() raises it likewise", function()
    local s = server(50, { fail_on = 2, err = boom })
    local n = 0
    local ok, e = pcall(function()
      for _ in merchantapi.paginate(s.fetch, { per_page = 5 }):pages() do
        n = n + 1
      end
    end)
    assert.is_false(ok)
    assert.equal(boom, e)
    assert.equal(1, n)
  end)

  it("all() returns nil, err and the items before it; never raises", function()
    local s = server(50, { fail_on = 3, err = boom })
    local items, err = merchantapi.paginate(s.fetch, { per_page = 5 }):all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal(boom, err)
    assert.same(range(1, 10), ids(partial))
  end)

  it("next() gives the items, then nil, err, again on later calls without refetching", function()
    local s = server(50, { fail_on = 2, err = boom })
    local pager = merchantapi.paginate(s.fetch, { per_page = 2 })
    assert.equal("1", pager:next().id)
    assert.equal("2", pager:next().id)
    local item, err = pager:next()
    assert.is_nil(item)
    assert.equal(boom, err)
    item, err = pager:next()
    assert.is_nil(item)
    assert.equal(boom, err)
    assert.equal(2, #s.calls)
  end)

  it("next() gives nil, nil at the end", function()
    local pager = merchantapi.paginate(server(3).fetch, { per_page = 2 })
    assert.same({ "1", "2", "3" }, { pager:next().id, pager:next().id, pager:next().id })
    local item, err = pager:next()
    assert.is_nil(item)
    assert.is_nil(err)
    assert.is_nil(pager:next())
  end)
end)

describe("pager cursor", function()
  it("is shared by next(), each(), pages() and all()", function()
    local pager = merchantapi.paginate(server(12).fetch, { per_page = 5 })
    assert.equal("1", pager:next().id)
    assert.equal("2", pager:next().id)
    local it = pager:each()
    assert.equal("3", it().id)
    local rest_of_page = pager:pages()()
    assert.same({ "4", "5" }, ids(rest_of_page))
    assert.same({ page = 1, per_page = 5, total = 12 }, rest_of_page.meta)
    local rest = pager:all()
    assert.same(range(6, 12), ids(rest))
    assert.equal(12, rest.received) -- the whole walk's, next() and each() included
    assert.equal(0, #pager:all())
  end)
end)

describe("paginate arguments", function()
  it("raises on a fetch_page that is not a function", function()
    assert.has_error(function() merchantapi.paginate("nope") end,
      "bad argument #1 to 'paginate' (function expected, got string)")
  end)

  it("accepts a callable table", function()
    local s = server(2)
    local callable = setmetatable({}, { __call = function(_, p) return s.fetch(p) end })
    assert.same({ "1", "2" }, ids(merchantapi.paginate(callable):all()))
  end)

  it("raises on unknown options and wrong types", function()
    local f = server(1).fetch
    assert.has_error(function() merchantapi.paginate(f, { perpage = 5 }) end,
      "unknown option 'perpage' to 'paginate'")
    assert.has_error(function() merchantapi.paginate(f, { per_page = "5" }) end)
    assert.has_error(function() merchantapi.paginate(f, { per_page = 0 }) end)
    assert.has_error(function() merchantapi.paginate(f, { per_page = 2.5 }) end)
    assert.has_error(function() merchantapi.paginate(f, { max_pages = -1 }) end)
    assert.has_error(function() merchantapi.paginate(f, { concurrency = 0 }) end)
    assert.has_error(function() merchantapi.paginate(f, { order = 1 }) end)
    assert.has_error(function() merchantapi.paginate(f, "opts") end)
  end)

  it("raises when fetch_page returns something that is not a list", function()
    local pager = merchantapi.paginate(function() return "page" end)
    assert.has_error(function() pager:all() end,
      "merchantapi.pager: fetch_page returned a string, not a list")
  end)
end)

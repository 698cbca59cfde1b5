--- Iterating the pages of a list call.
--
-- The pager that `client:addresses` and `merchantapi.paginate` return
-- (docs/guide/lua.md, "List an account's addresses"): it fetches one page
-- after the other through a `fetch_page` function and hands out the items
-- (or the pages) through `each`, `pages`, `all` and `next`.  All four share one
-- cursor, so they can be mixed: `next()` twice, then `each()` goes on with
-- the third item.
--
-- It stops after a page that is empty or short (fewer items than the page
-- size the server reported in `meta.per_page`, else the one asked for), once
-- `page * per_page >= meta.total`, or after `max_pages` pages.
--
-- Pages never lie silently: the walk ends with a `"decode"` error naming the
-- page (`err.page`) when a page repeats an id the walk already yielded, from
-- whatever page (a server that ignores `page`, an insert that shifts offsets
-- under `order_type = "desc"`), or when a page contradicts `meta.total`:
-- a negative total, more items than the total leaves for that page (a
-- total of 0 with items included), fewer (a short or empty page before the
-- last), or a total that shrinks between pages (an item was deleted: the
-- items after it moved back one place, and one of them was skipped).  A
-- total that grows between pages (items created while walking) is no
-- error: `pager.total_changed` says it.  Without `meta.total` only the id
-- rule and the short and empty page rules apply.  `pager.announced` (the
-- last `meta.total`) and `pager.received` (the items accepted so far) say
-- how many the service announced and how many came; `all()` puts them on
-- its array too.
-- A page without `meta`, or whose meta lacks `per_page` or `total`
-- (`meta: {}`), is no error: the rules that need the missing member do not
-- apply, and no value is guessed for it.
--
-- @module merchantapi.pager
local errors = require "merchantapi.errors"
local options = require "merchantapi.options"
local loop = require "merchantapi.loop"

local type = type
local error = error
local setmetatable = setmetatable
local getmetatable = getmetatable
local tostring = tostring
local ceil = math.ceil
local min, max = math.min, math.max
local format = string.format

local M = {}

local Pager = {}
Pager.__index = Pager

local OPTIONS = {
  per_page = "integer >= 1",
  order = "string",
  order_type = "string",
  start_page = "integer >= 1",
  max_pages = "integer >= 1",
  concurrency = "integer >= 1",
}

local is_integer, is_count = options.is_integer, options.is_count

-- Whether f can be called: a function, or a table whose metatable has __call.
local function callable(f)
  local mt = type(f) == "table" and getmetatable(f)
  return type(f) == "function" or (mt and mt.__call ~= nil)
end

--- Builds a pager over any list call: what `merchantapi.paginate` and
-- `client:addresses` call.
--
-- @local
-- @tparam function fetch_page as for `merchantapi.paginate`.
-- @tparam[opt] table opts as for `merchantapi.paginate`.
-- @tparam[opt] function fetch_pages as for `merchantapi.paginate`.
-- @treturn table the pager.
-- @raise as `merchantapi.paginate`.
function M.paginate(fetch_page, opts, fetch_pages)
  if not callable(fetch_page) then
    error("bad argument #1 to 'paginate' (function expected, got " .. type(fetch_page) .. ")", 2)
  end
  if fetch_pages ~= nil and not callable(fetch_pages) then
    error("bad argument #3 to 'paginate' (function or nil expected, got "
      .. type(fetch_pages) .. ")", 2)
  end
  opts = options.check(opts, OPTIONS, "paginate", 2)
  return setmetatable({
    concurrency = opts.concurrency or 1,
    meta = nil,             -- meta of the last page fetched
    pages_fetched = 0,
    announced = nil,        -- meta.total of the last page that had one
    received = 0,           -- items accepted from the pages so far
    total_changed = false,  -- meta.total grew between two pages
    _fetch = fetch_page,
    _fetch_pages = fetch_pages,
    _last_page = nil,       -- the last page by meta.total, once known
    _ahead = nil,           -- pages fetched ahead: { first = n, err = e|nil, [i] = list }
    _per_page = opts.per_page,
    _order = opts.order or "created_at",
    _order_type = opts.order_type or "asc",
    _page = opts.start_page or 1,
    _max_pages = opts.max_pages,
    _done = false,
    _err = nil,
    _buf = nil,             -- the page being handed out item by item
    _pos = 1,
    _seen = {},             -- type -> { id -> the page that yielded it }, for the walk
    _size = nil,            -- the page size, once known (meta.per_page, per_page, page 1)
  }, Pager)
end

--- Builds a pager whose pages say themselves whether another follows: the
-- pager of `client:paginate` (its one caller, which checks the options),
-- following JSON:API pagination links.
--
-- @local
-- @tparam function fetch_page called for each page in turn; returns the
--   next list (an array of resources), `nil` when there is none (the end),
--   or `nil, err`.  A Lua error it raises is not caught.
-- @tparam[opt] table opts `max_pages` (integer, no limit when absent).
-- @treturn table the pager of `paginate` with only the rules that need no
--   page number nor `meta` (`client:paginate` states them).
function M.follow(fetch_page, opts)
  local p = M.paginate(fetch_page)
  p._follow, p._max_pages = true, opts and opts.max_pages
  return p
end

-- A new table of the walk's page parameters (page: nil for fetch_pages).
local function params(self, page)
  return { page = page, per_page = self._per_page, order = self._order,
    order_type = self._order_type }
end

-- Page `page` as fetch_page returns it (list, or nil, err): from the pages
-- fetched ahead, else `concurrency` pages at once through fetch_pages when
-- the last page is known, else fetch_page alone.
local function fetch_raw(self, page)
  local ahead = self._ahead
  if ahead then
    local i = page - ahead.first + 1
    local list = ahead[i]
    if list then
      ahead[i] = false -- handed out: the pager keeps no reference to it
      loop.yield_if_over_budget() -- in a loop task: a step's budget may end here
      return list
    end
    self._ahead = nil
    if i == #ahead + 1 and ahead.err ~= nil then
      return nil, ahead.err
    end
  end
  local count = self.concurrency
  if self._fetch_pages and count > 1 and self._last_page then
    count = min(count, self._last_page - page + 1)
    if self._max_pages then
      count = min(count, self._max_pages - self.pages_fetched)
    end
    if count > 1 then
      local lists, err = self._fetch_pages(params(self), page, count, self.concurrency)
      local first = lists[1]
      if first then
        ahead = { first = page, err = err, false }
        for i = 2, #lists do
          ahead[i] = lists[i]
        end
        self._ahead = ahead
        return first
      end
      if err ~= nil then
        return nil, err
      end
      -- neither a page nor an error: fetch this page alone
    end
  end
  return self._fetch(params(self, page))
end

-- The walk's end on page `page`: a "decode" error naming it.
local function page_error(page, fmt, ...)
  return errors.new({ kind = "decode", page = page,
    title = format("page %d: " .. fmt, page, ...) })
end

-- The keys of an item for the id rule: its type ("" without one) and id
-- as a string (nil: an item without id).  No new string for a string id:
-- a page of 1,000 items made 1,000 keys before.
local function item_key(item)
  local id = type(item) == "table" and item.id or nil
  if id == nil then
    return nil
  end
  local t = item.type
  return type(t) == "string" and t or "", type(id) == "string" and id or tostring(id)
end

-- The checks of one page against the walk so far (see the module's doc):
-- nil, or the error that ends the walk.  size: the page size; total: this
-- page's meta.total or nil.
local function check_page(self, page, list, n, size, total)
  if total then
    if total < 0 then
      return page_error(page, "meta.total is %d", total)
    end
    local before = self.announced
    if before and total < before then
      return page_error(page, "meta.total went from %d to %d: an item deleted between two "
        .. "pages moves the later ones back, and one of them was skipped", before, total)
    end
    local due = max(0, min(size, total - (page - 1) * size)) -- what the total leaves here
    if n > due then
      return page_error(page, "%d items, but meta.total %d and %d per page leave %d for it",
        n, total, size, due)
    end
    if n < due then
      return page_error(page, "%d items, but meta.total %d and %d per page announce %d: "
        .. "a short page before the last", n, total, size, due)
    end
  end
  -- (recorded as it goes: a page that breaks the rule ends the walk, its
  -- error sticky, so what it recorded is never read)
  local seen = self._seen
  for i = 1, n do
    local t, id = item_key(list[i])
    if t then
      local ids = seen[t]
      if not ids then
        ids = {}
        seen[t] = ids
      end
      local first = ids[id]
      if first then
        return page_error(page, "id %s again, already yielded on page %d", id, first)
      end
      ids[id] = page
    end
    if i % 256 == 0 then
      loop.yield_if_over_budget() -- in a loop task: a step's budget may end here
    end
  end
  return nil
end

-- Fetches the next page: an array with .meta, nil at the end, or nil, err
-- (the page's fetch failed, or it broke a rule of check_page).  Errors are
-- sticky.
local function fetch_next(self)
  if self._err ~= nil then
    return nil, self._err
  end
  if self._done then
    return nil
  end
  if self._max_pages and self.pages_fetched >= self._max_pages then
    self._done = true
    return nil
  end

  local page = self._page
  local list, err = fetch_raw(self, page)
  if list == nil then
    if err ~= nil then
      self._err = err
      return nil, err
    end
    self._done = true
    return nil
  end
  if type(list) ~= "table" then
    error("merchantapi.pager: fetch_page returned a " .. type(list) .. ", not a list", 0)
  end
  self.pages_fetched = self.pages_fetched + 1
  self._page = page + 1

  local meta = type(list.meta) == "table" and list.meta or nil
  self.meta = meta
  local n = #list
  local per_page = meta and is_count(meta.per_page) and meta.per_page or self._per_page
  local total = meta and is_integer(meta.total) and meta.total or nil
  if self._follow then
    -- the pages say whether another follows (M.follow): no page size, no
    -- total, so of check_page's rules only the id rule applies
    per_page, total = nil, nil
  end
  -- without a known page size, the size of the first page stands in for it
  local size = per_page or self._size or n
  if not self._size and size > 0 then
    self._size = size
  end

  err = check_page(self, page, list, n, size, total)
  if err then
    self._err = err
    self._ahead = nil
    return nil, err
  end
  if total then
    if self.announced and total ~= self.announced then
      self.total_changed = true
    end
    self.announced = total
  end
  self.received = self.received + n
  if total and size > 0 then
    self._last_page = ceil(total / size) -- the first page p with p * size >= total
  else
    self._last_page = nil
  end

  if n == 0 then
    self._done = true
    self._ahead = nil
    return nil
  end
  if (per_page and n < per_page) or (total and page * size >= total) then
    self._done = true
    self._ahead = nil
  end
  return list
end

-- The rest of the page being handed out as a list, or the next page.
local function next_page(self)
  local buf = self._buf
  if buf then
    local pos = self._pos
    self._buf, self._pos = nil, 1
    if pos == 1 then
      return buf
    end
    if pos <= #buf then
      local rest = { meta = buf.meta, links = buf.links }
      for i = pos, #buf do
        rest[#rest + 1] = buf[i]
      end
      return rest
    end
  end
  return fetch_next(self)
end

-- An iterator over what get(self) gives, raising its error.
local function raising(self, get)
  return function()
    local v, err = get(self)
    if v == nil and err ~= nil then
      error(err, 0)
    end
    return v
  end
end

--- The next item.
--
-- syntax: `item, err = pager:next()`
--
-- @return the next item; `nil` at the end; or `nil, err, message` when a
--   page could not be fetched (the same error again on every later call).
--   Never raises on run-time failures.
function Pager:next()
  local buf, pos = self._buf, self._pos
  while not buf or pos > #buf do -- the page handed out: the next one
    local err
    self._buf, self._pos = nil, 1
    buf, err = fetch_next(self)
    if not buf then
      if err == nil then
        return nil
      end
      return errors.fail(err)
    end
    pos = 1
  end
  self._buf, self._pos = buf, pos + 1
  return buf[pos]
end

--- Iterator over every item of every page.
--
-- syntax: `for item in pager:each() do ... end`
--
-- @return an iterator function.
-- @raise the error table of a page that could not be fetched, like
--   `io.lines` does (items of the pages before it have been yielded).
function Pager:each()
  return raising(self, Pager.next)
end

--- Iterator over the pages, each a list in the shape `list_addresses`
-- returns (an array with `.meta`).
--
-- syntax: `for list in pager:pages() do ... end`
--
-- @return an iterator function.
-- @raise the error table of a page that could not be fetched.
function Pager:pages()
  return raising(self, next_page)
end

--- Every remaining item in one array.
--
-- syntax: `items, err = pager:all()`
--
-- @treturn table|nil the items, in order, with the pager's fields
--   `announced`, `received` (the whole walk's, items that `next()` handed
--   out before included) and `total_changed` (see the module's doc);
-- @return nil, err, message -- on failure: the error table, with the items
--   fetched before it (with the same fields) as `err.partial` (for a
--   custom `fetch_page` whose error is not a table: `nil, err, partial`).
--   Never raises on run-time failures.
function Pager:all()
  local items, n = {}, 0
  while true do
    local list, err = next_page(self)
    if list == nil then
      items.announced, items.received = self.announced, self.received
      items.total_changed = self.total_changed
      if type(err) == "table" then
        err.partial = items
        return errors.fail(err)
      elseif err ~= nil then
        return nil, err, items -- a custom fetch_page's own error
      end
      return items
    end
    for i = 1, #list do
      n = n + 1
      items[n] = list[i]
    end
  end
end

return M

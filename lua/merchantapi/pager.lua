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
-- apply, and no value is guessed for it.  A `meta.per_page` that is not a
-- count, or a `meta.total` that is no integer (another server's meta, through
-- `merchantapi.paginate`; the list calls refuse them before), counts as
-- absent too.
-- With `concurrency = n` (and a `fetch_pages`), once the last page is known
-- the pages after it are fetched `n` at a time, at most 1000 in one batch
-- (`merchantapi.core.defaults.pages_max`, the core's cap of one
-- `list_addresses_pages` call, applied by the walk): a larger `n` is cut to
-- it, never an error.
--
-- These rules have one home, the C core's page walk (src/page_walk.c, the
-- rules of the C pager `mapi_pager_next` too): this module fetches the pages
-- and hands each one to it (`core.page_walk`, src/lua_walk.c).
--
-- @module merchantapi.pager
local core = require "merchantapi.core"
local errors = require "merchantapi.errors"
local options = require "merchantapi.options"
local loop = require "merchantapi.loop"

local type = type
local error = error
local setmetatable = setmetatable
local getmetatable = getmetatable
local page_walk, page_is_last = core.page_walk, core.page_is_last
local clock = core.monotonic

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

-- Whether f can be called: a function, or a table whose metatable has __call.
local function callable(f)
  local mt = type(f) == "table" and getmetatable(f)
  return type(f) == "function" or (mt and mt.__call ~= nil)
end

--- Whether a page is the last of its list, by the rule the pager stops by:
-- the page is empty, or short (fewer items than `per_page`), or `page *
-- size >= total`.  A page it cannot place (no `per_page` and no `total`,
-- items on it) may have others after it: false.  The rule's one home is
-- the C core (src/page_walk.c, `mapi_walk_is_last`), which the pager's walk
-- and the C pager use too.
--
-- syntax: `last = pager.is_last(page, n, per_page, total, size)`
--
-- @tparam integer page the page's number (the first is 1).
-- @tparam integer n the page's items.
-- @tparam[opt] integer per_page the page size: the server's `meta.per_page`,
--   else the one asked for; nil when neither is known.
-- @tparam[opt] integer total the list's `meta.total`; nil when the page has none.
-- @tparam[opt] integer size the page size the total is divided by (default
--   `per_page`, else `n`; the pager passes its first page's size).
-- @treturn boolean true when no page follows this one.
function M.is_last(page, n, per_page, total, size)
  return page_is_last(page, n, per_page, total, size)
end

--- Builds a pager over any list call: what `merchantapi.paginate` and
-- `client:addresses` call.
--
-- @local
-- @tparam function fetch_page as for `merchantapi.paginate`.
-- @tparam[opt] table opts as for `merchantapi.paginate`.
-- @tparam[opt] function fetch_pages as for `merchantapi.paginate`.
-- @tparam[opt] boolean follow true for `follow`'s pager (the pages say
--   by links.next whether another follows: no page size nor total read).
-- @treturn table the pager.
-- @raise as `merchantapi.paginate`.
function M.paginate(fetch_page, opts, fetch_pages, follow)
  if not callable(fetch_page) then
    error("bad argument #1 to 'paginate' (function expected, got " .. type(fetch_page) .. ")", 2)
  end
  if fetch_pages ~= nil and not callable(fetch_pages) then
    error("bad argument #3 to 'paginate' (function or nil expected, got "
      .. type(fetch_pages) .. ")", 2)
  end
  opts = options.check(opts, OPTIONS, "paginate", 2)
  return setmetatable({
    _walk = page_walk(opts.per_page, opts.max_pages, follow), -- the rules (the core's)
    concurrency = opts.concurrency or 1,
    meta = nil,             -- meta of the last page fetched
    pages_fetched = 0,
    announced = nil,        -- meta.total of the last page that had one
    received = 0,           -- items accepted from the pages so far
    total_changed = false,  -- meta.total grew between two pages
    _fetch = fetch_page,
    _fetch_pages = fetch_pages,
    _ahead = nil,           -- pages fetched ahead: { first = n, err = e|nil, [i] = list }
    _per_page = opts.per_page,
    _order = opts.order or "created_at",
    _order_type = opts.order_type or "asc",
    _page = opts.start_page or 1,
    _done = false,
    _err = nil,
    _buf = nil,             -- the page being handed out item by item
    _pos = 1,
    _piece = nil,           -- seconds the last piece of work on a page took (between_pieces)
    _since = nil,           -- when it began (nil: none under way, as after a fetch)
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
  return M.paginate(fetch_page, { max_pages = opts and opts.max_pages }, nil, true)
end

--- The links.next rule of a pager made by `follow`: whether `path` (a
-- page's next link, or the first request's path; nil: none) is to be
-- requested, recorded as requested if so; false ends the walk there (no
-- link, or one already requested).
--
-- @local
-- @tparam table p the pager.
-- @tparam[opt] string path the link.
-- @treturn boolean
function M.follows(p, path)
  return p._walk:link(path)
end

-- A new table of the walk's page parameters (page: nil for fetch_pages).
local function params(self, page)
  return { page = page, per_page = self._per_page, order = self._order,
    order_type = self._order_type }
end

-- A piece of a page, in a loop task whose step has a budget: a step stops
-- between two pieces, never inside one.  A page fetched ahead is turned into
-- tables PIECE items at a time (the core's batch: `b:take(PIECE)`), its
-- checks run PIECE items at a time
-- (`walk:page(page, list, from, to)`), and the page is handed out whole
-- once both are done.  256 addresses are about 0.3 ms of conversion.
local PIECE = 256

-- Between two pieces of the pager's work on its pages (a piece of a page's
-- conversion or of its checks; the hand-out of a page's items, whatever the
-- caller does with them): the piece that ended is the cost expected of the
-- next, and in a loop task whose step has a budget the step's budget may end
-- here (a piece that would end after it waits for the next step).  The time
-- since the last check is the piece's cost, but never a fetch's wait: a
-- fetch ends the piece under way (piece_ends) and the next begins after it.
local function piece_ends(self)
  local since = self._since
  if since then
    self._piece = clock() - since
    self._since = nil
  end
end

local function between_pieces(self)
  local since = self._since
  if since then
    self._piece = clock() - since
  end
  loop.yield_if_over_budget(self._piece) -- a step's budget may end here
  self._since = clock()
end

-- Page `page` as fetch_page returns it (list, or nil, err): from the pages
-- fetched ahead, else `concurrency` pages at once through fetch_pages when
-- the last page is known (as many as the walk plans), else fetch_page alone.
-- Page i of the pages fetched ahead (1: the first), or nil past them:
-- from their lists, else (a loop task's) from the core's batch, turned into
-- tables now, a piece at a time.
local function take_ahead(self, ahead, i)
  if i > ahead.n then
    return nil
  end
  local list = ahead[i]
  ahead[i] = false -- handed out: the pager keeps no reference to it
  between_pieces(self)
  if list then
    return list
  end
  list = ahead.batch:take(PIECE)
  while list == false do -- a piece of the page done, the rest to come
    between_pieces(self)
    list = ahead.batch:take(PIECE)
  end
  return list
end

local function fetch_raw(self, page)
  local ahead = self._ahead
  if ahead then
    local i = page - ahead.first + 1
    local list = take_ahead(self, ahead, i)
    if list then
      return list
    end
    self._ahead = nil
    if i == ahead.n + 1 and ahead.err ~= nil then
      return nil, ahead.err
    end
  end
  local count = self._fetch_pages and self._walk:batch(self.concurrency) or 1
  do
    if count > 1 then
      -- batch: the core's page batch holding the pages not in lists (a
      -- loop task's, transport.pages: a userdata), else nil
      piece_ends(self) -- the wait for the batch is no piece's cost
      local lists, err, batch = self._fetch_pages(params(self), page, count, self.concurrency)
      batch = type(batch) == "userdata" and batch or nil
      ahead = { first = page, err = err, n = #lists, batch = batch }
      for i = 1, #lists do
        ahead[i] = lists[i]
      end
      if batch then
        ahead.n = batch:kept()
      end
      local first = take_ahead(self, ahead, 1)
      if first then
        self._ahead = ahead
        return first
      end
      if err ~= nil then
        return nil, err
      end
      -- neither a page nor an error: fetch this page alone
    end
  end
  piece_ends(self)
  return self._fetch(params(self, page))
end

-- Fetches the next page: an array with .meta, nil at the end, or nil, err
-- (the page's fetch failed, or it broke a rule of the walk: a "decode"
-- error naming the page).  Errors are sticky.
local function fetch_next(self)
  if self._err ~= nil then
    return nil, self._err
  end
  if self._done then
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
  self.meta = type(list.meta) == "table" and list.meta or nil

  local walk = self._walk
  -- the checks and stop rules (the core's), a piece at a time: "piece"
  -- while items are left (the core counts them: list[1 .. raw length])
  between_pieces(self)
  local step, title = walk:page(page, list, 1, PIECE)
  local from = PIECE + 1
  while step == "piece" do
    between_pieces(self)
    step, title = walk:page(page, list, from, from + PIECE - 1)
    from = from + PIECE
  end
  self.received, self.announced, self.total_changed = walk:counts()
  if not step then
    err = errors.new({ kind = "decode", page = page, title = title })
    self._err = err
    self._ahead = nil
    return nil, err
  end
  if step ~= "more" then -- "last", or "end": an empty page, not handed out
    self._done = true
    self._ahead = nil
    if step == "end" then
      return nil
    end
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

-- The first item of the next page that has one (Pager:next's, once its
-- page is handed out), nil at the end, or nil, err, message.  Called in a
-- tail call: no frame holds the page handed out while the next one is made
-- (a collection in its pieces would mark it).
local function first_of_next_page(self)
  while true do
    self._buf, self._pos = nil, 1
    local buf, err = fetch_next(self)
    if not buf then
      if err == nil then
        return nil
      end
      return errors.fail(err)
    end
    if #buf > 0 then
      self._buf, self._pos = buf, 2
      return buf[1]
    end
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
  if buf and pos <= #buf then
    self._pos = pos + 1
    return buf[pos]
  end
  return first_of_next_page(self)
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

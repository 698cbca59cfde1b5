--- A client for the payments service's JSON:API interface.
--
-- Confirm a payout draft, read a deposit channel, list an account's
-- receiving addresses (docs/service-interface.md), read a payout and
-- wait for its txid, or call any other endpoint (`client:request`), with resources
-- returned as flattened, resolved Lua tables and numbers kept exact
-- (docs/contract.md).  The HTTP exchange and the JSON:API work are done in C
-- (`merchantapi.core`); this module checks arguments and adds the pager.
--
-- Every call returns `value, nil, res` on success and `nil, err[, res]` on
-- failure, where `err` is the error table of docs/contract.md ("Errors":
-- `kind`, `status`, `code`, `title`, `detail`, `pointer`, `errors`,
-- `amount`, `minimum`, `maximum`, `retryable`, `outcome`, `method`, `url`,
-- `request_id`, `message`; `tostring(err)` gives `err.message`) and `res` is
-- the response object ("The response object": `status`, `headers`,
-- `request_id`, `elapsed`, `meta`, `jsonapi`, `links`, `body`, `res:document()`).
-- A resource's own links and meta, and its relationships' links, meta and
-- linkage, are read with `merchantapi.links`, `merchantapi.meta` and
-- `merchantapi.relationship`.
-- Only argument *type* mistakes raise.
--
-- @module merchantapi
local core = require "merchantapi.core"
local pager = require "merchantapi.pager"
local json = require "merchantapi.json"
local request = require "merchantapi.request"
local wait = require "merchantapi.wait"
local transport = require "merchantapi.transport"

local type = type
local error = error
local pairs = pairs
local tostring = tostring
local ipairs = ipairs
local setmetatable = setmetatable
local getmetatable = getmetatable
local huge = math.huge
local jit = rawget(_G, "jit")

local M = {
  _NAME = "merchantapi",
  _VERSION = core._VERSION,
  --- JSON null in `res:document()`: a NULL light userdata, equal to `cjson.null`.
  null = core.null,
}

-- The product token the core appends to "merchantapi/<v> libcurl/<v>".
local LUA_TOKEN = (type(jit) == "table" and jit.version) or _VERSION

local CLIENT_OPTIONS = {
  base_url = "string",
  api_key = "string",
  timeout = "number",
  connect_timeout = "number",
  max_retries = "integer",
  max_body = "integer",
  cafile = "string",
  capath = "string",
  transport = "function",
  on_request = "function",
  on_response = "function",
}

-- Options handled here (merchantapi.transport), not by the core.
local WRAPPER_OPTIONS = { transport = true, on_request = true, on_response = true }

local LIST_OPTIONS = {
  order = "string",
  order_type = "string",
  page = "integer",
  per_page = "integer",
}

local function is_integer(v)
  return type(v) == "number" and v == v and v > -huge and v < huge and v % 1 == 0
end

-- Raises (at the caller of the public function) on an unknown option or an
-- option of the wrong type.  Values are checked later (usage errors).
local function check_options(opts, allowed, fname, argn)
  if opts == nil then
    return
  end
  if type(opts) ~= "table" then
    error(("bad argument #%d to '%s' (table expected, got %s)"):format(argn, fname, type(opts)), 3)
  end
  for k, v in pairs(opts) do
    local want = allowed[k]
    if not want then
      error(("unknown option '%s' to '%s'"):format(tostring(k), fname), 3)
    end
    local ok
    if want == "integer" then
      ok = is_integer(v)
    else
      ok = type(v) == want
    end
    if not ok then
      -- a number's value helps ("got 1.5"), except where it may be a secret
      error(("bad option '%s' to '%s' (%s expected, got %s)"):format(k, fname, want,
        (type(v) == "number" and k ~= "api_key") and tostring(v) or type(v)), 3)
    end
  end
end

local function check_id(id, fname)
  if type(id) ~= "string" then
    error(("bad argument #1 to '%s' (string expected, got %s)"):format(fname, type(id)), 3)
  end
end

-- The base URL without userinfo, for display.
local function display_url(url)
  return (url:gsub("^(%a[%w+.-]*://)[^/@]*@", "%1"):gsub("/+$", ""))
end

local Client = {}
Client.__index = Client

--- Creates a client.
--
-- syntax: `client, err = merchantapi.new(opts)`
--
-- @tparam table opts
--   `base_url` (string, required: `https://host[:port][/prefix]`, or
--   `http://` only to a loopback host),
--   `api_key` (string, sent as `Authorization: Bearer <key>`; without it no
--   Authorization header is sent),
--   `timeout` (seconds for one whole request, default 30),
--   `connect_timeout` (seconds, TLS included, default 10),
--   `max_retries` (integer, retries after the first attempt, default 2; see
--   docs/contract.md "Retries"),
--   `max_body` (bytes, default 16 MiB; a larger body fails as `decode`),
--   `cafile`, `capath` (trusted CAs for a private CA; the system store
--   otherwise; libcurl only),
--   `transport` (`function(request) -> res | nil, err`: performs each
--   request instead of libcurl, e.g. `require "merchantapi.transport.ngx"`
--   in OpenResty; the core still builds every request and decodes every
--   answer, retries included.  See `merchantapi.transport`),
--   `on_request`, `on_response` (`function(info)`: called for every attempt,
--   retries included, with `info.method`, `url`, `attempt`, and for
--   on_response `status`, `elapsed` (seconds), `request_id`, `error`,
--   `retry_in`; errors they raise are caught and reported as `hook_error`
--   on the result.  See `merchantapi.transport`).
--   With the environment variable `MERCHANTAPI_DEBUG=1` every attempt is
--   also logged as one line on stderr (never the key nor a header).
-- @return the client, or `nil, err` with `err.kind == "usage"` (missing or
--   invalid base_url, api_key with CR/LF/NUL, a negative timeout, ...) or
--   `"memory"`.  The api key never appears in `err` nor in `tostring(client)`.
-- @raise when opts is not a table, on an unknown option or an option of the
--   wrong type.
function M.new(opts)
  if type(opts) ~= "table" then
    error("bad argument #1 to 'new' (table expected, got " .. type(opts) .. ")", 2)
  end
  check_options(opts, CLIENT_OPTIONS, "new", 1)
  local copy = { user_agent = LUA_TOKEN }
  for k, v in pairs(opts) do
    if not WRAPPER_OPTIONS[k] then
      copy[k] = v
    end
  end
  local c, err = core.new(copy)
  if not c then
    return nil, err
  end
  if opts.transport or opts.on_request or opts.on_response then
    c = transport.wrap(c, opts) -- the same methods, through the transport / hooks
  end
  return setmetatable({ _core = c, base_url = display_url(opts.base_url) }, Client)
end

--- Confirms a payout draft: `PUT /api/public/v1/payouts/:id`
-- (interface, "Endpoints 1. Confirm payout draft").
--
-- syntax: `payout, err, res = client:confirm_payout(payout_id)`
--
-- The request is never resent by libcurl; it is retried only when it
-- provably never reached the server (`err.outcome == "not_sent"`) or was
-- answered 429.
--
-- @tparam string payout_id the draft's id (percent-encoded as one path segment).
-- @return the payout (status `"processing"`, `amount` a decimal string,
--   `accountCharged` and `author` resolved), nil, res; or `nil, err[, res]`:
--   `kind = "api"` with the 422 `code` of the interface (`amount`,
--   `minimum`, `maximum` filled for the limit codes), `"http"`,
--   `"transport"`, `"decode"`, `"usage"` (empty id, closed client).
--   `err.outcome` tells whether the payout may have been confirmed
--   (`"not_sent"`, `"unknown"`, `"rejected"`).
-- @raise when payout_id is not a string.
function Client:confirm_payout(payout_id)
  check_id(payout_id, "confirm_payout")
  return self._core:confirm_payout(payout_id)
end

--- Reads a deposit channel: `GET /api/public/v1/channels/:id`
-- (interface, "Endpoints 2. Read channel").
--
-- syntax: `channel, err, res = client:get_channel(channel_id)`
--
-- Retried on transport errors, 429 and 502/503/504 (up to `max_retries`).
--
-- @tparam string channel_id the channel's id.
-- @return the channel (`targetAccount` resolved), nil, res; or
--   `nil, err[, res]` (kinds `"api"`, `"http"`, `"transport"`, `"decode"`,
--   `"usage"`).
-- @raise when channel_id is not a string.
function Client:get_channel(channel_id)
  check_id(channel_id, "get_channel")
  return self._core:get_channel(channel_id)
end

--- Lists one page of an account's receiving addresses:
-- `GET /api/public/v1/accounts/:id/addresses`
-- (interface, "Endpoints 3. List account addresses").
--
-- syntax: `list, err, res = client:list_addresses(account_id, opts)`
--
-- @tparam string account_id the account's id.
-- @tparam[opt] table opts query parameters, each sent only when given:
--   `order` (string, e.g. `"created_at"`), `order_type` (`"asc"` or
--   `"desc"`), `page` (integer >= 1), `per_page` (integer >= 1).
-- @return an array of addresses (`network` resolved, `value` nil while
--   generated) with `list.meta` (`page`, `per_page`, `total` as integers,
--   also when the service writes them as strings of digits; a member the
--   service left out stays absent, `meta: {}` gives `{}`), nil, res; or
--   `nil, err[, res]` (kinds as `get_channel`; `"usage"` for page < 1,
--   per_page < 1 or another order_type; `"decode"` naming the member when
--   one of the three is anything else: "expected meta.total to be a
--   non-negative integer, got a fraction").
-- @raise when account_id is not a string, opts not a table, on an unknown
--   option or an option of the wrong type.
function Client:list_addresses(account_id, opts)
  check_id(account_id, "list_addresses")
  check_options(opts, LIST_OPTIONS, "list_addresses", 2)
  return self._core:list_addresses(account_id, opts)
end

--- A pager over every address of an account (docs/contract.md, "Lists and pages").
--
-- syntax: `pager = client:addresses(account_id, opts)`
--
-- @tparam string account_id the account's id.
-- @tparam[opt] table opts `per_page`, `order` (default `"created_at"`),
--   `order_type` (default `"asc"`), `start_page` (default 1), `max_pages`,
--   `concurrency` (see `merchantapi.paginate`).
-- @treturn table the pager: `each()`, `pages()`, `all()`, `next()`.
-- @raise when account_id is not a string, on an unknown option or an option
--   of the wrong type.
function Client:addresses(account_id, opts)
  check_id(account_id, "addresses")
  local c = self._core
  local ok, p = pcall(pager.paginate, function(params)
    return c:list_addresses(account_id, params)
  end, opts, function(params, first_page, count, concurrency)
    return c:list_addresses_pages(account_id, params, first_page, count, concurrency)
  end)
  if not ok then
    error(p, 2)
  end
  return p
end

--- Calls any endpoint of the service: `method` `path` under the base URL,
-- with the client's headers, decoding, errors and retry rules (the three
-- calls above are this call with a fixed path and primary type).
--
-- syntax: `value, err, res = client:request(method, path, opts)`
--
-- @tparam string method `"GET"`, `"HEAD"`, `"POST"`, `"PUT"`, `"PATCH"` or
--   `"DELETE"` (exactly; anything else is a usage error).
-- @tparam string path appended to the base URL as is, e.g.
--   `"/api/public/v1/payouts/" .. merchantapi.escape(id)`.  It must start
--   with `/` (not `//`: no absolute URL), be percent-encoded already (RFC
--   3986 path characters and `%XX`; `merchantapi.escape` encodes a segment),
--   and hold no `.` or `..` segment; CR, LF, NUL, spaces, `#` and non-ASCII
--   bytes are usage errors.  It may carry a query (`?a=1`).
-- @tparam[opt] table opts
--   `query` (table: appended after `?`, or `&` when the path has a query;
--   keys sorted bytewise, keys and values percent-encoded; a value is a
--   string, an integer, a boolean or an array of those, repeating the key),
--   `body` (a string, sent byte for byte; or a table, encoded as JSON by
--   `merchantapi.encode`'s rules: decimal strings stay strings, integers
--   stay integers, sorted keys, `merchantapi.null` as null, and fractions,
--   NaN, cycles refused).  The body goes out with `Content-Type:
--   application/vnd.api+json`.  GET and HEAD take no body.
-- @return on any 2xx: the primary data as the endpoints return it (a
--   resource, or a list with `.meta`, any `type`), or `merchantapi.null`
--   when the document has none (`data: null`, a meta-only document, a 2xx
--   without a body such as HEAD or 204) -- so the first value is truthy on
--   every success and `if not value` always means failure -- then nil and
--   res (`res.status`, `res.headers`, `res.meta`, `res.body`, ...).
--   On failure `nil, err[, res]` with `err.kind` `"api"` (an error
--   document, with its status), `"http"`, `"transport"`, `"decode"`,
--   `"usage"` (bad method, path, query or body: nothing was sent; a refused
--   body value is named by `err.pointer`, a JSON pointer into the body).
-- Retries: GET and HEAD are retried like `get_channel`.  POST, PUT, PATCH
--   and DELETE are treated like `confirm_payout`: never resent by libcurl,
--   retried only when provably not sent or answered 429, and a failure
--   carries `err.outcome` (`"not_sent"`, `"unknown"`, `"rejected"`).
-- @raise when method or path is not a string, opts not a table, on an
--   unknown option, a query that is not a table, or a body that is neither
--   a table nor a string.
function Client:request(method, path, opts)
  if type(method) ~= "string" then
    error("bad argument #1 to 'request' (string expected, got " .. type(method) .. ")", 2)
  end
  if type(path) ~= "string" then
    error("bad argument #2 to 'request' (string expected, got " .. type(path) .. ")", 2)
  end
  if opts ~= nil then
    if type(opts) ~= "table" then
      error("bad argument #3 to 'request' (table expected, got " .. type(opts) .. ")", 2)
    end
    for k, v in pairs(opts) do
      if k ~= "query" and k ~= "body" then
        error(("unknown option '%s' to 'request'"):format(tostring(k)), 2)
      end
      if k == "query" and type(v) ~= "table" then
        error("bad option 'query' to 'request' (table expected, got " .. type(v) .. ")", 2)
      end
      if k == "body" and type(v) ~= "table" and type(v) ~= "string" then
        error("bad option 'body' to 'request' (table or string expected, got " .. type(v) .. ")", 2)
      end
    end
  end
  local full, body, err = request.build(method, path, opts)
  if err then
    return nil, err
  end
  return self._core:request(method, full, body)
end

--- A pager over a list of any JSON:API endpoint that follows the list's
-- pagination links (JSON:API "Pagination": `links.next`), with the pager's
-- `each()`, `pages()`, `all()` and `next()` (docs/contract.md, "Lists and
-- pages").
--
-- syntax: `pager = client:paginate(path, opts)`
--
-- The first page is `GET path` (with `opts.query`), through `client:request`
-- (its headers, decoding, retries and errors).  Each following page is the
-- `links.next` of the page before -- an absolute URL, or a reference
-- resolved against the page's URL (RFC 3986) -- requested as is, as long as
-- it is on the base URL's scheme, host and port and under its path: a next
-- link elsewhere ends the walk with a `"decode"` error naming its origin
-- (after the items of the page that gave it), and the api key never leaves
-- for another origin.  The walk ends after a page without `links.next` (or
-- with `next: null`), after an empty page, after a page whose every id the
-- page before already yielded (a server that ignores its page parameter),
-- when a next link repeats one already followed, or after `max_pages`; ids
-- the page before yielded are dropped.  A list's `meta` is not read.
--
-- @tparam string path as for `client:request`, e.g.
--   `"/api/public/v1/accounts/" .. merchantapi.escape(id) .. "/addresses"`.
-- @tparam[opt] table opts `query` (table, for the first request, as for
--   `client:request`), `max_pages` (integer >= 1, no limit when absent).
-- @treturn table the pager; its pages are lists as `client:request` returns
--   them (arrays with `.meta` and `.links`).  A page that is not a list (a
--   single resource, or no primary data) ends the walk with a `"decode"`
--   error.
-- @raise when path is not a string, opts not a table, on an unknown option
--   or an option of the wrong type.
function Client:paginate(path, opts)
  if type(path) ~= "string" then
    error("bad argument #1 to 'paginate' (string expected, got " .. type(path) .. ")", 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("bad argument #2 to 'paginate' (table expected, got " .. type(opts) .. ")", 2)
  end
  for k, v in pairs(opts or {}) do
    if k ~= "query" and k ~= "max_pages" then
      error(("unknown option '%s' to 'paginate'"):format(tostring(k)), 2)
    end
    if k == "query" and type(v) ~= "table" then
      error("bad option 'query' to 'paginate' (table expected, got " .. type(v) .. ")", 2)
    end
    if k == "max_pages" and not (is_integer(v) and v >= 1) then
      error("bad option 'max_pages' to 'paginate' (integer >= 1 expected, got "
        .. (type(v) == "number" and tostring(v) or type(v)) .. ")", 2)
    end
  end
  local full, _, build_err = request.build("GET", path, { query = opts and opts.query })
  local base_url, c = self.base_url, self._core
  local pending, pending_err = full, build_err -- the next path to request, or the error to give
  local followed = {}
  local function fail(title, detail, url)
    return request.error { kind = "decode", title = title, detail = detail, method = "GET",
      path = url }
  end
  return pager.follow(function()
    if pending_err then
      local err = pending_err
      pending_err = nil
      return nil, err
    end
    local current = pending
    if current == nil then
      return nil
    end
    pending, followed[current] = nil, true
    local list, err = c:request("GET", current)
    if not list then
      if err.kind == "usage" and current ~= full and (err.title or ""):find("path", 1, true) then
        -- the server's link is what the request refused
        return nil, fail("links.next cannot be requested", err.title, current)
      end
      return nil, err
    end
    if list == M.null or type(list) ~= "table" or list.type ~= nil then
      return nil, fail("expected a list (an array as primary data)", nil, current)
    end
    local links = list.links
    local next_path, why = request.link_path(base_url, current, links and links.next)
    if why then
      pending_err = fail("links.next is not under the base URL", why, current)
    elseif next_path and not followed[next_path] then
      pending = next_path
    end
    return list
  end, { max_pages = opts and opts.max_pages })
end

--- Reads a payout: `GET /api/public/v1/payouts/:id` (interface, "Events"
-- and "States and transitions": follow a confirmed payout by reading it).
--
-- syntax: `payout, err, res = client:get_payout(payout_id)`
--
-- Retried like `get_channel`.
--
-- @tparam string payout_id the payout's id (percent-encoded as one path segment).
-- @return the payout (the shape of `confirm_payout`'s: `status`, `amount` a
--   decimal string, `accountCharged` and `author` resolved; `txid` nil until
--   broadcast), nil, res; or `nil, err[, res]` (kinds as `get_channel`; an
--   unknown id is `kind = "api"` with `status = 404` on the sandbox;
--   `"decode"` when data is not a payouts resource).
-- @raise when payout_id is not a string.
function Client:get_payout(payout_id)
  check_id(payout_id, "get_payout")
  return self._core:get_payout(payout_id)
end

--- Reads a payout until its `txid` is set (interface, "Events": a confirmed
-- payout is followed by reading it until `txid` is set).  Never confirms.
--
-- syntax: `payout, err, res = client:wait_for_txid(payout_id, opts)`
--
-- The first read is made at once; after a read without txid the next comes
-- `interval` later.  A retryable failure (429, 502-504, transport) is
-- backed off: `interval * 2^n` after n failures in a row, at most
-- `max_interval`, and never sooner than the response's Retry-After.  Reads
-- are made without the client's own retries, so every wait goes through
-- `sleep`.  The deadline is checked between reads (a read in flight is
-- bounded by the client's `timeout`); the last read is made at the deadline
-- unless a Retry-After forbids it.  The status is not checked: a payout
-- that is still a draft, or a partner_pay payout (never broadcast), is read
-- until the deadline.
--
-- @tparam string payout_id the payout's id.
-- @tparam[opt] table opts
--   `timeout` (seconds, default 60; 0 makes one read),
--   `interval` (seconds between reads, > 0, default 2),
--   `max_interval` (seconds, the backoff's cap, default 30),
--   `sleep` (`function(seconds)`; default `ngx.sleep` inside an OpenResty
--   phase that can yield, else `merchantapi.sleep`, which blocks the thread),
--   `clock` (`function() -> seconds`, monotonic; default `merchantapi.monotonic`),
--   `on_read` (`function(payout, err, res)`, called after every read).
-- @return the payout with its `txid`, nil, res.  Or `nil, err[, res]`:
--   `kind = "timeout"` when the deadline passed (`err.payout` the last payout
--   read, or nil; `err.last_error` the last read's error when it failed;
--   `err.attempts` reads made; `err.elapsed` seconds), or at once the error
--   of a read that waiting cannot fix (not retryable: 404, 401, decode, ...),
--   or `"usage"` (empty id, a negative timeout, interval <= 0).
-- @raise when payout_id is not a string, on an unknown option or an option
--   of the wrong type.
function Client:wait_for_txid(payout_id, opts)
  return wait.for_txid(self, payout_id, opts)
end

--- Frees the client's handle and closes its connection.  Safe to call more
-- than once; Lua 5.4's `__close` does the same, and the handle is freed by
-- its own finalizer once nothing refers to it.  Calls on a closed client
-- return `nil, err` with `err.kind == "usage"`.
--
-- syntax: `client:close()`
function Client:close()
  self._core:close()
end

-- No __gc on this table: a call on a client nobody else holds
-- (`merchantapi.new{...}:get_channel(id)`) tail-calls into the handle, and a
-- finalizer here could close the handle in the middle of that call.  The
-- handle (a userdata) is on the stack while it is in use and frees itself
-- when collected.
Client.__close = Client.close

function Client:__tostring()
  return "merchantapi.client (" .. self.base_url .. ")"
end

--- Turns a JSON:API document fetched some other way into the shapes the
-- client returns.
--
-- syntax: `resource_or_list, err, res = merchantapi.decode(body)`
--
-- @tparam string body the document's bytes.
-- @return the resource (a single `data`), the list (an array `data`, with
--   `.meta` and `.links`, the document's), or `merchantapi.null` when the
--   document has no primary data (`data: null`, a meta-only document) --
--   the values `client:request` gives for the same body -- then nil and res,
--   where res has `body` (the argument itself), `headers` (empty), `meta`,
--   `jsonapi`, `links` and `document()`, but no `status`.  On failure
--   `nil, err[, res]`: `kind = "decode"` (invalid JSON, nested deeper than
--   64, not JSON:API), or `kind = "api"` for an error document (`status` from
--   `errors[1].status`, `amount`/`minimum`/`maximum` as for the client; a
--   member that is not a string, such as a validation array in `detail`, as
--   its JSON text) with res.
-- @raise when body is not a string.
function M.decode(body)
  if type(body) ~= "string" then
    error("bad argument #1 to 'decode' (string expected, got " .. type(body) .. ")", 2)
  end
  return core.decode(body)
end

-- ---------------------------------------------------------------------------
-- Links, meta and relationships of a resource table.  The flattened tables
-- hold no key but `id`, `type`, `lid`, the attributes and the resolved
-- relationships; the rest of what a resource says is read through these
-- functions (the binding keeps it aside, see src/lua_merchantapi.c).
-- ---------------------------------------------------------------------------

local resource_info = core.resource_info
local rawget = rawget

local function check_resource(resource, fname)
  if type(resource) ~= "table" then
    error(("bad argument #1 to '%s' (table expected, got %s)"):format(fname, type(resource)), 3)
  end
  return resource_info(resource)
end

-- The public shape of one relationship record of an info table.
local function relationship_of(resource, name, rec)
  local data
  local state = rec.data
  if state == "one" or state == "many" then
    data = rawget(resource, name) -- the resolved table(s) the resource holds
  elseif state == "null" then
    data = M.null
  end
  return { data = data, links = rec.links, meta = rec.meta, linkage = rec.linkage }
end

--- The `links` object of a resource (JSON:API "Resource Objects": e.g.
-- `links.self`), as a Lua table: a link is a string, or a table with
-- `href` and `meta` (JSON:API 1.1 link objects); null members are absent.
--
-- syntax: `links = merchantapi.links(resource)`
--
-- @tparam table resource a resource table returned by `decode` or a call
--   (primary, included or reached through a relationship).
-- @return the links table, or nil when the resource has none (and for any
--   table this module did not return).  The table is shared: do not modify it.
-- @raise when resource is not a table.
function M.links(resource)
  local info = check_resource(resource, "links")
  return info and info.links
end

--- The `meta` object of a resource (JSON:API "Resource Objects"), as a Lua
-- table, numbers by the usual rules (exact: integers within 2^53, other
-- numbers as their source text); null members are absent.
--
-- syntax: `meta = merchantapi.meta(resource)`
--
-- @tparam table resource a resource table returned by `decode` or a call.
-- @return the meta table, or nil when the resource has none (and for any
--   table this module did not return).  The table is shared: do not modify it.
-- @raise when resource is not a table.
function M.meta(resource)
  local info = check_resource(resource, "meta")
  return info and info.meta
end

--- One relationship of a resource as the document gave it (JSON:API
-- "Relationships"), with what the flattened table cannot show.
--
-- syntax: `rel = merchantapi.relationship(resource, name)`
--
-- @tparam table resource a resource table returned by `decode` or a call.
-- @tparam string name the relationship's name (e.g. `"network"`).
-- @return nil when the resource has no relationship of that name (an
--   attribute is not one), else a new table:
--   `data` -- the resolved resource table (to-one) or array of them
--   (to-many), the very value `resource[name]` holds; `merchantapi.null` for
--   `"data": null` (an empty to-one relationship); nil when the relationship
--   has no `data` member (not loaded: only `links` or `meta`, e.g.
--   `meta.included = false`) -- nothing is known then;
--   `links` (e.g. `links.related`) and `meta`, tables or nil;
--   `linkage` -- the resource identifier object(s) as written: `{ type, id,
--   lid, meta }` (to-one) or an array of them (to-many; `linkage[i].meta` is
--   the meta of the i-th identifier), `merchantapi.null` for `data: null`,
--   nil when not loaded.  `links`, `meta` and `linkage` are shared: do not
--   modify them.
-- @raise when resource is not a table or name not a string.
function M.relationship(resource, name)
  local info = check_resource(resource, "relationship")
  if type(name) ~= "string" then
    error("bad argument #2 to 'relationship' (string expected, got " .. type(name) .. ")", 2)
  end
  local rec = info and info.relationships[name]
  if not rec then
    return nil
  end
  return relationship_of(resource, name, rec)
end

--- Every relationship of a resource, loaded or not.
--
-- syntax: `rels, names = merchantapi.relationships(resource)`
--
-- @tparam table resource a resource table returned by `decode` or a call.
-- @return a new table name -> what `merchantapi.relationship(resource,
--   name)` returns, and a new array of the names in document order (both
--   empty when the resource has no relationships, and for any table this
--   module did not return).
-- @raise when resource is not a table.
function M.relationships(resource)
  local info = check_resource(resource, "relationships")
  local rels, names = {}, {}
  if info then
    local recs = info.relationships
    for i, name in ipairs(info.names) do
      names[i] = name
      rels[name] = relationship_of(resource, name, recs[name])
    end
  end
  return rels, names
end

--- Encodes a Lua value as JSON the way `client:request` encodes a table
-- body (see `merchantapi.json`): sorted keys, exact integers, decimal
-- strings as strings, `merchantapi.null` as null, `merchantapi.array()` for
-- an empty array.
--
-- syntax: `text, err = merchantapi.encode(value)`
--
-- @return the JSON text, or nil and a `"usage"` error whose `pointer` is
--   the JSON pointer of the refused value (a fraction, NaN, a cycle, mixed
--   keys, invalid UTF-8, a function, ...).
function M.encode(value)
  local text, msg, pointer = json.encode(value)
  if not text then
    return nil, request.error { kind = "usage", title = "the value has no JSON form",
      detail = msg, pointer = pointer }
  end
  return text
end

--- Marks a table (default: a new one) as a JSON array, so that an empty
-- one encodes as `[]` rather than `{}`.
--
-- syntax: `t = merchantapi.array(t)`
M.array = json.array

--- Percent-encodes one path segment or query value: every byte but
-- `A-Z a-z 0-9 - . _ ~` becomes `%XX`.
--
-- syntax: `segment = merchantapi.escape(s)`
M.escape = request.escape

--- Blocks the calling thread for `seconds` (nanosleep).  The default
-- `sleep` of `wait_for_txid` outside OpenResty.
--
-- syntax: `merchantapi.sleep(seconds)`
M.sleep = core.sleep

--- Seconds on a monotonic clock (only differences mean anything).  The
-- default `clock` of `wait_for_txid`.
--
-- syntax: `t = merchantapi.monotonic()`
M.monotonic = core.monotonic

--- Builds a pager over any list call (see `merchantapi.pager`); or, given a
-- client, the pager of `client:paginate` that follows `links.next`.
--
-- syntax: `pager = merchantapi.paginate(fetch_page, opts[, fetch_pages])`
-- or `pager = merchantapi.paginate(client, path, opts)`
--
-- @tparam function|table fetch_page `fetch_page(params)` -> list | nil, err, with
--   params `{ page, per_page, order, order_type }`.  Or a client (made by
--   `merchantapi.new`): then the next two arguments are `path` and `opts` of
--   `client:paginate`, and the pager follows `links.next`.
-- @tparam[opt] table opts `per_page`, `order`, `order_type`, `start_page`,
--   `max_pages`, `concurrency` (with a client: the path, a string).
-- @tparam[opt] function fetch_pages `fetch_pages(params, first_page, count,
--   concurrency)` -> the lists of pages `first_page ..` up to the first
--   failure, and that failure's error (or nil): what `concurrency` uses once a
--   page has told the total; without it pages come one after the other
--   (with a client: the options of `client:paginate`, a table or nil).
-- @treturn table the pager.
-- @raise as `merchantapi.pager.paginate`, or as `client:paginate` given a
--   client.
function M.paginate(fetch_page, opts, fetch_pages)
  if getmetatable(fetch_page) == Client then
    -- merchantapi.paginate(client, path, opts): client:paginate(path, opts)
    local ok, p = pcall(Client.paginate, fetch_page, opts, fetch_pages)
    if not ok then
      error(p, 2)
    end
    return p
  end
  local ok, p = pcall(pager.paginate, fetch_page, opts, fetch_pages)
  if not ok then
    error(p, 2)
  end
  return p
end

return M

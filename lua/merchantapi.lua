--- A client for the payments service's JSON:API interface.
--
-- Confirm a payout draft, read a deposit channel, list an account's
-- receiving addresses (docs/service-interface.md), read a payout and
-- wait for its txid, or call any other endpoint (`client:request`), with resources
-- returned as flattened, resolved Lua tables and numbers kept exact
-- (docs/contract.md).  The HTTP exchange and the JSON:API work are done in C
-- (`merchantapi.core`); this module checks arguments and adds the pager.
--
-- Every call returns `value, nil, res` on success and exactly
-- `nil, err, message` on failure: the error table, the one-line message
-- last (`merchantapi.assert` raises it on every Lua) and the response
-- object are described in docs/guide/errors.md and docs/contract.md
-- ("Errors", "The response object").  A resource's own links and meta, and
-- its relationships', are read with `merchantapi.links`, `merchantapi.meta`
-- and `merchantapi.relationship`.  Only argument *type* mistakes raise.
--
-- @module merchantapi
local core = require "merchantapi.core"
local pager = require "merchantapi.pager"
local request = require "merchantapi.request"
local errors = require "merchantapi.errors"
local wait = require "merchantapi.wait"
local dispatch = require "merchantapi.dispatch"
local options = require "merchantapi.options"
local loop = require "merchantapi.loop"
local document = require "merchantapi.document"
local metrics = require "merchantapi.metrics"

local type, error, pairs, ipairs = type, error, pairs, ipairs
local jit = rawget(_G, "jit")
-- runs a call the way the client's calls go (merchantapi.dispatch)
local run = dispatch.call

local M = {
  _NAME = "merchantapi",
  _VERSION = core._VERSION,
  --- JSON null in `res:document()`: a NULL light userdata, equal to `cjson.null`.
  null = core.null,
}
-- decode, encode, array, links, meta, relationship(s): merchantapi.document's
for name, fn in pairs(document) do
  M[name] = fn
end

-- The product token the core appends to "merchantapi/<v> libcurl/<v>".
local LUA_TOKEN = (type(jit) == "table" and jit.version) or _VERSION

-- The options of merchantapi.new that Lua alone reads; the core checks the
-- names and types of the others, and refuses unknown ones (src/lua_options.c).
local LUA_CLIENT_OPTIONS = {
  transport = 'function or "libcurl"', on_request = "function", on_response = "function",
  metrics = "boolean or string",
}

-- client:paginate's own options (the pager's; traceparent, tracestate sent
-- with every page's request)
local FOLLOW_OPTIONS = { query = "table", max_pages = "integer >= 1", traceparent = "string",
  tracestate = "string" }
-- a pager's options that are sent with every page's call
local PAGE_CALL = { headers = true, traceparent = true, tracestate = true }

local check_options, check_arg = options.check, options.arg
-- the names and types of a call's options: the core's one check (src/lua_options.c)
local check_call_options = core.check_options

local Client = {}
Client.__index = Client

-- The calls of the core's endpoint table (core.endpoints), each
-- `client:<name>(id, opts)`, documented one by one below.
-- The options' names and types are checked by the core's method, from the row.
for _, e in ipairs(core.endpoints) do
  local name = e.name
  Client[name] = function(self, id, opts)
    check_arg(id, "string", name, 1)
    if opts ~= nil then
      check_arg(opts, "table", name, 2)
    end
    return run(self, name, id, opts)
  end
end

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
--   `max_retries` (integer, retries after the first attempt, 0 to 100,
--   default 2; see docs/contract.md "Retries"),
--   `max_body` (bytes, default 16 MiB; a larger body fails as `decode`).
--   Seconds given here and in the calls are > 0 and at most 1e9; a value
--   beyond a limit is a `"usage"` error, the C library's (the same titles
--   from C),
--   `deadline` (seconds for one whole call: every attempt, retry and wait;
--   default `(max_retries + 1) * timeout` plus the longest backoff of
--   `max_retries` retries (0.5 + 1 + 2 + 4 + 8 + 8 ... s), 91.5 s with the
--   other defaults.  Each attempt's timeout is cut to what is left, and a
--   retry whose wait (backoff or Retry-After) would outlast the deadline is
--   not made: the call ends at once with the last attempt's error and
--   `err.deadline_exceeded = true`.  Each call may set its own),
--   `settle` (boolean, default true: a confirm whose outcome is unknown is
--   settled by reading the payout, see `confirm_payout`),
--   `cafile`, `capath` (trusted CAs for a private CA; the system store
--   otherwise; libcurl only),
--   `proxy` (libcurl only; default none: proxy variables of the environment
--   such as `http_proxy`, `https_proxy`, `ALL_PROXY` are ignored):
--   `"http://[user:password@]host[:port]"` for that HTTP proxy (an https://
--   base URL is tunnelled through it with CONNECT), or `"env"` for the
--   environment's, read when the client is made (`http_proxy` for an http://
--   base URL, `https_proxy`/`HTTPS_PROXY` for https://, then
--   `all_proxy`/`ALL_PROXY`; `no_proxy`/`NO_PROXY` honoured).  The proxy
--   must be http://, and a loopback host when base_url is http:// (the key
--   never crosses anything else in clear): otherwise a `"usage"` error.  Not
--   with `transport`, which connects by itself (a `"usage"` error),
--   `transport` (`function(request) -> res | nil, err`: performs each
--   request instead of libcurl, e.g. `require "merchantapi.transport.ngx"`
--   in OpenResty; the core still builds every request and decodes every
--   answer, retries included.  See `merchantapi.dispatch`.  Without it,
--   inside OpenResty a client with neither `proxy` nor `cafile`/`capath`
--   uses `merchantapi.transport.ngx` by itself in the phases where
--   cosockets can yield (rewrite, access, content, timers, ...), so it
--   never blocks the worker, and libcurl elsewhere (`init_by_lua*`, ...).
--   `"libcurl"`: always libcurl, even there (it blocks the worker)),
--   `on_request`, `on_response` (`function(info)`: called for every attempt
--   with its record: docs/guide/observe.md, "One record per attempt"),
--   `headers` (table name -> value, both strings: headers of one's own sent
--   on every request, after the client's, over libcurl and any transport;
--   a call's own `headers` option replaces one of the same name, in any
--   case.  Names are HTTP tokens; `Authorization`, `Content-Type`,
--   `Accept`, `User-Agent`, `Host`, `Content-Length` and the headers that
--   frame the connection (`Transfer-Encoding`, `Connection`, `Keep-Alive`,
--   `Upgrade`, `TE`, `Trailer`, `Expect`, `Proxy-Connection`,
--   `Proxy-Authorization`) cannot be set; values hold no CR, LF, NUL or
--   other control byte (tab allowed) and no space at either end.  Hooks
--   and `MERCHANTAPI_DEBUG` never show them).
--   `metrics` (`true` or an OpenResty `lua_shared_dict`'s name: every
--   attempt counted, read by `client:metrics`; see `merchantapi.metrics`),
--   `debug` (boolean: one line per attempt on stderr, never the key nor a
--   header; default: as `MERCHANTAPI_DEBUG=1` says),
--   `trace` (boolean: a new W3C trace per call; a call's `traceparent` and
--   `tracestate` continue the caller's: `merchantapi.dispatch`, "Trace context").
-- @return the client, or `nil, err, message` with `err.kind == "usage"`
--   (missing or invalid base_url, api_key with CR/LF/NUL, a negative timeout, a refused
--   header or a name given twice in different cases, ...) or `"memory"`.
--   The api key never appears in `err` nor in `tostring(client)`.
-- @raise when opts is not a table, on an unknown option or an option of the
--   wrong type.
function M.new(opts)
  check_arg(opts, "table", "new", 1)
  check_options(opts, LUA_CLIENT_OPTIONS, "new", 1, nil, true) -- the others: core.new's
  local custom = type(opts.transport) == "function" and opts.transport or nil
  if custom and opts.proxy then
    return errors.fail(errors.new { kind = "usage",
      title = "proxy is libcurl's: a custom transport connects by itself" })
  end
  local client, rerr = dispatch.route(opts) -- how its calls go, decided once
  if not client then
    return errors.fail(rerr) -- no lua_shared_dict of that name
  end
  -- the core checks and reads what is its own (the hooks: it runs them over libcurl)
  local c, err = core.new(opts, LUA_TOKEN, client._hooks or nil)
  if not c then
    return errors.fail(err)
  end
  -- the base URL as the core checked and keeps it (src/url.c: no trailing "/")
  client._c, client.base_url = c, c:base_url()
  if client._metrics then -- from now on the core counts every attempt
    client._metrics = metrics.attach(c, client._metrics)
  end
  return setmetatable(client, Client)
end

--- Confirms a payout draft: `PUT /api/public/v1/payouts/:id`.
--
-- The service interface's endpoint "Confirm payout draft" (the first of
-- its "Endpoints").
--
-- syntax: `payout, err, res = client:confirm_payout(payout_id, opts)`
--
-- The request goes over HTTP/1.1 on a connection of its own and is never
-- resent by libcurl (every request that leaves is one of `err.attempts`);
-- it is retried only when it provably never reached the server
-- (`err.outcome == "not_sent"`) or was answered 429.
--
-- Settling: when the confirm ends with `err.outcome == "unknown"` (it may
-- have gone through), the client reads the payout (`GET`, retried like
-- `get_payout`, over the same transport, seen by the hooks), and trusts only
-- what the service says: when the read shows a `txid` (whatever its
-- `status`) or `status = "processing"`, the call returns it as confirmed,
-- with `res.settled_by = "read"` (res is then the read's response); any
-- other status leaves the error `outcome = "unknown"` with `err.payout`, the
-- payout read, its status named in the message.  Still `"draft"`:
-- confirming again is safe (`err.retryable` is true): the interface's only
-- transition out of draft is this confirm (draft -> processing), so a payout
-- confirmed meanwhile is no longer a draft and a second confirm is refused
-- by the service (the sandbox answers 422), never carried out twice.  A
-- status the interface does not show (`"expired"`, `"failed"`, ...), or a
-- `partner_pay` payout past processing (never broadcast: no txid), proves
-- nothing either way: `err.retryable` is false, read the payout before
-- acting.  If the read fails, the error is the confirm's, with the read's
-- error as `err.settle_error`.  The read has a deadline of its own, as long
-- as the confirm's.
--
-- @tparam string payout_id the draft's id (percent-encoded as one path segment).
-- @tparam[opt] table opts `headers` (table name -> value: added to the
--   client's `headers` for this call, replacing one of the same name; the
--   rules of `merchantapi.new`'s `headers`; a refused one is a `"usage"`
--   error with `outcome = "not_sent"`: nothing was sent), `deadline`
--   (seconds > 0, this call's; see `new`), `settle` (boolean; default: the
--   client's `settle`).
-- @return the payout (status `"processing"`, `amount` a decimal string,
--   `accountCharged` and `author` resolved), nil, res; or `nil, err, message`:
--   `kind = "api"` with the 422 `code` of the interface (`amount`,
--   `minimum`, `maximum` filled for the limit codes), `"http"`,
--   `"transport"`, `"decode"` (also for a payout of another id: "expected
--   payouts <id>, got payouts <other>"), `"usage"` (empty id, a deadline
--   <= 0, closed client, a refused header).  `err.outcome` tells whether the payout may have
--   been confirmed (`"not_sent"`, `"unknown"`, `"rejected"`).
-- @raise when payout_id is not a string, opts not a table, on an unknown
--   option or an option of the wrong type.
-- @function Client:confirm_payout

--- Reads a deposit channel: `GET /api/public/v1/channels/:id`.
--
-- The service interface's endpoint "Read channel" (the second of its
-- "Endpoints").
--
-- syntax: `channel, err, res = client:get_channel(channel_id, opts)`
--
-- Retried on transport errors, 429 and 502/503/504 (up to `max_retries`).
--
-- @tparam string channel_id the channel's id.
-- @tparam[opt] table opts `headers` (as for `confirm_payout`), `deadline`
--   (seconds > 0, this call's; see `new`).
-- @return the channel (`targetAccount` resolved), nil, res; or
--   `nil, err, message` (kinds `"api"`, `"http"`, `"transport"`, `"decode"`
--   (also for a channel of another id: "expected channels <id>, got
--   channels <other>"), `"usage"`).
-- @raise when channel_id is not a string, opts not a table, on an unknown
--   option or an option of the wrong type.
-- @function Client:get_channel

--- Lists one page of an account's receiving addresses:
-- `GET /api/public/v1/accounts/:id/addresses`.
--
-- The service interface's endpoint "List account addresses" (the third of
-- its "Endpoints").
--
-- syntax: `list, err, res = client:list_addresses(account_id, opts)`
--
-- @tparam string account_id the account's id.
-- @tparam[opt] table opts query parameters, each sent only when given:
--   `order` (string: `"created_at"`, the one the interface allows),
--   `order_type` (`"asc"` or `"desc"`), `page` (integer >= 1), `per_page`
--   (integer >= 1); and
--   `headers` (as for `confirm_payout`), `deadline` (seconds > 0, this
--   call's; see `new`), not sent.
-- @return an array of addresses (`network` resolved, `value` nil while
--   generated) with `list.meta` (`page`, `per_page`, `total` as integers,
--   also when the service writes them as strings of digits; a member the
--   service left out stays absent, `meta: {}` gives `{}`), nil, res; or
--   `nil, err, message` (kinds as `get_channel`; `"usage"`, nothing sent,
--   for page < 1, per_page < 1, another order or order_type -- the core's
--   limits, the C API's too; `"decode"` naming the member when
--   one of the three is anything else: "expected meta.total to be a
--   non-negative integer, got a fraction").
-- @raise when account_id is not a string, opts not a table, on an unknown
--   option or an option of the wrong type.
-- @function Client:list_addresses

--- A pager over every address of an account (docs/contract.md, "Lists and pages").
--
-- syntax: `pager = client:addresses(account_id, opts)`
--
-- @tparam string account_id the account's id.
-- @tparam[opt] table opts `per_page`, `order` (default `"created_at"`),
--   `order_type` (default `"asc"`), `start_page` (default 1), `max_pages`,
--   `concurrency` (see `merchantapi.paginate`); `headers`, `traceparent`,
--   `tracestate` (as for `confirm_payout`: sent with every page's request;
--   each attempt of each page is a span of the caller's trace).
-- @treturn table the pager: `each()`, `pages()`, `all()`, `next()`, and the
--   fields `announced`, `received`, `total_changed`, checking every page
--   by the rules of `merchantapi.pager`.
-- @raise when account_id is not a string, on an unknown option or an option
--   of the wrong type.
function Client:addresses(account_id, opts)
  check_arg(account_id, "string", "addresses", 1)
  local each, rest = {}, opts -- the call options of every page; the pager's
  if type(opts) == "table" then
    rest = {}
    for k, v in pairs(opts) do
      (PAGE_CALL[k] and each or rest)[k] = v
    end
  end
  check_call_options("list_addresses", each, "addresses") -- before the first page
  local function with_call(params) -- a new table from the pager: ours to fill
    for k, v in pairs(each) do
      params[k] = v
    end
    return params
  end
  local ok, p = pcall(pager.paginate, function(params)
    return run(self, "list_addresses", account_id, with_call(params))
  end, rest, function(params, first_page, count, concurrency)
    return dispatch.pages(self, account_id, with_call(params), first_page, count, concurrency)
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
--   `body` (a string, sent byte for byte; or a table, encoded by
--   `merchantapi.encode`'s rules).  The body goes out with `Content-Type:
--   application/vnd.api+json`.  GET and HEAD take no body.
--   `headers` (as for `confirm_payout`), `deadline` (seconds > 0, this
--   call's; see `new`).
-- @return on any 2xx: the primary data as the endpoints return it (a
--   resource, or a list with `.meta`, any `type`), or `merchantapi.null`
--   when the document has none (`data: null`, a meta-only document, a 2xx
--   without a body such as HEAD or 204) -- so the first value is truthy on
--   every success and `if not value` always means failure -- then nil and
--   res (`res.status`, `res.headers`, `res.meta`, `res.body`, ...).
--   A list's `meta` is data (JSON:API leaves it free-form): `page`,
--   `per_page` and `total` read as integers when they are counts, anything
--   else as it came (`meta.page = { offset = 0, limit = 10, total = 40 }`);
--   only `list_addresses` and `client:addresses` refuse them.
--   On failure `nil, err, message` with `err.kind` `"api"` (an error
--   document, with its status), `"http"`, `"transport"`, `"decode"`,
--   `"usage"` (bad method, path, query, body or header: nothing was sent; a
--   refused body value is named by `err.pointer`, a JSON pointer into the body).
-- Retries: GET and HEAD are retried like `get_channel`; POST, PUT, PATCH
--   and DELETE like `confirm_payout`, whose `err.outcome` their failures carry.
-- @raise when method or path is not a string, opts not a table, on an
--   unknown option, a query that is not a table, or a body that is neither
--   a table nor a string.
function Client:request(method, path, opts)
  check_arg(method, "string", "request", 1)
  check_arg(path, "string", "request", 2)
  if opts ~= nil then
    check_arg(opts, "table", "request", 3)
  end
  check_call_options("request", opts) -- before query and body are built
  local full, body, err = request.build(method, path, opts)
  if err then
    return errors.fail(err)
  end
  return run(self, "request", { method = method, path = full, body = body,
    deadline = opts and opts.deadline, headers = opts and opts.headers,
    traceparent = opts and opts.traceparent, tracestate = opts and opts.tracestate })
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
-- with `next: null`), after an empty page, when a next link repeats one
-- already followed, or after `max_pages`.  Of `merchantapi.pager`'s rules
-- only the id rule applies: a list's `meta` is not read (`pager.announced`
-- stays nil).
--
-- @tparam string path as for `client:request`, e.g.
--   `"/api/public/v1/accounts/" .. merchantapi.escape(id) .. "/addresses"`.
-- @tparam[opt] table opts `query` (table, for the first request, as for
--   `client:request`), `max_pages` (integer >= 1, no limit when absent),
--   `traceparent`, `tracestate` (as for `client:request`, on every page).
-- @treturn table the pager; its pages are lists as `client:request` returns
--   them (arrays with `.meta` and `.links`).  A page that is not a list (a
--   single resource, or no primary data) ends the walk with a `"decode"`
--   error.
-- @raise when path is not a string, opts not a table, on an unknown option
--   or an option of the wrong type.
function Client:paginate(path, opts)
  check_arg(path, "string", "paginate", 1)
  check_options(opts, FOLLOW_OPTIONS, "paginate", 2)
  local full, _, build_err = request.build("GET", path, { query = opts and opts.query })
  local base_url = self.base_url
  local pending, pending_err = full, build_err -- the next path to request, or the error to give
  local p -- the pager: its links.next rule (pager.follows) knows the paths requested
  local function fail(title, detail, url)
    return errors.new { kind = "decode", title = title, detail = detail, method = "GET",
      path = url }
  end
  p = pager.follow(function()
    if pending_err then
      local err = pending_err
      pending_err = nil
      return nil, err
    end
    local current = pending
    if current == nil then
      return nil
    end
    pending = nil
    local list, err = run(self, "request", { method = "GET", path = current,
      traceparent = opts and opts.traceparent, tracestate = opts and opts.tracestate })
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
    elseif pager.follows(p, next_path) then
      pending = next_path
    end
    return list
  end, { max_pages = opts and opts.max_pages })
  pager.follows(p, full) -- the first request: a next link back to it ends the walk
  return p
end

--- Reads a payout: `GET /api/public/v1/payouts/:id` (interface, "Events"
-- and "States and transitions": follow a confirmed payout by reading it).
--
-- syntax: `payout, err, res = client:get_payout(payout_id, opts)`
--
-- Retried like `get_channel`.
--
-- @tparam string payout_id the payout's id (percent-encoded as one path segment).
-- @tparam[opt] table opts `headers` (as for `confirm_payout`), `deadline`
--   (seconds > 0, this call's; see `new`).
-- @return the payout (as `confirm_payout` returns it; `txid` nil until
--   broadcast), nil, res; or `nil, err, message` (kinds as `get_channel`; an
--   unknown id is `kind = "api"` with `status = 404` on the sandbox;
--   `"decode"` when data is not a payouts resource, or another payout's).
-- @raise when payout_id is not a string, opts not a table, on an unknown
--   option or an option of the wrong type.
-- @function Client:get_payout

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
--   `on_read` (`function(payout, err, res)`, called after every read; res
--   the read's response, also when it failed).
-- @return the payout with its `txid`, nil, res.  Or `nil, err, message`:
--   `kind = "timeout"` when the deadline passed (`err.res` the last read's
--   response; `err.payout` the last payout
--   read, or nil; `err.last_error` the last read's error when it failed;
--   `err.attempts` reads made; `err.elapsed` seconds), or at once the error
--   of a read that waiting cannot fix (not retryable: 404, 401, decode --
--   also for a payout of another id --, ...),
--   or `"usage"` (empty id, a negative timeout, an interval or max_interval <= 0).
-- @raise when payout_id is not a string, on an unknown option or an option
--   of the wrong type.
-- @function Client:wait_for_txid
Client.wait_for_txid = wait.for_txid

--- Frees the client's handle and closes its connection.  Safe to call more
-- than once; Lua 5.4's `__close` does the same, and the handle is freed by
-- its own finalizer once nothing refers to it.  Calls on a closed client
-- return `nil, err, message` with `err.kind == "usage"`.
--
-- syntax: `client:close()`
function Client:close()
  self._c:close()
end

-- No __gc on this table: a call on a client nobody else holds
-- (`merchantapi.new{...}:get_channel(id)`) tail-calls into the handle, and a
-- finalizer here could close the handle in the middle of that call.  The
-- handle (a userdata) is on the stack while it is in use and frees itself
-- when collected.
Client.__close = Client.close
Client.metrics = metrics.read_out -- client:metrics([format]): see merchantapi.metrics

function Client:__tostring()
  return "merchantapi.client (" .. self.base_url .. ")"
end

--- A new event loop: calls that never block the host (a game's tick,
-- libuv, epoll); its tasks and methods are those of `merchantapi.loop`
-- (docs/guide/loop.md).
--
-- syntax: `loop, err = merchantapi.loop()`
--
-- @return the loop, or `nil, err, message` (`"memory"`, or `"transport"`
--   when its descriptor could not be made).
-- @function loop
M.loop = loop.new

--- `assert` for the results of a call: raises the error's one-line
-- message on every Lua and in OpenResty.
--
-- syntax: `value, ... = merchantapi.assert(client:get_channel(id))`
--
-- For code that stops on a failure.  The standard `assert(call())` does not
-- work everywhere: Lua 5.1's and 5.2's `assert` refuse a table message
-- ("bad argument #2 to 'assert' (string expected, got table)") -- on 5.3+,
-- LuaJIT and OpenResty it shows the message (docs/guide/errors.md).  This
-- one raises a string with the caller's position, which every host prints.  To act on the error's fields
-- (`err.outcome` of a confirm, `err.retryable`), test the results instead:
-- `local v, err = call()`.
--
-- @param v the first result of the call: the value, or nil (or false) on failure.
-- @param ... the other results: `err, message` on failure, passed through
--   on success.
-- @return every argument, when v is neither nil nor false.
-- @raise when v is nil or false: `tostring(err)` (for an error table its
--   `message`) with the caller's position (`script.lua:7: merchantapi: 404
--   not_found: ...`), or "assertion failed!" when there is no err.
function M.assert(v, ...)
  if v then
    return v, ...
  end
  local err = ...
  error(err == nil and "assertion failed!" or tostring(err), 2)
end

--- Percent-encodes one path segment or query value.
--
-- syntax: `segment = merchantapi.escape(s)`
--
-- Every byte but the unreserved ones of RFC 3986 (letters, digits and
-- `-._~`) becomes `%XX` (upper-case hex), `/` included: an id can never add
-- a segment.
--
-- @function escape
-- @tparam string s the bytes to encode.
-- @treturn string the encoded text.
M.escape = core.escape -- the core's one percent-encoding (src/url.c)

--- Waits `seconds`: inside a `merchantapi.loop` task the task yields to
-- its loop (a timer of the loop: the host keeps running), elsewhere it
-- blocks the calling thread (nanosleep).  The default `sleep` of
-- `wait_for_txid` outside OpenResty.
--
-- syntax: `merchantapi.sleep(seconds)`
--
-- @function sleep
-- @tparam number seconds how long (fractions allowed, at most a day; 0 or
--   less returns at once -- in a task, at the loop's next step).
M.sleep = loop.sleep

--- Seconds on a monotonic clock (only differences mean anything).  The
-- default `clock` of `wait_for_txid`.
--
-- syntax: `t = merchantapi.monotonic()`
--
-- @function monotonic
-- @treturn number seconds (`CLOCK_MONOTONIC`).
M.monotonic = core.monotonic

--- Builds a pager over any list call; or, given a client, the pager of
-- `client:paginate` that follows `links.next`.
--
-- syntax: `pager = merchantapi.paginate(fetch_page, opts[, fetch_pages])`
-- or `pager = merchantapi.paginate(client, path, opts)`
--
-- The pager's methods (`each`, `pages`, `all`, `next`) and its stop rules
-- are those of `merchantapi.pager`.
--
-- @tparam function|table fetch_page called as `fetch_page(params)` with a
--   new table `{ page = n, per_page = n|nil, order = s, order_type = s }`;
--   must return a list (an array of resources with `list.meta` holding
--   `page`, `per_page` and `total` when the server sends them), or
--   `nil, err`.  `nil, nil` ends the iteration.  A Lua error raised by
--   `fetch_page` itself is not caught.  Or a client (made by
--   `merchantapi.new`): then the next two arguments are `path` and `opts`
--   of `client:paginate`, and the pager follows `links.next`.
-- @tparam[opt] table opts (with a client: the path, a string)
--   `per_page` (integer, items per page; the server's default when absent),
--   `order` (string, default `"created_at"`),
--   `order_type` (`"asc"` (default, stable while items are created) or `"desc"`),
--   `start_page` (integer, default 1),
--   `max_pages` (integer, no limit when absent),
--   `concurrency` (integer >= 1, default 1: one page after the other.
--   More: once a page has told `meta.total`, the following pages are
--   fetched `concurrency` at a time through `fetch_pages` -- at most 1000
--   a call (the core's cap of one `list_addresses_pages` call; a larger
--   value fetches 1000 at a time, of which the core keeps at most 64 in
--   flight: no usage error); without
--   `fetch_pages`, or while no page has told `meta.total`, pages are
--   fetched one after the other, whatever the value).
-- @tparam[opt] function fetch_pages (with a client: the options of
--   `client:paginate`, a table or nil) called as
--   `fetch_pages(params, first_page, count, concurrency)` with a new table
--   `{ per_page = n|nil, order = s, order_type = s }`; must return an array
--   of the lists of pages `first_page ..` in page order -- every page before
--   the first that failed -- and that page's error (or nil when all came).
--   `client:addresses` passes the concurrent fetcher of the C core.  Items
--   come out exactly as without it: in page order, each once, by the same
--   stop and duplicate rules; an error on page k ends the iteration with it
--   after the items of the pages before k.
-- @treturn table the pager, checking every page as `client:addresses` does
--   (ids repeated in the walk, `meta.total`; see `merchantapi.pager`).
-- @raise on a `fetch_page` (or a given `fetch_pages`) that is not callable,
--   an unknown option or an option of the wrong type; given a client, as
--   `client:paginate`.
function M.paginate(fetch_page, opts, fetch_pages)
  -- merchantapi.paginate(client, path, opts): client:paginate(path, opts)
  local make = getmetatable(fetch_page) == Client and Client.paginate or pager.paginate
  local ok, p = pcall(make, fetch_page, opts, fetch_pages)
  if not ok then
    error(p, 2)
  end
  return p
end

return M

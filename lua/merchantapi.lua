--- A client for the payments service's JSON:API interface.
--
-- Confirm a payout draft, read a deposit channel, list an account's
-- receiving addresses (shared/spec/service-interface.md), with resources
-- returned as flattened, resolved Lua tables and numbers kept exact
-- (shared/API.md).  The HTTP exchange and the JSON:API work are done in C
-- (`merchantapi.core`); this module checks arguments and adds the pager.
--
-- Every call returns `value, nil, res` on success and `nil, err[, res]` on
-- failure, where `err` is the error table of shared/API.md ("Errors":
-- `kind`, `status`, `code`, `title`, `detail`, `pointer`, `errors`,
-- `amount`, `minimum`, `maximum`, `retryable`, `outcome`, `method`, `url`,
-- `request_id`, `message`; `tostring(err)` gives `err.message`) and `res` is
-- the response object ("The response object": `status`, `headers`,
-- `request_id`, `elapsed`, `meta`, `jsonapi`, `body`, `res:document()`).
-- Only argument *type* mistakes raise.
--
-- @module merchantapi
local core = require "merchantapi.core"
local pager = require "merchantapi.pager"

local type = type
local error = error
local pairs = pairs
local tostring = tostring
local setmetatable = setmetatable
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
}

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
      error(("bad option '%s' to '%s' (%s expected, got %s)"):format(k, fname, want,
        type(v) == "number" and tostring(v) or type(v)), 3)
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
--   shared/API.md "Retries"),
--   `max_body` (bytes, default 16 MiB; a larger body fails as `decode`),
--   `cafile`, `capath` (trusted CAs for a private CA; the system store
--   otherwise).
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
    copy[k] = v
  end
  local c, err = core.new(copy)
  if not c then
    return nil, err
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
--   generated) with `list.meta` (`page`, `per_page`, `total` as integers),
--   nil, res; or `nil, err[, res]` (kinds as `get_channel`; `"usage"` for
--   page < 1, per_page < 1 or another order_type).
-- @raise when account_id is not a string, opts not a table, on an unknown
--   option or an option of the wrong type.
function Client:list_addresses(account_id, opts)
  check_id(account_id, "list_addresses")
  check_options(opts, LIST_OPTIONS, "list_addresses", 2)
  return self._core:list_addresses(account_id, opts)
end

--- A pager over every address of an account (shared/API.md, "Lists and pages").
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
  end, opts)
  if not ok then
    error(p, 2)
  end
  return p
end

--- Frees the client's handle and closes its connection.  Safe to call more
-- than once; `__gc` and Lua 5.4's `__close` do the same.  Calls on a
-- closed client return `nil, err` with `err.kind == "usage"`.
--
-- syntax: `client:close()`
function Client:close()
  self._core:close()
end

Client.__gc = Client.close
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
-- @return the resource (a single `data`) or the list (an array `data`, with
--   `.meta`), nil, res -- where res has `body`, `headers` (empty), `meta`,
--   `jsonapi` and `document()`, but no `status`.  On failure `nil, err[, res]`:
--   `kind = "decode"` (invalid JSON, nested deeper than 64, not JSON:API,
--   no primary data) or `kind = "api"` for an error document (`status` from
--   `errors[1].status`, `amount`/`minimum`/`maximum` as for the client).
-- @raise when body is not a string.
function M.decode(body)
  if type(body) ~= "string" then
    error("bad argument #1 to 'decode' (string expected, got " .. type(body) .. ")", 2)
  end
  return core.decode(body)
end

--- Builds a pager over any list call (see `merchantapi.pager`).
--
-- syntax: `pager = merchantapi.paginate(fetch_page, opts)`
--
-- @tparam function fetch_page `fetch_page(params)` -> list | nil, err, with
--   params `{ page, per_page, order, order_type }`.
-- @tparam[opt] table opts `per_page`, `order`, `order_type`, `start_page`,
--   `max_pages`, `concurrency`.
-- @treturn table the pager.
function M.paginate(fetch_page, opts)
  local ok, p = pcall(pager.paginate, fetch_page, opts)
  if not ok then
    error(p, 2)
  end
  return p
end

return M

--- Account addresses: GET /accounts/:id/addresses with order, order_type, page
-- and per_page. Each account's addresses are JSON fragments, built once at
-- nginx start (before the worker forks); a page is their concatenation.
local faults = require "sandbox.faults"
local fixtures = require "sandbox.fixtures"
local jsontext = require "sandbox.jsontext"
local respond = require "sandbox.respond"
local state = require "sandbox.state"

local concat = table.concat
local format, gmatch, gsub, match, sub = string.format, string.gmatch, string.gsub, string.match,
  string.sub
local floor, min, tonumber, type = math.floor, math.min, tonumber, type
local quote = jsontext.quote

local _M = {}

local MAX_PER_PAGE, DEFAULT_PER_PAGE = 1000, 25
local MAX_PAGE = 1000000000

-- Accounts: `tag` is the number in their generated ids, `total` how many
-- addresses they have, `seed` the fixture whose addresses come first (oldest),
-- `start` the Unix time of address 1; address i is (i - 1) * 600 s younger.
local ACCOUNTS = {
  ["acct-empty"] = { tag = 0, total = 0 },
  ["acct-one"] = { tag = 1, total = 1, seed = "list_addresses.200" },
  ["acct-22"] = { tag = 22, total = 22, seed = "list_addresses.200",
    start = 1744355949 }, -- 2025-04-11T07:19:09Z, the fixture address
  ["acct-25000"] = { tag = 25000, total = 25000, start = 1704067200 }, -- 2024-01-01
  ["acct-generating"] = { tag = 2, total = 2, seed = "list_addresses.generating.200" },
}
local STEP_SECONDS = 600

-- The networks generated addresses belong to, in turn, and how their address
-- values look: `value(seed)` makes one from a seed string.
local BASE58_FIXES = { ["+"] = "p", ["/"] = "q", ["0"] = "z", O = "Z", I = "i", l = "L" }
local BECH32_FIXES = { ["1"] = "x", b = "z" }
local md5 = ngx.md5

local NETWORKS = {
  { id = "8ededca3-a1cd-4b46-8c3a-14915f706ab2",
    value = function(seed) -- "T" and 33 base58 characters
      local b64 = ngx.encode_base64(ngx.md5_bin(seed) .. ngx.md5_bin(seed .. "+"))
      return "T" .. gsub(sub(b64, 1, 33), "[+/0OIl]", BASE58_FIXES)
    end },
  { id = "12796357-69d4-4382-9677-0f55cb208854",
    value = function(seed) -- "0x" and 40 hex digits
      return "0x" .. md5(seed) .. sub(md5(seed .. "+"), 1, 8)
    end },
  { id = "5c0d3a8e-7b41-4f2a-9e6d-2a7f1c9b4e08",
    value = function(seed) -- "bc1q" and 38 bech32 characters
      return "bc1q" .. gsub(md5(seed) .. sub(md5(seed .. "+"), 1, 6), "[1b]", BECH32_FIXES)
    end,
    record = '{"id":"5c0d3a8e-7b41-4f2a-9e6d-2a7f1c9b4e08","type":"network",'
      .. '"attributes":{"currencyCode":"BTC","name":"Bitcoin","code":"btc:btc"}}' },
}

local network_records = {} -- network id -> minified `included` record
local books = {}           -- account id -> { fragments = {...}, networks = {...} }

local function generated(account, index)
  local network = NETWORKS[index % #NETWORKS + 1]
  local t = account.start + (index - 1) * STEP_SECONDS
  local created = os.date("!%Y-%m-%dT%H:%M:%S", t) .. format(".%03dZ", (index * 37) % 1000)
  local fragment = format('{"id":"%08d-0000-4000-8000-%012d","type":"addresses",'
    .. '"attributes":{"label":"Address %d","value":%s,"createdAt":"%s"},'
    .. '"relationships":{"account":{"meta":{"included":false}},'
    .. '"network":{"data":{"type":"network","id":"%s"}}}}',
    account.tag, index, index, quote(network.value(account.tag .. ":" .. index)), created, network.id)
  return fragment, network.id
end

-- The account's addresses, oldest first: fixture ones, then generated ones.
local function address_book(account)
  local fragments, networks = {}, {}
  if account.seed then
    local data = jsontext.members(fixtures.text(account.seed)).data
    for _, record in ipairs(jsontext.elements(data)) do
      if #fragments < account.total then
        local fragment = jsontext.minify(record)
        fragments[#fragments + 1] = fragment
        networks[#networks + 1] = match(fragment, '"network":{"data":{[^}]*"id":"([^"]+)"')
      end
    end
  end
  for index = #fragments + 1, account.total do
    fragments[index], networks[index] = generated(account, index)
  end
  return { fragments = fragments, networks = networks }
end

--- Build every account's address fragments; called once at nginx start.
function _M.prepare()
  for _, name in ipairs({ "list_addresses.200", "list_addresses.generating.200" }) do
    local doc = jsontext.members(fixtures.text(name))
    for _, record in ipairs(jsontext.elements(doc.included)) do
      local minified = jsontext.minify(record)
      network_records[match(minified, '^{"id":"([^"]+)"')] = minified
    end
  end
  for _, network in ipairs(NETWORKS) do
    if network.record then
      network_records[network.id] = network.record
    end
  end
  for account_id, account in pairs(ACCOUNTS) do
    books[account_id] = address_book(account)
  end
end

local function bad_parameter(name, detail)
  return respond.error(400, "invalid_parameter", "Invalid parameter", detail,
    '{"parameter":' .. quote(name) .. "}")
end

-- An integer query value in [low, high], its default when absent; nil if bad.
local function integer_arg(value, default, low, high)
  if value == nil then
    return default
  end
  if type(value) ~= "string" or not match(value, "^%d+$") or #value > 10 then
    return nil
  end
  local n = tonumber(value)
  return n >= low and n <= high and n or nil
end

-- How a page's meta is written: integers, as the interface shows, unless a
-- `meta-…` account id (below) asks for another rendering.
local function integer_meta(page, per_page, total)
  return format(',"meta":{"page":%d,"per_page":%d,"total":%d}', page, per_page, total)
end

local META_MODES = {
  -- the real service's published examples: counts as strings of digits
  strings = function(page, per_page, total)
    return format(',"meta":{"page":"%d","per_page":"%d","total":"%d"}', page, per_page, total)
  end,
  empty = function() return ',"meta":{}' end,
  none = function() return "" end,
  ["no-total"] = function(page, per_page)
    return format(',"meta":{"page":%d,"per_page":%d}', page, per_page)
  end,
}

local META_MEMBERS = { page = true, per_page = true, total = true }
local TOP_MEMBERS = { meta = true, links = true }

-- `meta-<mode>-<account>` (e.g. meta-strings-acct-22): that account's list
-- with the meta of META_MODES[mode]; `meta-<member>=<text>` (e.g.
-- meta-total="01"): acct-22's list with that meta member written as the raw
-- JSON text after `=`; `top-<member>=<text>` (e.g. top-links="x"): acct-22's
-- list with the top-level meta or links written as that text.
-- Returns the account id and the meta writer, or nil.
local function meta_spec(id)
  local mode, account = match(id, "^meta%-(%l[%l%-]-)%-(acct%-.+)$")
  if mode and META_MODES[mode] and ACCOUNTS[account] then
    return account, META_MODES[mode]
  end
  local member, text = match(id, "^meta%-([%l_]+)=(.*)$")
  if member and META_MEMBERS[member] then
    return "acct-22", function(page, per_page, total)
      local values = { page = page, per_page = per_page, total = total }
      local parts = {}
      for _, name in ipairs({ "page", "per_page", "total" }) do
        parts[#parts + 1] = format('"%s":%s', name, name == member and text or values[name])
      end
      return ',"meta":{' .. concat(parts, ",") .. "}"
    end
  end
  member, text = match(id, "^top%-(%l+)=(.*)$")
  if member and TOP_MEMBERS[member] then
    return "acct-22", function(page, per_page, total)
      return (member == "meta" and "" or integer_meta(page, per_page, total))
        .. format(',"%s":%s', member, text)
    end
  end
end

-- `links-<account>` (e.g. links-acct-22): that account's list paged by
-- JSON:API pagination links instead of `meta`; `links-<variant>-<account>`:
-- the same with a twist (LINK_VARIANTS). Returns the account id and the
-- variant ("plain" for none), or nil.
local LINK_VARIANTS = { foreign = true, relative = true, ignore = true }

local function links_spec(id)
  local account = match(id, "^links%-(acct%-.+)$")
  if account and ACCOUNTS[account] then
    return account, "plain"
  end
  local variant
  variant, account = match(id, "^links%-(%l+)%-(acct%-.+)$")
  if variant and LINK_VARIANTS[variant] and ACCOUNTS[account] then
    return account, variant
  end
end

-- The `links` member of page `page` (of `last`) for a `links-…` id: self,
-- first, last, prev (from page 2), next (up to the last page but one) --
-- absolute URLs on the scheme and host the request came to, the raw path of
-- the request, `page[number]` and `page[size]`, and `order`/`order_type`
-- when the request gave them. Variants: `foreign` writes next on another host
-- (elsewhere.invalid), `relative` writes every link as a path without scheme
-- and host, `ignore` serves page 1 whatever the page asked for while its
-- links go on (next on every page).
local function links_member(variant, page, per_page, last, args)
  local path = match(ngx.var.request_uri, "^[^?]*")
  local origin = ngx.var.scheme .. "://" .. (ngx.var.http_host or ngx.var.host)
  local extra = ""
  if args.order then
    extra = extra .. "&order=" .. ngx.escape_uri(args.order)
  end
  if args.order_type then
    extra = extra .. "&order_type=" .. ngx.escape_uri(args.order_type)
  end
  local function url(p, host)
    local target = format("%s?page[number]=%d&page[size]=%d%s", path, p, per_page, extra)
    if variant == "relative" then
      return quote(target)
    end
    return quote((host or origin) .. target)
  end
  local parts = { '"self":' .. url(page), '"first":' .. url(1), '"last":' .. url(last) }
  if page > 1 then
    parts[#parts + 1] = '"prev":' .. url(page - 1)
  end
  if page < last or variant == "ignore" then
    parts[#parts + 1] = '"next":' .. url(page + 1,
      variant == "foreign" and "http://elsewhere.invalid:" .. ngx.var.server_port or nil)
  end
  return ',"links":{' .. concat(parts, ",") .. "}"
end

local NO_SHAPE = {}

-- Page `page` of the book's addresses.  shape (optional, for the lying list
-- accounts): `drop` = k: the k oldest addresses are gone (deleted); `take`:
-- at most this many items on the page; `total`: the meta.total written
-- (default: how many there are).  meta (optional): the meta writer of a
-- `meta-…` account (default: integers).
local function render(book, page, per_page, descending, shape, meta)
  shape = shape or NO_SHAPE
  local all = #book.fragments
  local drop = shape.drop or 0
  local total = all - drop
  local data, included, seen = {}, {}, {}
  local first = (page - 1) * per_page + 1
  for k = first, min(first + min(per_page, shape.take or per_page) - 1, total) do
    local index = descending and all - k + 1 or k + drop
    data[#data + 1] = book.fragments[index]
    local network = book.networks[index]
    if not seen[network] then
      seen[network] = true
      included[#included + 1] = network_records[network]
    end
  end
  return concat({
    '{"data":[', concat(data, ","), '],"included":[', concat(included, ","), "]",
    (meta or integer_meta)(page, per_page, shape.total or total), ',"jsonapi":{"version":"1.0"}}',
  })
end

--- Write the body GET answers for `account_id`, page `page` of `per_page`
-- (ascending), to the file `path` (replaced at once: written aside, renamed).
function _M.write_page(path, account_id, page, per_page)
  local body = render(assert(books[account_id]), page, per_page, false)
  local aside = path .. ".new"
  local file = assert(io.open(aside, "wb"))
  assert(file:write(body))
  assert(file:close())
  assert(os.rename(aside, path))
end

-- `fault-page-<k>-<status>` (e.g. fault-page-3-500): acct-25000's list, except
-- that page k answers `status` (400-599) with an error document, every time.
-- For the pager's "an error on page k" (one failing page among good ones).
local function page_fault_spec(id)
  local k, status = match(id, "^fault%-page%-(%d+)%-(%d%d%d)$")
  k, status = tonumber(k), tonumber(status)
  if k and k >= 1 and status >= 400 and status <= 599 then
    return k, status
  end
end

local function page_fault(k, status)
  local args = ngx.req.get_uri_args(100)
  local page = integer_arg(args.page, 1, 1, MAX_PAGE) or 1
  local per_page = integer_arg(args.per_page, DEFAULT_PER_PAGE, 1, MAX_PER_PAGE) or DEFAULT_PER_PAGE
  if page == k then
    return respond.send(status, respond.error_doc(status, "sandbox_page_fault",
      "Sandbox page fault", format("page %d answers %d", k, status)))
  end
  if page > k then
    -- the pages after the failing one answer 50 ms late, so that a client
    -- fetching pages concurrently learns of the failure before they come:
    -- what it starts after that is then its own doing, not the race's
    ngx.sleep(0.05)
  end
  return respond.send(200, render(books["acct-25000"], page, per_page, args.order_type == "desc"))
end

-- Lists that contradict themselves, for the pager's checks (sandbox/README.md,
-- "Addresses"): each takes the query like any account and answers page
-- `page` of `per_page` (descending: newest first) with meta.page = page.
local LYING = {
  -- ignores page: odd pages are page 1 of acct-25000, even ones page 2
  ["fault-pages-alternate"] = function(page, per_page, descending)
    return render(books["acct-25000"], 2 - page % 2, per_page, descending, NO_SHAPE)
      :gsub('"meta":{"page":%d+', '"meta":{"page":' .. page, 1)
  end,
  -- acct-22, whose oldest address is deleted once page 1 was served: later
  -- pages have one address fewer before them, and say total 21
  ["fault-pages-shrink"] = function(page, per_page, descending)
    return render(books["acct-22"], page, per_page, descending,
      page == 1 and NO_SHAPE or { drop = 1 })
  end,
  -- acct-22 with page 2 cut to half its items (total 22 on every page)
  ["fault-pages-short"] = function(page, per_page, descending)
    return render(books["acct-22"], page, per_page, descending,
      page == 2 and { take = floor(per_page / 2) } or NO_SHAPE)
  end,
  -- acct-22's 22 addresses under meta.total 12
  ["fault-pages-overfull"] = function(page, per_page, descending)
    return render(books["acct-22"], page, per_page, descending, { total = 12 })
  end,
}

-- The query of a list: order and order_type as for any account, the page
-- number and size under the names given.  Returns order_type ("asc" when
-- absent), page, per_page; or false and the 400 sent for a bad one.
local function list_args(args, page_name, size_name)
  if args.order ~= nil and args.order ~= "created_at" then
    return false, bad_parameter("order", "order must be created_at")
  end
  local order_type = args.order_type
  if order_type ~= nil and order_type ~= "asc" and order_type ~= "desc" then
    return false, bad_parameter("order_type", "order_type must be asc or desc")
  end
  local page = integer_arg(args[page_name], 1, 1, MAX_PAGE)
  if not page then
    return false, bad_parameter(page_name, page_name .. " must be an integer from 1 to " .. MAX_PAGE)
  end
  local per_page = integer_arg(args[size_name], DEFAULT_PER_PAGE, 1, MAX_PER_PAGE)
  if not per_page then
    return false, bad_parameter(size_name,
      size_name .. " must be an integer from 1 to " .. MAX_PER_PAGE)
  end
  return order_type or "asc", page, per_page
end

-- `fault-page-<k>-<fault>` (e.g. fault-page-3-reset, fault-page-3-flaky-1-503,
-- a `~<tag>` allowed at the end): acct-22's list, except that page k plays
-- the fault id `fault-<fault>` (behaving: that page of acct-22). A flaky
-- fault counts the requests for page k alone, under `<id>/page<k>` (read with
-- /__sandbox/count like any id). For a fault on a page after the first,
-- where a client fetches pages at once.
local function page_fault_id_spec(id)
  local k, fault = match(id, "^fault%-page%-(%d+)%-(.+)$")
  k = tonumber(k)
  if k and k >= 1 and faults.is_fault("fault-" .. fault) then
    return k, "fault-" .. fault
  end
end

-- The fault `fault` played on a list whose behaving answer is body (the
-- requests counted under counter, or the fault's own id).
local function list_fault(fault, body, counter)
  return faults.respond(fault, {
    status = 200,
    body = body,
    resource_type = "addresses",
    wrong_type = "payouts",
    dup_key = "label",
    dup_first = "duplicate",
    counter = counter,
    normal = function() return 200, body end,
  })
end

local function page_fault_id(id, k, fault)
  local args = ngx.req.get_uri_args(100)
  local order_type, page, per_page = list_args(args, "page", "per_page")
  if not order_type then
    return page -- the 400 sent
  end
  local body = render(books["acct-22"], page, per_page, order_type == "desc")
  if page ~= k then
    return respond.send(200, body)
  end
  local counter = id .. "/page" .. k
  state.hit(counter)
  return list_fault(fault, body, counter)
end

-- `fault-pages-retry-<k>.<s>[-<k>.<s>...]` (e.g. fault-pages-retry-2.1-3.3):
-- acct-22's list, except that each `<k>.<s>` is one 503 for page k with
-- Retry-After: s; page k's n-th request answers the n-th item naming k, later
-- ones behave. Returns page -> { s, ... }, or nil for another id.
local function retry_pages_spec(id)
  local list = match(id, "^fault%-pages%-retry%-(.+)$")
  local waits = {}
  for item in gmatch(list and list .. "-" or "", "([^-]*)-") do
    local k, s = match(item, "^(%d+)%.(%d+)$")
    k, s = tonumber(k), tonumber(s)
    if not k or k < 1 or s > faults.MAX_RETRY_AFTER then
      return nil
    end
    waits[k] = waits[k] or {}
    waits[k][#waits[k] + 1] = s
  end
  return list and waits or nil
end

-- Each page's requests are counted under `<id>/page<k>`.
local function retry_pages(id, waits)
  local args = ngx.req.get_uri_args(100)
  local order_type, page, per_page = list_args(args, "page", "per_page")
  if not order_type then
    return page -- the 400 sent
  end
  local seen = state.hit(id .. "/page" .. page)
  local s = waits[page] and waits[page][seen]
  if s then
    ngx.header["Retry-After"] = tostring(s)
    return respond.send(503, respond.error_doc(503, "service_unavailable",
      "Service Unavailable", format("page %d: retry after %d s", page, s)))
  end
  return respond.send(200, render(books["acct-22"], page, per_page, order_type == "desc"))
end

-- A `links-…` list: page[number] and page[size] (JSON:API's page family),
-- order and order_type as for any account.
local function links_list(account_id, variant)
  local args = ngx.req.get_uri_args(100)
  local order_type, page, per_page = list_args(args, "page[number]", "page[size]")
  if not order_type then
    return page -- the 400 sent
  end
  local book = books[account_id]
  local last = math.max(1, math.ceil(#book.fragments / per_page))
  local links = links_member(variant, page, per_page, last, args)
  return respond.send(200, render(book, variant == "ignore" and 1 or page, per_page,
    order_type == "desc", NO_SHAPE, function() return links end))
end

--- Answer GET for the addresses of account `account_id`.
function _M.handle(method, account_id)
  if method ~= "GET" and method ~= "HEAD" then
    return respond.method_not_allowed("GET")
  end
  local links_account, variant = links_spec(account_id)
  if links_account then
    return links_list(links_account, variant)
  end
  local is_fault = faults.is_fault(account_id)
  local fault_page, fault_status = page_fault_spec(account_id)
  if fault_page then
    return page_fault(fault_page, fault_status)
  end
  local fault_k, page_fault_name = page_fault_id_spec(account_id)
  if fault_k then
    return page_fault_id(account_id, fault_k, page_fault_name)
  end
  local retry_waits = retry_pages_spec(account_id)
  if retry_waits then
    return retry_pages(account_id, retry_waits)
  end
  local meta_account, meta = meta_spec(account_id)
  if not ACCOUNTS[account_id] and not is_fault and not meta_account and not LYING[account_id] then
    return respond.not_found("no account " .. account_id)
  end
  local args = ngx.req.get_uri_args(100)
  local order_type, page, per_page = list_args(args, "page", "per_page")
  if not order_type then
    return page -- the 400 sent
  end
  if LYING[account_id] then
    return respond.send(200, (LYING[account_id](page, per_page, order_type == "desc")))
  end
  if not is_fault then
    return respond.send(200, render(books[meta_account or account_id], page, per_page,
      order_type == "desc", NO_SHAPE, meta))
  end
  -- a fault account lists acct-22's addresses when it behaves
  local body = render(books["acct-22"], page, per_page, order_type == "desc")
  return list_fault(account_id, body)
end

return _M

--- Internal: `merchantapi addresses ACCOUNT_ID`: one page of an account's addresses, or all of them.
-- All of them are written as the pages arrive, one page held at a time.
-- @module merchantapi.cli.addresses
local term = require "merchantapi.cli.term"
local status = require "merchantapi.cli.status"
local output = require "merchantapi.cli.output"
local client = require "merchantapi.cli.client"
local pages = require "merchantapi.pager"
local options = require "merchantapi.options"

local format, number = string.format, output.number
local is_integer, is_count = options.is_integer, options.is_count

local addresses = { summary = "List an account's receiving addresses ("
  .. client.endpoint("list_addresses") .. "): one page, or --all." }

-- an address's columns: these first (a table shows the first five), then the first page's others
local COLUMNS = { "id", "value", "network.code", "label", "createdAt",
  "network.name", "network.currencyCode", "network.id" }
local TABLE = { "id", "value", "network.code", "label", "createdAt" }
local LABELS = { id = "ID", value = "VALUE", ["network.code"] = "NETWORK", label = "LABEL", createdAt = "CREATED" }

--- Declares the command's arguments and options.
-- @param cmd the command's argparse parser.
function addresses.declare(cmd)
  cmd:argument("account_id", "The account's id."):argname("ACCOUNT_ID")
  cmd:flag("--all", "Every page, written as the pages arrive (one page held in memory, "
    .. "with the ids seen so far).")
  cmd:option("--per-page", "Addresses per page (default: the service's)."):argname("N"):convert(client.integer)
  cmd:option("--page", "The page (with --all: the first page)."):argname("N"):convert(client.integer)
  cmd:option("--order", "The order field (default created_at)."):argname("FIELD")
  -- its values, like the numbers' limits, are the core's rule (src/limits.c): a usage error
  cmd:option("--order-type", "asc (default: oldest first) or desc.")
  cmd:option("--concurrency", "With --all: pages fetched N at a time once the total is known.")
    :argname("N"):convert(client.integer)
end

-- a count for people: 25000 -> "25,000"
local function grouped(n)
  local text, k = number(n), 1
  while k > 0 do
    text, k = text:gsub("^(%d+)(%d%d%d)", "%1,%2")
  end
  return text
end

local function plural(n, word, s)
  return format("%s %s%s", number(n), word, n == 1 and "" or s)
end

-- every page, streamed; a failed page ends the output there (a JSON left unclosed)
local function all(c, o, w)
  local pager = c:addresses(o.account_id, { per_page = o.per_page, order = o.order,
    order_type = o.order_type, start_page = o.page, concurrency = o.concurrency })
  local show = term.isatty(2)
  -- a collection as soon as one ends: the pages written are garbage at once
  pcall(collectgarbage, "setpause", 100)
  w.start()
  local ok, err = pcall(function()
    for list in pager:pages() do
      w.page(list)
      term.flush()
      if show then -- a progress line, rewritten in place
        term.stderr:write(format("\rmerchantapi: %s, %d%s addresses", plural(pager.pages_fetched, "page", "s"),
          pager.received, pager.announced and (" of " .. number(pager.announced)) or ""))
        term.stderr:flush()
      end
    end
  end)
  if show and pager.pages_fetched > 0 then
    term.stderr:write("\n")
  end
  if not ok then
    if type(err) ~= "table" or not err.kind then
      error(err, 0) -- a bug or an exit, not a failed page
    end
    term.flush()
    term.note(format("the listing stopped after %d addresses of %s", pager.received,
      pager.announced and number(pager.announced) or "an unknown total"))
    status.fail(err)
  end
  w.finish({ received = pager.received, pages = pager.pages_fetched, total_changed = pager.total_changed,
    total = pager.announced }, plural(pager.received, "address", "es"))
end

--- Runs the command: writes the page, or every page.
-- @tparam table o the parsed command line.
function addresses.run(o)
  if o.concurrency and not o.all then
    term.die(status.EXIT.usage, "--concurrency is for --all")
  end
  local c = client.new(o)
  local w = output.list(o.format, o.format == "table" and TABLE or COLUMNS, LABELS, true)
  if o.all then
    return all(c, o, w)
  end
  local list, err = c:list_addresses(o.account_id, { page = o.page, per_page = o.per_page,
    order = o.order, order_type = o.order_type })
  if not list then
    status.fail(err)
  end
  w.start()
  w.page(list)
  local meta = list.meta or {}
  w.finish(meta, format("page %s: %s%s%s", meta.page and number(meta.page) or "?", plural(#list, "address", "es"),
    meta.total and (" of " .. number(meta.total)) or "",
    meta.per_page and format(" (%s per page)", number(meta.per_page)) or ""))
  -- one page that is not the last says so on stderr, whatever the format (stdout
  -- as it is): by the pager's stop rule, the page asked for and the sizes the
  -- service gave (else the one asked for)
  local page, total = o.page or 1, is_integer(meta.total) and meta.total or nil
  if not pages.is_last(page, #list, is_count(meta.per_page) and meta.per_page or o.per_page, total) then
    term.note(format("%s (page %s); %s: --all for every page", total and format("%s of %s addresses",
      grouped(#list), grouped(total)) or format("%s address%s", grouped(#list), #list == 1 and "" or "es"),
      grouped(page), total and "more pages follow" or "more pages may follow"))
  end
end

return addresses

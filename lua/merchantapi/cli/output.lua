--- Internal: the command-line tool's output: a resource or a list as a table, CSV or JSON.
-- JSON is `merchantapi.encode`'s (exact: decimal strings stay strings); a
-- table and CSV flatten nested tables to dotted keys ("targetAccount.balance").
-- @module merchantapi.cli.output
local merchantapi = require "merchantapi"
local term = require "merchantapi.cli.term"

local type, pairs, ipairs, tostring = type, pairs, ipairs, tostring
local format, concat, sort = string.format, table.concat, table.sort
local out, printable = term.out, term.printable

local output = {}

--- A number's text: integers as their digits (5.1: integral floats too).
-- @tparam number v the number.
-- @treturn string its text.
function output.number(v)
  if math.type and math.type(v) == "integer" then
    return tostring(v)
  end
  return format((v == v and v % 1 == 0 and v > -2 ^ 53 and v < 2 ^ 53) and "%.0f" or "%.17g", v)
end

--- The text of a scalar for a table or a CSV cell; nil for null or absent.
-- @param v the value.
-- @treturn string|nil the text.
function output.scalar(v)
  local t = type(v)
  return t == "string" and v or t == "number" and output.number(v) or t == "boolean" and tostring(v) or nil
end
local scalar = output.scalar

local function is_array(t)
  local n = 0
  for k in pairs(t) do
    n = type(k) == "number" and n + 1 or -math.huge
  end
  return n > 0 and n == #t
end

-- keys in display order: id, type, status first (in a resource), then the others sorted
local RANK = { id = 1, type = 2, status = 3 }
local function ordered_keys(t, ranked)
  local keys = {}
  for k in pairs(t) do
    keys[#keys + 1] = k
  end
  sort(keys, function(a, b)
    local ra, rb = ranked and RANK[a] or 4, ranked and RANK[b] or 4
    if ra ~= rb or type(a) ~= type(b) then
      return ra < rb or ra == rb and type(a) == "number"
    end
    return a < b
  end)
  return keys
end

-- The flattened pairs of a resource: { {"targetAccount.balance", "6194.43"}, ... },
-- arrays by index; a table that is one of its own ancestors is written as its type/id.
local function flatten(value)
  local rows, ancestors = {}, {}
  local function walk(v, prefix)
    if type(v) ~= "table" then
      rows[#rows + 1] = { prefix, v }
      return
    end
    if ancestors[v] then
      rows[#rows + 1] = { prefix, "(" .. tostring(v.type) .. " " .. tostring(v.id) .. ")" }
      return
    end
    ancestors[v] = true
    local keys = ordered_keys(v, not is_array(v))
    if #keys == 0 then
      rows[#rows + 1] = { prefix or "(empty)", is_array(v) and "[]" or "{}" }
    end
    for _, k in ipairs(keys) do
      local name = type(k) == "number" and format("%d", k) or k
      walk(v[k], prefix and (prefix .. "." .. name) or name)
    end
    ancestors[v] = nil
  end
  walk(value, nil)
  return rows
end

-- a copy of v without cycles (an ancestor met again becomes { type, id }), metatables kept
local function acyclic(v, ancestors)
  if type(v) ~= "table" then
    return v
  end
  ancestors = ancestors or {}
  if ancestors[v] then
    return { type = v.type, id = v.id }
  end
  ancestors[v] = true
  local copy = {}
  for k, x in pairs(v) do
    copy[k] = acyclic(x, ancestors)
  end
  ancestors[v] = nil
  return setmetatable(copy, type(getmetatable(v)) == "table" and getmetatable(v) or nil)
end

local function json(v)
  if v == nil then
    return "null"
  end
  local text, err = merchantapi.encode(acyclic(v))
  return text or term.die(require("merchantapi.cli.status").EXIT.decode,
    "cannot write the answer as JSON: " .. tostring(err))
end

local function pad(s, width)
  return s .. (" "):rep(width - #s)
end

-- RFC 4180: a field holding a comma, a quote, CR or LF quoted, its quotes doubled
local function csv_line(fields, n)
  local cells = {}
  for i = 1, n do
    local s = fields[i] or ""
    cells[i] = s:find('[,"\r\n]') and ('"' .. s:gsub('"', '""') .. '"') or s
  end
  return concat(cells, ",") .. "\n"
end

--- Writes one resource (or `merchantapi.null`, or a scalar) in a format.
-- @param v the value.
-- @tparam string fmt "table", "csv" or "json".
function output.resource(v, fmt)
  if fmt == "json" then
    return out(json(v ~= merchantapi.null and v or nil), "\n")
  end
  if type(v) ~= "table" then
    if fmt == "csv" then
      return out("value\n", csv_line({ scalar(v) }, 1))
    end
    return out(v == merchantapi.null and "(no data)" or printable(scalar(v) or "null"), "\n")
  end
  local rows, width = flatten(v), 0
  if fmt == "csv" then
    local names, values = {}, {}
    for i, r in ipairs(rows) do
      names[i], values[i] = r[1], scalar(r[2])
    end
    return out(csv_line(names, #rows), csv_line(values, #rows))
  end
  for _, r in ipairs(rows) do
    width = math.max(width, #r[1])
  end
  for _, r in ipairs(rows) do
    local text = scalar(r[2])
    out(pad(printable(r[1]), width + 2), text and printable(text) or "null", "\n")
  end
end

--- A list writer: `w.start()`, `w.page(items)` for each page, `w.finish(meta, summary)`.
-- The columns come from the first page: the `preferred` ones first (even when
-- that page lacks them), then every other key it has, sorted.
-- @tparam string fmt "table", "csv" or "json".
-- @tparam[opt] table preferred the first columns.
-- @tparam[opt] table labels a table's heading of a column, by its name.
-- @tparam[opt] boolean table_only a table shows the preferred columns only.
-- @treturn table the writer; `w.n` counts the items written.
function output.list(fmt, preferred, labels, table_only)
  local w = { n = 0 }
  local fixed = fmt == "table" and table_only
  local columns, index, width
  local warned = {}

  local function plan(items)
    columns, index = {}, {}
    for _, c in ipairs(preferred or {}) do
      columns[#columns + 1], index[c] = c, true
    end
    local extra = {}
    for i = 1, fixed and 0 or #items do
      for _, r in ipairs(flatten(items[i])) do
        if not index[r[1]] then
          index[r[1]], extra[#extra + 1] = true, r[1]
        end
      end
    end
    sort(extra)
    for _, c in ipairs(extra) do
      columns[#columns + 1] = c
    end
  end

  local function cells(item) -- the item's texts by column
    local by, row = {}, {}
    for _, r in ipairs(flatten(item)) do
      if index[r[1]] then
        by[r[1]] = scalar(r[2])
      elseif not fixed and not warned[r[1]] then
        warned[r[1]] = true
        term.note(format("item %d has a field '%s' that the first page did not have: not in the "
          .. "columns (--json writes every field)", w.n, r[1]))
      end
    end
    for i, c in ipairs(columns) do
      row[i] = by[c]
    end
    return row
  end

  local function line(row, blank) -- a table's line
    local parts = {}
    for i = 1, #columns do
      parts[i] = pad(row[i] and printable(row[i]) or blank, width[i])
    end
    out((concat(parts, "  "):gsub("%s+$", "")), "\n")
  end

  function w.page(items)
    if fmt == "json" then
      for i = 1, #items do
        w.n = w.n + 1
        out(w.n > 1 and ",\n" or "", json(items[i]))
      end
      return
    end
    if not columns then
      plan(items)
      local heads = {}
      width = {}
      for i, c in ipairs(columns) do
        heads[i] = (labels and labels[c]) or c
        width[i] = #heads[i]
      end
      for j = 1, fmt == "table" and #items or 0 do
        for i, text in pairs(cells(items[j])) do
          width[i] = math.max(width[i], #printable(text))
        end
      end
      if fmt == "csv" then
        out(csv_line(columns, #columns))
      else
        line(heads)
      end
    end
    for j = 1, #items do
      w.n = w.n + 1
      if fmt == "csv" then
        out(csv_line(cells(items[j]), #columns))
      else
        line(cells(items[j]), "-")
      end
    end
  end

  function w.start()
    out(fmt == "json" and '{"data":[\n' or "")
  end

  function w.finish(meta, summary)
    if fmt == "json" then
      out(w.n > 0 and "\n" or "", '],"meta":', json(meta), "}\n")
    elseif fmt == "table" then
      out(w.n == 0 and "(none)\n" or "", summary and (summary .. "\n") or "")
    elseif not columns then
      plan({})
      out(csv_line(columns, #columns))
    end
  end

  return w
end

return output

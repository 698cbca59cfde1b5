--- Metrics without an agent: the attempts of a client's calls counted by
-- OpenTelemetry's names, read out as a Lua table or as Prometheus text.
--
-- `merchantapi.new{ metrics = true }` (the counts in the client) or
-- `metrics = "<lua_shared_dict name>"` (in that OpenResty dict, shared by
-- the workers) has the core count every attempt where it ends, whatever
-- drives the call (src/metrics.c: cells found by their attributes, no
-- string or table made per attempt); without the option nothing is kept.
-- With a dict, each client's cells are added to it by a timer of the
-- worker every `FLUSH_PERIOD` seconds and when the worker exits (a request
-- does no dict operation), and by a read of the client's metrics.  The
-- metrics and their names: docs/guide/observe.md, "Metrics"; what each
-- counts: `recorder:record`.  The Prometheus text is our own formatter (no
-- Lua library for it in Debian 12: docs/decisions.md).
--
-- @module merchantapi.metrics
local core = require "merchantapi.core"
local errors = require "merchantapi.errors"
local check_arg = require("merchantapi.options").arg

local type = type
local pairs = pairs
local ipairs = ipairs
local tostring = tostring
local tonumber = tonumber
local setmetatable = setmetatable
local rawget = rawget
local floor = math.floor
local huge = math.huge
local concat = table.concat
local sort = table.sort

local M = {}

-- metrics.BOUNDARIES: the bucket boundaries (seconds) OpenTelemetry's HTTP
-- metrics conventions advise for `http.client.request.duration`; a bucket
-- holds the durations <= its boundary and > the one before, the last,
-- implicit one those > 10 s.
M.BOUNDARIES = { 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10 }
local BOUNDS = M.BOUNDARIES
local NB = #BOUNDS

local DURATION = "http.client.request.duration"
-- the histogram's attributes (the conventions require method, address and
-- port; status code and error.type when there is one), then ours
-- (the overflow cell, where the core counts the attempts whose attribute
-- set found no room, has OpenTelemetry's otel.metric.overflow = true alone)
local OVERFLOW = "otel.metric.overflow"
local DURATION_ATTRS = { "http.request.method", "server.address", "server.port",
  "http.response.status_code", "error.type", "merchantapi.endpoint", OVERFLOW }
local COUNTER_ATTRS = { "http.request.method", "merchantapi.endpoint", OVERFLOW }
local INTEGER_ATTR = { ["server.port"] = true, ["http.response.status_code"] = true }
local BOOLEAN_ATTR = { [OVERFLOW] = true }

--- Seconds between two flushes of a client's counts to its
-- `lua_shared_dict` (a worker's timer): what another worker's scrape may
-- lag behind.
M.FLUSH_PERIOD = 1

-- The instruments, in the order of the Prometheus text.
local METRICS = {
  { name = DURATION, type = "histogram", unit = "s", attrs = DURATION_ATTRS,
    description = "Duration of HTTP client requests." },
  { name = "merchantapi.client.retries", type = "counter", unit = "{attempt}", attrs = COUNTER_ATTRS,
    description = "Attempts that resend a request (http.request.resend_count >= 1)." },
  { name = "merchantapi.client.unknown_outcomes", type = "counter", unit = "{attempt}",
    attrs = COUNTER_ATTRS, description = "Attempts whose outcome is unknown." },
  { name = "merchantapi.client.settled_confirms", type = "counter", unit = "{read}",
    attrs = COUNTER_ATTRS, description = "Reads that settled a confirm whose outcome was unknown." },
  { name = "merchantapi.client.pages", type = "counter", unit = "{page}", attrs = COUNTER_ATTRS,
    description = "Pages of a list received." },
}
local BY_NAME = {}
for _, m in ipairs(METRICS) do
  BY_NAME[m.name] = m
end

-- The counters and the field of a core cell (src/lua_metrics.c) each reads.
local COUNTERS = {
  { "merchantapi.client.retries", "retries" },
  { "merchantapi.client.unknown_outcomes", "unknown_outcomes" },
  { "merchantapi.client.settled_confirms", "settled_confirms" },
  { "merchantapi.client.pages", "pages" },
}

-- A store's key: name \30 attribute values (\31 between, "" for none) \30
-- field (a bucket's index, "s" the sum, "v" a counter's value).
local function attr_key(rec, attrs)
  local out = {}
  for i = 1, #attrs do
    local v = rec[attrs[i]]
    v = v ~= nil and tostring(v) or ""
    if v:find("[\30\31]") then
      v = v:gsub("[\30\31]", "?")
    end
    out[i] = v
  end
  return concat(out, "\31")
end

-- The attributes of an attribute key, integers as integers.
local function attr_decode(akey, attrs)
  local t, i = {}, 0
  for s in (akey .. "\31"):gmatch("([^\31]*)\31") do
    i = i + 1
    local a = attrs[i]
    if s ~= "" and a then
      if INTEGER_ATTR[a] then
        t[a] = tonumber(s)
      elseif BOOLEAN_ATTR[a] then
        t[a] = s == "true"
      else
        t[a] = s
      end
    end
  end
  return t
end

-- Adds a core cell's counts (store:cells) under the store keys with
-- add(key, n): a count that is 0 only when `all` (a cell that must read 0).
local function add_cell(add, cell, all)
  local a = cell.attributes
  local head = DURATION .. "\30" .. attr_key(a, DURATION_ATTRS) .. "\30"
  local buckets = cell.buckets
  for i = 1, NB + 1 do
    local n = buckets[i]
    if all or n ~= 0 then
      add(head .. i, n)
    end
  end
  if all or cell.sum ~= 0 then
    add(head .. "s", cell.sum)
  end
  local tail = "\30" .. attr_key(a, COUNTER_ATTRS) .. "\30v"
  for _, c in ipairs(COUNTERS) do
    local n = cell[c[2]]
    if all or n ~= 0 then
      add(c[1] .. tail, n)
    end
  end
end

--- The dict a recorder adds to.
-- @local
-- @param where the name of a `lua_shared_dict` (`ngx.shared[where]`), or a dict.
-- @return the dict, or `nil, err` (`"usage"`: no `lua_shared_dict` of that name).
function M.dict_of(where)
  if type(where) ~= "string" then
    return where
  end
  local ngx = rawget(_G, "ngx")
  local dict = type(ngx) == "table" and ngx.shared and ngx.shared[where]
  if not dict then
    return nil, errors.new { kind = "usage",
      title = "metrics: no lua_shared_dict named '" .. where .. "'" }
  end
  return dict
end

local Recorder = {}
Recorder.__index = Recorder

-- A recorder over the core store `store`, its counts kept there (dict
-- nil) or added to dict by each flush.
local function make_recorder(store, dict)
  local each
  if dict then
    each = function()
      local keys, i = dict:get_keys(0), 0
      return function()
        while true do
          i = i + 1
          local k = keys[i]
          if k == nil then
            return nil
          end
          local v = dict:get(k)
          if type(v) == "number" then
            return k, v
          end
        end
      end
    end
  else
    each = function()
      local t = {}
      local function add(k, n)
        t[k] = (t[k] or 0) + n
      end
      for _, cell in ipairs(store:cells(false)) do
        add_cell(add, cell, true) -- every cell's counters, at 0 too
      end
      return pairs(t)
    end
  end
  return setmetatable({ _store = store, _dict = dict or nil, _each = each }, Recorder)
end

-- The recorders of this worker that flush to a dict, each until the flush
-- after its client was collected (owners: weak, the core client of each);
-- flushed by a timer of the worker, started once, when ngx.timer can be
-- used, and by a read of any of them.
local flushing = {}
local owners = setmetatable({}, { __mode = "v" })
local timer_started = false

local function flush_all()
  for r in pairs(flushing) do
    pcall(r.flush, r) -- a dict error never stops the others
    if owners[r] == nil then -- its client is gone: nothing more will come
      flushing[r] = nil
    end
  end
end

--- Makes a recorder fed by `recorder:record` (a client made with
-- `metrics` has one of its own, fed by the core).
--
-- syntax: `recorder, err = metrics.new(where)`
--
-- @param where `true` (the counts in the recorder), the name
--   of an OpenResty `lua_shared_dict` (`ngx.shared[name]`), or such a dict
--   itself (any object with `incr(key, n, init)`, `get(key)` and
--   `get_keys(0)`): the counts are kept in the recorder and added to the
--   dict by `recorder:flush` (and by each read).
-- @return the recorder, or `nil, err` with `err.kind == "usage"` when
--   there is no `ngx.shared` dict of that name.
function M.new(where)
  local dict, err
  if where ~= true then
    dict, err = M.dict_of(where)
    if not dict then
      return nil, err
    end
  end
  return make_recorder(core.metrics_new(), dict)
end

--- Records one attempt, as the core records each attempt of a client's
-- calls where it ends (src/metrics.c decides what counts).
--
-- syntax: `recorder:record(rec)`
--
-- @tparam table rec an attempt record (what `on_response` receives): its
--   `duration` (seconds) goes into `http.client.request.duration` under the
--   record's attributes; `http.request.resend_count` >= 1 counts a retry,
--   `merchantapi.outcome == "unknown"` an unknown outcome,
--   `merchantapi.settled_by == "read"` a settled confirm, and a successful
--   attempt (no `error.type`) of an endpoint that lists a page.  An
--   attribute set beyond the core's table of cells (128) is counted under
--   `otel.metric.overflow = true` alone.
function Recorder:record(rec)
  self._store:record(rec)
end

--- Adds the counts kept since the last flush to the recorder's dict (with
-- `incr(key, n, 0)`; a cell the dict has not had yet is written at 0 too,
-- so that it reads 0 before it counts); nothing for a recorder without a
-- dict.  A full dict drops what it cannot hold (docs/guide/observe.md).
--
-- syntax: `recorder:flush()`
function Recorder:flush()
  local dict = self._dict
  if not dict then
    return
  end
  local function add(k, n)
    dict:incr(k, n, 0)
  end
  for _, cell in ipairs(self._store:cells(true)) do
    add_cell(add, cell, cell.fresh)
  end
end

--- The counts, keyed by each metric's OpenTelemetry name.
--
-- syntax: `t = recorder:read()`
--
-- @treturn table `t[name] = { type = "histogram" or "counter", unit = string,
--   description = string, points = { ... } }` for each of the module's
--   metrics (`points` empty when nothing was counted), the histogram also with
--   `explicit_bounds` (`metrics.BOUNDARIES`).  A point is one attribute set:
--   `{ attributes = { [attribute name] = value }, value = n }` for a counter;
--   for the histogram `{ attributes = ..., count = n, sum = seconds,
--   bucket_counts = { n1, ..., n15 } }`, where `bucket_counts[i]` counts the
--   durations in bucket i alone (OpenTelemetry's data model: not cumulative;
--   the 15th holds those > 10 s).  Points are in the order of their attributes'
--   values; integers (`server.port`, `http.response.status_code`) are numbers.
function Recorder:read()
  if flushing[self] then
    flush_all() -- this worker's counts first: the dict's totals, as fresh as they can be
  else
    self:flush()
  end
  local out, points, keys = {}, {}, {}
  for _, m in ipairs(METRICS) do
    out[m.name] = { type = m.type, unit = m.unit, description = m.description, points = {},
      explicit_bounds = m.type == "histogram" and BOUNDS or nil }
    points[m.name], keys[m.name] = {}, {}
  end
  for k, v in self._each() do
    local name, akey, field = k:match("^([^\30]*)\30([^\30]*)\30(.*)$")
    local m = name and BY_NAME[name]
    if m then
      local p = points[name][akey]
      if not p then
        p = { attributes = attr_decode(akey, m.attrs) }
        if m.type == "histogram" then
          p.count, p.sum, p.bucket_counts = 0, 0, {}
          for i = 1, NB + 1 do
            p.bucket_counts[i] = 0
          end
        else
          p.value = 0
        end
        points[name][akey] = p
        keys[name][#keys[name] + 1] = akey
      end
      if field == "v" then
        p.value = p.value + v
      elseif field == "s" then
        p.sum = p.sum + v
      elseif m.type == "histogram" and tonumber(field) then
        local i = tonumber(field)
        p.bucket_counts[i] = p.bucket_counts[i] + v
        p.count = p.count + v
      end
    end
  end
  for name, list in pairs(keys) do
    sort(list)
    for i, akey in ipairs(list) do
      out[name].points[i] = points[name][akey]
    end
  end
  return out
end

-- A number in the exposition format: integers without a fraction, others
-- in the fewest digits that read back as the same double.
local function num(v)
  if v ~= v then
    return "NaN"
  elseif v == huge or v == -huge then
    return v > 0 and "+Inf" or "-Inf"
  elseif v == floor(v) and v > -2 ^ 53 and v < 2 ^ 53 then
    return ("%d"):format(v)
  end
  local s = ("%.15g"):format(v)
  return tonumber(s) == v and s or ("%.17g"):format(v)
end

-- OpenTelemetry's translation of a name to Prometheus: a character that is
-- not [a-zA-Z0-9_:] becomes "_".
local function prom_name(name)
  return (name:gsub("[^%w_:]", "_"))
end

-- A label value escaped as the text format asks: \ " and newline.
local ESCAPES = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n" }
local function label_value(v)
  return (tostring(v):gsub('[\\"\n]', ESCAPES))
end

-- `{a="x",b="y"` (no closing brace) for a point's attributes in the
-- metric's order, or "{" for none.
local function labels(m, attributes)
  local parts = {}
  for _, a in ipairs(m.attrs) do
    local v = attributes[a]
    if v ~= nil then
      parts[#parts + 1] = prom_name(a) .. '="' .. label_value(INTEGER_ATTR[a] and num(v) or v) .. '"'
    end
  end
  return "{" .. concat(parts, ",")
end

--- The counts as Prometheus text exposition format 0.0.4, with OpenTelemetry's
-- translation of names.
--
-- syntax: `text = recorder:prometheus()`
--
-- Dots become underscores, the unit `s` the suffix `_seconds`, a counter
-- gets `_total`; the histogram is written as cumulative `_bucket` lines
-- (`le` up to `+Inf`), `_sum` and `_count`.  A metric with no point is left
-- out.  Serve it as `Content-Type: text/plain; version=0.0.4`.
-- @treturn string the text, one `# HELP` and `# TYPE` line per metric, each
--   line ending with a newline ("" when nothing was counted).
function Recorder:prometheus()
  local t, out = self:read(), {}
  local function line(s)
    out[#out + 1] = s
  end
  for _, m in ipairs(METRICS) do
    local points = t[m.name].points
    if #points > 0 then
      local name = prom_name(m.name) .. (m.unit == "s" and "_seconds" or "")
        .. (m.type == "counter" and "_total" or "")
      line("# HELP " .. name .. " " .. m.description)
      line("# TYPE " .. name .. " " .. m.type)
      for _, p in ipairs(points) do
        local l = labels(m, p.attributes)
        if m.type == "histogram" then
          local sep, cum = l == "{" and "" or ",", 0
          for i = 1, NB + 1 do
            cum = cum + p.bucket_counts[i]
            line(("%s_bucket%s%sle=\"%s\"} %s"):format(name, l, sep, num(BOUNDS[i] or huge), num(cum)))
          end
          l = l == "{" and "" or l .. "}"
          line(name .. "_sum" .. l .. " " .. num(p.sum))
          line(name .. "_count" .. l .. " " .. num(p.count))
        else
          line(name .. (l == "{" and "" or l .. "}") .. " " .. num(p.value))
        end
      end
    end
  end
  return #out > 0 and concat(out, "\n") .. "\n" or ""
end

-- M._flush_pending: true while a client with a dict waits for this worker's
-- timer to start (dispatch.call tries again before each call).

--- Starts this worker's flush timer if it is not running and a client
-- with a dict asks for it: `ngx.timer.every(FLUSH_PERIOD)`, whose last run
-- (premature, at the worker's exit) flushes too.  Called when such a
-- client is made and before each of its calls until it started (a client
-- made in `init_by_lua`, where timers cannot be made, starts it with its
-- first call).
-- @local
function M.start_flush()
  if timer_started or next(flushing) == nil then
    M._flush_pending = not timer_started and next(flushing) ~= nil
    return
  end
  local ngx = rawget(_G, "ngx")
  local timer = type(ngx) == "table" and ngx.timer
  if timer and timer.every then
    local ok, made = pcall(timer.every, M.FLUSH_PERIOD, flush_all)
    timer_started = ok and made and true or false
  end
  M._flush_pending = not timer_started
end

--- The recorder of a client made with `metrics = where`: the core client
-- `c` counts every attempt of its calls in its own cells (from now on),
-- which this recorder reads, or flushes to the dict.
-- @local
-- @param c the core client (core.new's).
-- @param where true, or the dict (`metrics.dict_of` of `merchantapi.new`'s `metrics`).
-- @return the recorder.
function M.attach(c, where)
  local dict = where ~= true and where or nil
  local r = make_recorder(core.client_metrics(c), dict)
  if dict then
    flushing[r], owners[r] = true, c
    r:flush() -- every counter and histogram of the client in the dict at 0, now
    M.start_flush()
  end
  return r
end

--- A client's metrics: `client:metrics(format)` is this function.
--
-- syntax: `t, err = client:metrics()` or `text, err = client:metrics("prometheus")`
--
-- @tparam table client a `merchantapi.new` client.
-- @tparam[opt] string format nil: the table of `recorder:read` (keyed by
--   each metric's OpenTelemetry name); `"prometheus"`: the text of
--   `recorder:prometheus` (e.g. for a `/metrics` location).
-- @return the table or the text, or `nil, err` with `err.kind == "usage"`:
--   the client was made without `metrics`, or the format is unknown.
-- @raise when format is neither nil nor a string.
function M.read_out(client, format)
  if format ~= nil then
    check_arg(format, "string", "metrics", 1)
  end
  local recorder = client._metrics
  if not recorder then
    return nil, errors.new { kind = "usage",
      title = "metrics were not asked for: merchantapi.new{ metrics = true or a lua_shared_dict's name }" }
  elseif format == nil then
    return recorder:read()
  elseif format == "prometheus" then
    return recorder:prometheus()
  end
  return nil, errors.new { kind = "usage", title = "unknown metrics format '" .. format .. "'" }
end

return M

-- Metrics without an agent (merchantapi.metrics): the duration histogram of
-- OpenTelemetry's HTTP client conventions and our counters, from synthetic
-- attempt records; read() and the Prometheus text (a golden string); the
-- ngx.shared backend on a fake dict; new{ metrics = ... } and
-- client:metrics() on a client fed by its calls.
local metrics = require "merchantapi.metrics"
local merchantapi = require "merchantapi"
local helpers = require "helpers"

-- A record of the contract with the attributes given (a GET of get_channel
-- answered 200 unless overridden; false leaves one out).
local function rec(t)
  local r = { ["http.request.method"] = "GET", ["server.address"] = "127.0.0.1",
              ["server.port"] = 8089, ["http.response.status_code"] = 200,
              ["merchantapi.endpoint"] = "get_channel", duration = 0.01 }
  for k, v in pairs(t or {}) do
    if v == false then -- false: the attribute left out
      v = nil
    end
    r[k] = v
  end
  return r
end

local DURATION = "http.client.request.duration"

-- The points of metric t[name] whose attributes hold every pair of want
-- (false: the attribute absent).
local function points_with(t, name, want)
  local out = {}
  for _, p in ipairs(t[name].points) do
    local ok = true
    for k, v in pairs(want) do
      if p.attributes[k] ~= (v or nil) then
        ok = false
      end
    end
    if ok then
      out[#out + 1] = p
    end
  end
  return out
end

-- A stand-in for an ngx.shared dict: get, set, incr (with init, as
-- lua-nginx-module's: without init a missing key is an error) and
-- get_keys(max_count), 1024 keys at most when max_count is not given.
local function fake_dict()
  local d = { data = {}, incr_calls = 0 }
  function d.get(self, k)
    return self.data[k]
  end
  function d.set(self, k, v)
    self.data[k] = v
    return true
  end
  function d.incr(self, k, n, init)
    self.incr_calls = self.incr_calls + 1
    local v = self.data[k]
    if v == nil then
      if init == nil then
        return nil, "not found"
      end
      v = init
    end
    self.data[k] = v + n
    return v + n
  end
  function d.get_keys(self, max)
    max = max == nil and 1024 or max
    local keys = {}
    for k in pairs(self.data) do
      if max ~= 0 and #keys >= max then
        break
      end
      keys[#keys + 1] = k
    end
    return keys
  end
  return d
end

describe("merchantapi.metrics", function()
  it("uses the boundaries the OTel conventions advise for http.client.request.duration", function()
    assert.same({ 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10 },
      metrics.BOUNDARIES)
  end)

  it("places durations in buckets whose boundary is inclusive (le)", function()
    local r = metrics.new(true)
    for _, d in ipairs({ 0, 0.005, 0.0050001, 0.1, 10, 10.5 }) do
      r:record(rec { duration = d })
    end
    local h = r:read()[DURATION]
    assert.equal("histogram", h.type)
    assert.equal("s", h.unit)
    assert.equal(1, #h.points)
    local p = h.points[1]
    local want = {}
    for i = 1, 15 do
      want[i] = 0
    end
    want[1] = 2   -- 0 and 0.005 (le 0.005)
    want[2] = 1   -- 0.0050001 (le 0.01)
    want[6] = 1   -- 0.1 (le 0.1)
    want[14] = 1  -- 10 (le 10)
    want[15] = 1  -- 10.5 (> 10)
    assert.same(want, p.bucket_counts)
    assert.equal(6, p.count)
    assert.near(0 + 0.005 + 0.0050001 + 0.1 + 10 + 10.5, p.sum, 1e-9)
    assert.same({ ["http.request.method"] = "GET", ["server.address"] = "127.0.0.1",
                  ["server.port"] = 8089, ["http.response.status_code"] = 200,
                  ["merchantapi.endpoint"] = "get_channel" }, p.attributes)
  end)

  it("keeps attribute sets apart, error.type and a missing status code included", function()
    local r = metrics.new(true)
    r:record(rec { duration = 0.2 })
    r:record(rec { duration = 0.3 })
    r:record(rec { ["http.response.status_code"] = 503, ["error.type"] = "api", duration = 0.4 })
    r:record(rec { ["http.response.status_code"] = false, ["error.type"] = "transport" })
    r:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
    r:record(rec { ["server.port"] = 8443 })
    local points = r:read()[DURATION].points
    assert.equal(5, #points)
    local by = {}
    for _, p in ipairs(points) do
      local a = p.attributes
      by[table.concat({ a["merchantapi.endpoint"], a["server.port"],
        tostring(a["http.response.status_code"]), tostring(a["error.type"]) }, " ")] = p
    end
    assert.equal(2, by["get_channel 8089 200 nil"].count)
    assert.near(0.5, by["get_channel 8089 200 nil"].sum, 1e-12)
    assert.equal(1, by["get_channel 8089 503 api"].count)
    assert.equal(1, by["get_channel 8089 nil transport"].count)
    assert.equal(1, by["list_addresses 8089 200 nil"].count)
    assert.equal(1, by["get_channel 8443 200 nil"].count)
  end)

  it("counts retries, unknown outcomes, settled confirms and pages", function()
    local r = metrics.new(true)
    r:record(rec { ["http.request.resend_count"] = 0 })
    r:record(rec { ["http.request.resend_count"] = 1 })
    r:record(rec { ["http.request.resend_count"] = 2 })
    r:record(rec { ["http.request.method"] = "PUT", ["merchantapi.endpoint"] = "confirm_payout",
                   ["merchantapi.outcome"] = "unknown", ["error.type"] = "transport",
                   ["http.response.status_code"] = false })
    r:record(rec { ["merchantapi.endpoint"] = "get_payout", ["merchantapi.settled_by"] = "read" })
    r:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
    r:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
    r:record(rec { ["merchantapi.endpoint"] = "list_addresses", ["error.type"] = "decode" })
    r:record(rec { ["merchantapi.endpoint"] = false }) -- a generic request
    local t = r:read()
    -- every counter has a point per method and endpoint seen, 0 where it
    -- did not count: the counts (method and endpoint of each)
    local function counts(name)
      local m, c = t[name], {}
      assert.equal("counter", m.type)
      assert.equal(5, #m.points, name)
      for _, p in ipairs(m.points) do
        local a = p.attributes
        c[(a["http.request.method"] or "") .. " " .. (a["merchantapi.endpoint"] or "-")] = p.value
      end
      return c
    end
    local zero = { ["GET get_channel"] = 0, ["PUT confirm_payout"] = 0, ["GET get_payout"] = 0,
                   ["GET list_addresses"] = 0, ["GET -"] = 0 }
    local function with(k, v)
      local w = {}
      for a, b in pairs(zero) do
        w[a] = b
      end
      w[k] = v
      return w
    end
    assert.same(with("GET get_channel", 2), counts("merchantapi.client.retries"))
    assert.same(with("PUT confirm_payout", 1), counts("merchantapi.client.unknown_outcomes"))
    assert.same(with("GET get_payout", 1), counts("merchantapi.client.settled_confirms"))
    assert.same(with("GET list_addresses", 2), counts("merchantapi.client.pages"))
    local n = 0
    for _, p in ipairs(t[DURATION].points) do
      n = n + p.count
    end
    assert.equal(9, n) -- every record is an attempt of the histogram
  end)

  it("reads every metric, empty before any record; the Prometheus text is then empty", function()
    local r = metrics.new(true)
    local t = r:read()
    for _, name in ipairs({ DURATION, "merchantapi.client.retries", "merchantapi.client.unknown_outcomes",
                            "merchantapi.client.settled_confirms", "merchantapi.client.pages" }) do
      assert.same({}, t[name].points, name)
      assert.equal("string", type(t[name].description))
    end
    assert.equal(metrics.BOUNDARIES, t[DURATION].explicit_bounds)
    assert.equal("", r:prometheus())
  end)

  it("writes the Prometheus text exposition format with OTel's name translation", function()
    local r = metrics.new(true)
    local small = { ["http.request.method"] = "GET", ["merchantapi.endpoint"] = "list_addresses",
                    ["http.response.status_code"] = 200 }
    small.duration = 0.25
    r:record(small)
    small.duration, small["http.request.resend_count"] = 0.75, 1
    r:record(small)
    -- luacheck: push no max line length
    local want = [[
# HELP http_client_request_duration_seconds Duration of HTTP client requests.
# TYPE http_client_request_duration_seconds histogram
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.005"} 0
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.01"} 0
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.025"} 0
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.05"} 0
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.075"} 0
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.1"} 0
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.25"} 1
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.5"} 1
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="0.75"} 2
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="1"} 2
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="2.5"} 2
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="5"} 2
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="7.5"} 2
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="10"} 2
http_client_request_duration_seconds_bucket{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses",le="+Inf"} 2
http_client_request_duration_seconds_sum{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses"} 1
http_client_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",merchantapi_endpoint="list_addresses"} 2
# HELP merchantapi_client_retries_total Attempts that resend a request (http.request.resend_count >= 1).
# TYPE merchantapi_client_retries_total counter
merchantapi_client_retries_total{http_request_method="GET",merchantapi_endpoint="list_addresses"} 1
# HELP merchantapi_client_unknown_outcomes_total Attempts whose outcome is unknown.
# TYPE merchantapi_client_unknown_outcomes_total counter
merchantapi_client_unknown_outcomes_total{http_request_method="GET",merchantapi_endpoint="list_addresses"} 0
# HELP merchantapi_client_settled_confirms_total Reads that settled a confirm whose outcome was unknown.
# TYPE merchantapi_client_settled_confirms_total counter
merchantapi_client_settled_confirms_total{http_request_method="GET",merchantapi_endpoint="list_addresses"} 0
# HELP merchantapi_client_pages_total Pages of a list received.
# TYPE merchantapi_client_pages_total counter
merchantapi_client_pages_total{http_request_method="GET",merchantapi_endpoint="list_addresses"} 2
]]
    -- luacheck: pop
    assert.equal(want, r:prometheus())
  end)

  it("writes a histogram without attributes, and sums in the fewest digits", function()
    local r = metrics.new(true)
    r:record { duration = 0.1 }
    r:record { duration = 0.2 }
    local text = r:prometheus()
    assert.matches('\nhttp_client_request_duration_seconds_bucket{le="0.005"} 0\n', text, 1, true)
    assert.matches('\nhttp_client_request_duration_seconds_bucket{le="+Inf"} 2\n', text, 1, true)
    assert.matches("\nhttp_client_request_duration_seconds_sum 0.30000000000000004\n", text, 1, true)
    assert.matches("\nhttp_client_request_duration_seconds_count 2\n", text, 1, true)
    assert.matches("\nmerchantapi_client_retries_total 0\n", text, 1, true)
  end)

  it("escapes backslash, double quote and newline in label values", function()
    local r = metrics.new(true)
    r:record { ["http.request.method"] = "GET", ["server.address"] = 'a\\b"c\nd', duration = 1 }
    local text = r:prometheus()
    assert.matches('server_address="a\\\\b\\"c\\nd"', text, 1, true)
    for line in text:gmatch("[^\n]*\n") do
      assert.matches("^[#%w_]", line) -- no line starts inside a value
    end
    -- read() gives the value back as it was
    assert.equal('a\\b"c\nd', r:read()[DURATION].points[1].attributes["server.address"])
  end)

  it("counts attribute sets beyond its 128 cells in one overflow cell that says so", function()
    local r = metrics.new(true)
    for status = 400, 599 do -- 200 attribute sets: an open set of status codes
      r:record(rec { ["http.response.status_code"] = status, ["error.type"] = tostring(status),
                     ["http.request.resend_count"] = 1 })
    end
    local t = r:read()
    local points, n, over = t[DURATION].points, 0, nil
    for _, p in ipairs(points) do
      n = n + p.count
      if p.attributes["otel.metric.overflow"] then
        over = p
      end
    end
    assert.equal(129, #points) -- 128 cells and the overflow cell
    assert.equal(200, n) -- no attempt lost
    assert.same({ ["otel.metric.overflow"] = true }, over.attributes)
    assert.equal(72, over.count)
    local retries = points_with(t, "merchantapi.client.retries", { ["otel.metric.overflow"] = true })
    assert.equal(72, retries[1].value)
    assert.matches('\nhttp_client_request_duration_seconds_count{otel_metric_overflow="true"} 72\n',
      r:prometheus(), 1, true)
  end)

  describe("in an ngx.shared dict", function()
    it("keeps the counts until a flush adds them with incr(key, n, 0); reads with get_keys(0) and get", function()
      local dict = fake_dict()
      local r = assert(metrics.new(dict))
      r:record(rec { duration = 0.02, ["http.request.resend_count"] = 1 })
      r:record(rec { duration = 3 })
      assert.equal(0, dict.incr_calls) -- an attempt does no dict operation
      r:flush()
      -- a cell the dict has not had: each of its 15 buckets, the sum and 4 counters, 0s too
      assert.equal(20, dict.incr_calls)
      r:record(rec { duration = 3 })
      r:flush()
      assert.equal(22, dict.incr_calls) -- then only what changed: the bucket and the sum
      r:flush()
      assert.equal(22, dict.incr_calls) -- nothing new: nothing written
      r:record(rec { duration = 0.02, ["http.request.resend_count"] = 1 })
      local p = r:read()[DURATION].points[1] -- a read flushes this recorder first
      assert.equal(4, p.count)
      assert.near(6.04, p.sum, 1e-12)
      assert.equal(2, p.bucket_counts[3])
      assert.equal(2, p.bucket_counts[12]) -- 3 s: le 5
      assert.equal(8089, p.attributes["server.port"])
      assert.equal(2, r:read()["merchantapi.client.retries"].points[1].value)
    end)

    it("shows the counts of every recorder on the dict (the workers' totals)", function()
      local dict = fake_dict()
      local w1, w2 = metrics.new(dict), metrics.new(dict)
      w1:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
      w2:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
      w2:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
      w2:flush() -- as a worker's timer does; w1's read flushes its own
      assert.equal(w1:prometheus(), w2:prometheus())
      assert.equal(3, w1:read()["merchantapi.client.pages"].points[1].value)
      assert.matches('\nmerchantapi_client_pages_total{http_request_method="GET",'
        .. 'merchantapi_endpoint="list_addresses"} 3\n', w1:prometheus(), 1, true)
    end)

    it("ignores the dict's other keys", function()
      local dict = fake_dict()
      dict:set("sessions", 12)
      dict:set("name", "x")
      local r = metrics.new(dict)
      r:record(rec())
      local t = r:read()
      assert.equal(1, #t[DURATION].points)
      assert.is_nil(t.sessions)
    end)

    it("is a usage error when no lua_shared_dict has the name", function()
      local r, err = metrics.new("no_such_dict")
      assert.is_nil(r)
      assert.equal("usage", err.kind)
      assert.matches("no lua_shared_dict named 'no_such_dict'", err.message, 1, true)
    end)
  end)
end)

describe("merchantapi.new{ metrics = ... } and client:metrics()", function()
  local doc = helpers.fixture("get_channel.200")
  local function transport()
    return { status = 200, headers = { ["Content-Type"] = "application/vnd.api+json" }, body = doc }
  end
  local BASE = "http://127.0.0.1:9/"

  it("checks the option's type, and reads out nothing without it", function()
    assert.has_error(function()
      merchantapi.new { base_url = BASE, metrics = 1 }
    end, "bad option 'metrics' to 'new' (boolean or string expected, got 1)")
    local c = assert(merchantapi.new { base_url = BASE, transport = transport })
    local t, err = c:metrics()
    assert.is_nil(t)
    assert.equal("usage", err.kind)
    assert.matches("metrics were not asked for", err.message, 1, true)
    assert.is_false(c._hooks) -- no recorder, no hook: the calls pay nothing
    local c2 = assert(merchantapi.new { base_url = BASE, transport = transport, metrics = false })
    assert.is_nil((c2:metrics()))
  end)

  it("is a usage error for a lua_shared_dict that does not exist", function()
    local c, err = merchantapi.new { base_url = BASE, metrics = "nope" }
    assert.is_nil(c)
    assert.equal("usage", err.kind)
  end)

  it("records every attempt of the calls, before the user's own on_response", function()
    local seen = {}
    local c = assert(merchantapi.new { base_url = BASE, transport = transport, metrics = true,
      on_response = function(info)
        seen[#seen + 1] = info
      end })
    local id = helpers.CHANNEL_ID
    assert(c:get_channel(id))
    assert(c:get_channel(id))
    assert.equal(2, #seen)
    local t = assert(c:metrics())
    local ps = points_with(t, DURATION, { ["http.response.status_code"] = 200 })
    assert.equal(1, #ps)
    local p = ps[1]
    assert.equal(2, p.count)
    assert.equal("GET", p.attributes["http.request.method"])
    assert.equal(200, p.attributes["http.response.status_code"])
    assert.equal("127.0.0.1", p.attributes["server.address"])
    assert.equal(9, p.attributes["server.port"])
    local text = assert(c:metrics("prometheus"))
    assert.matches("\nhttp_client_request_duration_seconds_count{[^}]*} 2\n", text)
    local none, err = c:metrics("xml")
    assert.is_nil(none)
    assert.equal("usage", err.kind)
    assert.has_error(function() c:metrics(1) end,
      "bad argument #1 to 'metrics' (string expected, got number)")
  end)

  it("reads every counter and each endpoint's histogram at 0 before any call", function()
    local c = assert(merchantapi.new { base_url = BASE, transport = transport, metrics = true })
    local t = assert(c:metrics())
    local core = require "merchantapi.core"
    for _, e in ipairs(core.endpoints) do
      local want = { ["http.request.method"] = e.method, ["merchantapi.endpoint"] = e.name }
      local h = points_with(t, DURATION, want)
      assert.equal(1, #h, e.name)
      assert.equal(0, h[1].count)
      assert.equal("127.0.0.1", h[1].attributes["server.address"])
      assert.equal(9, h[1].attributes["server.port"])
      for _, name in ipairs({ "merchantapi.client.retries", "merchantapi.client.unknown_outcomes",
                              "merchantapi.client.settled_confirms", "merchantapi.client.pages" }) do
        local p = points_with(t, name, want)
        assert.equal(1, #p, name .. " " .. e.name)
        assert.equal(0, p[1].value)
      end
    end
    local text = assert(c:metrics("prometheus"))
    assert.matches('\nmerchantapi_client_unknown_outcomes_total{http_request_method="PUT",'
      .. 'merchantapi_endpoint="confirm_payout"} 0\n', text, 1, true)
    assert.matches('\nhttp_client_request_duration_seconds_count{http_request_method="GET",'
      .. 'server_address="127.0.0.1",server_port="9",merchantapi_endpoint="get_channel"} 0\n', text, 1, true)
  end)

  it("makes no hook of its own: the core counts, and records are made for a hook only", function()
    local c = assert(merchantapi.new { base_url = BASE, transport = transport, metrics = true })
    assert.is_false(c._hooks)
    assert(c:get_channel(helpers.CHANNEL_ID))
    local p = points_with(c:metrics(), DURATION, { ["http.response.status_code"] = 200 })
    assert.equal(1, p[1].count)
  end)

  describe("against the sandbox", function()
    before_each(function()
      helpers.reset()
    end)

    -- what a client's metrics counted, without the durations (timing)
    local function counts(t)
      local out = {}
      for name, m in pairs(t) do
        for _, p in ipairs(m.points) do
          local keys = {}
          for k, v in pairs(p.attributes) do
            if k ~= "server.port" then -- each driver's own sandbox URL
              keys[#keys + 1] = k .. "=" .. tostring(v)
            end
          end
          table.sort(keys)
          out[name .. " " .. table.concat(keys, ",")] = p.count or p.value
        end
      end
      return out
    end

    it("counts the same on every driver: libcurl, a loop task, a custom transport, pages", function()
      local socket_transport = require "support.socket_transport"
      local function traffic(c, tag)
        assert(c:get_channel("fault-flaky-2-503~" .. tag)) -- 503, 503, 200
        local all = assert(c:addresses("acct-22", { per_page = 5, concurrency = 4 }):all())
        assert.equal(22, #all) -- 5 pages
        local _, err = c:confirm_payout("fault-reset~" .. tag, { settle = false })
        assert.equal("unknown", err.outcome)
        return counts(assert(c:metrics()))
      end
      local function client(over)
        return helpers.client { max_retries = 2, metrics = true, transport = over }
      end
      local blocking = traffic(client(false), "mb")
      local in_loop = helpers.in_loop(function()
        return traffic(client(false), "ml")
      end)
      local custom = traffic(client(socket_transport), "mt")
      local host = "server.address=" .. helpers.base_url():match("//([^:/]+)")
      local function key(name, attrs)
        return name .. " " .. attrs:gsub("HOST", host)
      end
      local D = "http.client.request.duration"
      assert.equal(2, blocking[key(D, "error.type=503,http.request.method=GET,"
        .. "http.response.status_code=503,merchantapi.endpoint=get_channel,HOST")])
      assert.equal(5, blocking[key(D, "http.request.method=GET,http.response.status_code=200,"
        .. "merchantapi.endpoint=list_addresses,HOST")]) -- 5 pages
      assert.equal(2, blocking[key("merchantapi.client.retries",
        "http.request.method=GET,merchantapi.endpoint=get_channel")])
      assert.equal(5, blocking[key("merchantapi.client.pages",
        "http.request.method=GET,merchantapi.endpoint=list_addresses")])
      assert.equal(1, blocking[key("merchantapi.client.unknown_outcomes",
        "http.request.method=PUT,merchantapi.endpoint=confirm_payout")])
      assert.equal(0, blocking[key("merchantapi.client.settled_confirms",
        "http.request.method=PUT,merchantapi.endpoint=confirm_payout")])
      assert.same(blocking, in_loop)
      assert.same(blocking, custom)
    end)

    helpers.both("counts a GET retried after two 503s: three attempts, two retries", function()
      local c = helpers.client { max_retries = 2, metrics = true, transport = false }
      assert(c:get_channel("fault-flaky-2-503"))
      local t = c:metrics()
      local by_status = {}
      for _, p in ipairs(points_with(t, DURATION, { ["merchantapi.endpoint"] = "get_channel" })) do
        by_status[p.attributes["http.response.status_code"] or 0] = p
      end
      assert.equal(2, by_status[503].count)
      assert.equal(1, by_status[200].count)
      assert.equal(0, by_status[0].count) -- the endpoint's point at 0 from the start
      assert.is_nil(by_status[200].attributes["error.type"])
      assert.equal("string", type(by_status[503].attributes["error.type"]))
      assert.equal(2, points_with(t, "merchantapi.client.retries",
        { ["merchantapi.endpoint"] = "get_channel" })[1].value)
      c:close()
    end)
  end)
end)

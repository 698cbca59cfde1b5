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
    local function only(name)
      local m = t[name]
      assert.equal("counter", m.type)
      assert.equal(1, #m.points, name)
      return m.points[1]
    end
    local retries = only("merchantapi.client.retries")
    assert.equal(2, retries.value)
    assert.same({ ["http.request.method"] = "GET", ["merchantapi.endpoint"] = "get_channel" },
      retries.attributes)
    local unknown = only("merchantapi.client.unknown_outcomes")
    assert.equal(1, unknown.value)
    assert.same({ ["http.request.method"] = "PUT", ["merchantapi.endpoint"] = "confirm_payout" },
      unknown.attributes)
    assert.equal(1, only("merchantapi.client.settled_confirms").value)
    assert.equal("get_payout", only("merchantapi.client.settled_confirms").attributes["merchantapi.endpoint"])
    local pages = only("merchantapi.client.pages")
    assert.equal(2, pages.value)
    assert.equal("list_addresses", pages.attributes["merchantapi.endpoint"])
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
    assert.matches("\nhttp_client_request_duration_seconds_count 2\n$", text)
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

  describe("in an ngx.shared dict", function()
    it("adds with incr(key, n, 0) and reads back with get_keys(0) and get", function()
      local dict = fake_dict()
      local r = assert(metrics.new(dict))
      r:record(rec { duration = 0.02, ["http.request.resend_count"] = 1 })
      r:record(rec { duration = 3 })
      assert.equal(5, dict.incr_calls) -- a bucket and the sum per record, one retry
      local p = r:read()[DURATION].points[1]
      assert.equal(2, p.count)
      assert.near(3.02, p.sum, 1e-12)
      assert.equal(1, p.bucket_counts[3])
      assert.equal(1, p.bucket_counts[12]) -- 3 s: le 5
      assert.equal(8089, p.attributes["server.port"])
      assert.equal(1, r:read()["merchantapi.client.retries"].points[1].value)
    end)

    it("shows the counts of every recorder on the dict (the workers' totals)", function()
      local dict = fake_dict()
      local w1, w2 = metrics.new(dict), metrics.new(dict)
      w1:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
      w2:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
      w2:record(rec { ["merchantapi.endpoint"] = "list_addresses" })
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
    local p = t[DURATION].points[1]
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

  describe("against the sandbox", function()
    before_each(function()
      helpers.reset()
    end)

    helpers.both("counts a GET retried after two 503s: three attempts, two retries", function()
      local c = helpers.client { max_retries = 2, metrics = true, transport = false }
      assert(c:get_channel("fault-flaky-2-503"))
      local t = c:metrics()
      local by_status = {}
      for _, p in ipairs(t[DURATION].points) do
        by_status[p.attributes["http.response.status_code"]] = p
      end
      assert.equal(2, by_status[503].count)
      assert.equal(1, by_status[200].count)
      assert.is_nil(by_status[200].attributes["error.type"])
      assert.equal("string", type(by_status[503].attributes["error.type"]))
      assert.equal(2, t["merchantapi.client.retries"].points[1].value)
      c:close()
    end)
  end)
end)

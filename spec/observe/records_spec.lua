-- Attempt records by OpenTelemetry's HTTP client names (merchantapi.lua,
-- "Attempt records"): one per request that leaves -- a retry, the read that
-- settles a confirm, a failed page -- with the same names and values
-- whatever drives the call (blocking over libcurl, a loop task, a custom
-- Lua transport), the key in none of them, and the MERCHANTAPI_DEBUG line
-- made from a record by the one formatter (core.format_attempt).
local core = require "merchantapi.core"
local helpers = require "helpers"

local KEY = helpers.API_KEY

-- The keys a record may have (a hook's info also carries the older plain
-- fields beside them: method, url, attempt, status, ...).
local RECORD_KEYS = {
  "http.request.method", "server.address", "server.port", "url.full",
  "http.response.status_code", "error.type", "http.request.resend_count",
  "merchantapi.outcome", "merchantapi.endpoint", "merchantapi.request_id",
  "merchantapi.attempt", "merchantapi.settled_by", "duration", "start_time",
  "trace_id", "span_id", "parent_span_id",
}

-- The record part of an info, without what differs from run to run.
local function stable(info)
  local r = {}
  for _, k in ipairs(RECORD_KEYS) do
    r[k] = info[k]
  end
  r.duration, r.start_time, r["merchantapi.request_id"] = nil, nil, nil
  return r
end

local function url(path)
  return helpers.base_url() .. "/api/public/v1" .. path
end

local HOST, PORT = helpers.base_url():match("^https?://%[?([^/%]]+)%]?:(%d+)")
PORT = tonumber(PORT)

-- The record a call's attempt gives, beside what a case adds.
local function expect(path, fields)
  local r = { ["http.request.method"] = "GET", ["server.address"] = HOST,
              ["server.port"] = PORT, ["url.full"] = url(path), ["merchantapi.attempt"] = 1 }
  for k, v in pairs(fields) do
    r[k] = v
  end
  return r
end

for _, d in ipairs(helpers.drivers()) do
  local name, run, transport = d[1], d[2], d[3]

  describe("attempt records over " .. name, function()
    local r, c
    before_each(function()
      helpers.reset()
      r = helpers.recorder()
      c = helpers.client({ max_retries = 2, transport = transport,
                           on_request = r.on_request, on_response = r.on_response })
    end)
    after_each(function()
      for _, list in ipairs({ r.requests, r.responses }) do
        for i, info in ipairs(list) do
          helpers.assert_no_key(info, "record " .. i)
          helpers.assert_no_key(core.format_attempt(info), "the line of record " .. i)
          assert.is_true(info.start_time > 1.6e9 and info.start_time < 4e9)
        end
      end
      for _, info in ipairs(r.responses) do
        assert.equal("number", type(info.duration))
        assert.is_true(info.duration >= 0 and info.duration < 10)
        assert.matches("^%x+$", info["merchantapi.request_id"])
      end
      c:close()
    end)

    it("a GET retried after a 503: a record per attempt, resend_count on the resend", function()
      local ch, err = run(function() return c:get_channel("fault-flaky-1-503") end)
      assert.is_nil(err)
      assert.equal("fault-flaky-1-503", ch.id)
      local path = "/channels/fault-flaky-1-503"
      assert.equal(2, #r.responses)
      assert.same({
        expect(path, { ["http.response.status_code"] = 503, ["error.type"] = "503",
                       ["merchantapi.outcome"] = "retry", ["merchantapi.endpoint"] = "get_channel" }),
        expect(path, { ["http.response.status_code"] = 200, ["http.request.resend_count"] = 1,
                       ["merchantapi.outcome"] = "ok", ["merchantapi.endpoint"] = "get_channel",
                       ["merchantapi.attempt"] = 2 }),
      }, { stable(r.responses[1]), stable(r.responses[2]) })
      -- on_request: the part known before sending
      assert.same(expect(path, { ["merchantapi.endpoint"] = "get_channel" }), stable(r.requests[1]))
      assert.equal(1, r.requests[2]["http.request.resend_count"])
      assert.is_true(helpers.is_integer(r.responses[2]["http.request.resend_count"]))
      assert.is_true(helpers.is_integer(r.responses[1]["http.response.status_code"]))
      -- the one formatter: the MERCHANTAPI_DEBUG line of each record
      assert.matches("^merchantapi: GET " .. url(path):gsub("%p", "%%%0") .. " attempt 1/3: 503 "
        .. "%(api service_unavailable%) in [%d.]+ s, request id %x+, retry in [%d.]+ s$",
        core.format_attempt(r.responses[1]))
      assert.matches("attempt 2/3: 200 in [%d.]+ s, request id %x+$",
        core.format_attempt(r.responses[2]))
    end)

    it("a confirm answered 502 and settled by the read: unknown, then settled_by read", function()
      local payout, err, res = run(function() return c:confirm_payout("fault-applied-502") end)
      assert.is_nil(err)
      assert.equal("fault-applied-502", payout.id)
      assert.equal("read", res.settled_by)
      local path = "/payouts/fault-applied-502"
      assert.equal(2, #r.responses)
      assert.same({
        expect(path, { ["http.request.method"] = "PUT", ["http.response.status_code"] = 502,
                       ["error.type"] = "502", ["merchantapi.outcome"] = "unknown",
                       ["merchantapi.endpoint"] = "confirm_payout" }),
        expect(path, { ["http.response.status_code"] = 200, ["merchantapi.outcome"] = "ok",
                       ["merchantapi.endpoint"] = "get_payout",
                       ["merchantapi.settled_by"] = "read" }),
      }, { stable(r.responses[1]), stable(r.responses[2]) })
      assert.equal(res.request_id, r.responses[2]["merchantapi.request_id"])
    end)

    it("a failed page: the pages before it ok, the failed one an error of list_addresses", function()
      local items, err = run(function()
        return c:addresses("fault-page-3-500", { per_page = 10, concurrency = 1 }):all()
      end)
      assert.is_nil(items)
      assert.equal(500, err.status)
      assert.equal(3, #r.responses)
      local function page(p)
        return "/accounts/fault-page-3-500/addresses?order=created_at&order_type=asc&page=" .. p
          .. "&per_page=10"
      end
      for p = 1, 2 do
        assert.same(expect(page(p), { ["http.response.status_code"] = 200,
                                      ["merchantapi.outcome"] = "ok",
                                      ["merchantapi.endpoint"] = "list_addresses" }),
          stable(r.responses[p]))
      end
      assert.same(expect(page(3), { ["http.response.status_code"] = 500, ["error.type"] = "500",
                                    ["merchantapi.outcome"] = "error",
                                    ["merchantapi.endpoint"] = "list_addresses" }),
        stable(r.responses[3]))
      assert.matches("attempt 1/3: 500 %(api sandbox_page_fault%)", core.format_attempt(r.responses[3]))
    end)

    it("client:request: the endpoint its path matches, nil for an unlisted one", function()
      run(function()
        c:request("GET", "/api/public/v1/channels/" .. helpers.CHANNEL_ID .. "?x=1")
        c:request("GET", "/api/public/v1/unlisted/x")
      end)
      assert.equal("get_channel", r.responses[1]["merchantapi.endpoint"])
      assert.equal(url("/channels/" .. helpers.CHANNEL_ID .. "?x=1"), r.responses[1]["url.full"])
      assert.is_nil(r.responses[2]["merchantapi.endpoint"])
      assert.equal("404", r.responses[2]["error.type"])
      assert.equal("error", r.responses[2]["merchantapi.outcome"])
    end)

    it("a transport failure: error.type is the kind, no status", function()
      local dead = helpers.client({ base_url = "http://127.0.0.1:1", max_retries = 0,
                                    transport = transport, on_response = r.on_response })
      local _, err = run(function() return dead:get_channel("x") end)
      assert.equal("transport", err.kind)
      local last = r.responses[#r.responses]
      assert.equal("transport", last["error.type"])
      assert.is_nil(last["http.response.status_code"])
      assert.equal("error", last["merchantapi.outcome"])
      assert.equal("127.0.0.1", last["server.address"])
      assert.equal(1, last["server.port"])
      r.responses[#r.responses] = nil -- no request id: not for after_each
      dead:close()
    end)
  end)
end

describe("the client option debug", function()
  it("writes the record's line to stderr, as MERCHANTAPI_DEBUG=1 does", function()
    local out = helpers.run_lua([[
      local merchantapi = require "merchantapi"
      local c = assert(merchantapi.new { base_url = arg[1], api_key = arg[2], max_retries = 1,
                                         debug = true })
      c:get_channel("fault-flaky-1-503")
    ]], { helpers.base_url(), KEY }, "MERCHANTAPI_DEBUG=0")
    assert.matches("merchantapi: GET [^\n]+/channels/fault%-flaky%-1%-503 attempt 1/2: 503 "
      .. "%(api service_unavailable%) in [%d.]+ s, request id %x+, retry in [%d.]+ s\n", out)
    assert.matches("attempt 2/2: 200 in", out)
    assert.is_nil(out:find(KEY, 1, true))
    assert.has_error(function() helpers.client({ debug = 1 }) end)
  end)
end)

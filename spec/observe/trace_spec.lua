-- W3C Trace Context (merchantapi.new's `trace`, a call's `traceparent` and
-- `tracestate`): the traceparent the sandbox received on each attempt -- a
-- retry, the confirm and the read that settles it, the pages -- one trace per
-- call, a span per attempt whose id is the record's span_id, the caller's
-- trace continued (by a call, and by a pager on every page, the concurrent
-- ones too); a malformed traceparent a usage error with nothing sent;
-- the same over blocking, a loop task and a custom transport.
local helpers = require "helpers"

local TRACE = "0af7651916cd43dd8448eb211c80319c"
local PARENT = "b7ad6b7169203331"
local CALLER = "00-" .. TRACE .. "-" .. PARENT .. "-01"

-- The fields of a traceparent header.
local function fields(tp)
  local version, trace, parent, flags = tp:match("^(%x%x)%-(%x+)%-(%x+)%-(%x%x)$")
  assert(version, "not a traceparent: " .. tostring(tp))
  return { version = version, trace = trace, parent = parent, flags = flags }
end

-- Checks the headers the sandbox got for id against the records: one per
-- attempt, one trace (trace, when given), the parent-id field each record's
-- span_id, distinct spans.  Returns the trace id.
local function check(id, records, trace, parent)
  local got = helpers.traceparents(id)
  assert.equal(#records, #got)
  local spans = {}
  for i, tp in ipairs(got) do
    local f, r = fields(tp), records[i]
    assert.equal("00", f.version)
    assert.matches("^%x+$", f.trace)
    assert.equal(32, #f.trace)
    assert.equal(16, #f.parent)
    assert.equal(trace or got and fields(got[1]).trace, f.trace)
    assert.equal(f.trace, r.trace_id)
    assert.equal(f.parent, r.span_id) -- the attempt's span is the header's parent
    assert.equal(parent, r.parent_span_id)
    assert.equal(f.trace:lower(), f.trace)
    assert.is_nil(spans[f.parent], "a span id used twice")
    spans[f.parent] = true
    helpers.assert_no_key(tp, "traceparent " .. i)
  end
  return fields(got[1]).trace
end

for _, d in ipairs(helpers.drivers()) do
  local name, run, transport = d[1], d[2], d[3]

  describe("trace context over " .. name, function()
    local r, c
    before_each(function()
      helpers.reset()
      r = helpers.recorder()
      c = helpers.client({ max_retries = 2, trace = true, transport = transport,
                           on_request = r.on_request, on_response = r.on_response })
    end)
    after_each(function()
      c:close()
    end)

    it("trace = true: a new trace per call, a span per attempt (a retry)", function()
      local ch = run(function() return c:get_channel("fault-flaky-1-503") end)
      assert.equal("fault-flaky-1-503", ch.id)
      assert.equal(2, #r.responses)
      local first = check("fault-flaky-1-503", r.responses, nil, nil)
      assert.equal("01", fields(helpers.traceparents("fault-flaky-1-503")[1]).flags)
      -- on_request already knows the span the attempt sends
      assert.equal(r.responses[1].span_id, r.requests[1].span_id)
      helpers.reset()
      r.responses = {}
      run(function() return c:get_channel("fault-flaky-1-503") end)
      assert.are_not.equal(first, check("fault-flaky-1-503", r.responses, nil, nil))
    end)

    it("a caller's traceparent: its trace and flags, its parent id, tracestate passed through", function()
      local payout, err, res = run(function()
        return c:confirm_payout("fault-applied-502",
          { traceparent = "00-" .. TRACE .. "-" .. PARENT .. "-00", tracestate = "congo=t61rcWkgMzE" })
      end)
      assert.is_nil(err)
      assert.equal("fault-applied-502", payout.id)
      assert.equal("read", res.settled_by)
      -- the confirm's PUT and the read that settles it: two spans of the caller's trace
      assert.equal(2, #r.responses)
      check("fault-applied-502", r.responses, TRACE, PARENT)
      for _, tp in ipairs(helpers.traceparents("fault-applied-502")) do
        assert.equal("00", fields(tp).flags)
      end
      assert.equal("congo=t61rcWkgMzE", helpers.headers("fault-applied-502").tracestate)
      assert.equal("read", r.responses[2]["merchantapi.settled_by"])
    end)

    it("the pages: each page a trace of its own, a span per attempt, the failed one too", function()
      local items, err = run(function()
        return c:addresses("fault-page-3-500", { per_page = 10, concurrency = 1 }):all()
      end)
      assert.is_nil(items)
      assert.equal(500, err.status)
      local got = helpers.traceparents("fault-page-3-500")
      assert.equal(3, #got)
      assert.equal(3, #r.responses)
      for i, tp in ipairs(got) do
        assert.equal(r.responses[i].span_id, fields(tp).parent)
        assert.equal(r.responses[i].trace_id, fields(tp).trace)
      end
    end)

    -- Every header the sandbox got for id is a span of the caller's trace
    -- whose id is one record's span_id (in any order: pages run at once).
    local function check_caller(id, n)
      local got, spans = helpers.traceparents(id), {}
      assert.equal(n, #got)
      assert.equal(n, #r.responses)
      for _, rec in ipairs(r.responses) do
        assert.equal(TRACE, rec.trace_id)
        assert.equal(PARENT, rec.parent_span_id)
        assert.is_nil(spans[rec.span_id], "a span id used twice")
        spans[rec.span_id] = true
      end
      for _, tp in ipairs(got) do
        local f = fields(tp)
        assert.equal(TRACE, f.trace)
        assert.is_true(spans[f.parent], "a span no record has: " .. tp)
        spans[f.parent] = false
      end
    end

    it("a pager given a traceparent: every attempt of every page a span of the caller's trace", function()
      local id = "fault-page-3-flaky-1-503"
      local items, err = run(function()
        return c:addresses(id, { per_page = 5, concurrency = 4, traceparent = CALLER,
          tracestate = "congo=t61rcWkgMzE" }):all()
      end)
      assert.is_nil(err)
      assert.equal(22, #items)
      check_caller(id, 6) -- five pages, page 3 twice
      local last = helpers.headers(id)
      assert.equal("congo=t61rcWkgMzE", last.tracestate)
      local tps = helpers.traceparents(id) -- the last request's traceparent, kept apart
      assert.equal(tps[#tps], last.traceparent)
    end)

    it("client:paginate given a traceparent continues it on every page", function()
      local id = "links-acct-22"
      local items = assert(run(function()
        return c:paginate("/api/public/v1/accounts/" .. id .. "/addresses",
          { query = { ["page[size]"] = 10 }, traceparent = CALLER }):all()
      end))
      assert.equal(22, #items)
      check_caller(id, 3)
    end)

    it("a pager given a malformed traceparent: a usage error, nothing sent", function()
      local bad = "00-" .. TRACE:upper() .. "-" .. PARENT .. "-01"
      local items, err = run(function()
        return c:addresses("acct-22", { per_page = 5, concurrency = 4, traceparent = bad }):all()
      end)
      assert.is_nil(items)
      assert.equal("usage", err.kind)
      local _, perr = run(function()
        return c:paginate("/api/public/v1/accounts/acct-22/addresses", { traceparent = bad }):all()
      end)
      assert.equal("usage", perr.kind)
      local _, serr = run(function()
        return c:addresses("acct-22", { tracestate = "a=b" }):all()
      end)
      assert.equal("usage", serr.kind) -- a tracestate without its traceparent
      assert.equal(0, helpers.count("acct-22"))
      assert.equal(0, #r.requests)
      assert.has_error(function() c:addresses("acct-22", { traceparent = 1 }) end)
    end)

    it("client:request continues a caller's trace", function()
      run(function()
        return c:request("GET", "/api/public/v1/channels/fault-flaky-1-503", { traceparent = CALLER })
      end)
      check("fault-flaky-1-503", r.responses, TRACE, PARENT)
    end)

    it("a malformed traceparent is a usage error, nothing sent", function()
      local bad = {
        "01-" .. TRACE .. "-" .. PARENT .. "-01",                  -- a version of the future
        "00-" .. TRACE:upper() .. "-" .. PARENT .. "-01",          -- uppercase
        "00-" .. TRACE .. "0-" .. PARENT .. "-01",                 -- a trace id too long
        "00-" .. TRACE .. "-" .. PARENT:sub(2) .. "-01",           -- a parent id too short
        "00-" .. ("0"):rep(32) .. "-" .. PARENT .. "-01",          -- an all-zero trace id
        "00-" .. TRACE .. "-" .. ("0"):rep(16) .. "-01",           -- an all-zero parent id
        "00-" .. TRACE .. "-" .. PARENT .. "-1",                   -- flags of one digit
        CALLER .. "-",
      }
      for _, tp in ipairs(bad) do
        local p, err = run(function() return c:confirm_payout("fault-applied-502", { traceparent = tp }) end)
        assert.is_nil(p)
        assert.equal("usage", err.kind, tp)
        assert.equal("not_sent", err.outcome)
        local ch, gerr = run(function() return c:get_channel("fault-503", { traceparent = tp }) end)
        assert.is_nil(ch)
        assert.equal("usage", gerr.kind, tp)
      end
      local _, serr = run(function() return c:get_channel("fault-503", { tracestate = "a=b" }) end)
      assert.equal("usage", serr.kind) -- a tracestate without its traceparent
      assert.equal(0, helpers.count("fault-applied-502"))
      assert.equal(0, helpers.count("fault-503"))
      assert.equal(0, #r.requests)
      assert.has_error(function() c:get_channel("x", { traceparent = 1 }) end)
    end)
  end)
end

describe("trace context, untraced", function()
  it("sends no traceparent without trace nor a caller's, and no ids in the records", function()
    helpers.reset()
    local r = helpers.recorder()
    local c = helpers.client({ on_response = r.on_response })
    c:get_channel(helpers.CHANNEL_ID)
    assert.same({ "-" }, helpers.traceparents(helpers.CHANNEL_ID))
    assert.is_nil(r.responses[1].trace_id)
    assert.is_nil(r.responses[1].span_id)
    c:close()
  end)

  it("replaces a traceparent header of one's own", function()
    helpers.reset()
    local c = helpers.client({ headers = { TraceParent = CALLER } })
    c:get_channel(helpers.CHANNEL_ID, { traceparent = CALLER })
    local got = helpers.traceparents(helpers.CHANNEL_ID)
    assert.equal(1, #got)
    assert.equal(TRACE, fields(got[1]).trace)
    assert.are_not.equal(PARENT, fields(got[1]).parent)
    c:close()
  end)
end)

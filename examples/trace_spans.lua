-- Prints one JSON line per attempt, shaped as an OpenTelemetry span: the
-- attempt records merchantapi hands to `on_response` already carry the
-- semantic conventions' names, the trace id and the span ids, so exporting
-- them to a tracing backend is a matter of the SDK or collector one runs.
-- The calls: a channel read in a trace of its own (`trace = true`; a flaky
-- channel shows each retry as a span of that trace), then a payout confirmed
-- in the caller's own trace (`traceparent`).
-- usage: lua5.4 examples/trace_spans.lua <channel_id> <payout_id>
-- env:   MERCHANTAPI_BASE_URL, MERCHANTAPI_API_KEY
local merchantapi = require "merchantapi"
local cjson = require "cjson"

local channel_id = assert(arg[1], "usage: trace_spans.lua <channel_id> <payout_id>")
local payout_id = assert(arg[2], "usage: trace_spans.lua <channel_id> <payout_id>")

-- A span per attempt: name, ids, times (nanoseconds since the epoch, as
-- OTLP's JSON has them) and every attribute of the record.
local function print_span(record)
  local attributes = {}
  for k, v in pairs(record) do
    if type(k) == "string" and k:find(".", 1, true) then
      attributes[k] = v
    end
  end
  print(cjson.encode {
    name = record["http.request.method"],
    kind = "client",
    trace_id = record.trace_id,
    span_id = record.span_id,
    parent_span_id = record.parent_span_id,
    start_time_unix_nano = ("%.0f"):format(record.start_time * 1e9),
    end_time_unix_nano = ("%.0f"):format((record.start_time + record.duration) * 1e9),
    attributes = attributes,
  })
end

local client = merchantapi.assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "set MERCHANTAPI_BASE_URL"),
  api_key = os.getenv("MERCHANTAPI_API_KEY"),
  trace = true,
  on_response = print_span,
})

merchantapi.assert(client:get_channel(channel_id))
-- the caller's trace (e.g. the request being served): its trace id and the
-- id of the caller's own span
local caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
merchantapi.assert(client:confirm_payout(payout_id, { traceparent = caller }))
client:close()

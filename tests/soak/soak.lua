--- soak.lua -- many calls in one Lua process against the sandbox, checking
-- every result and that the process does not grow.
--
-- usage: lua5.4 tests/soak/soak.lua [calls] [--no-rss-check]
--
-- Environment: MERCHANTAPI_BASE_URL (a running sandbox), MERCHANTAPI_API_KEY,
-- LUA_PATH / LUA_CPATH finding merchantapi (tests/soak/run sets them).
--
-- The calls go round a fixed cycle of the three operations, their
-- successes and every error kind a call can produce (api, http, decode,
-- transport, usage), plus merchantapi.decode, a pager, res:document(),
-- clients made and dropped (closed, or left to __gc).  Every result is
-- checked against what it must be; a wrong one fails the run.  After the
-- first 5,000 calls (or half the calls, when fewer) and at the end, after a
-- full collection, it prints the RSS and the Lua heap; with 10,000 calls
-- or more the end RSS must be within 10 % of the first figure.  The last
-- line is "soak: ok ..." or "soak: FAILED ...", and the exit status says
-- the same.
local merchantapi = require "merchantapi"

local CALLS = tonumber(arg[1]) or 100000
local RSS_CHECK = arg[2] ~= "--no-rss-check" and CALLS >= 10000
local CHECKPOINT = CALLS >= 10000 and 5000 or math.max(1, math.floor(CALLS / 2))
local BASE = assert(os.getenv("MERCHANTAPI_BASE_URL"), "MERCHANTAPI_BASE_URL is not set")
local KEY = os.getenv("MERCHANTAPI_API_KEY") or "sk_test_sandbox_4f9a2c"
local DEAD = "http://127.0.0.1:9"
local CHANNEL = "60e05bc0-4690-4985-a08a-8acf00e48294"
local DRAFTS = { "6ecebf80-b210-413b-b396-df4760d142c5", "9a1d2f64-58c3-4b0e-a7d1-3f2c6b8e4a17",
                 "draft-integer-amount", "draft-18-decimals", "draft-big-numbers" }
local RESET_EVERY = 500

local function rss_kib()
  local f = assert(io.open("/proc/self/status", "r"))
  local s = f:read("*a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)"))
end

-- POST /__sandbox/reset: the drafts can be confirmed again.
local function reset()
  local ok, http = pcall(require, "socket.http")
  if ok then
    local _, status = http.request({ url = BASE .. "/__sandbox/reset", method = "POST",
                                     headers = { ["content-length"] = "0" } })
    assert(status == 200, "reset: " .. tostring(status))
  else
    assert(os.execute("env -u LD_PRELOAD curl -sf -X POST " .. BASE .. "/__sandbox/reset >/dev/null"))
  end
end

local DOC = [[{"data":{"type":"payouts","id":"p1","attributes":{"amount":250.10,"status":"processing",
"big":123456789012345678901234567890},"relationships":{"account":{"data":{"type":"accounts","id":"a1"}}}},
"included":[{"type":"accounts","id":"a1","attributes":{"currencyCode":"EUR"},
"relationships":{"owner":{"data":{"type":"payouts","id":"p1"}}}}],"meta":{},"jsonapi":{"version":"1.0"}}]]

local client, dead
local function new_clients()
  client = assert(merchantapi.new({ base_url = BASE, api_key = KEY, max_retries = 0, timeout = 10 }))
  dead = assert(merchantapi.new({ base_url = DEAD, api_key = KEY, max_retries = 0 }))
end

local tally = { ok = 0, api = 0, http = 0, decode = 0, transport = 0, usage = 0 }
local failures = {}
local draft_next = 1

local function expect(name, want, v, err)
  local got = v and "ok" or (type(err) == "table" and err.kind or "?")
  if want == "ok-or-api" then
    want = got == "api" and "api" or "ok"
  end
  if got ~= want then
    if #failures < 20 then
      failures[#failures + 1] = ("%s: expected %s, got %s (%s)"):format(name, want, got,
        err and tostring(err) or "-")
    else
      failures[#failures + 1] = false
    end
  else
    tally[got] = tally[got] + 1
  end
end

-- The cycle: each entry is one call.
local CYCLE = {
  function()
    local ch, err, res = client:get_channel(CHANNEL)
    expect("get_channel", "ok", ch and ch.targetAccount and ch.targetAccount.balance == "6194.43" and
      res.status == 200, err)
  end,
  function()
    local list, err = client:list_addresses("acct-22", { per_page = 25 })
    expect("list_addresses", "ok", list and #list == 22 and list.meta.total == 22 and
      list[1].network.code ~= nil, err)
  end,
  function()
    -- a draft: 201 after a reset, then 422 payout_not_draft until the next one
    local id = DRAFTS[draft_next]
    draft_next = draft_next % #DRAFTS + 1
    local p, err = client:confirm_payout(id)
    expect("confirm_payout", "ok-or-api", p and p.status == "processing" and
      type(p.amount) == "string", err)
    if err and err.code ~= "payout_not_draft" then
      expect("confirm_payout code", "payout_not_draft", nil, err)
    end
  end,
  function()
    local p, err = client:confirm_payout("draft-amount-below-minimum")
    expect("confirm 422", "api", p, err)
    if err and (err.amount ~= "5.5" or err.outcome ~= "rejected") then
      expect("confirm 422 fields", "amount 5.5, rejected", nil, err)
    end
  end,
  function()
    local ch, err = client:get_channel("fault-redirect")
    expect("redirect", "http", ch, err)
  end,
  function()
    local ch, err = client:get_channel("fault-html-502")
    expect("html 502", "http", ch, err)
  end,
  function()
    local ch, err = client:get_channel("fault-bad-json")
    expect("bad json", "decode", ch, err)
  end,
  function()
    local list, err = client:list_addresses("fault-dup-keys")
    expect("dup keys", "decode", list, err)
  end,
  function()
    local ch, err = client:get_channel("fault-deep")
    expect("deep", "decode", ch, err)
  end,
  function()
    local ch, err = client:get_channel("no-such-channel")
    expect("404", "api", ch, err)
  end,
  function()
    local p, err = dead:confirm_payout(DRAFTS[1])
    expect("refused", "transport", p, err)
    if err and err.outcome ~= "not_sent" then
      expect("refused outcome", "not_sent", nil, err)
    end
  end,
  function()
    local p, err = client:confirm_payout("fault-no-response")
    expect("no response", "transport", p, err)
    if err and err.outcome ~= "unknown" then
      expect("no response outcome", "unknown", nil, err)
    end
  end,
  function()
    local ch, err = client:get_channel("")
    expect("empty id", "usage", ch, err)
  end,
  function()
    local list, err = client:list_addresses("acct-22", { page = 0 })
    expect("page 0", "usage", list, err)
  end,
  function()
    local p, err, res = merchantapi.decode(DOC)
    expect("decode", "ok", p and p.amount == "250.10" and p.account.owner == p and
      p.big == "123456789012345678901234567890" and res:document().data.id == "p1", err)
  end,
  function()
    local items, err = client:addresses("acct-22", { per_page = 10 }):all()
    expect("pager", "ok", items and #items == 22, err)
  end,
  function()
    local ch, err = client:get_channel("fault-text-plain")
    expect("text/plain", "decode", ch, err)
    local doc = err and err.res and err.res:document()
    if not (doc and doc.data) then
      expect("text/plain document", "a document", nil, err)
    end
  end,
  function()
    -- a client made and dropped: every other one closed, the rest left to __gc
    local c = assert(merchantapi.new({ base_url = BASE, api_key = KEY, max_retries = 0 }))
    local ch, err = c:get_channel(CHANNEL)
    expect("fresh client", "ok", ch, err)
    if draft_next % 2 == 0 then
      c:close()
    end
  end,
}

local function report(label, calls)
  collectgarbage("collect")
  collectgarbage("collect")
  local rss, heap = rss_kib(), math.floor(collectgarbage("count"))
  print(("soak: after %d calls: rss %d KiB, Lua heap %d KiB"):format(calls, rss, heap))
  io.stdout:flush()
  return rss, heap, label
end

local t0 = os.clock()
local wall0 = os.time()
new_clients()
reset()
local rss_first, heap_first
for i = 1, CALLS do
  CYCLE[(i - 1) % #CYCLE + 1]()
  if i % RESET_EVERY == 0 then
    reset()
  end
  if i % 1000 == 0 then
    -- the long-lived clients are replaced now and then; the old ones are left to __gc
    new_clients()
  end
  if i == CHECKPOINT then
    rss_first, heap_first = report("first", i)
  end
end
client:close()
dead:close()
local rss_end, heap_end = report("end", CALLS)

local wrong = #failures
local ok = wrong == 0
local growth = (rss_end - rss_first) / rss_first * 100
if RSS_CHECK and math.abs(growth) > 10 then
  ok = false
end
for _, f in ipairs(failures) do
  if f then
    print("soak: wrong result: " .. f)
  end
end
print(("soak: %s calls=%d ok=%d api=%d http=%d decode=%d transport=%d usage=%d wrong=%d "
  .. "rss_first_kib=%d rss_end_kib=%d rss_growth=%.1f%% heap_first_kib=%d heap_end_kib=%d "
  .. "cpu_s=%.1f wall_s=%d%s"):format(ok and "ok" or "FAILED", CALLS, tally.ok, tally.api,
  tally.http, tally.decode, tally.transport, tally.usage, wrong, rss_first, rss_end, growth,
  heap_first, heap_end, os.clock() - t0, os.time() - wall0,
  RSS_CHECK and "" or " (rss not checked)"))
io.stdout:flush()
os.exit(ok and 0 or 1, true)

-- A fixed-tick game loop (60 Hz) that confirms a payout, lists an
-- account's addresses and waits for the payout's txid while it keeps
-- ticking: every call runs in a task of a merchantapi.loop, stepped once
-- per tick with a budget of 5 ms that may wait for the answers coming
-- within it (docs/guide/loop.md, "Budget and page size for a tick": at
-- 60 Hz, { time = 0.005, wait = true } and 100 addresses a page), so no
-- tick gives the network more than 5 ms and a listing is not paced by it.
--
--   MERCHANTAPI_BASE_URL=... MERCHANTAPI_API_KEY=... lua examples/game_loop.lua PAYOUT_ID ACCOUNT_ID
local merchantapi = require "merchantapi"

local payout_id, account_id = arg[1], arg[2]
if not (payout_id and account_id) then
  io.stderr:write("usage: lua game_loop.lua PAYOUT_ID ACCOUNT_ID\n")
  os.exit(2)
end
local client = assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "MERCHANTAPI_BASE_URL"),
  api_key = os.getenv("MERCHANTAPI_API_KEY"),
})
local loop = assert(merchantapi.loop())

-- the game's side of it: messages the tasks leave for the next tick
local log = {}

loop:spawn(function()
  local payout = merchantapi.assert(client:confirm_payout(payout_id))
  log[#log + 1] = ("payout %s is %s: %s %s"):format(payout.id, payout.status, payout.amount,
    payout.currency or "")
  local done = merchantapi.assert(client:wait_for_txid(payout_id, { interval = 0.25, timeout = 30 }))
  log[#log + 1] = "txid " .. done.txid
end)

loop:spawn(function()
  local n = 0
  for _ in client:addresses(account_id, { per_page = 100, concurrency = 8 }):each() do
    n = n + 1
  end
  log[#log + 1] = n .. " addresses"
end)

local TICK = 1 / 60
local BUDGET = { time = 0.005, wait = true } -- 5 ms of each 16.7 ms frame
local clock = merchantapi.monotonic
local ticks, longest = 0, 0
local next_tick = clock()
while true do
  local t0 = clock()
  local running = loop:step(0, BUDGET) -- at most 5 ms, waits included
  local spent = clock() - t0
  if spent > longest then
    longest = spent
  end
  ticks = ticks + 1
  for i = 1, #log do
    print(("tick %d: %s"):format(ticks, log[i]))
  end
  log = {}
  if running == 0 then
    break
  end
  -- the rest of the tick is the game's; here it sleeps until the next one
  next_tick = next_tick + TICK
  local left = next_tick - clock()
  if left > 0 then
    merchantapi.sleep(left)
  end
end
print(("%d ticks at 60 Hz, the longest loop:step took %.1f ms"):format(ticks, longest * 1000))
loop:close()
client:close()

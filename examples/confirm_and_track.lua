-- Confirms a payout draft, then follows it until its transaction is on the
-- network: reads the payout every half second, printing each status read, until
-- its txid is set (interface, "Events").
-- usage: lua5.4 examples/confirm_and_track.lua [payout_id [timeout_seconds]]
--        (default payout: draft-track-fast, the sandbox's draft broadcast 1 s after its confirm)
-- env:   MERCHANTAPI_BASE_URL, MERCHANTAPI_API_KEY
local merchantapi = require "merchantapi"

local payout_id = arg[1] or "draft-track-fast"
local timeout = tonumber(arg[2] or "30")
local client = merchantapi.assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "set MERCHANTAPI_BASE_URL"),
  api_key = assert(os.getenv("MERCHANTAPI_API_KEY"), "set MERCHANTAPI_API_KEY"),
})

local payout, err = client:confirm_payout(payout_id)
if payout then
  print(("confirmed %s: %s %s, status %s"):format(payout.id, payout.amount, payout.currency,
    payout.status))
elseif err.code == "payout_not_draft" then
  print(("%s was confirmed before: following it"):format(payout_id))
else
  io.stderr:write(tostring(err), "\n")
  if err.outcome == "unknown" and err.retryable then
    -- the client read the payout after the failed confirm: still a draft
    io.stderr:write("not confirmed, the payout is still a draft: trying again is safe\n")
  elseif err.outcome == "unknown" then
    -- the read after it failed, or showed neither a draft nor a confirmed payout
    io.stderr:write("the confirm may have gone through: read the payout before trying again\n")
  end
  os.exit(1)
end

local start = merchantapi.monotonic()
local reads = 0
payout, err = client:wait_for_txid(payout_id, {
  timeout = timeout,
  interval = 0.5, -- the sandbox broadcasts 1 s after the confirm; for the real service 2 s or more
  on_read = function(p, read_err)
    reads = reads + 1
    local t = merchantapi.monotonic() - start
    if p then
      print(("  %5.1f s  read %d: status %s, txid %s"):format(t, reads, p.status,
        p.txid or "not yet set"))
    else
      print(("  %5.1f s  read %d failed: %s"):format(t, reads, tostring(read_err)))
    end
  end,
})
if not payout then
  io.stderr:write(tostring(err), "\n")
  client:close()
  os.exit(1)
end
print(("broadcast: %s sends %s %s on %s"):format(payout.id, payout.payAmount, payout.payCurrency,
  payout.payNetworkName))
print(("  txid %s"):format(payout.txid))
client:close()

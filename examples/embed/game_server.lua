-- A script run by examples/embed/host: a game server paying out a player's
-- winnings and showing the deposit channel the player tops up through.
local merchantapi = require "merchantapi"

local payout_id, channel_id = ...
local client = merchantapi.assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "set MERCHANTAPI_BASE_URL"),
  api_key = assert(os.getenv("MERCHANTAPI_API_KEY"), "set MERCHANTAPI_API_KEY"),
})

local payout, err = client:confirm_payout(payout_id)
if not payout then
  print("payout failed: " .. tostring(err))
else
  print(("winnings paid: %s %s (%s), charged %s %s"):format(payout.amount, payout.currency,
    payout.status, payout.amountCharged, payout.amountChargedCurrency))
end

local channel = merchantapi.assert(client:get_channel(channel_id))
print(("top up with %s at %s"):format(channel.payCurrency, channel.address))
-- no close(): the host's lua_close runs __gc

-- Reads a deposit channel: where customers pay and which account is credited.
-- usage: lua5.4 examples/get_channel.lua <channel_id>
-- env:   MERCHANTAPI_BASE_URL, MERCHANTAPI_API_KEY
local merchantapi = require "merchantapi"

local channel_id = assert(arg[1], "usage: get_channel.lua <channel_id>")
local client = merchantapi.assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "set MERCHANTAPI_BASE_URL"),
  api_key = os.getenv("MERCHANTAPI_API_KEY"),
})

local channel, err = client:get_channel(channel_id)
if not channel then
  io.stderr:write(tostring(err), "\n")
  os.exit(1)
end

local account = channel.targetAccount
print(("channel %s is %s (reference %s)"):format(channel.id, channel.status, channel.reference))
print(("  customers pay   %s to %s"):format(channel.payCurrency, channel.address))
print(("  network         %s (%s)"):format(channel.networkName, channel.network))
print(("  credited to     account %q, %s %s, balance %s"):format(account.label,
  account.currencyType, account.currencyCode, account.balance))
print(("  hosted page     %s"):format(channel.hostedPageUrl))
client:close()

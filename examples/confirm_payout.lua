-- Confirms a payout draft and shows what the merchant is charged.
-- usage: lua5.4 examples/confirm_payout.lua <payout_id>
-- env:   MERCHANTAPI_BASE_URL, MERCHANTAPI_API_KEY
local merchantapi = require "merchantapi"

local payout_id = assert(arg[1], "usage: confirm_payout.lua <payout_id>")
local client = merchantapi.assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "set MERCHANTAPI_BASE_URL"),
  api_key = assert(os.getenv("MERCHANTAPI_API_KEY"), "set MERCHANTAPI_API_KEY"),
})

local payout, err = client:confirm_payout(payout_id)
if not payout then
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

local account = payout.accountCharged
print(("payout %s is %s"):format(payout.id, payout.status))
print(("  amount          %s %s"):format(payout.amount, payout.currency))
print(("  recipient gets  %s %s on %s to %s"):format(payout.payAmount, payout.payCurrency,
  payout.payNetworkName, payout.address))
print(("  network fee     %s %s (%s)"):format(payout.networkFee, payout.networkFeeCurrency,
  payout.absorbNetworkFee and "paid by the merchant" or "taken from the amount"))
print(("  payout fee      %s %s (%s)"):format(payout.payoutFee, payout.payoutFeeCurrency,
  payout.absorbPayoutFee and "paid by the merchant" or "taken from the amount"))
print(("  charged         %s %s to account %q (%s), balance %s"):format(payout.amountCharged,
  payout.amountChargedCurrency, account.label, account.currencyCode, account.balance))
print(("  created by      %s"):format(payout.author.name))
print(("  txid            %s"):format(payout.txid or "not yet set (broadcast takes a few seconds)"))
client:close()

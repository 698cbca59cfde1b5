--- The service's documents as files: read once, at nginx start (init_by_lua,
-- so forked workers share them), and handed out as raw text.
local _M = {}

local NAMES = {
  "confirm_payout.201",
  "confirm_payout.partner_pay.201",
  "confirm_payout.422.amount_below_minimum",
  "confirm_payout.422.amount_above_maximum",
  "confirm_payout.422.invalid_address",
  "confirm_payout.422.payout_invalid",
  "confirm_payout.422.account_has_insufficient_balance",
  "confirm_payout.422.address_has_high_risk_score",
  "get_channel.200",
  "list_addresses.200",
  "list_addresses.generating.200",
}

local texts = {}

--- Read every fixture from directory `dir`; raises if one is missing.
function _M.load(dir)
  for _, name in ipairs(NAMES) do
    local path = dir .. "/" .. name .. ".json"
    local file = assert(io.open(path, "rb"))
    texts[name] = file:read("*a")
    file:close()
  end
end

--- The raw text of fixture `name` (file name without ".json").
function _M.text(name)
  return texts[name] or error("sandbox: fixture not loaded: " .. name, 2)
end

return _M

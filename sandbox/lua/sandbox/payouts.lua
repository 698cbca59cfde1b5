--- Payouts: PUT confirm (draft -> processing, once) and GET, from fixtures.
-- A confirmed payout's GET shows a txid once its time has come (see txid_due).
local ffi = require "ffi"
local faults = require "sandbox.faults"
local fixtures = require "sandbox.fixtures"
local jsontext = require "sandbox.jsontext"
local respond = require "sandbox.respond"
local state = require "sandbox.state"

local quote, replace_once = jsontext.quote, jsontext.replace_once
local byte, format, rep = string.byte, string.format, string.rep

-- SHA-256 from the libcrypto nginx is linked with (as lua-resty-string does).
pcall(ffi.cdef, "unsigned char *SHA256(const void *d, size_t n, unsigned char *md);")
local digest = ffi.new("unsigned char[32]")

local _M = {}

local FIXTURE_ID = "6ecebf80-b210-413b-b396-df4760d142c5"
local PARTNER_PAY_ID = "9a1d2f64-58c3-4b0e-a7d1-3f2c6b8e4a17"
local AMOUNT = '"amount": 250.10,'

-- Drafts whose confirm always fails with the 422 fixture of the same code.
local REJECTED = {
  ["draft-amount-below-minimum"] = "amount_below_minimum",
  ["draft-amount-above-maximum"] = "amount_above_maximum",
  ["draft-invalid-address"] = "invalid_address",
  ["draft-payout-invalid"] = "payout_invalid",
  ["draft-insufficient-balance"] = "account_has_insufficient_balance",
  ["draft-high-risk-address"] = "address_has_high_risk_score",
}

-- Drafts that render an exact number: the amount's text, and more attributes.
local NUMBERS = {
  ["draft-integer-amount"] = '"amount": 1200,',
  ["draft-18-decimals"] = '"amount": 0.123456789012345678,',
  ["draft-big-numbers"] = AMOUNT .. '\n      "bigInteger": 123456789012345678901234567890,'
    .. '\n      "exponent": 1.5e-7,',
}

-- The time from confirm to txid, when neither the id nor the config says.
_M.DEFAULT_TXID_AFTER_MS = 3000
local TXID_NULL = '"txid": null'

-- Drafts like the on-chain one whose txid comes at their own time (-1: never).
local TRACKED = {
  ["draft-track-fast"] = 1000,
  ["draft-track-never"] = -1,
}

-- id -> { confirmed = 201 document text, rejection = 422 document text or nil,
--         txid_after = ms from confirm to txid (-1 never; nil: the configured default) }
local drafts = {}

--- The confirmed (201) document of the on-chain fixture, renamed to `id`.
local function confirmed_as(id, template)
  return replace_once(template or fixtures.text("confirm_payout.201"),
    '"id": "' .. FIXTURE_ID .. '"', '"id": ' .. quote(id))
end

--- The same document as it reads while the payout is still a draft.
local function as_draft(confirmed)
  return replace_once(confirmed, '"status": "processing"', '"status": "draft"')
end

--- Build every draft from the fixtures; called once at nginx start.
function _M.prepare()
  drafts[FIXTURE_ID] = { confirmed = fixtures.text("confirm_payout.201") }
  -- partner_pay is a transfer between accounts: nothing is broadcast, no txid
  drafts[PARTNER_PAY_ID] = { confirmed = fixtures.text("confirm_payout.partner_pay.201"), txid_after = -1 }
  for id, code in pairs(REJECTED) do
    drafts[id] = {
      confirmed = confirmed_as(id),
      rejection = fixtures.text("confirm_payout.422." .. code),
    }
  end
  for id, amount in pairs(NUMBERS) do
    local text = replace_once(fixtures.text("confirm_payout.201"), AMOUNT, amount)
    drafts[id] = { confirmed = confirmed_as(id, text) }
  end
  for id, ms in pairs(TRACKED) do
    drafts[id] = { confirmed = confirmed_as(id), txid_after = ms }
  end
end

--- The txid payout `id` gets: the SHA-256 of the id's bytes, 64 lowercase hex digits.
function _M.txid(id)
  ffi.C.SHA256(id, #id, digest)
  return format(rep("%02x", 32), byte(ffi.string(digest, 32), 1, 32))
end

--- The ms from confirm to txid for payout `id` (-1: never): the id's own
-- setting, else its built-in value, else the setting for all, else 3000.
local function txid_after(id, builtin)
  return state.txid_after(id) or builtin or state.txid_after(nil) or _M.DEFAULT_TXID_AFTER_MS
end

--- Whether confirmed payout `id` shows its txid now.
local function txid_due(id, builtin)
  local after, confirmed_at = txid_after(id, builtin), state.confirmed_at(id)
  if after < 0 or not confirmed_at then
    return false
  end
  ngx.update_time()
  return ngx.now() * 1000 - confirmed_at >= after
end

local function not_draft(id)
  return 422, respond.error_doc(422, "payout_not_draft", "payout is not a draft",
    "payout " .. id .. " is processing")
end

--- Confirm `id` whose confirmed document is `confirmed`: status and body.
local function confirm(id, confirmed)
  if state.confirm(id) then
    return 201, confirmed
  end
  return not_draft(id)
end

--- GET: the draft, or once confirmed the 201 document, with the txid when due.
local function show(id, confirmed, builtin_txid_after)
  if state.payout_status(id) ~= "processing" then
    return 200, as_draft(confirmed)
  end
  if txid_due(id, builtin_txid_after) then
    return 200, replace_once(confirmed, TXID_NULL, '"txid": "' .. _M.txid(id) .. '"')
  end
  return 200, confirmed
end

-- What fault ids answer when they behave: a payout named after the fault id.
local function fault_context(id, method)
  local confirmed = confirmed_as(id)
  local ctx = {
    resource_type = "payouts",
    wrong_type = "channels",
    dup_key = "status",
  }
  if method == "PUT" then
    ctx.status, ctx.body, ctx.dup_first = 201, confirmed, "draft"
    ctx.normal = function() return confirm(id, confirmed) end
    ctx.apply = function() return state.confirm(id) end
  else
    ctx.status, ctx.body = show(id, confirmed)
    ctx.dup_first = "cancelled"
    ctx.normal = function() return show(id, confirmed) end
    ctx.read_as = function(status, txid)
      local body = replace_once(confirmed, '"status": "processing"', '"status": ' .. quote(status))
      if txid then
        body = replace_once(body, TXID_NULL, '"txid": "' .. _M.txid(id) .. '"')
      end
      return 200, body
    end
  end
  return ctx
end

--- Answer PUT (confirm) or GET for payout `id`.
function _M.handle(method, id)
  if method ~= "PUT" and method ~= "GET" and method ~= "HEAD" then
    return respond.method_not_allowed("GET, PUT")
  end
  local draft = drafts[id]
  if not draft then
    if faults.is_fault(id) then
      return faults.respond(id, fault_context(id, method))
    end
    return respond.not_found("no payout " .. id)
  end
  if method ~= "PUT" then
    return respond.send(show(id, draft.confirmed, draft.txid_after))
  end
  if draft.rejection then
    return respond.send(422, draft.rejection)
  end
  return respond.send(confirm(id, draft.confirmed))
end

return _M

--- Internal: the Lua side's one error constructor.  Every error table made
-- in Lua (usage errors of the generic call, the pager, custom transports,
-- `wait_for_txid`, the module) comes from `errors.new`, so it has the same
-- fields, metatable and message as the ones the C core makes (contract,
-- "Errors").
--
-- @module merchantapi.errors
local core = require "merchantapi.core"

local setmetatable = setmetatable
local gsub = string.gsub
local concat = table.concat

local errors = {}

--- Makes an error table of the contract ("Errors") on the Lua side, with
-- the error metatable of the C module and a `message` built like the
-- core's: `merchantapi: <kind>: <title> (<detail>) [<METHOD> <path>]`.
-- @tparam table e at least `kind` and `title`; `path` (optional) only goes
--   into the message.
-- @treturn table e
function errors.new(e)
  e.errors = e.errors or {}
  if e.retryable == nil then
    e.retryable = false
  end
  local parts = { "merchantapi: ", e.kind, ": ", e.title or "error" }
  if e.detail then
    parts[#parts + 1] = " (" .. e.detail .. ")"
  end
  if e.method then
    parts[#parts + 1] = " [" .. e.method .. (e.path and " " .. e.path or "") .. "]"
  end
  e.path = nil -- only for the message: the contract's fields are method and url
  e.message = gsub(concat(parts), "[%z\1-\31\127]", " ")
  return setmetatable(e, core.error_metatable)
end

return errors

--- Internal: the Lua side's one error constructor.  Every error table made
-- in Lua (usage errors of the generic call, the pager, custom transports,
-- `wait_for_txid`, the module) comes from `errors.new`, so it has the same
-- fields, metatable and message as the ones the C core makes (contract,
-- "Errors").
--
-- @module merchantapi.errors
local core = require "merchantapi.core"

local getmetatable = getmetatable
local setmetatable = setmetatable
local tostring = tostring

local errors = {}

--- Makes an error table of the contract ("Errors") on the Lua side, with
-- the error metatable of the C module and the `message` the core's one
-- builder makes (`merchantapi: <kind>: <title> (<detail>) [<METHOD> <path>]`).
-- @tparam table e at least `kind` and `title`; `path` (optional) only goes
--   into the message (else the path of `url`).
-- @treturn table e
function errors.new(e)
  e.errors = e.errors or {}
  if e.retryable == nil then
    e.retryable = false
  end
  e.message = nil
  setmetatable(e, core.error_metatable)
  e.message = tostring(e) -- no message: __tostring builds it (mapi_error_message)
  e.path = nil -- only for the message: the contract's fields are method and url
  return e
end

--- The results of every failure of the module: `nil, err, message`, as
-- the C core's (`mapi_lua_error_table_results`).  `message` is
-- `err.message`, last so that LuaJIT's `assert`, which raises its last argument, raises a string:
-- OpenResty logs an uncaught table as "unknown reason".  Everything else a
-- failure carries is a field of err (`err.res`, the response).
-- @param err an error table (`errors.new`, or the core's); anything else
--   (a custom page fetch's own error) is returned as is: `nil, err`.
-- @return nil, err, err.message
function errors.fail(err)
  if getmetatable(err) ~= core.error_metatable then
    return nil, err
  end
  return nil, err, err.message
end

return errors

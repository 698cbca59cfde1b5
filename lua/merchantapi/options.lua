--- Internal: the option checks of the Lua modules, in one place: the type
-- of an argument, and the names and types of the options that only Lua
-- reads (`merchantapi.new`'s transport, hooks and metrics, the pagers',
-- `wait_for_txid`'s), raising at the caller of the public function.  The
-- options a call hands the core (its row's, `merchantapi.new`'s others) are
-- checked once, in C, by the core (src/lua_options.c, the same messages);
-- option *values* and their limits are the core's (src/limits.c), but for
-- the pager's own counts (`"integer >= 1"`), which only the Lua side has.
--
-- @module merchantapi.options
local type = type
local pairs = pairs
local error = error
local tostring = tostring
local huge = math.huge

local options = {}

--- 1 rule for "an integer" of the Lua side: a finite number without a
-- fraction (an integer subtype or a float such as 2.0).
-- @param v any value
-- @treturn boolean
function options.is_integer(v)
  return type(v) == "number" and v == v and v > -huge and v < huge and v % 1 == 0
end
local is_integer = options.is_integer

--- 1 rule for "a count" of the Lua side (`"integer >= 1"`): an integer, as
-- `options.is_integer` says, of one or more.
-- @param v any value
-- @treturn boolean
function options.is_count(v)
  return is_integer(v) and v >= 1
end

--- Raises "bad argument #argn to 'fname' (want expected, got <type>)" at
-- the caller of the public function unless `v` is of type `want`: the one
-- message of an argument of the wrong type.
-- @param v the argument.
-- @tparam string want the type expected (`"string"`, `"table"`, ...).
-- @tparam string fname the public function's name, for the message.
-- @tparam integer argn the argument's position, for the message.
-- @tparam[opt] integer depth as for `options.check` (default 2).
function options.arg(v, want, fname, argn, depth)
  if type(v) ~= want then
    error(("bad argument #%d to '%s' (%s expected, got %s)"):format(argn, fname, want, type(v)),
      (depth or 2) + 1)
  end
end

--- Raises (at the caller of the public function) on an unknown option or
-- an option of the wrong type: `allowed` maps each name to a type name,
-- `"integer"`, `"integer >= 1"`, or alternatives (`"table or string"`, `'function or
-- "libcurl"'`).  Values are checked later (usage errors).
-- @tparam table|nil opts the options given
-- @tparam table allowed name -> type
-- @tparam string fname the public function's name, for messages
-- @tparam integer argn the argument's position, for messages
-- @tparam[opt] integer depth how many calls below the public function's
--   caller `options.check` is called from (default 2: from the public
--   function itself)
-- @tparam[opt] boolean others true: names not in `allowed` are left
--   alone (the core checks them: `merchantapi.new`'s)
-- @treturn table opts, or a new empty table for nil
function options.check(opts, allowed, fname, argn, depth, others)
  if opts == nil then
    return {}
  end
  local level = (depth or 2) + 1
  options.arg(opts, "table", fname, argn, level)
  for k, v in pairs(opts) do
    local want = allowed[k]
    if not want and not others then
      error(("unknown option '%s' to '%s'"):format(tostring(k), fname), level)
    end
    local ok = not want or want == "integer" and is_integer(v) or
      want == "integer >= 1" and options.is_count(v)
    for alt in (want or ""):gmatch("%S+") do -- "table or string", 'function or "libcurl"'
      ok = ok or alt == type(v) or alt == '"' .. tostring(v) .. '"'
    end
    if not ok then
      -- a number's value helps ("got 1.5")
      error(("bad option '%s' to '%s' (%s expected, got %s)"):format(k, fname, want,
        type(v) == "number" and tostring(v) or type(v)), level)
    end
  end
  return opts
end

return options

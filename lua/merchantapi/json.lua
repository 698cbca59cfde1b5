--- Internal: the JSON encoder of request bodies (`merchantapi.encode` and
-- the table body of `client:request`).
--
-- The encoding rules -- money kept exact, keys sorted bytewise, what is
-- refused -- are stated once, in the doc comment of `merchantapi.encode`.
-- A refusal is `nil, message, pointer`, where pointer is the JSON pointer
-- (RFC 6901) of the offending value, `""` for the value itself.
--
-- @module merchantapi.json
local core = require "merchantapi.core"

local type = type
local pairs = pairs
local getmetatable = getmetatable
local setmetatable = setmetatable
local tostring = tostring
local rawget = rawget
local byte, char, find, format, gsub = string.byte, string.char, string.find, string.format,
  string.gsub
local sort, concat = table.sort, table.concat
local huge = math.huge
local mtype = math.type -- nil on 5.1 / 5.2 / LuaJIT

local json = {}

local MAX_DEPTH = core.defaults.max_depth
local is_count = require("merchantapi.options").is_count
local EXACT = 2 ^ 53

--- JSON null: a NULL light userdata, the same value as `cjson.null`.
json.null = core.null

--- The metatable that marks a table as a JSON array (so `{}` encodes as `[]`).
json.array_mt = { __name = "merchantapi.array" }

--- Marks t (default: a new table) as a JSON array and returns it.
-- @tparam[opt] table t the table to mark (its metatable is replaced).
-- @treturn table t
function json.array(t)
  return setmetatable(t or {}, json.array_mt)
end

-- cjson's markers, when cjson is loaded: its empty_array sentinel and array_mt.
local function cjson_markers()
  local loaded = rawget(package, "loaded")
  local cjson = loaded and loaded.cjson
  if type(cjson) == "table" then
    return rawget(cjson, "empty_array"), rawget(cjson, "array_mt")
  end
  return nil, nil
end

local ESCAPES = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
  ["\r"] = "\\r", ["\t"] = "\\t",
}
for c = 0, 31 do
  local ch = char(c)
  if not ESCAPES[ch] then
    ESCAPES[ch] = format("\\u%04x", c)
  end
end

-- 1-based index of the first byte that breaks UTF-8 (RFC 3629: no overlong
-- forms, no surrogates, nothing past U+10FFFF), or nil when s is valid.
local function utf8_error(s)
  local i = find(s, "[\128-\255]")
  local n = #s
  while i do
    local c = byte(s, i)
    local need
    local lo, hi = 0x80, 0xBF
    if c >= 0xC2 and c <= 0xDF then
      need = 1
    elseif c >= 0xE0 and c <= 0xEF then
      need = 2
      if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F end
    elseif c >= 0xF0 and c <= 0xF4 then
      need = 3
      if c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end
    else
      return i
    end
    if i + need > n then
      return i
    end
    for k = 1, need do
      local b = byte(s, i + k)
      if k == 1 then
        if b < lo or b > hi then return i end
      elseif b < 0x80 or b > 0xBF then
        return i
      end
    end
    i = find(s, "[\128-\255]", i + need + 1)
  end
  return nil
end

-- Bytewise "less than", whatever LC_COLLATE says (Lua's < uses strcoll).
local function bytes_less(a, b)
  local n = #a < #b and #a or #b
  for i = 1, n do
    local x, y = byte(a, i), byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a < #b
end

-- The comparator for sorting keys: Lua's own when the collation is
-- bytewise already (the "C" locale: the usual case, and much faster).
local function key_less()
  local ok, loc = pcall(os.setlocale, nil, "collate")
  if ok and (loc == "C" or loc == "POSIX") then
    return nil
  end
  return bytes_less
end

--- Sorts an array of strings bytewise in place (whatever the locale) and
-- returns it: the key order of `encode`, also used for query strings.
-- @tparam table list strings
-- @treturn table list
function json.sort_strings(list)
  sort(list, key_less())
  return list
end

-- JSON pointer escaping of one reference token (RFC 6901).
local function pointer_token(k)
  return (gsub(gsub(tostring(k), "~", "~0"), "/", "~1"))
end

local function quote(s)
  return '"' .. gsub(s, '[%z\1-\31"\\]', ESCAPES) .. '"'
end

-- Encodes one number, or returns nil, message.
local function number_text(v)
  if mtype and mtype(v) == "integer" then
    return format("%d", v)
  end
  if v ~= v or v == huge or v == -huge then
    return nil, "a number that is not finite (" .. tostring(v) .. ") has no JSON form"
  end
  if v % 1 ~= 0 then
    return nil, "the number " .. format("%.14g", v) .. " is not an integer: money must not " ..
      "pass as a float, pass it as a decimal string (\"250.10\")"
  end
  if v > EXACT or v < -EXACT then
    return nil, "the number " .. format("%.14g", v) .. " is a float beyond 2^53: pass it as " ..
      "a string or a Lua integer"
  end
  if v == 0 then
    return "0" -- also -0.0
  end
  return format("%d", v)
end

--- Encodes value as compact JSON by the rules of `merchantapi.encode`.
--
-- syntax: `text, err, pointer = json.encode(value)`
--
-- @param value a string, number, boolean, `json.null`, or a table of those.
-- @treturn string the JSON text; or nil, a message, and the JSON pointer of
--   the value that was refused.
function json.encode(value)
  local null = json.null
  local empty_array, cjson_array_mt = cjson_markers()
  local less = key_less()
  local out, n = {}, 0
  local visiting = {}
  local path = {}

  local function fail(msg, depth)
    local p = {}
    for i = 1, depth do
      p[i] = "/" .. pointer_token(path[i])
    end
    local ptr = concat(p)
    error({ msg = (ptr == "" and "" or ptr .. ": ") .. msg, pointer = ptr }, 0)
  end

  local function emit(s)
    n = n + 1
    out[n] = s
  end

  local encode_value

  local function encode_table(t, depth)
    if depth >= MAX_DEPTH then
      fail("nested deeper than " .. MAX_DEPTH, depth)
    end
    if visiting[t] then
      fail("a table that contains itself (a cycle) has no JSON form", depth)
    end
    local mt = getmetatable(t)
    local marked_array = mt ~= nil and (mt == json.array_mt or mt == cjson_array_mt)
    local nkeys, max, strings = 0, 0, 0
    for k in pairs(t) do
      nkeys = nkeys + 1
      local kt = type(k)
      if kt == "string" then
        strings = strings + 1
      elseif is_count(k) then
        if k > max then max = k end
      else
        path[depth + 1] = tostring(k)
        fail("a key of type " .. kt .. (kt == "number" and " (" .. tostring(k) .. ")" or "") ..
          " has no JSON form (keys are strings, or 1..n for an array)", depth + 1)
      end
    end
    visiting[t] = true
    if nkeys == 0 then
      emit(marked_array and "[]" or "{}")
    elseif strings == 0 then
      if max ~= nkeys then
        fail("an array with holes (keys 1.." .. format("%d", max) .. ", " .. nkeys ..
          " values) has no JSON form: fill them with merchantapi.null", depth)
      end
      emit("[")
      for i = 1, nkeys do
        if i > 1 then emit(",") end
        path[depth + 1] = i - 1
        encode_value(t[i], depth + 1)
      end
      emit("]")
    elseif strings ~= nkeys or marked_array then
      fail("a table with both string and integer keys has no JSON form", depth)
    else
      local keys, i = {}, 0
      for k in pairs(t) do
        i = i + 1
        keys[i] = k
      end
      sort(keys, less)
      emit("{")
      for j = 1, i do
        local k = keys[j]
        path[depth + 1] = k
        local bad = utf8_error(k)
        if bad then
          fail("a key that is not valid UTF-8 (byte " .. bad .. ")", depth + 1)
        end
        if j > 1 then emit(",") end
        emit(quote(k))
        emit(":")
        encode_value(t[k], depth + 1)
      end
      emit("}")
    end
    visiting[t] = nil
  end

  encode_value = function(v, depth)
    local vt = type(v)
    if vt == "string" then
      local bad = utf8_error(v)
      if bad then
        fail("a string that is not valid UTF-8 (byte " .. bad .. ")", depth)
      end
      emit(quote(v))
    elseif vt == "number" then
      local text, msg = number_text(v)
      if not text then
        fail(msg, depth)
      end
      emit(text)
    elseif vt == "boolean" then
      emit(v and "true" or "false")
    elseif vt == "table" then
      encode_table(v, depth)
    elseif v ~= nil and v == null then
      emit("null")
    elseif v ~= nil and v == empty_array then
      emit("[]")
    else
      fail("a value of type " .. vt .. " has no JSON form", depth)
    end
  end

  local ok, err = pcall(encode_value, value, 0)
  if not ok then
    if type(err) == "table" and err.msg then
      return nil, err.msg, err.pointer
    end
    error(err, 0) -- not ours (out of memory, ...): as it came
  end
  return concat(out, "", 1, n)
end

return json

--- JSON as text: escape strings, cut members and elements out of a document
-- and splice new text in, all without decoding it, so that a fixture's number
-- text (250.10, 0.123456789012345678) reaches the client byte for byte.
local byte, find, format, gsub, sub = string.byte, string.find, string.format,
    string.gsub, string.sub
local concat = table.concat

local QUOTE, BACKSLASH = byte('"'), byte("\\")
local LBRACE, RBRACE, LBRACKET, RBRACKET = byte("{"), byte("}"), byte("["), byte("]")

local _M = {}

local ESCAPES = {
  ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
}

local function escape_char(c)
  return ESCAPES[c] or format("\\u%04x", byte(c))
end

--- The JSON string literal (quotes included) for the Lua string `s`.
-- Bytes >= 0x80 pass through untouched.
function _M.quote(s)
  return '"' .. gsub(s, '[%c"\\]', escape_char) .. '"'
end

--- `s` with the one occurrence of `old` (plain text) replaced by `new`.
-- Raises when `old` is missing: a fixture that changed shape must fail loudly.
function _M.replace_once(s, old, new)
  local i, j = find(s, old, 1, true)
  if not i then
    error(format("sandbox: %q not found in fixture text", old), 2)
  end
  return sub(s, 1, i - 1) .. new .. sub(s, j + 1)
end

-- Index of the closing quote of the string literal opening at `i`.
local function skip_string(text, i)
  while true do
    local j = find(text, '["\\]', i + 1)
    if not j then
      error("sandbox: unterminated JSON string", 3)
    end
    if byte(text, j) == BACKSLASH then
      i = j + 1
    else
      return j
    end
  end
end

-- Index of the last byte of the JSON value starting at `i`.
local function skip_value(text, i)
  local c = byte(text, i)
  if c == QUOTE then
    return skip_string(text, i)
  end
  if c == LBRACE or c == LBRACKET then
    local depth, j = 0, i
    while true do
      j = find(text, '[][{}"]', j)
      if not j then
        error("sandbox: unbalanced JSON text", 3)
      end
      local d = byte(text, j)
      if d == QUOTE then
        j = skip_string(text, j)
      elseif d == LBRACE or d == LBRACKET then
        depth = depth + 1
      else
        depth = depth - 1
        if depth == 0 then
          return j
        end
      end
      j = j + 1
    end
  end
  local j = find(text, "[,}%]%s]", i)
  return (j or #text + 1) - 1
end

--- The members of the top-level object in `text`, as raw value texts by name.
function _M.members(text)
  local out = {}
  local i = find(text, "{", 1, true) + 1
  while true do
    i = find(text, "[^%s,]", i)
    if byte(text, i) == RBRACE then
      return out
    end
    local key_end = skip_string(text, i)
    local value = find(text, "[^%s:]", key_end + 1)
    local value_end = skip_value(text, value)
    out[sub(text, i + 1, key_end - 1)] = sub(text, value, value_end)
    i = value_end + 1
  end
end

--- The elements of the JSON array `text`, as raw texts.
function _M.elements(text)
  local out = {}
  local i = find(text, "[", 1, true) + 1
  while true do
    i = find(text, "[^%s,]", i)
    if byte(text, i) == RBRACKET then
      return out
    end
    local e = skip_value(text, i)
    out[#out + 1] = sub(text, i, e)
    i = e + 1
  end
end

--- `text` without the whitespace between tokens; string and number texts kept.
function _M.minify(text)
  local parts, i = {}, 1
  while true do
    local q = find(text, '"', i, true)
    parts[#parts + 1] = gsub(sub(text, i, q and q - 1), "%s+", "")
    if not q then
      return concat(parts)
    end
    local e = skip_string(text, q)
    parts[#parts + 1] = sub(text, q, e)
    i = e + 1
  end
end

return _M

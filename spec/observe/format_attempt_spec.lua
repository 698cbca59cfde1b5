-- core.format_attempt(record): the MERCHANTAPI_DEBUG line of a record.  Its
-- integer fields (merchantapi.attempt, max_attempts,
-- http.response.status_code) become C ints: a number that is not an
-- integer an int holds -- NaN, an infinity, 1e300, 2^31, 1.5 -- is refused
-- with an error naming the field (no cast out of range: undefined
-- behaviour, which the sanitizer run reports), never printed as whatever
-- the cast gave.
local core = require "merchantapi.core"

local function record(over)
  local r = {
    ["http.request.method"] = "GET",
    ["url.full"] = "http://127.0.0.1/api/public/v1/channels/c1",
    ["merchantapi.attempt"] = 1,
    max_attempts = 3,
    ["http.response.status_code"] = 503,
    duration = 0.004,
  }
  for k, v in pairs(over or {}) do
    r[k] = v
  end
  return r
end

describe("core.format_attempt", function()
  it("makes the line of a record with integer fields", function()
    assert.equal("merchantapi: GET http://127.0.0.1/api/public/v1/channels/c1 attempt 1/3: 503 in 0.004 s",
      core.format_attempt(record()))
    -- an integral float is that integer (every number is one on Lua 5.1, LuaJIT)
    assert.matches("attempt 2/3: 429 ", core.format_attempt(record({
      ["merchantapi.attempt"] = 2.0, ["http.response.status_code"] = 429.0 })), 1, true)
    assert.matches("attempt 2147483647/-2147483648: ", core.format_attempt(record({
      ["merchantapi.attempt"] = 2147483647, max_attempts = -2147483648 })), 1, true)
  end)

  it("refuses a number an int does not hold, naming the field", function()
    local bad = { 0 / 0, 1e300, -1e300, math.huge, -math.huge, 2 ^ 31, -(2 ^ 31) - 1, 1.5 }
    local n = 0
    for _, field in ipairs({ "merchantapi.attempt", "max_attempts", "http.response.status_code" }) do
      for _, v in ipairs(bad) do
        local ok, err = pcall(core.format_attempt, record({ [field] = v }))
        assert.is_false(ok, field .. " = " .. tostring(v) .. " gave a line: " .. tostring(err))
        assert.matches("(" .. field .. ": an integer from", err, 1, true)
        n = n + 1
      end
    end
    assert.equal(24, n)
  end)

  it("reads a field of another type as not given, as before", function()
    assert.matches("attempt 0/3: no response in ", core.format_attempt(record({
      ["merchantapi.attempt"] = "1", ["http.response.status_code"] = false })), 1, true)
  end)
end)

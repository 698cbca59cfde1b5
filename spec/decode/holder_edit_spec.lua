-- A resource table's metatable (what merchantapi.links, meta, relationship
-- and relationships read; docs/guide/lua.md) is a plain table that
-- getmetatable hands out.  Editing it -- any of its slots, to any value,
-- before or after the first of those calls -- never crashes the process
-- nor raises: the accessors give what the document said, or nothing (nil),
-- as when the metatable is replaced.  Run in a child interpreter, so that
-- a crash shows as this case's failure.
local helpers = require "helpers"

local CHILD = [[
local merchantapi = require "merchantapi"
local BODY = '{"data":{"type":"payouts","id":"p1","attributes":{"amount":"1"},'
  .. '"links":{"self":"/payouts/p1"},"meta":{"m":1},'
  .. '"relationships":{"account":{"data":{"type":"accounts","id":"a1"},"meta":{"x":1}}}}}'
local values = { 42, "text", true, {}, function() end, 0.5 }
local n = 0
for slot = 1, 6 do
  for _, built in ipairs({ false, true }) do
    for _, v in ipairs(values) do
      local r = assert(merchantapi.decode(BODY))
      assert(merchantapi.links(r).self == "/payouts/p1", "the links before the edit")
      if not built then
        r = assert(merchantapi.decode(BODY)) -- the holder's infos not built yet
      end
      local h = getmetatable(r)
      h[slot] = v
      local what = " after h[" .. slot .. "] = " .. tostring(v) .. (built and " (built)" or "")
      local ok, links = pcall(merchantapi.links, r)
      assert(ok and (links == nil or links.self == "/payouts/p1"), "links" .. what .. ": " .. tostring(links))
      local meta
      ok, meta = pcall(merchantapi.meta, r)
      assert(ok and (meta == nil or meta.m == 1), "meta" .. what .. ": " .. tostring(meta))
      local rels
      ok, rels = pcall(merchantapi.relationships, r)
      assert(ok and type(rels) == "table", "relationships" .. what .. ": " .. tostring(rels))
      local rel
      ok, rel = pcall(merchantapi.relationship, r, "account")
      assert(ok and (rel == nil or rel.meta.x == 1), "relationship" .. what .. ": " .. tostring(rel))
      n = n + 1
    end
  end
end
print("edits " .. n)
]]

describe("a resource's metatable, edited", function()
  it("the accessors find nothing after any edit of its slots; the process lives", function()
    local out, ok = helpers.run_lua(CHILD)
    assert.is_true(ok, out)
    assert.matches("edits 72", out, 1, true)
  end)
end)

--- The alternative a Lua user writes by hand: JSON:API resolution over a
-- document lua-cjson decoded -- flatten every resource, index it by type and
-- id, replace linkages by the indexed tables (stubs otherwise).  Used by
-- bench/calls.lua and bench/decode.lua as the "cjson + Lua resolution" way.
-- Loaded with dofile (the bench scripts run from the repository root).
local pairs, type = pairs, type
local null = require("cjson").null

local function flatten(resource, index)
  local t = { id = resource.id, type = resource.type }
  for k, v in pairs(resource.attributes or {}) do
    if v ~= null then
      t[k] = v
    end
  end
  index[resource.type .. "\0" .. resource.id] = t
  return t
end

local function link(l, index)
  local key = l.type .. "\0" .. l.id
  local t = index[key]
  if not t then
    t = { id = l.id, type = l.type }
    index[key] = t
  end
  return t
end

local function relate(resource, index)
  local t = index[resource.type .. "\0" .. resource.id]
  for name, rel in pairs(resource.relationships or {}) do
    local data = rel.data
    if type(data) == "table" then
      if data.type then
        t[name] = link(data, index)
      else
        local many = {}
        for i = 1, #data do
          many[i] = link(data[i], index)
        end
        t[name] = many
      end
    end
  end
end

--- Resolves a decoded document: the primary resource, or for a list the
-- array of them with `.meta`.
local function resolve(doc)
  local index, data, included = {}, doc.data, doc.included or {}
  local single = data.type ~= nil
  local primary
  if single then
    primary = flatten(data, index)
  else
    primary = {}
    for i = 1, #data do
      primary[i] = flatten(data[i], index)
    end
  end
  for i = 1, #included do
    flatten(included[i], index)
  end
  if single then
    relate(data, index)
  else
    for i = 1, #data do
      relate(data[i], index)
    end
    primary.meta = doc.meta
  end
  for i = 1, #included do
    relate(included[i], index)
  end
  return primary
end

return { resolve = resolve }

--- The documents: `merchantapi.decode` and `merchantapi.encode`, and a
-- resource table's links, meta and relationships (`merchantapi.links`,
-- `merchantapi.meta`, `merchantapi.relationship`,
-- `merchantapi.relationships`), and `merchantapi.array`.
--
-- Part of module `merchantapi`, which re-exports every function here; a
-- script requires `merchantapi`, not this file.
--
-- @submodule merchantapi
local core = require "merchantapi.core"
local json = require "merchantapi.json"
local errors = require "merchantapi.errors"
local check_arg = require("merchantapi.options").arg

local M = {}

--- Turns a JSON:API document fetched some other way into the shapes the
-- client returns.
--
-- syntax: `resource_or_list, err, res = merchantapi.decode(body)`
--
-- @tparam string body the document's bytes.
-- @return the resource (a single `data`), the list (an array `data`, with
--   `.meta` and `.links`, the document's), or `merchantapi.null` when the
--   document has no primary data (`data: null`, a meta-only document) --
--   the values `client:request` gives for the same body -- then nil and res,
--   where res has `body` (the argument itself), `headers` (empty), `meta`,
--   `jsonapi`, `links` and `document()`, but no `status`.  On failure
--   `nil, err, message` (the res above at `err.res`): `kind = "decode"` (invalid JSON, nested deeper than
--   64, not JSON:API -- such as a top-level `meta`, `links` or `jsonapi`,
--   or a resource's or relationship's `links` or `meta`, that is not an
--   object: the rules of every call, on every path), or `kind = "api"` for an error document (`status` from
--   `errors[1].status`, `amount`/`minimum`/`maximum` as for the client; a
--   member that is not a string, such as a validation array in `detail`, as
--   its JSON text) with res.  A list's `meta` is data, as for
--   `client:request`: `page`, `per_page` and `total` read as integers when
--   they are counts, anything else as it came (`meta.page = { offset = 0,
--   limit = 10 }`); only the list calls refuse them (`list_addresses`).
-- @raise when body is not a string.
-- @function decode
M.decode = core.decode

-- Links, meta and relationships of a resource table.  The flattened tables
-- hold no key but `id`, `type`, `lid`, the attributes and the resolved
-- relationships; the rest of what a resource says is read through these
-- functions (the binding keeps it aside, see src/lua_values.c).
local resource_info = core.resource_info

local function check_resource(resource, fname)
  check_arg(resource, "table", fname, 1, 3)
  return resource_info(resource)
end

-- The public shape of one relationship record of an info table.
local function relationship_of(resource, name, rec)
  local data
  local state = rec.data
  if state == "one" or state == "many" then
    data = rawget(resource, name) -- the resolved table(s) the resource holds
  elseif state == "null" then
    data = core.null
  end
  return { data = data, links = rec.links, meta = rec.meta, linkage = rec.linkage }
end

--- The `links` object of a resource (JSON:API "Resource Objects", such as
-- `links.self`), as a Lua table: a link is a string, or a table with
-- `href` and `meta` (JSON:API 1.1 link objects); null members are absent.
--
-- syntax: `links = merchantapi.links(resource)`
--
-- @tparam table resource a resource table returned by `decode` or a call
--   (primary, included or reached through a relationship).
-- @return the links table, or nil when the resource has none (and for any
--   table this module did not return).  The table is shared: do not modify it.
--   Always a table: a document whose links (or meta, here or at its top
--   level) is not an object was refused as `"decode"`, on every path.
-- @raise when resource is not a table.
function M.links(resource)
  local info = check_resource(resource, "links")
  return info and info.links
end

--- The `meta` object of a resource (JSON:API "Resource Objects"), as a Lua
-- table, numbers by the usual rules (exact: integers within 2^53, other
-- numbers as their source text); null members are absent.
--
-- syntax: `meta = merchantapi.meta(resource)`
--
-- @tparam table resource a resource table returned by `decode` or a call.
-- @return the meta table, or nil when the resource has none (and for any
--   table this module did not return).  The table is shared: do not modify it.
-- @raise when resource is not a table.
function M.meta(resource)
  local info = check_resource(resource, "meta")
  return info and info.meta
end

--- One relationship of a resource as the document gave it (JSON:API
-- "Relationships"), with what the flattened table cannot show.
--
-- syntax: `rel = merchantapi.relationship(resource, name)`
--
-- @tparam table resource a resource table returned by `decode` or a call.
-- @tparam string name the relationship's name (e.g. `"network"`).
-- @return nil when the resource has no relationship of that name (an
--   attribute is not one), else a new table:
--   `data` -- the resolved resource table (to-one) or array of them
--   (to-many), the very value `resource[name]` holds; `merchantapi.null` for
--   `"data": null` (an empty to-one relationship); nil when the relationship
--   has no `data` member (not loaded: only `links` or `meta`, e.g.
--   `meta.included = false`) -- nothing is known then;
--   `links` (e.g. `links.related`) and `meta`, tables or nil;
--   `linkage` -- the resource identifier object(s) as written: `{ type, id,
--   lid, meta }` (to-one) or an array of them (to-many; `linkage[i].meta` is
--   the meta of the i-th identifier), `merchantapi.null` for `data: null`,
--   nil when not loaded.  `links`, `meta` and `linkage` are shared: do not
--   modify them.
-- @raise when resource is not a table or name not a string.
function M.relationship(resource, name)
  local info = check_resource(resource, "relationship")
  check_arg(name, "string", "relationship", 2)
  local rec = info and info.relationships[name]
  if not rec then
    return nil
  end
  return relationship_of(resource, name, rec)
end

--- Every relationship of a resource, loaded or not.
--
-- syntax: `rels, names = merchantapi.relationships(resource)`
--
-- @tparam table resource a resource table returned by `decode` or a call.
-- @return a new table name -> what `merchantapi.relationship(resource,
--   name)` returns, and a new array of the names in document order (both
--   empty when the resource has no relationships, and for any table this
--   module did not return).
-- @raise when resource is not a table.
function M.relationships(resource)
  local info = check_resource(resource, "relationships")
  local rels, names = {}, {}
  if info then
    local recs = info.relationships
    for i, name in ipairs(info.names) do
      names[i] = name
      rels[name] = relationship_of(resource, name, recs[name])
    end
  end
  return rels, names
end

--- Encodes a Lua value as JSON the way `client:request` encodes a table
-- body, with money kept exact.
--
-- syntax: `text, err = merchantapi.encode(value)`
--
-- Compact JSON by fixed rules, so the same table always gives the same bytes:
--
-- * strings: valid UTF-8, written as their bytes (unicode passes through),
--   with `"`, `\` and the control bytes 0x00-0x1f escaped (`\n`, `\t`,
--   `\r`, `\b`, `\f`, else `\u00XX`); invalid UTF-8 is refused.
-- * integers: a Lua integer (5.3+) as its decimal digits; a float with an
--   integral value within +-2^53 likewise (`2.0` -> `2`, as on 5.1/LuaJIT).
-- * other numbers are refused: a fraction (money must be a decimal string:
--   `"250.10"` stays a JSON string), NaN, infinities, integral floats beyond
--   2^53 (their digits are not what was meant).
-- * `true`, `false`; `merchantapi.null` (= `cjson.null`) -> `null`.
-- * tables: keys 1..n without holes -> an array; only string keys -> an
--   object with its keys sorted bytewise; an empty table -> `{}`, or `[]`
--   when made by `merchantapi.array()` (or `cjson.empty_array`, or a table
--   with cjson's `array_mt`).  Mixed keys, holes, other key types, cycles and
--   nesting deeper than 64 are refused.
-- * anything else (functions, other userdata, threads) is refused.
--
-- @param value a string, number, boolean, `merchantapi.null` or table
--   (whose values follow the same rules).
-- @return the JSON text, or nil and a `"usage"` error whose `pointer` is
--   the JSON pointer (RFC 6901) of the refused value, `""` for value itself.
function M.encode(value)
  local text, msg, pointer = json.encode(value)
  if not text then
    return errors.fail(errors.new { kind = "usage", title = "the value has no JSON form",
      detail = msg, pointer = pointer })
  end
  return text
end

--- Marks a table (default: a new one) as a JSON array, so that an empty
-- one encodes as `[]` rather than `{}`.
--
-- syntax: `t = merchantapi.array(t)`
--
-- @function array
-- @tparam[opt] table t the table to mark (its metatable is replaced).
-- @treturn table t, or the new table.
M.array = json.array

return M

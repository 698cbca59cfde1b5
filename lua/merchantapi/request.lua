--- Internal: the Lua half of the generic call `client:request(method, path, opts)`:
-- query strings, table bodies (through `merchantapi.json`), and its usage
-- errors (`merchantapi.errors`).  The C core
-- (`mapi_request_ex`) checks the path, sends the request and maps the
-- response; see `lua/merchantapi.lua` for the public documentation.
--
-- @module merchantapi.request
local core = require "merchantapi.core"
local json = require "merchantapi.json"
local errors = require "merchantapi.errors"
local is_count = require("merchantapi.options").is_count

local type = type
local pairs = pairs
local tostring = tostring
local find, match, sub = string.find, string.match, string.sub
local concat = table.concat

local request = {}

local escape = core.escape -- the core's one percent-encoding (src/url.c)
local url_parts = core.url_parts -- the core's origin and path of a URL, default ports (src/url.c)

local function usage(method, path, title, detail, pointer)
  return errors.new {
    kind = "usage", title = title, detail = detail, pointer = pointer,
    method = method, path = path,
    outcome = core.not_sent(method), -- the core's rule: nothing was sent
  }
end

-- The text of one query value, or nil, message.
local function query_value(v)
  local t = type(v)
  if t == "string" then
    return v
  elseif t == "boolean" then
    return v and "true" or "false"
  elseif t == "number" then
    local text, msg = json.encode(v)
    if not text then
      return nil, msg
    end
    return text
  end
  return nil, "a value of type " .. t .. " has no query form"
end

--- Builds a query string from a table by the rules of `client:request`'s
-- `query` (an array's key repeated in array order; an empty one sends nothing).
--
-- syntax: `text, err = request.query_string(query)`
-- @tparam table query the parameters: name -> value or array of values.
-- @treturn string `"a=1&b=x%20y"` (`""` for an empty table), or nil and a message.
function request.query_string(query)
  local keys = {}
  for k in pairs(query) do
    if type(k) ~= "string" then
      return nil, "query key " .. tostring(k) .. " is not a string"
    end
    keys[#keys + 1] = k
  end
  json.sort_strings(keys)
  local out = {}
  for j = 1, #keys do
    local k = keys[j]
    local v = query[k]
    local list = v
    if type(v) == "table" then
      for key in pairs(v) do
        if not is_count(key) or key > #v then
          return nil, "query." .. k .. ": a table value must be an array"
        end
      end
    else
      list = { v }
    end
    for i = 1, #list do
      local text, msg = query_value(list[i])
      if not text then
        return nil, "query." .. k .. ": " .. msg
      end
      out[#out + 1] = escape(k) .. "=" .. escape(text)
    end
  end
  return concat(out, "&")
end

--- Checks and builds what the C core sends.
--
-- syntax: `path_and_query, body, err = request.build(method, path, opts)`
--
-- @tparam string method the HTTP method of the call.
-- @tparam string path the path under the base URL, as the caller gave it.
-- @tparam[opt] table opts `query` (a table, see `request.query_string`) and
--   `body` (a string sent as is, or a table encoded as JSON).
-- @treturn string|nil the path with the query string appended (`?`, or `&`
--   when the path has a query already)
-- @treturn string|nil the body text (a string body as is, a table encoded)
-- @treturn table|nil a usage error (with `pointer` into the body when a
--   body value was refused); nothing has been sent then.
function request.build(method, path, opts)
  local full = path
  local query, body = opts and opts.query, opts and opts.body
  if query ~= nil then
    local qs, msg = request.query_string(query)
    if not qs then
      return nil, nil, usage(method, path, "bad query", msg)
    end
    if qs ~= "" then
      full = path .. (path:find("?", 1, true) and "&" or "?") .. qs
    end
  end
  if type(body) == "table" then
    local text, msg, pointer = json.encode(body)
    if not text then
      return nil, nil, usage(method, path, "the body has no JSON form", msg, pointer)
    end
    body = text
  end
  return full, body, nil
end

-- "scheme://host[:port]" of an origin for a message: an IPv6 host in brackets.
local function show(scheme, host, port)
  return scheme .. "://" .. (find(host, ":", 1, true) and "[" .. host .. "]" or host) ..
    (port and ":" .. port or "")
end

--- Turns a pagination link of a page (JSON:API `links.next`: a URL string,
-- or a link object with `href`) into the path and query to request under
-- the client's base URL -- same origin only.
--
-- syntax: `path, err = request.link_path(base_url, current, link)`
--
-- @tparam string base_url the client's base URL (`scheme://host[:port][/prefix]`).
-- @tparam string current the path and query (under base_url) of the page
--   that gave the link: relative references are resolved against it.
-- @param link the link (a string, a table with `href`, or nil).
-- @return the path and query (starting with `/`, under base_url; a fragment
--   dropped), or nil when there is no link, or nil and a message when the
--   link points to another scheme, host or port, or outside base_url's
--   path, or is neither a string nor a link object.  An absolute URL, a
--   network-path (`//host/...`), an absolute-path (`/...`), a query-only
--   (`?...`) and a relative-path reference are understood (RFC 3986, without
--   removing dot segments: the request refuses them).
function request.link_path(base_url, current, link)
  if type(link) == "table" then
    link = link.href
  end
  if link == nil then
    return nil
  end
  if type(link) ~= "string" then
    return nil, "the link is neither a URL nor a link object with href"
  end
  link = match(link, "^[^#]*")
  -- the base URL's origin and prefix (no trailing "/"): the core's parse (src/url.c)
  local s1, h1, p1, prefix = url_parts(base_url)
  if not s1 or h1 == "" then
    return nil, "the base URL has no scheme and host"
  end
  local scheme, authority, rest = match(link, "^(%a[%w+.-]*)://([^/?#]*)(.*)$")
  if not scheme then
    if match(link, "^%a[%w+.-]*:") then
      return nil, "it is not an http(s) URL"
    end
    authority, rest = match(link, "^//([^/?#]*)(.*)$")
    scheme = authority and s1
  end
  local full -- the path and query from the origin's root
  if scheme then
    local s2, h2, p2 = url_parts(scheme .. "://" .. authority)
    if s1 ~= s2 or h1 ~= h2 or p1 ~= p2 then
      return nil, "it points to " .. show(s2, h2, p2) .. ", not to the base URL's " ..
        show(s1, h1, p1)
    end
    full = rest
  elseif sub(link, 1, 1) == "/" then
    full = link
  else
    local cur = prefix .. current
    local cur_path = match(cur, "^[^?]*")
    if link == "" then
      full = cur
    elseif sub(link, 1, 1) == "?" then
      full = cur_path .. link
    else
      full = match(cur_path, "^(.*/)") .. link
    end
  end
  if sub(full, 1, 1) ~= "/" and sub(full, 1, 1) ~= "?" and full ~= "" then
    return nil, "it has no path"
  end
  local path = sub(full, #prefix + 1)
  if sub(full, 1, #prefix) ~= prefix or sub(path, 1, 1) ~= "/" then
    return nil, "its path is not under the base URL's " .. (prefix ~= "" and prefix or "/")
  end
  return path
end

return request

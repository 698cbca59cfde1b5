--- Channels: GET from the fixture, a disabled one, echo-* ids that report the
-- request target they arrived as, and the fault ids.
local faults = require "sandbox.faults"
local fixtures = require "sandbox.fixtures"
local jsontext = require "sandbox.jsontext"
local respond = require "sandbox.respond"

local quote, replace_once = jsontext.quote, jsontext.replace_once
local sub = string.sub

local _M = {}

local FIXTURE_ID = "60e05bc0-4690-4985-a08a-8acf00e48294"
local ENABLED = '"status": "enabled"'

local fixture -- the fixture's text
local disabled -- the "ch-disabled" document

--- The fixture's document renamed to `id`.
local function renamed(id)
  return replace_once(fixture, '"id": "' .. FIXTURE_ID .. '"', '"id": ' .. quote(id))
end

function _M.prepare()
  fixture = fixtures.text("get_channel.200")
  disabled = replace_once(renamed("ch-disabled"), ENABLED, '"status": "disabled"')
end

local function echo(id)
  return replace_once(renamed(id), '"meta": {}',
    '"meta": {"received_path": ' .. quote(ngx.var.request_uri) .. "}")
end

--- Answer GET for channel `id`.
function _M.handle(method, id)
  if method ~= "GET" and method ~= "HEAD" then
    return respond.method_not_allowed("GET")
  end
  if id == FIXTURE_ID then
    return respond.send(200, fixture)
  elseif id == "ch-disabled" then
    return respond.send(200, disabled)
  elseif sub(id, 1, 5) == "echo-" then
    return respond.send(200, echo(id))
  elseif faults.is_fault(id) then
    local body = renamed(id)
    return faults.respond(id, {
      status = 200,
      body = body,
      resource_type = "channels",
      wrong_type = "payouts",
      dup_key = "status",
      dup_first = "disabled",
      normal = function() return 200, body end,
    })
  end
  return respond.not_found("no channel " .. id)
end

return _M

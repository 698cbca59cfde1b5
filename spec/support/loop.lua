--- What the specs of merchantapi.loop (spec/loop/*_spec.lua) share: a
-- client over the loop's own transfers, one function run as a loop's only
-- task, and an error of a task compared field by field with a blocking
-- call's.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local assert = require "luassert"

local ipairs = ipairs

local M = {}

--- A client over libcurl (the loop's own transfers), whatever the run's
-- helpers.transport says; opts as helpers.client's.
function M.client(opts)
  opts = opts or {}
  opts.transport = false
  return helpers.client(opts)
end

--- Runs fn(...) as the one task of a new loop until it is done; its results.
function M.in_task(fn, ...)
  local loop = assert(merchantapi.loop())
  local task = loop:spawn(fn, ...)
  loop:run()
  assert.is_true(task:done())
  loop:close()
  return task:result()
end

-- What a user reads of an error, to compare a blocking call's with a loop's.
local FIELDS = { "kind", "status", "code", "title", "detail", "retryable", "curl_code",
  "attempts", "method", "path", "url", "outcome", "deadline_exceeded", "retry_after", "message" }

-- The fields that tell how a connection ended, for a fault that ends it:
-- the loop's connections are shared by the clients on it, so a retry there
-- may go over a connection another call kept alive, which the server then
-- closes with nothing sent back; libcurl would send the request again by
-- itself and is stopped ("libcurl was about to send the request again",
-- curl_code 42), where the blocking client's own fresh connection says
-- "Server returned nothing" (52).  Everything else is the same.
local CONNECTION_FIELDS = { title = true, detail = true, curl_code = true, message = true }
local ENDS_CONNECTION = { ["fault-no-response"] = true }

--- Asserts the error got (a loop's) reads as want (a blocking call's), field
-- by field; what names the case (a fault's id) in the messages.
function M.assert_same_error(want, got, what)
  assert.is_table(want)
  assert.is_table(got)
  for _, k in ipairs(FIELDS) do
    if ENDS_CONNECTION[what] and CONNECTION_FIELDS[k] and got.curl_code == 42 then
      assert.equal(52, want.curl_code, what .. " blocking curl_code")
    else
      assert.same(want[k], got[k], (what or "") .. " field " .. k)
    end
  end
end

return M

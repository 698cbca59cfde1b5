-- merchantapi.loop: the fault cases of spec/faults/faults_spec.lua run both
-- ways, blocking and as tasks on one loop, and compared field by field, what
-- reached the sandbox counted.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local support = require "support.loop"

local count = helpers.count
local client, assert_same_error = support.client, support.assert_same_error

local OPS = {
  { name = "get_channel", call = function(c, id) return c:get_channel(id) end },
  { name = "list_addresses", call = function(c, id) return c:list_addresses(id) end },
  { name = "confirm_payout", call = function(c, id) return c:confirm_payout(id, { settle = false }) end },
}

local FAULTS = { "fault-redirect", "fault-500", "fault-bad-json", "fault-wrong-type",
  "fault-not-jsonapi", "fault-text-plain", "fault-bad-utf8", "fault-html-502",
  "fault-503", "fault-504", "fault-reset", "fault-no-response", "fault-other-id" }

describe("merchantapi.loop: the fault cases, blocking and in tasks", function()
  for _, op in ipairs(OPS) do
    it(op.name .. ": the same errors and the same requests, all faults at once on one loop", function()
      helpers.reset()
      -- a client per case, both ways: each starts without a kept connection
      local blocking, values, reached = {}, {}, {}
      for _, id in ipairs(FAULTS) do
        local c = client { max_retries = 1 }
        local v, err = op.call(c, id)
        c:close()
        values[id], blocking[id] = v, err
        reached[id] = count(id)
        if err then
          assert.equal(err.attempts, reached[id])
        end
      end
      -- every fault at once, one task each
      local loop = assert(merchantapi.loop())
      local tasks = {}
      local clients = {}
      for _, id in ipairs(FAULTS) do
        clients[id] = client { max_retries = 1 }
        tasks[id] = loop:spawn(op.call, clients[id], id)
      end
      loop:run()
      for _, id in ipairs(FAULTS) do
        local v, err = tasks[id]:result()
        if values[id] then -- an address list has no id to be another's
          assert.same(values[id], v)
        else
          assert.is_nil(v)
          assert_same_error(blocking[id], err, id)
        end
        assert.equal(2 * reached[id], count(id), id)
        clients[id]:close()
      end
      loop:close()
    end)
  end
end)

-- loop:close() made from inside one of the loop's own steps -- a hook of a
-- call running on it (on_request, on_response), which runs inside the C
-- step -- ends the loop as a close between steps does: every task ends
-- with the loop's error, and once the step has unwound everything the
-- loop held is let go (its epoll descriptor, its connections, the
-- exchanges and the client's hold), so the descriptors come back to their
-- count before the loop was made.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

-- Descriptors open once everything unreachable is collected: a few full
-- cycles (a finalizer can make more garbage, such as an exchange's
-- letting go of its client, only collected at the next cycle), until the
-- count stops moving.
local function settled_fds()
  local n
  for _ = 1, 10 do
    collectgarbage()
    collectgarbage()
    local m = helpers.open_fds()
    if m == n then
      return m
    end
    n = m
  end
  return n
end

-- Runs three calls (call(c), default a get_channel) on a new loop whose
-- hook `which` closes the loop at its first call; what the tasks gave.
local function close_from(which, call)
  call = call or function(c) return c:get_channel(helpers.CHANNEL_ID) end
  local loop = assert(merchantapi.loop())
  local closed = 0
  local c = helpers.client({
    transport = false, -- libcurl: the hooks run inside the C step
    [which] = function()
      if closed == 0 then
        closed = closed + 1
        loop:close()
      end
    end,
  })
  local tasks = {}
  for i = 1, 3 do
    tasks[i] = loop:spawn(call, c)
  end
  local steps = 0
  while closed == 0 and steps < 1000 do
    loop:step(0.05)
    steps = steps + 1
  end
  assert.equal(1, closed, "the hook did not run")
  local results = {}
  for i = 1, 3 do
    assert.is_true(tasks[i]:done())
    results[i] = { tasks[i]:result() }
  end
  assert.has_error(function() loop:step(0) end, "merchantapi.loop: step on a closed loop")
  loop:close() -- again: nothing
  c:close()
  -- the client is closed at once: no call of the loop holds it any longer
  local _, err = c:get_channel(helpers.CHANNEL_ID)
  assert.equal("usage", err.kind)
  return results
end

describe("merchantapi.loop: close() from a hook, during a step", function()
  for _, which in ipairs({ "on_request", "on_response" }) do
    it(which .. ": ends every task and gives every descriptor back", function()
      local before = settled_fds()
      local results = close_from(which)
      for i = 1, 3 do
        assert.is_nil(results[i][1])
        assert.equal("merchantapi.loop: the loop was closed before the task ended", results[i][2])
      end
      assert.equal(before, settled_fds(), "descriptors left open by the closed loop")
    end)
  end

  it("on_request of a confirm: no confirm is sent", function()
    helpers.reset()
    local results = close_from("on_request", function(c) return c:confirm_payout(helpers.PAYOUT_ID) end)
    for i = 1, 3 do
      assert.equal("merchantapi.loop: the loop was closed before the task ended", results[i][2])
    end
    assert.equal(0, helpers.count(helpers.PAYOUT_ID))
  end)

  it("ten times over: no descriptor left behind", function()
    local before = settled_fds()
    for i = 1, 10 do
      close_from(i % 2 == 0 and "on_request" or "on_response")
    end
    assert.equal(before, settled_fds(), "descriptors left open by the closed loops")
  end)
end)

--- Internal: `merchantapi payout PAYOUT_ID [--wait-txid[=SECONDS]]`: reads a payout.
-- @module merchantapi.cli.payout
local term = require "merchantapi.cli.term"
local status = require "merchantapi.cli.status"
local output = require "merchantapi.cli.output"
local client = require "merchantapi.cli.client"

local payout = { summary = "Read a payout (" .. client.endpoint("get_payout") .. ")." }

--- Declares the command's arguments and options.
-- @param cmd the command's argparse parser.
function payout.declare(cmd)
  cmd:argument("payout_id", "The payout's id."):argname("PAYOUT_ID")
  cmd:option("--wait-txid", "Read it until its txid is set, at most SECONDS (default: the module's, "
    .. string.format("%g", require("merchantapi.wait").DEFAULTS.timeout) .. "); "
    .. "the value only with '=': --wait-txid=120."):args("?"):argname("=SECONDS")
end

--- Runs the command: writes the payout (with --wait-txid, once it has its txid).
-- @tparam table o the parsed command line.
function payout.run(o)
  local c = client.new(o)
  if not o.wait_txid then
    local value, err = c:get_payout(o.payout_id)
    return output.resource(value or status.fail(err), o.format)
  end
  local s, seconds, msg = o.wait_txid[1] or "", false, nil -- no value: the module's default
  if s ~= "" then
    seconds, msg = client.seconds(s)
  end
  if seconds == nil then
    term.die(status.EXIT.usage, "--wait-txid: " .. msg)
  end
  local on_read = term.isatty(2) and function(p, e)
    if p and p.txid == nil then
      term.note(string.format("payout %s is %s, no txid yet", term.printable(o.payout_id),
        term.printable(tostring(p.status))))
    elseif e then
      term.stderr:write(status.line(e), "\n")
    end
  end or nil
  local value, err = c:wait_for_txid(o.payout_id, { timeout = seconds or nil, on_read = on_read })
  output.resource(value or status.fail(err), o.format)
end

return payout

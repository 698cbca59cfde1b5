--- Internal: `merchantapi confirm PAYOUT_ID`: confirms a payout draft, asking first on a terminal.
-- Without a terminal it confirms only with --yes (nothing sent otherwise).
-- @module merchantapi.cli.confirm
local core = require "merchantapi.core"
local term = require "merchantapi.cli.term"
local status = require "merchantapi.cli.status"
local output = require "merchantapi.cli.output"
local client = require "merchantapi.cli.client"

local printable, scalar = term.printable, output.scalar

local confirm = { summary = "Confirm a payout draft (" .. client.endpoint("confirm_payout")
  .. "): asks first on a terminal; without a terminal only with --yes." }

--- Declares the command's arguments and options.
-- @param cmd the command's argparse parser.
function confirm.declare(cmd)
  cmd:argument("payout_id", "The draft's id."):argname("PAYOUT_ID")
  cmd:flag("-y --yes", "Do not ask (needed when stdin is not a terminal).")
  cmd:flag("--no-settle", "After an unknown outcome, do not read the payout to settle it.")
end

-- the question on the terminal, after showing the payout (a failed read does not stop it)
local function ask(c, id)
  local payout, err = c:get_payout(id)
  if payout then
    term.stderr:write(string.format("payout %s: %s %s to %s, status %s\n", printable(id),
      printable(scalar(payout.amount) or "?"), printable(scalar(payout.currency) or ""),
      printable(scalar(payout.address) or "?"), printable(scalar(payout.status) or "?")))
  else
    term.stderr:write("(could not read the payout first: ", status.line(err), ")\n")
  end
  term.stderr:write("Confirm payout ", printable(id), "? This moves money. [y/N] ")
  term.stderr:flush()
  local answer = (term.stdin:read("*l") or ""):lower():match("^%s*(.-)%s*$")
  return answer == "y" or answer == "yes"
end

--- Runs the command: writes the confirmed payout.
-- @tparam table o the parsed command line.
function confirm.run(o)
  local id = o.payout_id
  local what = { method = core.endpoints.confirm_payout.method, confirm = id }
  local c = client.new(o, what)
  if not o.yes then
    if not term.isatty(0) then
      term.die(status.EXIT.usage, "confirm moves money: pass --yes when stdin is not a terminal "
        .. "(nothing was sent)")
    elseif not ask(c, id) then
      term.die(status.EXIT.declined, "not confirmed (nothing sent)")
    end
  end
  local payout, err, res = c:confirm_payout(id, { settle = not o.no_settle })
  if not payout then
    status.fail(err, what)
  end
  if res and res.settled_by == "read" then
    term.note("the confirm's answer was lost; reading the payout showed it confirmed (status "
      .. printable(tostring(payout.status)) .. ")")
  end
  output.resource(payout, o.format)
end

return confirm

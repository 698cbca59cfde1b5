--- Internal: `merchantapi version`: the version of the tool and the module.
-- @module merchantapi.cli.version
local merchantapi = require "merchantapi"
local term = require "merchantapi.cli.term"

local version = { summary = "Print the version of the tool and the module.", plain = true }

--- Declares nothing: the command takes no argument.
-- @param _ the command's argparse parser.
function version.declare(_) end

--- Runs the command: "merchantapi VERSION (LUA)".
-- @tparam table _ the parsed command line.
function version.run(_)
  local jit = rawget(_G, "jit")
  term.out(string.format("merchantapi %s (%s)\n", tostring(merchantapi._VERSION), jit and jit.version or _VERSION))
end

return version

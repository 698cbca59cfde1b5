--- Internal: `merchantapi channel CHANNEL_ID`: reads a deposit channel.
-- @module merchantapi.cli.channel
local status = require "merchantapi.cli.status"
local output = require "merchantapi.cli.output"
local client = require "merchantapi.cli.client"

local channel = { summary = "Read a deposit channel (" .. client.endpoint("get_channel") .. ")." }

--- Declares the command's arguments.
-- @param cmd the command's argparse parser.
function channel.declare(cmd)
  cmd:argument("channel_id", "The channel's id."):argname("CHANNEL_ID")
end

--- Runs the command: writes the channel.
-- @tparam table o the parsed command line.
function channel.run(o)
  local value, err = client.new(o):get_channel(o.channel_id)
  output.resource(value or status.fail(err), o.format)
end

return channel

--- Internal: the command-line tool `merchantapi`: its command line, run in this process.
-- bin/merchantapi exits with `cli.run`'s status; the specs call `cli.run` with
-- streams of their own.  Each command is a module, merchantapi.cli.NAME
-- (`summary`, `declare(cmd)`, `run(o)`); the output, the terminal, the exit
-- statuses and the client are modules of their own.  The manual is
-- man/merchantapi.1.
-- @module merchantapi.cli
local term = require "merchantapi.cli.term"
local status = require "merchantapi.cli.status"

local cli = {}

local COMMANDS = { "confirm", "payout", "channel", "addresses", "request", "sandbox", "version" }

local HELP = [[
Configuration:
  MERCHANTAPI_BASE_URL, MERCHANTAPI_API_KEY   the service's URL and your key
  (--base-url and --api-key-file instead; the key is never an argument).

]] .. status.HELP .. "\n\nSee merchantapi(1)."

local function need(name, hint)
  local ok, mod = pcall(require, name)
  return ok and mod or term.die(status.EXIT.tool, "cannot load the Lua module '" .. name .. "' (" .. hint
    .. "): " .. tostring(mod):gsub("\n.*", ""))
end

local function parser()
  local argparse = need("argparse", "Debian: apt-get install lua-argparse; or luarocks install argparse")
  need("merchantapi", "make install, or from a checkout: make")
  local client = require "merchantapi.cli.client"
  local p = argparse("merchantapi", "The merchant payments service from a shell: confirm payout drafts, "
    .. "read payouts and channels, list an account's addresses, call any endpoint."):epilog(HELP):help_max_width(80)
  p:command_target("command")
  p:add_help_command()
  local names = client.declare(p)
  local commands = {}
  for _, name in ipairs(COMMANDS) do
    commands[name] = require("merchantapi.cli." .. name)
    local c = p:command(name, commands[name].summary)
    commands[name].declare(c)
    if not commands[name].plain then
      c:epilog("And the options of every command (merchantapi --help): " .. names .. ".\n\n" .. status.HELP)
    end
  end
  return p, commands
end

local function main(argv, env)
  local args, ended = {}, false
  for i, a in ipairs(argv) do
    ended = ended or a == "--"
    if not ended and (a:match("^%-%-api%-key=") or a == "--api-key" or a:match("^%-%-api%-key%s")) then
      term.die(status.EXIT.usage, "the api key is never an argument (other users can read argv): set "
        .. "MERCHANTAPI_API_KEY or pass --api-key-file FILE")
    end
    args[i] = (a == "--wait-txid") and "--wait-txid=" or a -- its value only with '='
  end
  local p, commands = parser()
  local ok, o = p:pparse(args)
  if not ok then
    term.die(status.EXIT.usage, o .. " (merchantapi --help)")
  elseif o.json and o.csv then
    term.die(status.EXIT.usage, "--json and --csv: one output format at a time")
  end
  o.format = o.json and "json" or o.csv and "csv" or "table"
  o.home, o.installed = env.home, env.installed
  commands[o.command].run(o)
  term.flush()
  return status.EXIT.ok
end

--- Runs the tool's command line in this process and returns its exit status.
-- @tparam table argv the arguments, strings.
-- @tparam[opt] table env where it runs: `home` (the directory holding sandbox/),
--   `installed` (true under `make install`); for the specs `stdout`, `stderr`,
--   `stdin` (objects with write, flush, read), `isatty` (a function of 0 or 2), `getenv`.
-- @treturn integer the exit status (`merchantapi.cli.status`).
function cli.run(argv, env)
  env = env or {}
  local saved = {}
  for _, k in ipairs({ "stdout", "stderr", "stdin", "isatty", "getenv" }) do
    saved[k] = term[k]
    term[k] = env[k] or term[k]
  end
  local ok, code = xpcall(function()
    return main(argv, env)
  end, function(e)
    return term.exit_code(e) and e or debug.traceback(tostring(e), 2)
  end)
  if not ok and not term.exit_code(code) then
    ok, code = pcall(term.die, status.EXIT.tool, "internal error: " .. tostring(code))
  end
  for k, v in pairs(saved) do
    term[k] = v
  end
  return ok and code or term.exit_code(code)
end

return cli

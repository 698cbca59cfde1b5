--- Internal: `merchantapi sandbox`: runs the local sandbox in the foreground.
-- It prints the sandbox's URL and key first (sandbox/run fg does the rest).
-- @module merchantapi.cli.sandbox
local term = require "merchantapi.cli.term"
local status = require "merchantapi.cli.status"

local sandbox = { plain = true, summary = "Run the local sandbox in the foreground (Ctrl-C stops it); "
  .. "prints its URL and key first." }

--- Declares the command's options.
-- @param cmd the command's argparse parser.
function sandbox.declare(cmd)
  cmd:option("--port", "Its port, or auto for free ones (default: $SANDBOX_PORT, else 8089)."):argname("N|auto")
end

local function q(s) -- a word for the shell
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- three free ports, by scripts/free-port
local function free_ports(home)
  local p = io.popen(q(home .. "/scripts/free-port") .. " 3")
  local ports = {}
  for n in (p and p:read("*a") or ""):gmatch("%d+") do
    ports[#ports + 1] = n
  end
  if p then p:close() end
  if #ports ~= 3 then
    term.die(status.EXIT.tool, "no free ports found")
  end
  return ports
end

--- Runs the command until the sandbox stops.
-- @tparam table o the parsed command line (`home`: the directory of sandbox/; `installed`: by make install).
function sandbox.run(o)
  local home = o.home
  local f = home and io.open(home .. "/sandbox/lua/sandbox/routes.lua", "rb")
  if not f then
    term.die(status.EXIT.tool, "the sandbox is not installed with this copy (luarocks installs the module "
      .. "and the tool only): run `make install`, or sandbox/run fg from a checkout")
  end
  local key = f:read("*a"):match('_M%.API_KEY%s*=%s*"([^"]+)"')
  f:close()
  local port, env = o.port or term.getenv("SANDBOX_PORT") or "8089", {}
  if port == "auto" then
    local ports = free_ports(home)
    port = ports[1]
    env[1] = "SANDBOX_TLS_PORT=" .. ports[2] .. " SANDBOX_TLS_UNTRUSTED_PORT=" .. ports[3]
  elseif not port:match("^%d+$") then
    term.die(status.EXIT.usage, "--port takes a port number or auto, got '" .. port .. "'")
  end
  env[#env + 1] = "SANDBOX_PORT=" .. port
  if o.installed and not term.getenv("SANDBOX_PREFIX") then
    -- the installed tree may not be writable: config, logs and certificates go here
    local state = term.getenv("XDG_STATE_HOME")
    if not state or state == "" then
      state = (term.getenv("HOME") or "/tmp") .. "/.local/state"
    end
    env[#env + 1] = "SANDBOX_PREFIX=" .. q(state .. "/merchantapi/sandbox")
  end
  term.out("export MERCHANTAPI_BASE_URL=http://127.0.0.1:", port, "\n")
  term.out("export MERCHANTAPI_API_KEY=", key or "(see sandbox/README.md)", "\n")
  term.flush()
  -- nginx's Lua reads LUA_PATH / LUA_CPATH too: this Lua's paths must not reach it
  local unset = "-u LUA_PATH -u LUA_CPATH -u LUA_INIT"
  for _, v in ipairs({ "5_1", "5_2", "5_3", "5_4" }) do
    unset = unset .. " -u LUA_PATH_" .. v .. " -u LUA_CPATH_" .. v .. " -u LUA_INIT_" .. v
  end
  local rc = term.execute("env " .. unset .. " " .. table.concat(env, " ") .. " " .. q(home .. "/sandbox/run") .. " fg")
  if rc ~= 0 then
    term.die(status.EXIT.tool, string.format("the sandbox stopped with status %d", rc))
  end
end

return sandbox

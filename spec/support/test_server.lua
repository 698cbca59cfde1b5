--- Test servers of tests/servers/ (Python) started by a spec: each listens
-- on a port the system picks (written to a file of its own directory),
-- counts what it receives in <dir>/counts, is stopped by pid, and
-- exits by itself once this Lua process is gone.
--
--     local server = test_server.start("h2_fault.py", { "--cert", c, "--key", k })
--     ... server.port, server.counts() ...
--     server.stop()
--
-- Environment: MERCHANTAPI_PYTHON, the interpreter (default /usr/bin/python3,
-- Debian's, which has python3-h2).
local helpers = require "helpers"

local format, concat = string.format, table.concat
local io_open = io.open

local M = {}

local PYTHON = os.getenv("MERCHANTAPI_PYTHON") or "/usr/bin/python3"

-- This Lua process's pid (the server watches it).
local function own_pid()
  local f = assert(io_open("/proc/self/stat", "r"))
  local pid = f:read("*l"):match("^(%d+)")
  f:close()
  return pid
end

local function sleep(seconds)
  local ok, socket = pcall(require, "socket")
  if ok and socket.sleep then
    socket.sleep(seconds)
  else
    os.execute("sleep " .. seconds)
  end
end

local function alive(pid)
  local a, _, c = os.execute("kill -0 " .. pid .. " 2>/dev/null")
  if type(a) == "number" then -- 5.1
    return a == 0
  end
  return a == true and c == 0
end

local read_file = helpers.read_file

--- Starts tests/servers/<script> with args; raises when it does not come up.
-- @treturn table `port` (number), `dir`, `pid`, `counts()` (key -> number:
--   <dir>/counts added up, one key a line (tests/servers/answers.py), a last
--   line not yet ended left out), `count(key)` (0 when absent), `stop()`.
function M.start(script, args)
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. helpers.shell_quote(dir)))
  local quoted = {}
  for i, a in ipairs(args or {}) do
    quoted[i] = helpers.shell_quote(a)
  end
  -- env -u LD_PRELOAD: under a sanitizer run the runtime must not reach Python
  local cmd = format("env -u LD_PRELOAD %s %s --dir %s --watch %s %s >%s 2>&1 & echo $!",
    helpers.shell_quote(PYTHON), helpers.shell_quote(helpers.ROOT .. "/tests/servers/" .. script),
    helpers.shell_quote(dir), own_pid(), concat(quoted, " "),
    helpers.shell_quote(dir .. "/log"))
  local p = assert(io.popen(cmd))
  local pid = p:read("*l")
  p:close()
  assert(pid and pid:match("^%d+$"), "no pid for " .. script)
  local server = { dir = dir, pid = pid }
  function server.stop()
    os.execute("kill " .. pid .. " 2>/dev/null")
    os.execute("rm -rf " .. helpers.shell_quote(dir))
  end
  -- wait until it listens (it writes the port file then); at most ~20 s
  for _ = 1, 400 do
    local port = tonumber(read_file(dir .. "/port") or "")
    if port then
      server.port = port
      break
    end
    if not alive(pid) then
      break
    end
    sleep(0.05)
  end
  if not server.port then
    local log = read_file(dir .. "/log") or ""
    server.stop()
    error(script .. " did not start: " .. log, 2)
  end
  function server.counts()
    local t = {}
    for key in (read_file(dir .. "/counts") or ""):gmatch("([^\n]*)\n") do
      t[key] = (t[key] or 0) + 1
    end
    return t
  end
  function server.count(key)
    local n = server.counts()[key]
    return n and math.floor(n) or 0
  end
  return server
end

return M

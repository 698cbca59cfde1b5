--- Internal: the command-line tool's terminal: its streams, exits and the shell.
-- The streams are fields that `merchantapi.cli.run` replaces to run a command
-- in process; an exit is raised, so that `run` returns its status.
-- @module merchantapi.cli.term
local term = { stdout = io.stdout, stderr = io.stderr, stdin = io.stdin, getenv = os.getenv }

local Exit = {} -- the metatable of a raised exit: { code = n }

--- Ends the command with an exit status (raised: `merchantapi.cli.run` returns it).
-- @tparam integer code the exit status.
function term.exit(code)
  error(setmetatable({ code = code }, Exit), 0)
end

--- The status of a raised exit, or nil for any other error.
-- @param e what a pcall caught.
-- @treturn integer|nil the status.
function term.exit_code(e)
  return getmetatable(e) == Exit and e.code or nil
end

--- Writes "merchantapi: msg" and a line end on stderr.
-- @tparam string msg the line.
function term.note(msg)
  term.stderr:write("merchantapi: ", msg, "\n")
end

--- Writes msg on stderr and ends with code (stdout flushed first).
-- @tparam integer code the exit status.
-- @tparam string msg the line.
function term.die(code, msg)
  term.stdout:flush()
  term.note(msg)
  term.exit(code)
end

-- a failed write: a closed pipe ends quietly with SIGPIPE's shell status
local function written(ok, err)
  if ok then return end
  if tostring(err):find("Broken pipe", 1, true) then term.exit(141) end
  term.die(require("merchantapi.cli.status").EXIT.tool, "cannot write the output: " .. tostring(err))
end

--- Writes its arguments on stdout.
-- @param ... strings.
function term.out(...)
  written(term.stdout:write(...))
end

--- Flushes stdout.
function term.flush()
  written(term.stdout:flush())
end

--- A shell command's exit status, on every Lua (5.1 and LuaJIT give a wait status).
-- @tparam string cmd the command.
-- @treturn integer the status (128 + n for signal n).
function term.execute(cmd)
  local a, how, n = os.execute(cmd)
  if type(a) == "number" then
    return a >= 256 and math.floor(a / 256) or (a == 0 and 0 or 128 + a)
  end
  return a == true and 0 or how == "exit" and n or 128 + (n or 0)
end

local ttys = {}
--- Whether descriptor fd is a terminal: `test -t fd` in a child shell (no other Lua module).
-- @tparam integer fd 0 or 2.
-- @treturn boolean a terminal.
function term.isatty(fd)
  if ttys[fd] == nil then ttys[fd] = term.execute("test -t " .. fd) == 0 end
  return ttys[fd]
end

--- Control bytes shown as escapes, not sent to the terminal (a table is for a human).
-- @tparam string s the text.
-- @treturn string the text shown.
function term.printable(s)
  return (s:gsub("[%c\127]", function(c)
    return c == "\n" and "\\n" or c == "\t" and "\\t" or string.format("\\x%02x", c:byte())
  end))
end

return term

--- Internal: the command-line tool's exit statuses, written once, and its failure report.
-- `--help` is made from `status.LIST`; spec/cli/cli_spec.lua checks the man page's EXIT
-- STATUS against it.  Whether a call may move money is the module's rule
-- (`core.endpoints`, `core.not_sent`), which the commands ask.
-- @module merchantapi.cli.status
local core = require "merchantapi.core"
local term = require "merchantapi.cli.term"

local status = {}

--- Every exit status: { code, name (the error kind it stands for), what it means }.
status.LIST = {
  { 0, "ok", "done" },
  { 1, "declined", "not confirmed at the prompt" },
  { 2, "usage", "usage" },
  { 3, "api", "api" },
  { 4, "http", "http" },
  { 5, "transport", "transport" },
  { 6, "decode", "decode" },
  { 7, "timeout", "timeout" },
  { 8, "unknown", "outcome unknown (it may have gone through)" },
  { 9, "memory", "memory" },
  { 10, "tool", "the tool could not run" },
}

--- The status of each name (`EXIT.usage` and the others), from `LIST`.
status.EXIT = {}
--- The help's "Exit status" paragraph, made from `LIST`.
status.HELP = "Exit status:\n"
local line = " "
for i, s in ipairs(status.LIST) do
  status.EXIT[s[2]] = s[1]
  local item = " " .. s[1] .. " " .. s[3] .. (i < #status.LIST and "," or ".")
  if #line + #item > 78 then
    status.HELP, line = status.HELP .. line .. "\n", " "
  end
  line = line .. item
end
status.HELP = status.HELP .. line

--- The one line of an error: its message (the module's never holds the key).
-- @param err the module's error table, or a string.
-- @treturn string the line.
function status.line(err)
  local text = type(err) == "table" and tostring(err.message or err) or "merchantapi: " .. tostring(err)
  return (text:gsub("\n", " "))
end

--- Reports a failed call on stderr and ends with the status of its kind.
-- For a call that may move money a second line says what became of it (the
-- error's `outcome`, which the module gives every such call).
-- @param err the module's error.
-- @tparam[opt] table what `{ method = the call's method, confirm = payout id (a confirm) }`.
function status.fail(err, what)
  what = what or {}
  term.stdout:flush()
  term.stderr:write(status.line(err), "\n")
  local kind = type(err) == "table" and err.kind or "tool"
  local code = status.EXIT[kind] or status.EXIT.tool
  -- an error without an outcome came before the call (the client was not made): the
  -- core's rule of a call that failed before anything was sent
  local outcome = type(err) == "table" and (err.outcome or core.not_sent(what.method))
  local check = what.confirm and ("check with `merchantapi payout " .. what.confirm
    .. "` before confirming again") or "read the resource before sending it again"
  if outcome == "not_sent" then
    term.note("not sent: safe to retry")
  elseif outcome == "rejected" then
    term.note("rejected by the service: " .. (what.confirm and "not confirmed" or "not carried out")
      .. " by this request")
  elseif outcome == "unknown" and what.confirm and type(err.payout) == "table" and err.payout.status == "draft" then
    -- settled: the read after the failure found the draft (README, "Settling")
    term.note("not confirmed: the payout read after the failure is still a draft; confirming again is safe")
  elseif outcome == "unknown" then
    code = status.EXIT.unknown
    term.note("outcome unknown: it may have gone through" .. (err.settle_error and (", and reading the payout "
      .. "failed too (" .. status.line(err.settle_error):gsub("^merchantapi: ", "") .. ")") or "") .. ": " .. check)
  end
  term.stderr:flush()
  term.exit(code)
end

return status

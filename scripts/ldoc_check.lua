--- What scripts/check-docs (the suite 45-docs) asks of the doc comments, checked on LDoc's own
-- reading of them:
--
--     LUA_PATH="scripts/?.lua;;" lua5.1 /usr/bin/ldoc -c config.ld --define all \
--       --filter ldoc_check.run .
--
-- * every module and every documented item has a summary that is a whole
--   sentence.  LDoc takes the summary up to the first "." or "?" followed
--   by a space, so "(interface, "Endpoints 1. Confirm ...")" is cut after
--   "1.": a summary that stops inside `code`, a parenthesis, a bracket or a
--   quotation, after a number or an abbreviation ("e.g."), or that does not
--   end in "." or "?", is reported;
-- * every function (`@local` ones included) describes every parameter: each
--   formal argument has an `@param`/`@tparam` with a text, and no `@param`
--   names an argument the function does not take;
-- * an item whose comment shows a call (`syntax: ... name(...)`) is
--   documented as a function (`@function name` for one assigned from
--   elsewhere), so its parameters are described too.
--
-- Prints one line per problem ("file:line: module.item: problem") and ends
-- with "ldoc-check: N checked, N problems"; exits 1 when there is one.
local M = {}

local ABBREVIATIONS = { "e.g.", "i.e.", "etc.", "cf.", "vs.", "approx.", "resp.", "incl." }

local function trim(s)
  return ((s or ""):gsub("^%s+", ""):gsub("%s+$", ""))
end

-- Counts of an opening and a closing character in s.
local function count(s, c)
  local _, n = s:gsub("%" .. c, "")
  return n
end

--- What is wrong with a summary as LDoc cut it, or nil.
-- @tparam string summary the summary LDoc took.
-- @treturn string|nil the problem.
function M.summary_problem(summary)
  local s = trim(summary):gsub("%s+", " ")
  if s == "" then
    return "no summary"
  end
  if not s:find("[%.%?]$") then
    return "the summary does not end a sentence ('.' or '?'): \"" .. s .. "\""
  end
  local last = s:match("(%S+)$"):lower()
  for _, a in ipairs(ABBREVIATIONS) do
    if last:sub(-#a) == a then
      return "the summary is cut at \"" .. a .. "\": \"" .. s .. "\""
    end
  end
  if last:find("%d%.$") then
    return "the summary is cut after a number: \"" .. s .. "\""
  end
  if count(s, "`") % 2 == 1 then
    return "the summary is cut inside `code`: \"" .. s .. "\""
  end
  local prose = s:gsub("`[^`]*`", "")
  if count(prose, "(") ~= count(prose, ")") or count(prose, "[") ~= count(prose, "]") then
    return "the summary is cut inside a parenthesis: \"" .. s .. "\""
  end
  if count(prose, '"') % 2 == 1 then
    return "the summary is cut inside a quotation: \"" .. s .. "\""
  end
  return nil
end

-- The names of the formal arguments in LDoc's `args` ("(a, b[, c])").
local function formal_args(args)
  local names = {}
  for name in (args or ""):gsub("[%[%]%(%)]", " "):gmatch("[^,%s]+") do
    names[#names + 1] = name
  end
  return names
end

--- The problems of one function's parameters.
-- @tparam table item LDoc's item (a function).
-- @treturn table the problems (strings), possibly none.
function M.param_problems(item)
  local problems = {}
  local params = item.params or {}
  local map = params.map or {}
  local declared = {}
  for _, p in ipairs(params) do
    declared[p] = true
    if trim(map[p]) == "" then
      problems[#problems + 1] = "parameter '" .. p .. "' is not described (@param " .. p .. " <text>)"
    end
  end
  local formal = {}
  for _, a in ipairs(formal_args(item.args)) do
    formal[a] = true
    if not declared[a] then
      problems[#problems + 1] = "parameter '" .. a .. "' has no @param"
    end
  end
  for _, p in ipairs(params) do
    if not formal[p] then
      problems[#problems + 1] = "@param '" .. p .. "' is not an argument of the function"
    end
  end
  return problems
end

local FUNCTION_TYPES = { ["function"] = true, lfunction = true }

--- The filter LDoc calls with its list of modules.
-- @tparam table modules LDoc's module list (`--filter ldoc_check.run`).
function M.run(modules)
  local checked, problems = 0, 0
  local function report(file, line, name, problem)
    problems = problems + 1
    print(("%s:%s: %s: %s"):format(file or "?", tostring(line or "?"), name, problem))
  end
  local root = (os.getenv("PWD") or "") .. "/"
  for mod in modules:iter() do
    local file = tostring(mod.file or "?")
    if file:sub(1, #root) == root then
      file = file:sub(#root + 1)
    end
    checked = checked + 1
    local p = M.summary_problem(mod.summary)
    if p then
      report(file, 1, mod.name, p)
    end
    for item in mod.items:iter() do
      local name = mod.name .. "." .. item.name
      checked = checked + 1
      p = M.summary_problem(item.summary)
      if p then
        report(file, item.lineno, name, p)
      end
      if FUNCTION_TYPES[item.type] then
        for _, q in ipairs(M.param_problems(item)) do
          report(file, item.lineno, name, q)
        end
      elseif ((item.summary or "") .. " " .. (item.description or "")):find("syntax: `[^`]-[%w_]%(") then
        report(file, item.lineno, name, "shows a call (syntax:) but is documented as a "
          .. item.type .. ": add `@function " .. item.name .. "` and its parameters")
      end
    end
  end
  print(("ldoc-check: %d checked, %d problems"):format(checked, problems))
  os.exit(problems == 0 and 0 or 1)
end

return M

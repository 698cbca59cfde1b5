--- The fault matrix's table (spec/faults/fault_matrix_spec.lua): every cell's
-- word by row and driver, the reasons under it, the seconds the drivers took,
-- and the count line (what passed apart from what is pending), printed at the
-- end of the spec; MERCHANTAPI_MATRIX_MARKDOWN=1 prints it as RELIABILITY.md
-- shows it, MERCHANTAPI_MATRIX_TIMES=1 every cell's seconds.
local expect = require "support.matrix.expect"

local format, concat = string.format, table.concat
local expectation, walk_of = expect.expectation, expect.walk_of

local M = {}

-- A table for the columns `DRIVERS` (driver names, in order):
-- t.record(row, driver, text, count, seconds) a cell (count: "ok", "fail",
-- "differs", "known", "na" or "absent"), t.line_of(row) its row's line (made
-- in the order rows are first seen), t.absent[driver] = why it cannot run
-- here (told once, under the table), t.print().
function M.new(DRIVERS)
  local SLOW = {} -- { seconds, "row [driver]" }
  local TABLE = {} -- { name, cells = { [driver] = text } } in row order
  local LINE = {} -- row -> its line of TABLE
  -- ok, fail and differs are busted's successes and failures; known, na and
  -- absent its pending cells (n/a: does not apply to the row; absent: the
  -- driver cannot run here, ABSENT[driver] says why)
  local COUNTS = { ok = 0, fail = 0, known = 0, na = 0, differs = 0, absent = 0 }
  local ABSENT = {} -- driver -> why it cannot run here

  -- An expectation in a few words: "api 503 unknown ×1", "ok (2 requests)".
  local function say(e)
    if not e then
      return "-"
    end
    local t
    if e.ok then
      t = "ok"
      if e.resource_status then
        t = t .. " " .. e.resource_status
      end
      if e.reached and e.reached[1] > 1 then
        t = t .. format(" (%d requests)", e.reached[1])
      end
    else
      t = e.kind .. (e.status and (" " .. e.status) or "") .. (e.outcome and (" " .. e.outcome) or "")
      if e.attempts then
        t = t .. " ×" .. e.attempts[1] .. (e.attempts[2] ~= e.attempts[1] and ("-" .. e.attempts[2]) or "")
      end
      if e.deadline_exceeded then
        t = t .. " deadline"
      end
      if e.payout_status then -- a settled confirm's err.payout
        t = t .. ", payout " .. e.payout_status .. (e.retryable and " retryable" or "")
      end
      if e.elapsed then
        t = t .. format(" in %g-%g s", e.elapsed[1], e.elapsed[2])
      end
    end
    if e.after then
      t = t .. ", then " .. say(e.after)
    end
    return t
  end

  -- MERCHANTAPI_MATRIX_MARKDOWN=1: the table as RELIABILITY.md shows it.
  local function markdown_table()
    local notes = {}
    local out = { "", "| scenario | expected: get / put / list / pages | " .. concat(DRIVERS, " | ") .. " |",
      "|---|---|" .. string.rep("---|", #DRIVERS) }
    for _, line in ipairs(TABLE) do
      local e = {}
      local calls = line.row.calls
      for i, call in ipairs({ "get", "put", "list", "pages" }) do
        local has = calls[call] or (call == "pages" and walk_of(line.row))
        e[i] = has and say(expectation(line.row, "blocking", call)) or "-"
      end
      local cols = { line.name, concat(e, " / ") }
      for _, d in ipairs(DRIVERS) do
        local c = line.cells[d] or "-"
        local word = c:match("^(%S+)"):gsub(":$", "")
        cols[#cols + 1] = word
        if word ~= "ok" and word ~= "-" and c ~= "pending" then -- (pending: told once, below)
          local last = notes[#notes]
          if last and last.name == line.name and last.text == c then
            last.drivers = last.drivers .. ", " .. d
          else
            notes[#notes + 1] = { name = line.name, drivers = d, text = c }
          end
        end
      end
      out[#out + 1] = "| " .. concat(cols, " | ") .. " |"
    end
    out[#out + 1] = ""
    for _, n in ipairs(notes) do
      out[#out + 1] = format("- %s, %s: %s", n.name, n.drivers, n.text)
    end
    for _, d in ipairs(DRIVERS) do
      if ABSENT[d] then
        out[#out + 1] = format("- every row, %s: pending (not run here): %s", d, ABSENT[d])
      end
    end
    return concat(out, "\n")
  end

  local function print_table()
    if #TABLE == 0 then
      return
    end
    if os.getenv("MERCHANTAPI_MATRIX_MARKDOWN") then
      io.stdout:write(markdown_table(), "\n")
    end
    local width = { 8 }
    for _, line in ipairs(TABLE) do
      width[1] = math.max(width[1], #line.name)
    end
    local out = { "", "The fault matrix (spec/faults/fault_matrix_spec.lua): calls get/put/list" }
    local head = { format("%-" .. width[1] .. "s", "scenario") }
    for _, d in ipairs(DRIVERS) do
      head[#head + 1] = format("%-9s", d)
    end
    out[#out + 1] = concat(head, " | ")
    local notes = {}
    for _, line in ipairs(TABLE) do
      local cols = { format("%-" .. width[1] .. "s", line.name) }
      for _, d in ipairs(DRIVERS) do
        local c = line.cells[d] or "-"
        if #c > 9 then
          notes[#notes + 1] = format("  %s [%s]: %s", line.name, d, c)
          c = c:match("^(%S+)") or c
        end
        cols[#cols + 1] = format("%-9s", c)
      end
      out[#out + 1] = concat(cols, " | ")
    end
    for _, d in ipairs(DRIVERS) do
      if ABSENT[d] then
        notes[#notes + 1] = format("  every row [%s]: pending (not run here): %s", d, ABSENT[d])
      end
    end
    if #notes > 0 then
      out[#out + 1] = "notes:"
      for _, n in ipairs(notes) do
        out[#out + 1] = n
      end
    end
    local per_driver, parts = {}, {}
    for _, sl in ipairs(SLOW) do
      local d = sl[2]:match("%[(%w+)%]$")
      per_driver[d] = (per_driver[d] or 0) + sl[1]
    end
    for _, d in ipairs(DRIVERS) do
      parts[#parts + 1] = format("%s %.1f s", d, per_driver[d] or 0)
    end
    out[#out + 1] = "time: " .. concat(parts, ", ")
    table.sort(SLOW, function(a, b) return a[1] > b[1] end)
    if os.getenv("MERCHANTAPI_MATRIX_TIMES") then -- every cell's seconds, slowest first
      for _, sl in ipairs(SLOW) do
        out[#out + 1] = format("  %5.2f s  %s", sl[1], sl[2])
      end
    end
    local slow = {}
    for i = 1, math.min(5, #SLOW) do
      slow[i] = format("%s %.1f s", SLOW[i][2], SLOW[i][1])
    end
    if #slow > 0 then
      out[#out + 1] = "slowest: " .. concat(slow, "; ")
    end
    out[#out + 1] = format("cells: %d ok, %d FAIL, %d differ (with a reason); pending: %d known, "
      .. "%d n/a (with a reason), %d not run here", COUNTS.ok, COUNTS.fail, COUNTS.differs,
      COUNTS.known, COUNTS.na, COUNTS.absent)
    io.stdout:write(concat(out, "\n"), "\n")
    io.stdout:flush()
  end

  -- The line of `row` in TABLE, made in the order rows are first seen (the
  -- order they are declared in: the pending cells are recorded then).
  local function line_of(row)
    local line = LINE[row]
    if not line then
      line = { row = row, name = row.name, cells = {} }
      TABLE[#TABLE + 1] = line
      LINE[row] = line
    end
    return line
  end

  local function record(row, driver, text, count, seconds)
    if seconds then
      SLOW[#SLOW + 1] = { seconds, format("%s [%s]", row.name, driver) }
    end
    line_of(row).cells[driver] = text
    COUNTS[count] = COUNTS[count] + 1
  end
  return { record = record, line_of = line_of, absent = ABSENT, print = print_table }
end

return M

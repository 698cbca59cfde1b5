--- The fault matrix's expectations (spec/faults/fault_matrix_spec.lua, which
-- tells a row's and an expectation's shape): the expectation of a row for a
-- driver and a call, the problems of a cell's result against it, and how many
-- requests each id of a cell's chain of calls may have made reach the server.
-- A list's or a walk's items are held against acct-22's addresses, which the
-- spec reads once (set_ref_ids).
local format = string.format

-- A row's walk of pages: `calls.pages` (walked by every driver, at its own
-- `concurrency`), else `calls.list.pages` (by the pages drivers), or nil.
local function walk_of(row)
  return row.calls.pages or (row.calls.list and row.calls.list.pages)
end

local REF_IDS -- acct-22's 22 addresses, oldest first (set_ref_ids)

local function set_ref_ids(ids)
  REF_IDS = ids
end

local function expectation(row, driver, call)
  local d = row.differ and row.differ[driver]
  if type(d) == "table" and d[call] then
    return d[call]
  end
  local e = row.expect or {}
  if call ~= "pages" then
    return e[call]
  end
  if e.pages then
    return e.pages
  end
  local l = e.list
  if not l then
    return nil
  end
  if l.ok then
    return { ok = true }
  end
  local p = {}
  for k, v in pairs(l) do
    p[k] = v
  end
  p.after, p.reached = nil, nil
  return p
end

local function within(n, range)
  return type(n) == "number" and n >= range[1] and n <= range[2]
end

-- The problems of result `r` against expectation `e` for cell spec `spec`
-- (an array of strings; empty: the cell holds).
local function check(e, r, spec, row, problems, where)
  problems = problems or {}
  where = where or ""
  local function bad(fmt, ...)
    problems[#problems + 1] = where .. format(fmt, ...)
  end
  if r == nil then
    bad("no result")
    return problems
  end
  if e.ok then
    if not r.ok then
      bad("want success, got %s %s (%s)", tostring(r.kind), tostring(r.status), tostring(r.message))
      return problems
    end
    if spec.call == "get" or spec.call == "put" then
      if r.id ~= spec.id then
        bad("want the resource %s, got %s", spec.id, tostring(r.id))
      end
      local want = e.resource_status or "processing"
      if spec.call == "put" and r.status ~= want then
        bad("want status %s, got %s", want, tostring(r.status))
      end
      if e.settled_by ~= nil and r.settled_by ~= e.settled_by then
        bad("settled_by: want %s, got %s", tostring(e.settled_by), tostring(r.settled_by))
      end
    else
      local per_page = spec.per_page or 25
      local want = spec.call == "pages" and #REF_IDS or per_page
      local ids = r.ids or {}
      if #ids ~= want then
        bad("want %d items, got %d", want, #ids)
      end
      for i = 1, #ids do
        if ids[i] ~= REF_IDS[i] then
          bad("item %d: want %s, got %s (each item once, in order)", i, tostring(REF_IDS[i]), ids[i])
          break
        end
      end
    end
  else
    if r.ok then
      bad("want %s error, got success", tostring(e.kind))
      return problems
    end
    if r.kind ~= e.kind then
      bad("kind: want %s, got %s (%s)", tostring(e.kind), tostring(r.kind), tostring(r.message))
    end
    if r.outcome ~= e.outcome then
      bad("outcome: want %s, got %s", tostring(e.outcome), tostring(r.outcome))
    end
    if e.status ~= nil and r.status ~= e.status then
      bad("status: want %s, got %s", tostring(e.status), tostring(r.status))
    end
    if e.attempts and not within(r.attempts, e.attempts) then
      bad("attempts: want %d-%d, got %s", e.attempts[1], e.attempts[2], tostring(r.attempts))
    end
    if e.elapsed and not within(r.elapsed, e.elapsed) then
      bad("elapsed: want %.2f-%.2f s, got %s s", e.elapsed[1], e.elapsed[2],
        type(r.elapsed) == "number" and format("%.3f", r.elapsed) or tostring(r.elapsed))
    end
    if e.deadline_exceeded ~= nil and (r.deadline_exceeded or false) ~= e.deadline_exceeded then
      bad("deadline_exceeded: want %s, got %s", tostring(e.deadline_exceeded),
        tostring(r.deadline_exceeded))
    end
    if e.retryable ~= nil and r.retryable ~= e.retryable then
      bad("retryable: want %s, got %s", tostring(e.retryable), tostring(r.retryable))
    end
    if e.payout_status ~= nil and (r.payout_status or false) ~= e.payout_status then
      bad("err.payout.status: want %s, got %s", tostring(e.payout_status),
        tostring(r.payout_status))
    end
    if e.message_has and not tostring(r.message):find(e.message_has, 1, true) then
      bad("message: want it to hold %q, got %s", e.message_has, tostring(r.message))
    end
    local page = walk_of(row) and walk_of(row).page
    if spec.call == "pages" and page then
      -- the items of the pages before the failing one, each once, in order
      local want = (page - 1) * (spec.per_page or 25)
      local ids = r.ids or {}
      if #ids ~= want then
        bad("want the %d items of the pages before page %d, got %d", want, page, #ids)
      end
      for i = 1, #ids do
        if ids[i] ~= REF_IDS[i] then
          bad("item %d: want %s, got %s", i, tostring(REF_IDS[i]), ids[i])
          break
        end
      end
    end
  end
  if e.after then
    check(e.after, r.after, spec.after, row, problems, where .. "then: ")
  end
  return problems
end

-- How many requests reached the server per id of a cell's chain of calls:
-- { [id] = {lo, hi} } from the expectations (an error: its attempts; a
-- success: its `reached`, else 1), unless an expectation gives `reached`.
local function reached_due(e, r, spec, due)
  due = due or {}
  if not spec or not e or not r then
    return due
  end
  local range
  if e.reached then
    range = e.reached
  elseif not r.ok and type(r.attempts) == "number" then
    range = { r.attempts, r.attempts }
  else
    range = { 1, 1 }
  end
  local key = spec.id
  if spec.call ~= "pages" then -- a walk's pages are counted apart (run_cell)
    local d = due[key] or { 0, 0 }
    due[key] = { d[1] + range[1], d[2] + range[2] }
  end
  reached_due(e.after, r.after, spec.after, due)
  return due
end

return {
  walk_of = walk_of,
  set_ref_ids = set_ref_ids,
  expectation = expectation,
  within = within,
  check = check,
  reached_due = reached_due,
}

--- One cell of the fault matrix (spec/faults/fault_matrix_spec.lua): a call made
-- on a client and what came of it, as a plain table of strings, numbers and
-- booleans (so that it crosses JSON unchanged: the cosocket driver runs cells
-- inside nginx, spec/support/matrix/cosocket.lua, and sends them back).
--
-- A cell spec: { call = "get"|"put"|"list"|"pages", id = <id or account>,
--   per_page = n (list, pages), concurrency = n (pages), settle = bool (put),
--   headers = {...} (the call's own headers), deadline = s (get, put, list),
--   after = <cell spec> (another call on the same client right after) }
-- Its result: { ok = true, id = .., status = .., settled_by = .., ids = {...} }
--   or { ok = false, kind, outcome, status, attempts, retryable, code,
--     deadline_exceeded, message, payout_status (a settled confirm's
--     err.payout.status), ids = {...} (pages: the items before the error) },
--   with `.after` the result of the call after it, and `elapsed` the call's
--   seconds (core.monotonic, from its start to its return).
local M = {}

local next, pairs, tostring, type = next, pairs, tostring, type
local monotonic = require("merchantapi.core").monotonic

local function ids_of(list)
  local out = {}
  for i = 1, #(list or {}) do
    out[i] = tostring(list[i].id)
  end
  return out
end

--- The expected failure of a row's call (the rows' `E`): `kind`, `outcome`,
-- `status` and the attempts between `lo` and `hi` (`lo` when nil), with the
-- fields of `extra` (a table or nil) added.
function M.expect(kind, outcome, status, lo, hi, extra)
  local e = { kind = kind, outcome = outcome, status = status, attempts = { lo, hi or lo } }
  for k, v in pairs(extra or {}) do
    e[k] = v
  end
  return e
end

--- The result of a call that raised `err` (the drivers catch it).
function M.raised(err)
  return { ok = false, kind = "raised", message = tostring(err) }
end

local function failure(err, partial)
  if type(err) ~= "table" then
    return M.raised(err)
  end
  return {
    ok = false,
    kind = err.kind,
    outcome = err.outcome,
    status = err.status,
    attempts = err.attempts,
    retryable = err.retryable,
    code = err.code,
    deadline_exceeded = err.deadline_exceeded,
    message = tostring(err),
    payout_status = type(err.payout) == "table" and err.payout.status or nil,
    ids = partial and ids_of(partial) or nil,
  }
end

-- The options of a call: its own headers and deadline, when given.
local function call_opts(spec, t)
  t = t or {}
  t.headers, t.deadline = spec.headers, spec.deadline
  return next(t) and t or nil
end

local CALLS = {
  get = function(client, spec)
    return client:get_channel(spec.id, call_opts(spec))
  end,
  put = function(client, spec)
    return client:confirm_payout(spec.id, call_opts(spec, { settle = spec.settle or false }))
  end,
  list = function(client, spec)
    return client:list_addresses(spec.id, call_opts(spec, { per_page = spec.per_page }))
  end,
  pages = function(client, spec)
    return client:addresses(spec.id, { per_page = spec.per_page,
      concurrency = spec.concurrency, headers = spec.headers }):all()
  end,
}

--- Makes the call `spec` names on `client` (in whatever driver runs it:
-- blocking, a loop task, an nginx light thread) and returns its result.
function M.run(client, spec)
  local fn = CALLS[spec.call]
  if not fn then
    return { ok = false, kind = "raised", message = "matrix: no call " .. tostring(spec.call) }
  end
  -- no pcall: a task of a loop cannot yield inside it on Lua 5.1 (what a
  -- call raises ends the task, whose driver reports it)
  local t0 = monotonic()
  local v, err, res = fn(client, spec)
  local elapsed = monotonic() - t0
  local r
  if v == nil then
    r = failure(err, spec.call == "pages" and type(err) == "table" and err.partial or nil)
  elseif spec.call == "list" or spec.call == "pages" then
    r = { ok = true, ids = ids_of(v) }
  else
    r = { ok = true, id = v.id, status = v.status,
          settled_by = type(res) == "table" and res.settled_by or nil }
  end
  r.elapsed = elapsed
  if spec.after then
    r.after = M.run(client, spec.after)
  end
  return r
end

return M

-- The fault matrix: every scenario (a row) through every driver (a column),
-- each cell asserted against the one answer the contract gives, and the
-- whole printed as a table at the end (RELIABILITY.md, "The fault matrix").
--
-- Rows come from every spec/support/matrix/rows_*.lua (each returns an array
-- of rows; the shape is told below and in RELIABILITY.md).
-- MERCHANTAPI_MATRIX_ROWS=<Lua pattern> runs the rows whose name matches.
--
-- Drivers (columns):
--   blocking   a call on a fresh client
--   loop1      the same call as the one task on its client in a merchantapi.loop()
--              (the cells of several rows side by side in one loop)
--   loop8      8 tasks of one loop sharing one client, the same call at once
--              (each on an id of its own: `<id>~<tag>`, sandbox/README.md)
--   transport  a client over a custom Lua transport (LuaSocket,
--              spec/support/socket_transport.lua)
--   pages1, pages4, pages8   client:addresses(account, {concurrency = n}):all()
--              on the row's pages account (the fault on page 3 of 5); a row's
--              `calls.pages` is walked by every driver (rows_pages.lua)
--   cosocket   the OpenResty cosocket transport inside a real nginx (started
--              here, free port, stopped by pid): 8 light threads of one
--              worker sharing one client, the same call at once
--
-- ctx (what a row's functions get): sandbox_url, dead_port (nobody listens),
-- ca_file (the sandbox's test CA; nginx trusts it), helpers.
-- A row: { name, server = "sandbox"|..., start(ctx)/stop(ctx) (optional: its
-- own server), base_url(ctx, driver) (optional; default the sandbox), reached(ctx, id)
-- (optional; default the sandbox's count of that id),
-- calls = { get = {id, headers, after}, put = {...}, list = {account, per_page,
--   headers, after, pages = {account, page}}, pages = {account, per_page,
--   concurrency, page} },
-- opts (client options; client_opts(ctx, opts) may complete them at run
-- time), expect = { get, put, list, pages } (pages derived
-- from list when absent), differ = { <driver> = "why" | { why = "...",
-- get = <expect>, ... } }, na = { <driver> = "why not" }, known = { <driver> =
-- "why; who fixes" } (its cells as KNOWN_FAILING's, every call) }.
-- A cell n/a, or of a driver that cannot run here (cosocket without nginx's
-- Lua module, MERCHANTAPI_NGINX_MODULES), is busted's pending with its
-- reason; only cells that ran and held are counted passed.
-- An expectation: { ok = true, reached = {lo, hi}, resource_status (a
-- put's payout status; default "processing"), settled_by } or { kind,
-- outcome, status, attempts = {lo, hi}, deadline_exceeded, retryable,
-- payout_status (err.payout's status; false: no err.payout), message_has
-- (plain text the message holds), reached = {lo, hi}, elapsed = {lo, hi}
-- (the call's seconds), after = <expectation of the call made next on the
-- same client> }; a field left nil is not checked.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local cell = require "support.matrix.cell"
local expect = require "support.matrix.expect"
local cjson = require "cjson"

local format, concat = string.format, table.concat

-- Cells known to fail today: "row/driver/call" -> "why; who fixes". They run,
-- are reported "known" and counted pending; one that passes fails the run
-- (take it out of here). { why = "...", intermittent = true }: a race that
-- fails some runs only; a run where it holds is reported "known" too.
-- None today: the last ones (the keepalive_requests row over HTTP/2: loop8's
-- GETs and lists, the concurrent pages) held once each event loop kept its
-- own connections and HTTP/1.1-only transfers a multi of their own
-- (src/http.c, new_share and struct loop_lane).
local KNOWN_FAILING = {}

local DRIVERS = { "blocking", "loop1", "loop8", "transport", "pages1", "pages4", "pages8",
  "cosocket" }
local TAG = { blocking = "b", loop1 = "l", loop8 = "e", transport = "t", pages1 = "pa",
  pages4 = "pb", pages8 = "pc", cosocket = "c" }
local TASKS = 8 -- tasks of loop8, light threads of cosocket
local BATCH = 8 -- rows run at once by loop8 and cosocket (a row's `alone` runs it by itself)
local CALLS = { "get", "put", "list" }

local walk_of, expectation, check = expect.walk_of, expect.expectation, expect.check
local within, reached_due = expect.within, expect.reached_due
local matrix_table = require("support.matrix.table").new(DRIVERS)
local record, line_of, ABSENT = matrix_table.record, matrix_table.line_of, matrix_table.absent

-- ---------------------------------------------------------------------------
-- Rows
-- ---------------------------------------------------------------------------

local function load_rows()
  local dir = helpers.ROOT .. "/spec/support/matrix"
  local p = assert(io.popen("ls " .. helpers.shell_quote(dir) .. " 2>/dev/null"))
  local files = {}
  for name in p:lines() do
    if name:match("^rows_.*%.lua$") then
      files[#files + 1] = name
    end
  end
  p:close()
  table.sort(files)
  local only = os.getenv("MERCHANTAPI_MATRIX_ROWS")
  local rows = {}
  for _, name in ipairs(files) do
    for _, row in ipairs(dofile(dir .. "/" .. name)) do
      local take = not only or only == ""
      for pattern in (only or ""):gmatch("[^;]+") do -- "p1;p2": either
        take = take or row.name:match(pattern) ~= nil
      end
      if take then
        rows[#rows + 1] = row
      end
    end
  end
  return rows
end

-- ---------------------------------------------------------------------------
-- Cells
-- ---------------------------------------------------------------------------

local ctx = {} -- what rows' functions get: sandbox_url, dead_port, helpers

-- Whether the sandbox tells `id` apart by a `~<tag>` suffix (fault and echo ids).
local function taggable(id)
  return id:match("^fault%-") or id:match("^echo%-")
end

local function tagged(id, tag)
  return taggable(id) and (id .. "~" .. tag) or id
end

-- The cell spec of `call` of `row` (cell.lua) for task tag `tag`.
local function cell_spec(row, call, tag, driver)
  local c = row.calls[call]
  local function build(kind, t)
    local id = t.id or t.account
    local spec = { call = kind, id = tagged(id, tag), per_page = t.per_page,
                   headers = t.headers, deadline = t.deadline, settle = t.settle }
    if t.after then
      local a = t.after
      if a.same then
        a = { id = id, account = id, per_page = t.per_page }
      end
      spec.after = build(kind, { id = a.id, account = a.account, per_page = a.per_page or t.per_page,
                                 after = a.after })
    end
    return spec
  end
  if call == "pages" then
    local p = walk_of(row)
    if not p then
      return nil
    end
    -- (not the list's headers: an X-Sandbox-Delay-Ms would slow every page)
    local spec = build("pages", { account = p.account,
                                  per_page = p.per_page or row.calls.list.per_page, headers = p.headers })
    spec.concurrency = tonumber(driver:match("^pages(%d+)$")) or p.concurrency
    return spec
  end
  return c and build(call, c)
end

local function client_opts(row, base_url, transport)
  local o = { base_url = base_url, api_key = helpers.API_KEY, max_retries = 0,
              transport = transport }
  for k, v in pairs(row.opts or {}) do
    o[k] = v
  end
  if row.client_opts then -- what only the run knows (a CA file's path)
    o = row.client_opts(ctx, o)
  end
  return o
end

local socket_transport

-- Runs `jobs` ({ spec = <cell spec>, specs = {per task} }) of one row with
-- `driver`; fills job.results (one per task).
local RUN = {}

function RUN.blocking(row, base_url, jobs, transport)
  for _, job in ipairs(jobs) do
    local c = assert(merchantapi.new(client_opts(row, base_url, transport)))
    local ok, r = pcall(cell.run, c, job.specs[1])
    job.results = { ok and r or cell.raised(r) }
    c:close()
  end
end

function RUN.transport(row, base_url, jobs)
  socket_transport = socket_transport or require "support.socket_transport"
  return RUN.blocking(row, base_url, jobs, socket_transport)
end

RUN.pages1, RUN.pages4, RUN.pages8 = RUN.blocking, RUN.blocking, RUN.blocking

-- One loop for every job of the units ({ row, base_url, jobs }); a client
-- per job, a task per spec.
local function run_loop(units)
  local loop = assert(merchantapi.loop())
  local clients = {}
  for _, u in ipairs(units) do
    for _, job in ipairs(u.jobs) do
      local c = assert(merchantapi.new(client_opts(u.row, u.base_url)))
      clients[#clients + 1] = c
      job.tasks = {}
      for i, spec in ipairs(job.specs) do
        job.tasks[i] = loop:spawn(cell.run, c, spec)
      end
    end
  end
  loop:run()
  for _, u in ipairs(units) do
    for _, job in ipairs(u.jobs) do
      job.results = {}
      for i, task in ipairs(job.tasks) do
        local ok, r = task:result()
        job.results[i] = ok ~= nil and ok or cell.raised(r)
      end
      job.tasks = nil
    end
  end
  for _, c in ipairs(clients) do
    c:close()
  end
  loop:close()
end

-- Drivers that run several rows at once (BATCH rows): RUN_MANY[driver](units).
-- loop1: every cell one task on a client of its own; loop8: TASKS tasks on
-- one client; the cells of BATCH rows side by side in one loop.
local RUN_MANY = { loop1 = run_loop, loop8 = run_loop }

-- ---------------------------------------------------------------------------
-- The cosocket driver: a real nginx running spec/support/matrix/cosocket.lua
-- ---------------------------------------------------------------------------

local nginx = nil -- { url, prefix } once started; { failed = why } when it cannot

-- Why the cosocket column cannot run here, or nil: nginx's Lua module
-- (Debian's libnginx-mod-http-lua) is not in MERCHANTAPI_NGINX_MODULES
-- (default /usr/lib/nginx/modules; point it at an empty directory to see
-- the column pending).  Its cells are then pending with this reason, never
-- passed; installed, an nginx that does not start fails them.
local function cosocket_absent()
  local dir = os.getenv("MERCHANTAPI_NGINX_MODULES") or ""
  if dir == "" then
    dir = "/usr/lib/nginx/modules"
  end
  local path = dir .. "/ngx_http_lua_module.so"
  local f = io.open(path, "rb")
  if f then
    f:close()
    return nil
  end
  return "no nginx Lua module here (" .. path .. " is missing: libnginx-mod-http-lua)"
end

local function start_nginx()
  if nginx then
    return nginx
  end
  local root = helpers.ROOT
  if root:sub(1, 1) ~= "/" then
    root = (os.getenv("PWD") or ".") .. "/" .. root
  end
  for _ = 1, 3 do
    local port = helpers.run(root .. "/scripts/free-port"):match("(%d+)")
    local prefix = format("%s/build/openresty-matrix-%s", root, port)
    local include = prefix .. ".locations.conf"
    local f = assert(io.open(include, "wb"))
    f:write("location = /matrix/row { client_body_buffer_size 1m;\n",
      "  content_by_lua_block { require(\"support.matrix.cosocket\").row() } }\n")
    f:close()
    -- nginx trusts the sandbox's test CA (rows over https; cafile does not
    -- apply to cosockets)
    local env = format("OR_PREFIX=%s OR_PORT=%s OR_INCLUDE=%s OR_LUA_PATH=%s%s",
      helpers.shell_quote(prefix), port, helpers.shell_quote(include),
      helpers.shell_quote(root .. "/spec/?.lua"),
      ctx.ca_file and (" CA_FILE=" .. helpers.shell_quote(ctx.ca_file)) or "")
    local out, ok = helpers.run(format("cd %s && %s scripts/openresty start",
      helpers.shell_quote(root), env))
    if ok then
      nginx = { url = "http://127.0.0.1:" .. port, prefix = prefix, env = env, root = root }
      return nginx
    end
    nginx = { failed = "nginx did not start: " .. out:sub(-300) }
  end
  return nginx
end

local function stop_nginx()
  if nginx and nginx.url then
    helpers.run(format("cd %s && %s scripts/openresty stop; rm -rf %s %s",
      helpers.shell_quote(nginx.root), nginx.env, helpers.shell_quote(nginx.prefix),
      helpers.shell_quote(nginx.prefix .. ".locations.conf")))
  end
end

function RUN_MANY.cosocket(units)
  local n = start_nginx()
  assert(n.url, n.failed)
  local http = require "socket.http"
  local ltn12 = require "ltn12"
  local request = {}
  for i, u in ipairs(units) do
    local opts = client_opts(u.row, u.base_url)
    opts.transport = nil
    local cells = {}
    for j, job in ipairs(u.jobs) do
      cells[j] = { specs = job.specs }
    end
    request[i] = { opts = opts, cells = cells }
  end
  local body = cjson.encode({ units = request })
  local chunks = {}
  http.TIMEOUT = 300
  local ok, status = http.request({
    url = n.url .. "/matrix/row", method = "POST",
    headers = { ["content-type"] = "application/json", ["content-length"] = tostring(#body) },
    source = ltn12.source.string(body), sink = ltn12.sink.table(chunks),
  })
  local text = concat(chunks)
  assert(ok and status == 200, "cosocket: nginx answered " .. tostring(status) .. ": " .. text)
  local results = cjson.decode(text)
  for i, u in ipairs(units) do
    for j, job in ipairs(u.jobs) do
      job.results = results[i][j]
    end
  end
end

local function reached(row, id)
  if row.reached then
    return row.reached(ctx, id)
  end
  return helpers.count(id)
end

-- ---------------------------------------------------------------------------
-- The spec
-- ---------------------------------------------------------------------------

local NONCE = format("%d%d", os.time() % 100000, math.random(1000, 9999))

-- The calls a driver makes for a row: "pages" for the pages drivers, the
-- row's get/put/list for the others.
local function calls_of(row, driver)
  if driver:match("^pages") then
    return walk_of(row) and { "pages" } or {}
  end
  local out = {}
  for _, call in ipairs(CALLS) do
    if row.calls[call] then
      out[#out + 1] = call
    end
  end
  if row.calls.pages then -- a walk every driver makes
    out[#out + 1] = "pages"
  end
  return out
end

local function tasks_of(driver)
  return (driver == "loop8" or driver == "cosocket") and TASKS or 1
end

local function make_jobs(row, index, driver)
  local jobs = {}
  local n = tasks_of(driver)
  for _, call in ipairs(calls_of(row, driver)) do
    local job = { call = call, specs = {} }
    for t = 1, n do
      job.specs[t] = cell_spec(row, call,
        NONCE .. TAG[driver] .. index .. call:sub(1, 2) .. t, driver)
    end
    jobs[#jobs + 1] = job
  end
  return jobs
end

local function row_base_url(row, driver)
  return row.base_url and row.base_url(ctx, driver) or ctx.sandbox_url
end

local function start_row(row)
  if row.start and not row.started then
    row.start(ctx)
    row.started = true
  end
end

local DONE = {} -- driver -> row -> jobs run in a batch

-- The jobs of `row` for a driver of RUN_MANY: run with the rows after it
-- (up to BATCH rows, not `alone`, not n/a for the driver) when not yet.
local function batched(rows, index, driver)
  DONE[driver] = DONE[driver] or {}
  local row = rows[index]
  if DONE[driver][row] then
    return DONE[driver][row]
  end
  local units = {}
  for i = index, #rows do
    local r = rows[i]
    local runs = not (r.na and (r.na[driver] or (driver:match("^pages") and r.na.pages)))
      and #calls_of(r, driver) > 0
    if i > index and (#units >= BATCH or r.alone or row.alone) then
      break
    end
    if runs then
      start_row(r)
      units[#units + 1] = { row = r, base_url = row_base_url(r, driver), jobs = make_jobs(r, i, driver) }
    end
  end
  RUN_MANY[driver](units)
  for _, u in ipairs(units) do
    DONE[driver][u.row] = u.jobs
  end
  return DONE[driver][row]
end

local function run_cell(rows, index, driver)
  local row = rows[index]
  local d = row.differ and row.differ[driver]
  local n = tasks_of(driver)
  local jobs
  if RUN_MANY[driver] then
    jobs = batched(rows, index, driver)
  else
    jobs = make_jobs(row, index, driver)
    RUN[driver](row, row_base_url(row, driver), jobs)
  end
  local failing, known = {}, {}
  for _, job in ipairs(jobs) do
    local e = expectation(row, driver, job.call)
    local problems = {}
    for t, r in ipairs(job.results) do
      local spec = job.specs[t]
      local where = n > 1 and format("%s task %d: ", job.call, t) or (job.call .. ": ")
      if e and (type(d) ~= "string") then
        check(e, r, spec, row, problems, where)
        -- what reached the server, per id of the chain of calls
        if row.server == "sandbox" or row.reached then
          for id, range in pairs(reached_due(e, r, spec)) do
            -- (an untagged id, acct-22, is shared by every cell)
            local got = taggable(id) and reached(row, id)
            if got and not within(got, range) then
              problems[#problems + 1] = format("%sreached %s: want %d-%d, got %d", where, id,
                range[1], range[2], got)
            end
          end
          local page = walk_of(row) and walk_of(row).page
          if job.call == "pages" and page and not (r.ok and not e.reached) then
            local counter = spec.id .. "/page" .. page
            local range = e.reached or (not r.ok and { r.attempts or -1, r.attempts or -1 }) or { 1, 1 }
            local got = reached(row, counter)
            if not within(got, range) then
              problems[#problems + 1] = format("%sreached %s: want %d-%d, got %d", where,
                counter, range[1], range[2], got)
            end
          end
        end
      end
      -- the money rule, whatever a differing driver answers
      if job.call == "put" and (row.server == "sandbox" or row.reached) then
        local got = reached(row, spec.id)
        local due = e and not e.ok and (e.outcome == "not_sent" and 0)
        if due == 0 and got ~= 0 then
          problems[#problems + 1] = format("%sa confirm told not_sent reached the server %d times",
            where, got)
        end
      end
    end
    local key = format("%s/%s/%s", row.name, driver, job.call)
    local kf = KNOWN_FAILING[key] or (row.known and row.known[driver])
    local why = type(kf) == "table" and kf.why or kf
    if #problems > 0 then
      if kf then
        known[#known + 1] = key .. ": " .. why .. " (this run: " .. problems[1] .. ")"
      else
        for _, p in ipairs(problems) do
          failing[#failing + 1] = key .. ": " .. p
        end
      end
    elseif type(kf) == "table" and kf.intermittent then
      known[#known + 1] = key .. ": " .. why .. " (held this run)"
    elseif kf then
      failing[#failing + 1] = key .. ": listed in KNOWN_FAILING but holds now: take it out"
    end
  end
  return failing, known, d
end

describe("the fault matrix", function()
  local rows = load_rows()

  setup(function()
    ctx.helpers = helpers
    ctx.sandbox_url = helpers.base_url()
    ctx.dead_port = helpers.run(helpers.ROOT .. "/scripts/free-port"):match("(%d+)")
    ctx.ca_file = helpers.ca_file() -- the sandbox's test CA
    helpers.reset()
    local c = assert(merchantapi.new { base_url = ctx.sandbox_url, api_key = helpers.API_KEY })
    local ref_ids = helpers.ids(assert(c:list_addresses("acct-22", { per_page = 100 })))
    c:close()
    assert.equal(22, #ref_ids)
    expect.set_ref_ids(ref_ids)
  end)

  teardown(function()
    for _, row in ipairs(rows) do
      if row.started and row.stop then
        row.stop(ctx)
      end
    end
    stop_nginx()
    matrix_table.print()
  end)

  local only = os.getenv("MERCHANTAPI_MATRIX_DRIVERS") -- e.g. "blocking,loop8"
  local drivers = {}
  for _, driver in ipairs(DRIVERS) do
    if not only or only == "" or ("," .. only .. ","):find("," .. driver .. ",", 1, true) then
      drivers[#drivers + 1] = driver
    end
  end

  for _, driver in ipairs(drivers) do
    if driver == "cosocket" then
      ABSENT.cosocket = cosocket_absent()
    end
  end
  -- A cell that does not apply to its row (n/a), or whose driver cannot run
  -- here (ABSENT), is busted's pending with its reason, recorded now: it is
  -- never an `it`, so never counted passed.
  for index, row in ipairs(rows) do
    line_of(row)
    for _, driver in ipairs(drivers) do
      local name = format("%s [%s]", row.name, driver)
      local na = row.na and (row.na[driver] or (driver:match("^pages") and row.na.pages))
      if #calls_of(row, driver) == 0 then
        na = na or (driver:match("^pages") and "no pages in this row" or "no call for it")
      end
      if na then
        record(row, driver, "n/a: " .. na, "na")
        pending(name .. ": n/a: " .. na)
      elseif ABSENT[driver] then
        record(row, driver, "pending", "absent")
        pending(name .. ": not run here: " .. ABSENT[driver])
      else
        it(name, function()
          start_row(row)
          if driver == "cosocket" and not start_nginx().url then
            record(row, driver, "FAIL", "fail")
            error(start_nginx().failed, 0) -- installed, yet it did not start: a failure
          end
          local t0 = helpers.now()
          local failing, known, d = run_cell(rows, index, driver)
          local took = helpers.now() - t0
          if #failing > 0 then
            record(row, driver, "FAIL", "fail", took)
            error(concat(failing, "\n"), 0)
          elseif #known > 0 then
            record(row, driver, "known: " .. concat(known, "; "), "known", took)
            pending(concat(known, "\n"))
          elseif d then
            record(row, driver, "differs: " .. (type(d) == "table" and d.why or d), "differs", took)
          else
            record(row, driver, "ok", "ok", took)
          end
        end)
      end
    end
  end
end)

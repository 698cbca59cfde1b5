--- list.lua -- lists acct-25000 (25,000 addresses) again and again against a
-- sandbox whose nginx ends connections often (SANDBOX_KEEPALIVE_REQUESTS),
-- checking every run: the stress run of tests/suites/55-keepalive.
--
-- usage: lua5.4 tests/keepalive/list.lua base_url=URL access_log=PATH mode=MODE
--          [concurrency=N] [runs=N] [per_page=N] [cafile=PATH] [label=TEXT]
--          [pager_tasks=N] [list_tasks=N]
--
--   mode=pager  client:addresses(...):pages() with `concurrency`, blocking
--   mode=loop   tasks of one merchantapi.loop() sharing one client, at once:
--               `pager_tasks` (default 1) each walk every page with the pager
--               and `concurrency`, and `list_tasks` more (default
--               `concurrency`, 0: none) list the pages between them with
--               list_addresses (task i of n: pages i, i + n, i + 2n, ...)
--
-- Each run has a client of its own (the hooks count its attempts per URL) and
-- must give:
--   - every address once, in order, each page its own: page k (its meta.page
--     k) holds addresses (k - 1) * per_page + 1 .. k * per_page, whose ids the
--     sandbox makes from the index (sandbox/lua/sandbox/addresses.lua);
--   - in the sandbox's access log (the lines this run added, up to a marker
--     request sent after it): every page requested at least once per walk and
--     never more often than the client made attempts for it, and no other
--     page -- a request that went out with another page's URL shows here.
-- It prints one line per run, "keepalive: ok ..." or "keepalive: FAILED ...",
-- then "keepalive: N runs, N ok, N failed, N s of CPU" (this process's);
-- the exit status is 0 when every
-- run was ok.
local merchantapi = require "merchantapi"

local ACCOUNT = "acct-25000"
local TOTAL = 25000
local TAG = 25000 -- the number the sandbox puts in this account's ids
local KEY = os.getenv("MERCHANTAPI_API_KEY") or "sk_test_sandbox_4f9a2c"

local args = {}
for i = 1, #arg do
  local k, v = arg[i]:match("^([%w_]+)=(.*)$")
  if not k then
    io.stderr:write("list.lua: bad argument '", arg[i], "' (name=value expected)\n")
    os.exit(2)
  end
  args[k] = v
end
local BASE = assert(args.base_url, "base_url= is required")
local LOG = assert(args.access_log, "access_log= is required")
local MODE = args.mode or "pager"
local CONCURRENCY = tonumber(args.concurrency) or 4
local RUNS = tonumber(args.runs) or 1
local PER_PAGE = tonumber(args.per_page) or 100
local CAFILE = args.cafile
local PAGER_TASKS = tonumber(args.pager_tasks) or 1
local LIST_TASKS = tonumber(args.list_tasks) or CONCURRENCY
local LABEL = args.label or (MODE .. " c=" .. CONCURRENCY)
local PAGES = math.ceil(TOTAL / PER_PAGE)
local PATH = "/api/public/v1/accounts/" .. ACCOUNT .. "/addresses"
assert(MODE == "pager" or MODE == "loop", "mode: pager or loop")

local function expected_id(index)
  return string.format("%08d-0000-4000-8000-%012d", TAG, index)
end

-- nil, or what is wrong with `list` as page k of the walk
local function check_page(k, list)
  if type(list) ~= "table" then
    return string.format("page %d: no list (%s)", k, tostring(list))
  end
  local meta_page = list.meta and list.meta.page
  if meta_page ~= k then
    return string.format("page %d: meta.page is %s", k, tostring(meta_page))
  end
  local first = (k - 1) * PER_PAGE
  local want = math.min(PER_PAGE, TOTAL - first)
  if #list ~= want then
    return string.format("page %d: %d items, %d expected", k, #list, want)
  end
  for j = 1, want do
    local id = list[j] and list[j].id
    if id ~= expected_id(first + j) then
      return string.format("page %d: item %d is %s, %s expected (another page's item)",
        k, j, tostring(id), expected_id(first + j))
    end
  end
  return nil
end

-- The page number of an addresses URL of this walk (nil for any other URL).
local function page_of(url)
  local query = url:match(PATH:gsub("%-", "%%-") .. "%?(.*)$")
  if not query then
    return nil
  end
  local per_page = tonumber(query:match("[?&]?per_page=(%d+)"))
  local page = tonumber(query:match("^page=(%d+)") or query:match("&page=(%d+)"))
  if per_page ~= PER_PAGE then
    return nil
  end
  return page
end

local function file_size(path)
  local f = io.open(path, "rb")
  if not f then
    return 0
  end
  local size = f:seek("end")
  f:close()
  return size
end

-- The access log's lines from byte `offset` up to the line of the marker
-- request `mark` (sent after the run: nginx has one worker, so every request
-- of the run is logged before it).  nil, err when the marker never shows.
local marker_client = assert(merchantapi.new({ base_url = BASE, api_key = KEY, cafile = CAFILE, max_retries = 0 }))
local function run_log(offset, mark)
  marker_client:request("GET", "/__sandbox/health", { query = { keepalive_mark = mark } })
  for _ = 1, 200 do -- 200 x 25 ms: 5 s
    local f = assert(io.open(LOG, "rb"))
    f:seek("set", offset)
    local text = f:read("*a")
    f:close()
    if text:find("keepalive_mark=" .. mark, 1, true) then
      return text
    end
    merchantapi.sleep(0.025)
  end
  return nil, "the marker request " .. mark .. " never reached the access log"
end

-- nil, or what the access log says against the attempts the hooks saw:
-- every page served `walks` times at least (unless the walk ended early:
-- `partial`), never more often than attempted.
local function check_log(text, attempts, walks, partial)
  local served, lines = {}, 0
  for uri in text:gmatch('"GET ([^ "]+) HTTP/[%d.]+"') do
    local page = page_of(uri)
    if page then
      served[page] = (served[page] or 0) + 1
      lines = lines + 1
    end
  end
  for page, n in pairs(served) do
    if page < 1 or page > PAGES then
      return lines, string.format("page %d requested %d times: no such page", page, n)
    end
  end
  for page = 1, PAGES do
    local got, tried = served[page] or 0, attempts[page] or 0
    if got < walks and not partial then
      return lines, string.format("page %d requested %d times by the log, %d expected (attempts %d)",
        page, got, walks, tried)
    end
    if got > tried then
      return lines, string.format("page %d requested %d times by the log, but the client made %d attempts"
        .. " for it: a request went out with another page's URL", page, got, tried)
    end
  end
  return lines, nil
end

-- The log check tried first on made-up lines, so that it is known to fail
-- when it must: a page requested twice for one attempt while the next one
-- never went out (a request sent with another page's URL), and a page
-- requested for no attempt.
do
  local function line(page)
    return string.format('127.0.0.1 - - [-] "GET %s?order=created_at&order_type=asc&page=%d&per_page=%d'
      .. ' HTTP/2.0" 200 1\n', PATH, page, PER_PAGE)
  end
  local all, swapped, attempts = {}, {}, {}
  for page = 1, PAGES do
    all[page], swapped[page], attempts[page] = line(page), line(page), 1
  end
  swapped[3] = line(2)
  local _, ok_err = check_log(table.concat(all), attempts, 1, false)
  local _, swap_err = check_log(table.concat(swapped), attempts, 1, false)
  local _, extra_err = check_log(table.concat(all) .. line(PAGES + 1), attempts, 1, false)
  assert(ok_err == nil, "log check self-test: a right log fails: " .. tostring(ok_err))
  assert(swap_err and swap_err:find("page 2 requested 2 times", 1, true),
    "log check self-test: page 2 sent twice, page 3 never, not seen: " .. tostring(swap_err))
  assert(extra_err and extra_err:find("no such page", 1, true),
    "log check self-test: a page past the last not seen: " .. tostring(extra_err))
end

-- A client whose hooks count the attempts per page (attempts[page]) and
-- the failed ones by kind (failures[kind]).
local function new_client(attempts, failures)
  return assert(merchantapi.new({
    base_url = BASE, api_key = KEY, cafile = CAFILE,
    on_request = function(info)
      local page = page_of(info.url)
      if page then
        attempts[page] = (attempts[page] or 0) + 1
      end
    end,
    on_response = function(info)
      if info.error then
        failures[info.error] = (failures[info.error] or 0) + 1
      end
    end,
  }))
end

-- One whole walk with the pager: nil, or what was wrong; raises the pager's
-- error (no pcall: inside a loop task Lua 5.1 cannot yield across one).
local function walk(client)
  local pager = client:addresses(ACCOUNT, { per_page = PER_PAGE, concurrency = CONCURRENCY })
  local next_page = pager:pages()
  for k = 1, PAGES do
    local bad = check_page(k, next_page())
    if bad then
      return bad
    end
  end
  local extra = next_page()
  if extra ~= nil then
    return "a page after the last: " .. tostring(extra)
  end
  if pager.received ~= TOTAL or pager.announced ~= TOTAL then
    return string.format("received %s, announced %s", tostring(pager.received), tostring(pager.announced))
  end
  return nil
end

-- Runs fns as tasks of one loop: the first failure, or nil.
local function in_loop(fns)
  local loop = assert(merchantapi.loop())
  local tasks = {}
  for i, fn in ipairs(fns) do
    tasks[i] = loop:spawn(fn)
  end
  loop:run()
  local failure
  for i, task in ipairs(tasks) do
    local bad, raised = task:result()
    if raised ~= nil then
      bad = "raised: " .. tostring(raised)
    end
    failure = failure or (bad and string.format("task %d: %s", i, bad))
  end
  loop:close()
  return failure
end

-- One run: nil or what was wrong; the walks made (how many times each page
-- must have been served).
local function listing(client)
  if MODE == "pager" then
    return walk(client), 1
  end
  local fns = {}
  for i = 1, PAGER_TASKS do
    fns[i] = function() return walk(client) end
  end
  for i = 1, LIST_TASKS do
    fns[PAGER_TASKS + i] = function()
      for k = i, PAGES, LIST_TASKS do
        local list, err = client:list_addresses(ACCOUNT, { page = k, per_page = PER_PAGE })
        if not list then
          return string.format("page %d: %s", k, tostring(err))
        end
        local bad = check_page(k, list)
        if bad then
          return bad
        end
      end
      return nil
    end
  end
  return in_loop(fns), PAGER_TASKS + (LIST_TASKS > 0 and 1 or 0)
end

local ok_runs, failed_runs = 0, 0
local stamp = string.format("%d-%d", os.time(), math.floor(merchantapi.monotonic() * 1000) % 1000000)
for run = 1, RUNS do
  local attempts, failures = {}, {}
  local client = new_client(attempts, failures)
  local offset = file_size(LOG)
  local t0 = merchantapi.monotonic()
  local done, bad, walks = pcall(listing, client)
  if not done then
    bad, walks = "raised: " .. tostring(bad), MODE == "pager" and 1 or 2
  end
  local seconds = merchantapi.monotonic() - t0
  client:close()
  local mark = string.format("%s-%s-%d", stamp, LABEL:gsub("[^%w]", "_"), run)
  local text, log_err = run_log(offset, mark)
  local tried = 0
  for _, n in pairs(attempts) do
    tried = tried + n
  end
  -- the access log is read after a failed walk too: it tells what went out
  local lines, log_bad = 0, log_err
  if text then
    lines, log_bad = check_log(text, attempts, walks, bad ~= nil)
  end
  if log_bad then
    bad = (bad and bad .. "; " or "") .. "access log: " .. log_bad
  end
  local failed = {}
  for kind, n in pairs(failures) do
    failed[#failed + 1] = n .. " " .. kind
  end
  table.sort(failed)
  local what = string.format("%s run %d/%d: %d pages x%d, %d attempts (failed: %s), %d in the access log, %.1f s",
    LABEL, run, RUNS, PAGES, walks, tried, #failed > 0 and table.concat(failed, ", ") or "none",
    lines, seconds)
  if bad then
    failed_runs = failed_runs + 1
    print("keepalive: FAILED " .. what .. ": " .. bad)
  else
    ok_runs = ok_runs + 1
    print("keepalive: ok " .. what)
  end
  io.stdout:flush()
end
print(string.format("keepalive: %d runs, %d ok, %d failed, %.1f s of CPU", RUNS, ok_runs, failed_runs, os.clock()))
os.exit(failed_runs == 0 and ok_runs > 0 and 0 or 1)

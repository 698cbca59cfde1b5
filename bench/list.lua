--- Streams an account's addresses with pager:each(), for `make bench`.
--
--   lua5.4 bench/list.lua BASE_URL ACCOUNT PER_PAGE CONCURRENCY [MAX_PAGES]
--
-- Prints `items N seconds S vmhwm_kb K`: the addresses seen (each one's id
-- checked against the sandbox's numbering), the wall time of the whole
-- walk, and this process's peak resident set (VmHWM of /proc/self/status)
-- at the end.  Raises on a failed page or a wrong id.
local merchantapi = require "merchantapi"
local now = require("merchantapi.core").monotonic

local base_url, account = arg[1], arg[2]
local per_page, concurrency = tonumber(arg[3]), tonumber(arg[4])
local max_pages = tonumber(arg[5] or "")
local number = tonumber(account:match("^acct%-(%d+)$"))

local client = assert(merchantapi.new {
  base_url = base_url,
  api_key = os.getenv("MERCHANTAPI_API_KEY") or "sk_test_sandbox_4f9a2c",
})
local n, t0 = 0, now()
for address in client:addresses(account, { per_page = per_page, concurrency = concurrency,
                                           max_pages = max_pages }):each() do
  n = n + 1
  if number and address.id ~= ("%08d-0000-4000-8000-%012d"):format(number, n) then
    error("address " .. n .. " is " .. tostring(address.id))
  end
  assert(address.network.code)
end
local seconds = now() - t0
client:close()

local hwm
for line in io.lines("/proc/self/status") do
  hwm = hwm or tonumber(line:match("^VmHWM:%s*(%d+)%s*kB"))
end
print(("items %d seconds %.6f vmhwm_kb %d"):format(n, seconds, hwm or -1))

-- Lists every receiving address of an account, page by page.
-- usage: lua5.4 examples/list_addresses.lua <account_id> [per_page]
-- env:   MERCHANTAPI_BASE_URL, MERCHANTAPI_API_KEY
local merchantapi = require "merchantapi"

local account_id = assert(arg[1], "usage: list_addresses.lua <account_id> [per_page]")
local per_page = tonumber(arg[2] or "5")
local client = merchantapi.assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "set MERCHANTAPI_BASE_URL"),
  api_key = assert(os.getenv("MERCHANTAPI_API_KEY"), "set MERCHANTAPI_API_KEY"),
})

local count = 0
for page in client:addresses(account_id, { per_page = per_page }):pages() do
  print(("page %d (%d of %d addresses)"):format(page.meta.page, #page, page.meta.total))
  for _, address in ipairs(page) do
    count = count + 1
    print(("  %3d  %-44s %-16s %s"):format(count, address.value or "(being generated)",
      address.network.code, address.label))
  end
end
print(("%d addresses"):format(count))
client:close()

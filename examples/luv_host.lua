-- A libuv host (lua-luv) driving a merchantapi.loop: a poll handle on the
-- loop's descriptor and a timer for its timeout step it whenever it has
-- work, while libuv runs everything else (here, a repeating timer).
--
--   MERCHANTAPI_BASE_URL=... MERCHANTAPI_API_KEY=... lua examples/luv_host.lua CHANNEL_ID ACCOUNT_ID
local uv = require "luv"
local merchantapi = require "merchantapi"

local channel_id, account_id = arg[1], arg[2]
if not (channel_id and account_id) then
  io.stderr:write("usage: lua luv_host.lua CHANNEL_ID ACCOUNT_ID\n")
  os.exit(2)
end
local client = assert(merchantapi.new {
  base_url = assert(os.getenv("MERCHANTAPI_BASE_URL"), "MERCHANTAPI_BASE_URL"),
  api_key = os.getenv("MERCHANTAPI_API_KEY"),
})
local loop = assert(merchantapi.loop())

loop:spawn(function()
  local ch = merchantapi.assert(client:get_channel(channel_id))
  print(("channel %s is %s"):format(ch.id, ch.status))
end)
loop:spawn(function()
  local list = merchantapi.assert(client:list_addresses(account_id, { per_page = 5 }))
  print(("page 1: %d of %d addresses"):format(#list, list.meta.total))
end)

-- merchantapi's loop inside libuv's: one poll handle, one timer
local poll = uv.new_poll(loop:pollfd())
local timer = uv.new_timer()
local heartbeat = uv.new_timer()
local beats = 0
heartbeat:start(10, 10, function() beats = beats + 1 end)

local function step()
  local running = loop:step(0)
  timer:stop()
  if running == 0 then
    poll:stop()
    heartbeat:stop()
    return
  end
  local t = loop:timeout()
  if t then
    timer:start(math.ceil(t * 1000), 0, step)
  end
end
poll:start("r", step)
step()
uv.run()
for _, h in ipairs { poll, timer, heartbeat } do
  h:close()
end
uv.run()
print(("done; libuv's own timer ran %d times meanwhile"):format(beats))
loop:close()
client:close()

--- Decoding one list document in process, for `make bench`.
--
--   lua5.4 bench/decode.lua FILE ROUNDS ITERATIONS   (or luajit)
--
-- Three ways to the same Lua shapes, timed in turns (round r times each way
-- ITERATIONS times, after a full collection), so that the machine's load
-- falls on all of them alike:
--   merchantapi   merchantapi.decode(body): JSON:API resolved in C, exact numbers
--   cjson+lua     cjson.decode(body) plus the resolution written plainly in Lua
--                 (flatten each resource, index by type and id, replace each
--                 linkage by the indexed table or a stub) -- what a user writes
--   cjson         cjson.decode(body) alone: parsing only, nothing resolved
-- Prints one line per way: `<way> <median CPU seconds per decode> <min> <max>`.
local merchantapi = require "merchantapi"
local cjson = require "cjson"

local file, rounds, iterations = arg[1], tonumber(arg[2] or "7"), tonumber(arg[3] or "20")
local f = assert(io.open(file, "rb"))
local body = f:read("*a")
f:close()
-- CPU time of this process: other processes on the machine count less than in wall time
local now = os.clock

local resolve = dofile("bench/alt_resolve.lua").resolve

local ways = {
  { "merchantapi", function() return assert(merchantapi.decode(body)) end },
  { "cjson+lua", function() return resolve(cjson.decode(body)) end },
  { "cjson", function() return cjson.decode(body) end },
}

-- the same answers first: a wrong comparison is no comparison
local a, b = ways[1][2](), ways[2][2]()
assert(#a == #b and a[#a].id == b[#b].id and a[1].network.code == b[1].network.code)

local times = {}
for _, way in ipairs(ways) do
  times[way[1]] = {}
end
for _ = 1, rounds do
  for _, way in ipairs(ways) do
    local fn = way[2]
    collectgarbage("collect")
    local t0 = now()
    for _ = 1, iterations do
      fn()
    end
    local t = times[way[1]]
    t[#t + 1] = (now() - t0) / iterations
  end
end
for _, way in ipairs(ways) do
  local t = times[way[1]]
  table.sort(t)
  print(("%s %.9f %.9f %.9f"):format(way[1], t[math.floor((#t + 1) / 2)], t[1], t[#t]))
end

/*
 * fuzz_lua.c -- libFuzzer harness over the Lua conversion: merchantapi.core
 * decode(body) in a fresh Lua 5.4 state per input, then a walk of everything
 * it returned (the flattened resources with their cycles, list meta, the
 * error table, res and res:document()), with the contract's rules checked:
 *   - decode never raises (run-time failures are nil, err);
 *   - a success is a table, or merchantapi.null for no primary data;
 *   - a failure is nil, err, message: err an error table with a string
 *     kind ("decode" or "api") whose tostring is its message, message that
 *     string, the response at err.res;
 *   - no JSON number comes back as a Lua float (integers within 2^53 are
 *     Lua integers, every other number is its source text);
 *   - a resource has a string type and a string id (or, JSON:API 1.1, lid);
 *     a payout's amount is never a number;
 *   - list meta page/per_page/total are integers when present as numbers.
 * lua_close() after each input frees everything Lua owns, so LeakSanitizer
 * sees any C memory the binding forgets.
 *   make fuzz-lua FUZZ_SECONDS=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int luaopen_merchantapi_core(lua_State *L);

static const char checker[] =
    "local core = ...\n"
    "local mtype, type, pairs, tostring = math.type, type, pairs, tostring\n"
    "local function walk(x, seen)\n"
    "  local t = type(x)\n"
    "  if t == 'number' then\n"
    "    assert(mtype(x) == 'integer', 'a JSON number became a float')\n"
    "  elseif t == 'table' and not seen[x] then\n"
    "    seen[x] = true\n"
    "    for k, v in pairs(x) do walk(k, seen); walk(v, seen) end\n"
    "  end\n"
    "end\n"
    "local function resource(r)\n"
    "  assert(type(r) == 'table', 'a resource is a table')\n"
    "  assert((type(r.id) == 'string' or type(r.lid) == 'string') and type(r.type) == 'string',\n"
    "         'id (or lid) and type are strings')\n"
    "  if r.type == 'payouts' then assert(type(r.amount) ~= 'number', 'amount is a number') end\n"
    "end\n"
    "return function(body)\n"
    "  local v, err, res = core.decode(body)\n"
    "  if v == nil then\n"
    "    assert(type(err) == 'table', 'failure without an error table')\n"
    "    assert(res == err.message, 'the third value of a failure is not the message')\n"
    "    res = err.res\n"
    "    assert(err.kind == 'decode' or err.kind == 'api', 'unexpected kind ' .. tostring(err.kind))\n"
    "    assert(tostring(err) == err.message, 'tostring(err) is not the message')\n"
    "    walk(err, {})\n"
    "  elseif v == core.null then\n"
    "    assert(err == nil, 'a value and an error')\n"
    "  else\n"
    "    assert(err == nil, 'a value and an error')\n"
    "    assert(type(v) == 'table', 'a value that is neither a table nor merchantapi.null')\n"
    "    if v.id ~= nil or v.type ~= nil then\n"
    "      resource(v)\n"
    "    else\n"
    "      for i = 1, #v do resource(v[i]) end\n"
    "      local m = v.meta\n"
    "      if type(m) == 'table' then\n"
    "        for _, k in pairs({'page', 'per_page', 'total'}) do\n"
    "          if type(m[k]) == 'number' then assert(mtype(m[k]) == 'integer', k) end\n"
    "        end\n"
    "      end\n"
    "    end\n"
    "    walk(v, {})\n"
    "  end\n"
    "  if res ~= nil then\n"
    "    assert(res.body == body, 'res.body is not the body')\n"
    "    local doc, derr = res:document()\n"
    "    if doc ~= nil then walk(doc, {}) else assert(type(derr) == 'table') end\n"
    "  end\n"
    "end\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lua_State *L = luaL_newstate();

    if (!L)
        return 0;
    luaL_openlibs(L);
    luaL_requiref(L, "merchantapi.core", luaopen_merchantapi_core, 0);
    if (luaL_loadbuffer(L, checker, sizeof checker - 1, "=checker") != LUA_OK)
        abort();
    lua_insert(L, -2); /* checker, core */
    if (lua_pcall(L, 1, 1, 0) != LUA_OK)
        abort();
    lua_pushlstring(L, (const char *)data, size);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        /* decode raised, or a rule of the contract was broken */
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "fuzz_lua: %s\n", msg ? msg : "(no message)");
        abort();
    }
    lua_close(L);
    return 0;
}

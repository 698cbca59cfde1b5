/*
 * lua_compat.h -- the few Lua C API differences between 5.1 (and LuaJIT),
 * 5.2, 5.3 and 5.4 that the binding (src/lua_*.c) meets, bridged in one place
 * (5.5 takes the 5.4 side of each: it adds no difference of its own).
 *
 * Every shim is `static inline` (no warning when one goes unused) and has
 * the prefix `mapic_`, never a name of the Lua API itself: LuaJIT ships
 * some 5.2 functions (luaL_setfuncs, luaL_testudata, ...), and a second,
 * non-static definition of those would clash with it when the module is
 * loaded into OpenResty.
 */
#ifndef MAPI_LUA_COMPAT_H
#define MAPI_LUA_COMPAT_H

#include <stdint.h>

#include <lua.h>
#include <lauxlib.h>

#if LUA_VERSION_NUM >= 503
#define MAPIC_HAS_INTEGERS 1
#else
#define MAPIC_HAS_INTEGERS 0
#endif

/* Registers the functions of l into the table on the top of the stack, each
   sharing the nup values that lie under that table (luaL_setfuncs of 5.2). */
/* The length of the table at i, no metamethod. */
#if LUA_VERSION_NUM >= 502
#define mapic_rawlen(L, i) lua_rawlen(L, i)
#else
#define mapic_rawlen(L, i) lua_objlen(L, i)
#endif

static inline void mapic_setfuncs(lua_State *L, const luaL_Reg *l, int nup)
{
#if LUA_VERSION_NUM >= 502
    luaL_setfuncs(L, l, nup);
#else
    int i;
    luaL_checkstack(L, nup + 1, "too many upvalues");
    for (; l->name != NULL; l++) {
        for (i = 0; i < nup; i++)
            lua_pushvalue(L, -nup - 1);
        lua_pushcclosure(L, l->func, nup);
        lua_setfield(L, -(nup + 2), l->name);
    }
    lua_pop(L, nup);
#endif
}

/* Sets the metatable registered as tname on the value on the top. */
static inline void mapic_setmetatable(lua_State *L, const char *tname)
{
    lua_getfield(L, LUA_REGISTRYINDEX, tname);
    lua_setmetatable(L, -2);
}

/* A new full userdata of size bytes (no user values). */
static inline void *mapic_newuserdata(lua_State *L, size_t size)
{
#if LUA_VERSION_NUM >= 504
    return lua_newuserdatauv(L, size, 0);
#else
    return lua_newuserdata(L, size);
#endif
}

/* Raises "bad argument #arg to 'f' (<expected> expected, got <type>)". */
static inline int mapic_typeerror(lua_State *L, int arg, const char *expected)
{
    const char *msg = lua_pushfstring(L, "%s expected, got %s", expected,
                                      luaL_typename(L, arg));
    return luaL_argerror(L, arg, msg);
}

/*
 * Pushes a JSON integer.  5.3+ has 64-bit integers; 5.1 and LuaJIT only have
 * doubles, which hold every integer within +-2^53 exactly (the binding never
 * pushes a larger one as a number).
 */
static inline void mapic_pushint64(lua_State *L, int64_t v)
{
#if MAPIC_HAS_INTEGERS
    lua_pushinteger(L, (lua_Integer)v);
#else
    lua_pushnumber(L, (lua_Number)v);
#endif
}

/*
 * If the value at idx is a number holding an integer, stores it in *out and
 * returns 1; returns 0 for other values (floats with a fraction, NaN, values
 * beyond int64, non-numbers).  Strings are not converted.
 */
static inline int mapic_tointeger(lua_State *L, int idx, int64_t *out)
{
    lua_Number n;
    if (lua_type(L, idx) != LUA_TNUMBER)
        return 0;
#if MAPIC_HAS_INTEGERS
    if (lua_isinteger(L, idx)) {
        *out = (int64_t)lua_tointeger(L, idx);
        return 1;
    }
#endif
    n = lua_tonumber(L, idx);
    if (!(n >= -9223372036854775808.0 && n < 9223372036854775808.0))
        return 0;
    if ((lua_Number)(int64_t)n != n)
        return 0;
    *out = (int64_t)n;
    return 1;
}

/*
 * Calls f with one argument, the light userdata ud, in protected mode, and
 * returns its status (0 when it ran through; otherwise the error object is
 * left on the stack).  Nothing is allocated outside the protection: 5.1 and
 * LuaJIT have lua_cpcall for it, and from 5.2 on a C function without
 * upvalues and a light userdata are pushed without allocating.  Needs two
 * free stack slots (every C function is given LUA_MINSTACK).  For calling
 * Lua from C code that holds memory a longjmp would leak.
 */
static inline int mapic_cpcall(lua_State *L, lua_CFunction f, void *ud)
{
#if LUA_VERSION_NUM >= 502
    lua_pushcfunction(L, f);
    lua_pushlightuserdata(L, ud);
    return lua_pcall(L, 1, 0, 0);
#else
    return lua_cpcall(L, f, ud);
#endif
}

#endif /* MAPI_LUA_COMPAT_H */

/*
 * host.c -- a program that embeds Lua 5.4 and lets its scripts use
 * merchantapi (the game-server / automation case).  The host owns the
 * lua_State; the script requires the module like any other.
 *
 *   cc host.c $(pkg-config --cflags --libs lua5.4) -o host
 *   LUA_PATH=... LUA_CPATH=... ./host script.lua [args...]
 */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static int traceback(lua_State *L)
{
    luaL_traceback(L, L, lua_tostring(L, 1), 1);
    return 1;
}

int main(int argc, char **argv)
{
    lua_State *L;
    int i, rc;

    if (argc < 2) {
        fprintf(stderr, "usage: %s script.lua [args...]\n", argv[0]);
        return 2;
    }
    L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "host: out of memory\n");
        return 1;
    }
    luaL_openlibs(L);
    lua_createtable(L, argc, 0); /* arg, as the lua command sets it */
    for (i = 1; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - 1);
    }
    lua_setglobal(L, "arg");

    lua_pushcfunction(L, traceback);
    rc = luaL_loadfile(L, argv[1]);
    if (rc == LUA_OK) {
        for (i = 2; i < argc; i++)
            lua_pushstring(L, argv[i]);
        rc = lua_pcall(L, argc - 2, 0, 1);
    }
    if (rc != LUA_OK)
        fprintf(stderr, "host: %s\n", lua_tostring(L, -1));
    lua_close(L); /* runs __gc: the client's handle is freed here */
    return rc == LUA_OK ? 0 : 1;
}

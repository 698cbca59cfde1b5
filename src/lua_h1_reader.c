/*
 * lua_h1_reader.c -- core.h1_reader: the HTTP/1.1 response reader of
 * src/h1_reader.c for the transports the library drives in Lua (the
 * OpenResty cosocket transport, lua/merchantapi/transport/ngx.lua, which
 * only moves bytes).  The hot path is reader:feed(bytes): one C call, an
 * integer back, nothing built per chunk.  The answer goes to the exchange
 * as it is (x:response(reader), lua_transport.c: no table of headers is
 * made); its fields can be read as res.status, res.headers, res.body,
 * res.head_bytes (built when read, for a caller that looks).
 */
#include <string.h>

#include "h1_reader.h"
#include "lua_binding.h"

typedef struct reader_box {
    mapi_h1_reader *r;
} reader_box;

static reader_box *check_box(lua_State *L)
{
    reader_box *b = (reader_box *)luaL_checkudata(L, 1, H1_READER_MT);

    if (!b->r)
        luaL_error(L, "merchantapi: a freed h1_reader");
    return b;
}

mapi_h1_reader *mapi_lua_to_h1_reader(lua_State *L, int idx)
{
    reader_box *b;
    int same;

    if (lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx))
        return NULL;
    lua_getfield(L, LUA_REGISTRYINDEX, H1_READER_MT);
    same = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
    if (!same)
        return NULL;
    b = (reader_box *)lua_touserdata(L, idx);
    return b->r;
}

/* max_body (bytes) at index idx, as a size */
static size_t check_max_body(lua_State *L, int idx)
{
    lua_Number max_body = luaL_checknumber(L, idx);

    if (max_body < 0)
        return 0;
    return max_body >= (lua_Number)SIZE_MAX ? SIZE_MAX : (size_t)max_body;
}

/* core.h1_reader(head_only, max_body) -> reader: head_only true for the
   answer to a HEAD; max_body in bytes.  Raises when out of memory. */
int mapi_lua_h1_reader(lua_State *L)
{
    int head_only = lua_toboolean(L, 1);
    size_t max_body = check_max_body(L, 2);
    reader_box *b;

    b = (reader_box *)mapic_newuserdata(L, sizeof *b);
    b->r = NULL;
    mapic_setmetatable(L, H1_READER_MT);
    b->r = mapi_h1_reader_new(head_only, max_body);
    if (!b->r)
        return luaL_error(L, MAPI_LUA_NO_MEMORY);
    return 1;
}

/* reader:reset(head_only, max_body) -> true: the reader, whose answer the
   exchange took (x:response), reads a new answer as core.h1_reader(head_only,
   max_body) would (its buffers kept: a transport reuses its readers); false:
   its answer was not taken (the reader unchanged, still its holder's).
   Raises when out of memory. */
static int l_reset(lua_State *L)
{
    reader_box *b = check_box(L);
    int head_only = lua_toboolean(L, 2);
    int rc = mapi_h1_reader_reset(b->r, head_only, check_max_body(L, 3));

    if (rc < 0)
        return luaL_error(L, MAPI_LUA_NO_MEMORY);
    lua_pushboolean(L, rc == 0);
    return 1;
}

/* The state for Lua: 0 more bytes wanted, 1 the answer is complete, 2 an
   answer the exchange refuses (DECODE), 3 no answer (TRANSPORT: reader:error()
   says why).  Read no more after 1, 2 or 3. */
static int push_state(lua_State *L, mapi_h1_reader *r, mapi_h1_state st)
{
    lua_pushinteger(L, st == MAPI_H1_ENDED && mapi_h1_failed(r) ? 3 : (lua_Integer)st);
    return 1;
}

/* reader:feed(bytes) -> state (push_state). */
static int l_feed(lua_State *L)
{
    reader_box *b = check_box(L);
    size_t len;
    const char *data = luaL_checklstring(L, 2, &len);

    return push_state(L, b->r, mapi_h1_feed(b->r, data, len));
}

/* reader:eof() -> state: the connection closed (a body delimited by the
   close is then complete). */
static int l_eof(lua_State *L)
{
    reader_box *b = check_box(L);

    return push_state(L, b->r, mapi_h1_eof(b->r));
}

/* reader:keep_alive() -> boolean: the connection may carry another request. */
static int l_keep_alive(lua_State *L)
{
    lua_pushboolean(L, mapi_h1_keep_alive(check_box(L)->r));
    return 1;
}

/* reader:error() -> the title of why it ended, or nil. */
static int l_error(lua_State *L)
{
    const char *t = mapi_h1_title(check_box(L)->r);

    if (t)
        lua_pushstring(L, t);
    else
        lua_pushnil(L);
    return 1;
}

/* The headers as a transport's table: lower-case name -> value, or
   { values } for a repeated one. */
static void push_headers(lua_State *L, const mapi_response *res)
{
    size_t i;

    lua_createtable(L, 0, (int)res->nheaders);
    for (i = 0; i < res->nheaders; i++) {
        const mapi_header *h = &res->headers[i];
        lua_getfield(L, -1, h->name);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            lua_pushstring(L, h->value);
        } else if (lua_type(L, -1) == LUA_TTABLE) {
            lua_pushstring(L, h->value);
            lua_rawseti(L, -2, (int)mapic_rawlen(L, -2) + 1);
        } else {
            lua_createtable(L, 2, 0);
            lua_insert(L, -2);
            lua_rawseti(L, -2, 1);
            lua_pushstring(L, h->value);
            lua_rawseti(L, -2, 2);
        }
        lua_setfield(L, -2, h->name);
    }
}

/* reader.status / .headers / .body / .head_bytes (nil once the exchange
   took the answer), else the methods. */
static int l_index(lua_State *L)
{
    reader_box *b = check_box(L);
    const char *key = luaL_checkstring(L, 2);
    const mapi_response *res = mapi_h1_response(b->r);

    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1) || !res)
        return 1;
    if (strcmp(key, "status") == 0 && res->status)
        lua_pushinteger(L, res->status);
    else if (strcmp(key, "headers") == 0)
        push_headers(L, res);
    else if (strcmp(key, "body") == 0)
        mapi_lua_push_body(L, res);
    else if (strcmp(key, "head_bytes") == 0)
        lua_pushinteger(L, (lua_Integer)res->head_bytes);
    else
        lua_pushnil(L);
    return 1;
}

static int reader_gc(lua_State *L)
{
    reader_box *b = (reader_box *)luaL_checkudata(L, 1, H1_READER_MT);

    mapi_h1_reader_free(b->r);
    b->r = NULL;
    return 0;
}

void mapi_lua_h1_reader_open(lua_State *L)
{
    static const luaL_Reg methods[] = {{"feed", l_feed},
                                       {"eof", l_eof},
                                       {"keep_alive", l_keep_alive},
                                       {"error", l_error},
                                       {"reset", l_reset},
                                       {NULL, NULL}};

    luaL_checkstack(L, 4, MAPI_LUA_NO_STACK);
    mapi_lua_new_metatable(L, H1_READER_MT);
    lua_createtable(L, 0, 5);
    mapic_setfuncs(L, methods, 0);
    lua_pushcclosure(L, l_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, reader_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
}

/*
 * lua_base.c -- merchantapi.core's base, below every other file of the
 * binding: the lifetimes of its userdata (the call_box anchor, the client
 * and its hold, the exchange box), the registration of metatables, and the
 * small pushes every file shares.  It calls no other file of the binding;
 * docs/architecture.md "The layers" gives each file's floor above it.
 *
 * Memory rules (the whole binding's)
 *   - Lua errors longjmp.  No Lua function is called while C memory is held
 *     unanchored: a mapi_doc, a mapi_error or a mapi_client is always owned
 *     by a userdata with __gc created *before* the C call that fills it, so a
 *     memory error raised by any lua_* call during the conversion that
 *     follows frees it at the next collection.  On the normal path it is
 *     freed at once.
 *   - The C calls (libcurl, simdjson) never call back into Lua.
 *   - Argument type mistakes raise (luaL_argerror) before anything is
 *     allocated; everything else is returned as nil, err, message.
 *   - No C globals: metatables live in the registry under the names of
 *     lua_binding.h.
 *
 * Closing a client while calls run, the one rule: every call under way
 * holds its client (a prepared exchange until its result is taken or it is
 * collected, a call with hooks while it runs); close() then only marks the
 * client closed for new calls, and the last release frees it.
 */
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"

/* ------------------------------------------------------------------------ */
/* Metatables and small pushes                                              */
/* ------------------------------------------------------------------------ */

void mapi_lua_new_metatable(lua_State *L, const char *name)
{
    luaL_newmetatable(L, name);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__name");
}

void mapi_lua_class_metatable(lua_State *L, const char *name, const luaL_Reg *methods,
                              lua_CFunction gc)
{
    int n = 0;

    while (methods && methods[n].name)
        n++;
    luaL_checkstack(L, 4, MAPI_LUA_NO_STACK);
    mapi_lua_new_metatable(L, name);
    if (methods) {
        lua_createtable(L, 0, n);
        mapic_setfuncs(L, methods, 0);
        lua_setfield(L, -2, "__index");
    }
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
}

void mapi_lua_set_string(lua_State *L, const char *key, const char *value)
{
    if (value == NULL)
        return;
    lua_pushstring(L, value);
    lua_setfield(L, -2, key);
}

void mapi_lua_set_int(lua_State *L, const char *key, long value)
{
    mapic_pushint64(L, (int64_t)value);
    lua_setfield(L, -2, key);
}

void mapi_lua_set_number(lua_State *L, const char *key, double value)
{
    lua_pushnumber(L, (lua_Number)value);
    lua_setfield(L, -2, key);
}

/* The anchors (lua_binding.h): the registry's key is this byte's address
   (a constant, shared by every state; each state has its own table). */
static const char anchors_key = 'a';

/* The literal keys, in the order of enum mapi_lua_lit (slot 1 first). */
static const char *const LITS[MAPI_LIT_COUNT - 1] = {
    "status", "request_id", "elapsed", "headers", "meta", "jsonapi", "links", "body",
    "document", "settled_by", "method", "url", "timeout", "connect_timeout", "max_body",
    "fresh_connection", "attempt", "id", "type", "lid", "retry", "done"};

int mapi_lua_push_anchors(lua_State *L)
{
    int i;

    luaL_checkstack(L, 4, MAPI_LUA_NO_STACK);
    lua_pushlightuserdata(L, (void *)&anchors_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (lua_type(L, -1) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, MAPI_LIT_COUNT - 1 + MAPI_LUA_NAME_SLOTS + MAPI_LUA_HEADER_SLOTS, 0);
        for (i = 1; i < MAPI_LIT_COUNT; i++) {
            lua_pushstring(L, LITS[i - 1]);
            lua_rawseti(L, -2, i);
        }
        lua_pushlightuserdata(L, (void *)&anchors_key);
        lua_pushvalue(L, -2);
        lua_rawset(L, LUA_REGISTRYINDEX);
    }
    return lua_gettop(L);
}

void mapi_lua_push_name(lua_State *L, int anchors, int slot, const char *s, size_t len)
{
    size_t have;
    const char *kept;

    if (len > MAPI_LUA_NAME_MAX) { /* not kept: a hostile answer's long names die with it */
        lua_pushlstring(L, s, len);
        return;
    }
    lua_rawgeti(L, anchors, slot);
    if (lua_type(L, -1) == LUA_TSTRING) {
        kept = lua_tolstring(L, -1, &have);
        if (have == len && memcmp(kept, s, len) == 0)
            return;
    }
    lua_pop(L, 1);
    lua_pushlstring(L, s, len);
    lua_pushvalue(L, -1);
    lua_rawseti(L, anchors, slot);
}

void mapi_lua_set_lit(lua_State *L, int anchors, int t, int lit)
{
    lua_rawgeti(L, anchors, lit);
    lua_insert(L, -2);
    lua_rawset(L, t);
}

void mapi_lua_push_body(lua_State *L, const mapi_response *resp)
{
    size_t len = 0;
    const char *body = resp ? mapi_response_body(resp, &len) : NULL;
    lua_pushlstring(L, body ? body : "", body ? len : 0);
}

/* A body box (lua_binding.h): a copy of a document's body in the C heap,
   freed by its __gc. */
#define BODY_BOX_MT "merchantapi.body"

typedef struct body_box {
    char *data; /* malloc'd, or NULL for an empty body */
    size_t len;
} body_box;

static int body_box_gc(lua_State *L)
{
    body_box *bb = (body_box *)luaL_checkudata(L, 1, BODY_BOX_MT);

    free(bb->data);
    bb->data = NULL;
    bb->len = 0;
    return 0;
}

void mapi_lua_push_body_box(lua_State *L, const mapi_doc *doc)
{
    const mapi_response *resp = mapi_doc_response(doc);
    size_t len = 0;
    const char *body = resp ? mapi_response_body(resp, &len) : NULL;
    body_box *bb = (body_box *)mapic_newuserdata(L, sizeof *bb);

    bb->data = NULL;
    bb->len = 0;
    mapic_setmetatable(L, BODY_BOX_MT);
    if (body && len > 0) {
        bb->data = (char *)malloc(len);
        if (!bb->data)
            luaL_error(L, "%s", MAPI_LUA_NO_MEMORY);
        memcpy(bb->data, body, len);
        bb->len = len;
    }
}

const char *mapi_lua_body_of(lua_State *L, int idx, size_t *len)
{
    body_box *bb;

    if (lua_type(L, idx) == LUA_TSTRING)
        return lua_tolstring(L, idx, len);
    bb = (body_box *)lua_touserdata(L, idx);
    if (!bb || !lua_getmetatable(L, idx))
        return NULL;
    luaL_getmetatable(L, BODY_BOX_MT);
    if (!lua_rawequal(L, -1, -2))
        bb = NULL;
    lua_pop(L, 2);
    if (!bb || !bb->data)
        return NULL;
    *len = bb->len;
    return bb->data;
}

/* ------------------------------------------------------------------------ */
/* Anchors for C memory                                                     */
/* ------------------------------------------------------------------------ */

static int call_box_gc(lua_State *L)
{
    call_box *b = (call_box *)luaL_checkudata(L, 1, CALL_BOX_MT);
    mapi_doc_free(b->doc);
    b->doc = NULL;
    mapi_error_clear(&b->err);
    return 0;
}

call_box *mapi_lua_push_call_box(lua_State *L)
{
    mapi_error init = MAPI_ERROR_INIT;
    call_box *b = (call_box *)mapic_newuserdata(L, sizeof *b);
    b->doc = NULL;
    b->err = init;
    mapic_setmetatable(L, CALL_BOX_MT);
    return b;
}

/* ------------------------------------------------------------------------ */
/* The client's lifetime and its hold                                       */
/* ------------------------------------------------------------------------ */

client_box *mapi_lua_check_client(lua_State *L, int idx)
{
    return (client_box *)luaL_checkudata(L, idx, CLIENT_MT);
}

/* Frees the handle (and lets go of the hooks). */
static void free_client(lua_State *L, client_box *cb)
{
    mapi_client_free(cb->client);
    cb->client = NULL;
    cb->close_pending = 0;
    luaL_unref(L, LUA_REGISTRYINDEX, cb->hooks.ref);
    cb->hooks.ref = LUA_NOREF;
}

void mapi_lua_client_close(lua_State *L, client_box *cb)
{
    if (cb->holds > 0)
        cb->close_pending = 1;
    else
        free_client(L, cb);
}

mapi_client *mapi_lua_client_hold(lua_State *L, int idx, int **busy)
{
    client_box *cb = mapi_lua_check_client(L, idx);

    if (!cb->client || cb->close_pending)
        return NULL;
    cb->holds++;
    cb->hooks.L = L; /* the client's hooks, over libcurl, run on this thread */
    if (busy)
        *busy = &cb->busy;
    return cb->client;
}

void mapi_lua_client_release(lua_State *L, int idx)
{
    client_box *cb = mapi_lua_check_client(L, idx);

    if (cb->holds > 0 && --cb->holds == 0 && cb->close_pending)
        free_client(L, cb);
}

mapi_client *mapi_lua_client_ref(lua_State *L, int idx, int again, int *ref)
{
    client_box *cb = mapi_lua_check_client(L, idx);

    lua_pushvalue(L, idx);
    *ref = luaL_ref(L, LUA_REGISTRYINDEX); /* before the check: it may run a __gc */
    if (again && cb->client) {
        cb->holds++;
        return cb->client;
    }
    if (!mapi_lua_client_hold(L, idx, NULL)) {
        luaL_unref(L, LUA_REGISTRYINDEX, *ref);
        *ref = LUA_NOREF;
    }
    return *ref != LUA_NOREF ? cb->client : NULL;
}

void mapi_lua_client_unref(lua_State *L, int *ref)
{
    if (*ref == LUA_NOREF)
        return;
    lua_rawgeti(L, LUA_REGISTRYINDEX, *ref);
    mapi_lua_client_release(L, lua_gettop(L));
    lua_pop(L, 1);
    luaL_unref(L, LUA_REGISTRYINDEX, *ref);
    *ref = LUA_NOREF;
}

/* ------------------------------------------------------------------------ */
/* The exchange box's lifetime                                              */
/* ------------------------------------------------------------------------ */

int mapi_lua_exchange_box_gc(lua_State *L)
{
    exchange_box *xb = (exchange_box *)luaL_checkudata(L, 1, EXCHANGE_MT);

    /* on a loop: only at lua_close (a running call's box is anchored in the
       registry), and the loop, finalized later, still uses the exchange */
    if (xb->on_loop)
        xb->on_loop = 2;
    else
        mapi_lua_exchange_box_clear(L, xb);
    return 0;
}

void mapi_lua_exchange_box_clear(lua_State *L, exchange_box *xb)
{
    mapi_lua_client_unref(L, &xb->cref);
    mapi_exchange_free(xb->x);
    xb->x = NULL;
    mapi_response_free(xb->pending);
    xb->pending = NULL;
    mapi_doc_free(xb->doc);
    xb->doc = NULL;
    mapi_error_clear(&xb->err);
}

exchange_box *mapi_lua_push_exchange_box(lua_State *L)
{
    mapi_error init = MAPI_ERROR_INIT;
    exchange_box *xb = (exchange_box *)mapic_newuserdata(L, sizeof *xb);

    memset(xb, 0, sizeof *xb);
    xb->err = init;
    xb->cref = LUA_NOREF;
    mapic_setmetatable(L, EXCHANGE_MT);
    return xb;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

void mapi_lua_base_open(lua_State *L)
{
    mapi_lua_class_metatable(L, CALL_BOX_MT, NULL, call_box_gc);
    mapi_lua_class_metatable(L, BODY_BOX_MT, NULL, body_box_gc);
}

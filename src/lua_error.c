/*
 * lua_error.c -- merchantapi.core: the error object (docs/contract.md
 * "Errors"), the one metatable of every error table, whose message comes
 * from the core's one builder (mapi_error_message) also for the tables made
 * in Lua (merchantapi.errors), and a failure's results, nil, err, message.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"

/* The fields an error and each of its entries share, into the table on top. */
static void set_entry(lua_State *L, int status, const char *code, const char *title,
                      const char *detail, const char *pointer)
{
    if (status > 0)
        mapi_lua_set_int(L, "status", status);
    mapi_lua_set_string(L, "code", code);
    mapi_lua_set_string(L, "title", title);
    mapi_lua_set_string(L, "detail", detail);
    mapi_lua_set_string(L, "pointer", pointer);
}

mapi_error_kind mapi_lua_error_kind(const char *name)
{
    int k;

    for (k = MAPI_ERR_MEMORY; name && k > MAPI_ERR_NONE; k--)
        if (strcmp(name, mapi_error_kind_name((mapi_error_kind)k)) == 0)
            return (mapi_error_kind)k;
    return MAPI_ERR_NONE;
}

/* Pushes the one-line message of the error table at idx: its `message`,
   else the one the core's builder (mapi_error_message) makes of its kind,
   status, code, title, detail, method and path (its `path`, else the path
   of its `url`) -- the one rule for the C core's errors, the binding's and
   those made in Lua (merchantapi.errors). */
static void push_error_message(lua_State *L, int idx)
{
    static const char *const names[] = {"kind", "code", "title", "detail", "method", "path", "url"};
    const char *f[sizeof names / sizeof names[0]];
    mapi_error e = MAPI_ERROR_INIT;
    int64_t status = 0;
    size_t i, n = sizeof names / sizeof names[0];

    if (idx < 0)
        idx = lua_gettop(L) + idx + 1;
    luaL_checkstack(L, 12, MAPI_LUA_NO_STACK);
    luaL_checktype(L, idx, LUA_TTABLE); /* an error table: this metatable's */
    lua_getfield(L, idx, "message");
    if (lua_type(L, -1) == LUA_TSTRING)
        return;
    lua_getfield(L, idx, "status");
    if (mapic_tointeger(L, -1, &status) && status > 0 && status <= 999)
        e.status = (int)status;
    lua_pop(L, 2);
    /* the fields stay on the stack while the builder borrows them */
    for (i = 0; i < n; i++) {
        lua_getfield(L, idx, names[i]);
        f[i] = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    }
    e.kind = mapi_lua_error_kind(f[0]);
    e.code = (char *)f[1], e.title = (char *)f[2], e.detail = (char *)f[3];
    e.method = (char *)f[4], e.url = (char *)(f[5] ? f[5] : f[6]);
    if (mapi_error_message(&e) != 0)
        luaL_error(L, MAPI_LUA_NO_MEMORY);
    lua_pop(L, (int)n);
    lua_pushstring(L, e.message);
    free(e.message);
}

void mapi_lua_push_error(lua_State *L, const mapi_error *e)
{
    size_t i;
    const char *kind = mapi_error_kind_name(e->kind);

    luaL_checkstack(L, 8, MAPI_LUA_NO_STACK);
    lua_createtable(L, 0, 22);
    mapi_lua_set_string(L, "kind", *kind ? kind : "memory");
    set_entry(L, e->status, e->code, e->title, e->detail, e->pointer);

    lua_createtable(L, e->nerrors > INT_MAX ? INT_MAX : (int)e->nerrors, 0);
    for (i = 0; i < e->nerrors && i < (size_t)INT_MAX; i++) {
        const mapi_error_entry *en = &e->errors[i];
        lua_createtable(L, 0, 5);
        set_entry(L, en->status, en->code, en->title, en->detail, en->pointer);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lua_setfield(L, -2, "errors");

    mapi_lua_set_string(L, "amount", e->amount);
    mapi_lua_set_string(L, "minimum", e->minimum);
    mapi_lua_set_string(L, "maximum", e->maximum);
    lua_pushboolean(L, e->retryable);
    lua_setfield(L, -2, "retryable");
    if (e->outcome != MAPI_OUTCOME_NONE)
        mapi_lua_set_string(L, "outcome", mapi_outcome_name(e->outcome));
    mapi_lua_set_string(L, "method", e->method);
    mapi_lua_set_string(L, "url", e->url);
    mapi_lua_set_string(L, "request_id", e->request_id);
    if (e->retry_after >= 0)
        mapi_lua_set_number(L, "retry_after", e->retry_after);
    if (e->attempts > 0)
        mapi_lua_set_int(L, "attempts", e->attempts);
    if (e->curl_code != 0)
        mapi_lua_set_int(L, "curl_code", e->curl_code);
    if (e->deadline_exceeded) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "deadline_exceeded");
    }
    /* a settled confirm's read: the payout, still a draft */
    if (e->payout && mapi_lua_push_data(L, e->payout))
        lua_setfield(L, -2, "payout");
    if (e->settle_error) { /* the read that tried to settle a confirm failed */
        mapi_lua_push_error(L, e->settle_error);
        lua_setfield(L, -2, "settle_error");
    }
    if (e->message)
        lua_pushstring(L, e->message);
    else
        push_error_message(L, -1); /* the core could not make it (out of memory) */
    lua_setfield(L, -2, "message");
    mapic_setmetatable(L, ERROR_MT);
}

int mapi_lua_new_error_results(lua_State *L, const char *kind, const char *title,
                               const char *method)
{
    mapi_error e = MAPI_ERROR_INIT; /* its strings borrowed, never freed */

    e.kind = mapi_lua_error_kind(kind);
    e.title = (char *)title;
    e.method = (char *)method;
    if (mapi_method_safety(method) == 0)
        e.outcome = MAPI_OUTCOME_NOT_SENT; /* the core's rule (mapi_error_tag_not_sent) */
    mapi_lua_push_error(L, &e);
    return mapi_lua_error_table_results(L);
}

int mapi_lua_error_table_results(lua_State *L)
{
    luaL_checkstack(L, 3, MAPI_LUA_NO_STACK);
    lua_pushnil(L);
    lua_insert(L, -2);
    push_error_message(L, -1);
    return 3;
}

/* __tostring: the one-line message (print, tostring, the standalone
   interpreters of 5.2+ and LuaJIT for an uncaught error, ngx.log). */
static int error_tostring(lua_State *L)
{
    push_error_message(L, 1);
    return 1;
}

/* __concat: `"x" .. err` and `err .. "x"` concatenate the message; the
   other operand is a string, a number or an error table, as Lua's own
   concatenation would take it (anything else raises as Lua would). */
static int error_concat(lua_State *L)
{
    int i, is_error;

    luaL_checkstack(L, 4, MAPI_LUA_NO_STACK);
    for (i = 1; i <= 2; i++) {
        if (lua_type(L, i) == LUA_TSTRING || lua_type(L, i) == LUA_TNUMBER) {
            lua_pushvalue(L, i);
            continue;
        }
        is_error = 0;
        if (lua_getmetatable(L, i)) {
            lua_getfield(L, LUA_REGISTRYINDEX, ERROR_MT);
            is_error = lua_rawequal(L, -1, -2);
            lua_pop(L, 2);
        }
        if (!is_error)
            return luaL_error(L, "attempt to concatenate a %s value", luaL_typename(L, i));
        push_error_message(L, i);
    }
    lua_concat(L, 2);
    return 1;
}

void mapi_lua_error_open(lua_State *L)
{
    luaL_checkstack(L, 3, MAPI_LUA_NO_STACK);
    mapi_lua_new_metatable(L, ERROR_MT);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, error_concat);
    lua_setfield(L, -2, "__concat");
    lua_pop(L, 1);
}

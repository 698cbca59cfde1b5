/*
 * lua_metrics.c -- merchantapi.core's side of merchantapi.metrics: a store
 * of metrics cells (src/metrics.c) as a Lua object, the client's own
 * (core.client_metrics: the store its calls record into, in C, where each
 * attempt ends) or one of a recorder fed Lua records (core.metrics_new).
 * Lua reads the cells only when the metrics are read or flushed.
 */
#include <math.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"

#define METRICS_MT "merchantapi.metrics_store"

typedef struct store_box {
    mapi_metrics *m; /* one reference; NULL once collected */
} store_box;

static int l_store_gc(lua_State *L)
{
    store_box *b = (store_box *)luaL_checkudata(L, 1, METRICS_MT);

    mapi_metrics_release(b->m);
    b->m = NULL;
    return 0;
}

static mapi_metrics *check_store(lua_State *L)
{
    store_box *b = (store_box *)luaL_checkudata(L, 1, METRICS_MT);

    if (!b->m)
        luaL_argerror(L, 1, "a collected metrics store");
    return b->m;
}

/* A string field of the table at idx, or NULL (borrowed: the table holds it). */
static const char *field_string(lua_State *L, int idx, const char *name)
{
    const char *s;

    lua_getfield(L, idx, name);
    s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    lua_pop(L, 1);
    return s;
}

/* An integer field of the table at idx, or 0 when it is not a number that
   is an int. */
static int field_int(lua_State *L, int idx, const char *name)
{
    lua_Number v;
    int n = 0;

    lua_getfield(L, idx, name);
    if (lua_type(L, -1) == LUA_TNUMBER) {
        v = lua_tonumber(L, -1);
        if (v >= -2147483647.0 && v <= 2147483647.0 && v == (lua_Number)(int)v)
            n = (int)v;
    }
    lua_pop(L, 1);
    return n;
}

/* store:record(rec) -- counts one attempt record (the table on_response
   gets: merchantapi.transport, "Attempt records") as the core counts an
   attempt that ends: metrics.c decides what adds to what. */
static int l_store_record(lua_State *L)
{
    mapi_metrics *m = check_store(L);
    mapi_attempt_info in;
    double duration;

    luaL_checktype(L, 2, LUA_TTABLE);
    memset(&in, 0, sizeof in);
    in.method = field_string(L, 2, "http.request.method");
    in.server_address = field_string(L, 2, "server.address");
    in.server_port = field_int(L, 2, "server.port");
    in.status = field_int(L, 2, "http.response.status_code");
    in.error_type = field_string(L, 2, "error.type");
    in.endpoint = field_string(L, 2, "merchantapi.endpoint");
    in.outcome = field_string(L, 2, "merchantapi.outcome");
    in.settled_by = field_string(L, 2, "merchantapi.settled_by");
    in.resend_count = field_int(L, 2, "http.request.resend_count");
    lua_getfield(L, 2, "duration");
    duration = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumber(L, -1)
                                              : (double)NAN; /* none: not in the histogram */
    lua_pop(L, 1);
    mapi_metrics_record_duration(m, &in, duration);
    return 0;
}

static void set_string(lua_State *L, const char *name, const char *v)
{
    if (v) {
        lua_pushstring(L, v);
        lua_setfield(L, -2, name);
    }
}

static void set_count(lua_State *L, const char *name, uint64_t v)
{
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, name);
}

/* Pushes a cell: { attributes = { [attribute name] = value }, buckets =
   { n1, ..., n15 }, sum = seconds, retries =, unknown_outcomes =,
   settled_confirms =, pages =, fresh = true when no take had it } (the overflow cell's only attribute is
   otel.metric.overflow = true). */
static void push_cell(lua_State *L, const mapi_metrics_cell *c)
{
    int i;

    lua_createtable(L, 0, 7);
    lua_createtable(L, 0, 6);
    if (c->overflow) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "otel.metric.overflow");
    }
    set_string(L, "http.request.method", c->method);
    set_string(L, "server.address", c->server_address);
    set_string(L, "error.type", c->error_type);
    set_string(L, "merchantapi.endpoint", c->endpoint);
    if (c->server_port)
        set_count(L, "server.port", (uint64_t)c->server_port);
    if (c->status)
        set_count(L, "http.response.status_code", (uint64_t)c->status);
    lua_setfield(L, -2, "attributes");
    lua_createtable(L, MAPI_METRICS_BUCKETS, 0);
    for (i = 0; i < MAPI_METRICS_BUCKETS; i++) {
        lua_pushinteger(L, (lua_Integer)c->buckets[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "buckets");
    lua_pushnumber(L, c->sum);
    lua_setfield(L, -2, "sum");
    set_count(L, "retries", c->retries);
    set_count(L, "unknown_outcomes", c->unknown_outcomes);
    set_count(L, "settled_confirms", c->settled_confirms);
    set_count(L, "pages", c->pages);
    lua_pushboolean(L, c->untaken);
    lua_setfield(L, -2, "fresh");
}

/* store:cells(take) -> array of cells (push_cell), in the order they were
   made.  take true: each cell's counts since the last take (a cell with
   nothing new is left out), and the store's counts set to 0 -- what a flush
   adds to a shared dict. */
static int l_store_cells(lua_State *L)
{
    mapi_metrics *m = check_store(L);
    int take = lua_toboolean(L, 2);
    size_t i, n = mapi_metrics_cells(m);
    lua_Integer k = 0;
    mapi_metrics_cell c;

    luaL_checkstack(L, 6, MAPI_LUA_NO_STACK);
    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        if (take) {
            if (!mapi_metrics_take_cell(m, i, &c))
                continue;
        } else {
            c = *mapi_metrics_cell_at(m, i);
        }
        push_cell(L, &c);
        lua_rawseti(L, -2, ++k);
    }
    return 1;
}

/* Pushes an empty store object (nothing in it yet: b->m NULL), raising
   only before anything is held. */
static store_box *push_store(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"record", l_store_record}, {"cells", l_store_cells}, {NULL, NULL}};
    store_box *b = (store_box *)mapic_newuserdata(L, sizeof *b);

    b->m = NULL;
    lua_getfield(L, LUA_REGISTRYINDEX, METRICS_MT);
    if (lua_isnil(L, -1)) /* the first store: its metatable */
        mapi_lua_class_metatable(L, METRICS_MT, methods, l_store_gc);
    lua_pop(L, 1);
    mapic_setmetatable(L, METRICS_MT);
    return b;
}

int mapi_lua_metrics_new(lua_State *L)
{
    store_box *b;

    luaL_checkstack(L, 6, MAPI_LUA_NO_STACK);
    b = push_store(L);
    b->m = mapi_metrics_new();
    if (!b->m)
        return luaL_error(L, "merchantapi: out of memory");
    return 1;
}

int mapi_lua_client_metrics(lua_State *L)
{
    mapi_client *c;
    store_box *b;

    luaL_checkstack(L, 6, MAPI_LUA_NO_STACK);
    b = push_store(L);
    c = mapi_lua_client_hold(L, 1, NULL);
    if (!c)
        return luaL_argerror(L, 1, "a closed client");
    b->m = mapi_client_metrics(c);
    if (b->m)
        mapi_metrics_retain(b->m);
    mapi_lua_client_release(L, 1);
    if (!b->m)
        return luaL_error(L, "merchantapi: out of memory");
    return 1;
}

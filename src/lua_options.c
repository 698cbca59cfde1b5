/*
 * lua_options.c -- merchantapi.core: the option tables of Lua read into the
 * core's structs.  Names and types are checked in merchantapi.options (a
 * wrong type that comes here anyway raises); values by the core's limits
 * (limits.c), onto which what Lua alone can give (a NUL byte inside a
 * string, an integer beyond the C type, 0 for "the default") is mapped.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"
#include "internal.h"

/* Whether the option name at idx is given (0: nil); raises when it is not
   of the Lua type `type` (named tname in the message). */
static int given(lua_State *L, int idx, const char *name, int type, const char *tname)
{
    if (lua_isnil(L, idx))
        return 0;
    if (lua_type(L, idx) != type)
        luaL_error(L, "bad option '%s' (%s expected, got %s)", name, tname,
                   luaL_typename(L, idx));
    return 1;
}

const char *mapi_lua_opt_string(lua_State *L, int idx, const char *name, size_t *len)
{
    return given(L, idx, name, LUA_TSTRING, "string") ? lua_tolstring(L, idx, len) : NULL;
}

void mapi_lua_opt_seconds(lua_State *L, int idx, const char *name, double *out)
{
    if (!given(L, idx, name, LUA_TNUMBER, "number"))
        return;
    *out = (double)lua_tonumber(L, idx);
    if (*out == 0)
        *out = -1;
}

int mapi_lua_opt_integer(lua_State *L, int idx, const char *name, int64_t *out)
{
    if (lua_isnil(L, idx))
        return 0;
    if (!mapic_tointeger(L, idx, out))
        luaL_error(L, "bad option '%s' (integer expected, got %s)", name,
                   lua_type(L, idx) == LUA_TNUMBER ? "a fraction" : luaL_typename(L, idx));
    return 1;
}

/* An optional boolean option (settle) at idx into *out; raises on another
   type. */
static void opt_settle(lua_State *L, int idx, mapi_settle *out)
{
    if (given(L, idx, "settle", LUA_TBOOLEAN, "boolean"))
        *out = lua_toboolean(L, idx) ? MAPI_SETTLE_ON : MAPI_SETTLE_OFF;
}

int mapi_lua_has_nul(const char *s, size_t len)
{
    return s && strlen(s) != len;
}

/* A string option that a C string carries (no NUL inside): NULL when nil;
   raises on another type; *bad = nul_msg when it holds a NUL byte. */
static const char *opt_text(lua_State *L, int idx, const char *name, const char *nul_msg,
                            const char **bad)
{
    size_t len = 0;
    const char *s = mapi_lua_opt_string(L, idx, name, &len);

    if (mapi_lua_has_nul(s, len))
        *bad = nul_msg;
    return s;
}

static int compare_headers(const void *a, const void *b)
{
    return strcmp(((const mapi_header_field *)a)->name, ((const mapi_header_field *)b)->name);
}

int mapi_lua_read_headers(lua_State *L, int idx, const mapi_header_field **out, size_t *n)
{
    mapi_header_field *h;
    size_t count = 0, i;

    *out = NULL;
    *n = 0;
    if (!given(L, idx, "headers", LUA_TTABLE, "table"))
        return 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "bad option 'headers' (string names and values expected, "
                                 "got %s = %s)",
                              luaL_typename(L, -2), luaL_typename(L, -1));
        count++;
        lua_pop(L, 1);
    }
    h = (mapi_header_field *)mapic_newuserdata(L, (count ? count : 1) * sizeof *h);
    lua_pushnil(L);
    for (i = 0; i < count && lua_next(L, idx); i++) {
        size_t nlen, vlen;
        const char *name = lua_tolstring(L, -2, &nlen);
        const char *value = lua_tolstring(L, -1, &vlen);
        lua_pop(L, 1);
        /* a NUL byte is what a C string cannot carry: for it the core's rule
           is asked here, on the whole Lua string; the rest the core checks
           with the call (mapi_headers_check) */
        if ((mapi_lua_has_nul(name, nlen) || mapi_lua_has_nul(value, vlen)) &&
            mapi_header_check(name, nlen, value, vlen, NULL) < 0) {
            call_box *eb = mapi_lua_push_call_box(L); /* above the key: lua_next is over */
            mapi_header_check(name, nlen, value, vlen, &eb->err);
            lua_replace(L, -2);
            return -1;
        }
        h[i].name = name;
        h[i].value = value;
    }
    if (i == count)
        lua_pop(L, 1); /* the last key (the first nil when count is 0) */
    count = i;
    qsort(h, count, sizeof *h, compare_headers);
    *out = h;
    *n = count;
    return 0;
}

const char *mapi_lua_read_config(lua_State *L, mapi_config *cfg)
{
    static const char *const names[] = {"base_url", "api_key", "timeout", "connect_timeout",
                                        "max_retries", "max_body", "cafile", "capath",
                                        "user_agent", "proxy", "deadline", "settle", NULL};
    size_t key_len = 0, url_len = 0;
    int64_t n;
    int i;
    const char *bad = NULL;

    mapi_config_init(cfg);
    for (i = 0; names[i]; i++)
        lua_getfield(L, 1, names[i]); /* 2 .. 13 */
    cfg->base_url = mapi_lua_opt_string(L, 2, "base_url", &url_len);
    cfg->api_key = mapi_lua_opt_string(L, 3, "api_key", &key_len);
    mapi_lua_opt_seconds(L, 4, "timeout", &cfg->timeout);
    mapi_lua_opt_seconds(L, 5, "connect_timeout", &cfg->connect_timeout);
    if (mapi_lua_opt_integer(L, 6, "max_retries", &n))
        cfg->max_retries = n < 0 || n > INT_MAX ? -1 : (int)n;
    if (mapi_lua_opt_integer(L, 7, "max_body", &n)) {
        /* 0 is the C API's "the default": a given 0 is refused here */
        if (mapi_limit_max_body(n < 1 ? 0 : (unsigned long long)n))
            bad = mapi_limit_max_body(0);
        else
            cfg->max_body = (size_t)n;
    }
    cfg->cafile = opt_text(L, 8, "cafile", "cafile contains a NUL byte", &bad);
    cfg->capath = opt_text(L, 9, "capath", "capath contains a NUL byte", &bad);
    cfg->user_agent = opt_text(L, 10, "user_agent", "user_agent contains a NUL byte", &bad);
    if (!cfg->user_agent)
        cfg->user_agent = LUA_VERSION;
    cfg->proxy = opt_text(L, 11, "proxy", "proxy contains a NUL byte", &bad);
    mapi_lua_opt_seconds(L, 12, "deadline", &cfg->deadline);
    opt_settle(L, 13, &cfg->settle);
    lua_getfield(L, 1, "debug"); /* booleans (merchantapi.lua checks the type) */
    cfg->debug = lua_toboolean(L, -1);
    lua_getfield(L, 1, "trace");
    cfg->trace = lua_toboolean(L, -1);
    lua_pop(L, 2);
    if (mapi_lua_has_nul(cfg->base_url, url_len))
        bad = "base_url contains a NUL byte";
    if (mapi_lua_has_nul(cfg->api_key, key_len))
        bad = "api_key contains a NUL byte"; /* never the key itself */
    return bad;
}

const char *mapi_lua_opt_text(lua_State *L, int idx, const char *name)
{
    size_t len = 0;
    const char *s = mapi_lua_opt_string(L, idx, name, &len);

    return mapi_lua_has_nul(s, len) ? "\n" : s;
}

/* mapi_lua_opt_text of the option name of the table at opts, pushed (it
   anchors the string). */
static const char *option_text(lua_State *L, int opts, const char *name)
{
    lua_getfield(L, opts, name);
    return mapi_lua_opt_text(L, lua_gettop(L), name);
}

void mapi_lua_read_call_options(lua_State *L, int opts, mapi_call_opts *o, int with_settle)
{
    o->deadline = 0;
    o->settle = MAPI_SETTLE_DEFAULT;
    if (lua_isnil(L, opts))
        return;
    lua_getfield(L, opts, "deadline");
    mapi_lua_opt_seconds(L, lua_gettop(L), "deadline", &o->deadline);
    lua_pop(L, 1);
    o->traceparent = option_text(L, opts, "traceparent");
    o->tracestate = option_text(L, opts, "tracestate"); /* both left pushed: an
       __index may have made them, which no table anchors */
    if (with_settle) {
        lua_getfield(L, opts, "settle");
        opt_settle(L, lua_gettop(L), &o->settle);
        lua_pop(L, 1);
    }
}

/* An integer of the page params: 0 when nil; given, -1 (refused by the
   core's rule) when below 1 or beyond a long. */
static long page_number(lua_State *L, int opts, const char *name)
{
    int64_t n;

    lua_getfield(L, opts, name);
    if (!mapi_lua_opt_integer(L, lua_gettop(L), name, &n))
        return 0;
    return n < 1 || n > LONG_MAX ? -1 : (long)n;
}

void mapi_lua_read_page_options(lua_State *L, int opts, mapi_page_params *p, int with_page)
{
    if (lua_isnil(L, opts)) {
        lua_newtable(L);
        lua_replace(L, opts);
    }
    p->order = option_text(L, opts, "order");
    p->order_type = option_text(L, opts, "order_type");
    if (with_page)
        p->page = page_number(L, opts, "page");
    p->per_page = page_number(L, opts, "per_page");
}

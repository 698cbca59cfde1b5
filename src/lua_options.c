/*
 * lua_options.c -- merchantapi.core: the option tables of Lua, checked and
 * read into the core's structs.  The names and Lua types of the options a
 * call hands the core are checked here, once, from the call's row (the
 * endpoint table's lists / moves_money, or client:request's, core.new's),
 * with the Lua message "bad option 'x' to 'method' (... expected, got
 * ...)" or "unknown option 'x' to 'method'", raised at the first caller
 * outside the module's own files; lua/merchantapi/options.lua checks only
 * the options Lua alone reads.  Values are checked by the core's limits
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

/* ---- the names and types of a call's options: one check, from its row ---- */

/* One option: its name and its Lua type ("integer": a number without a
   fraction; "table or string": either); want NULL: an option Lua alone
   reads (merchantapi.new's transport, hooks, metrics), checked there. */
typedef struct opt_type {
    const char *name, *want;
} opt_type;

static const opt_type CALL_OPTS[] = {{"headers", "table"}, {"deadline", "number"},
                                     {"traceparent", "string"}, {"tracestate", "string"},
                                     {NULL, NULL}};
static const opt_type LIST_OPTS[] = {{"order", "string"}, {"order_type", "string"},
                                     {"page", "integer"}, {"per_page", "integer"},
                                     {NULL, NULL}};
static const opt_type CONFIRM_OPTS[] = {{"settle", "boolean"}, {NULL, NULL}};
static const opt_type REQUEST_OPTS[] = {{"query", "table"}, {"body", "table or string"},
                                        {NULL, NULL}};
/* the pages of one list_addresses_pages call: a list's but page, deadline */
static const opt_type PAGES_OPTS[] = {{"order", "string"}, {"order_type", "string"},
                                      {"per_page", "integer"}, {"headers", "table"},
                                      {"traceparent", "string"}, {"tracestate", "string"},
                                      {NULL, NULL}};
static const opt_type NEW_OPTS[] = {
    {"base_url", "string"}, {"api_key", "string"}, {"timeout", "number"},
    {"connect_timeout", "number"}, {"max_retries", "integer"}, {"max_body", "integer"},
    {"cafile", "string"}, {"capath", "string"}, {"proxy", "string"}, {"headers", "table"},
    {"deadline", "number"}, {"settle", "boolean"}, {"debug", "boolean"}, {"trace", "boolean"},
    {"transport", NULL}, {"on_request", NULL}, {"on_response", NULL}, {"metrics", NULL},
    {NULL, NULL}};

/* The option sets by mapi_lua_options (at most two lists each). */
static const opt_type *const SETS[][2] = {
    {CALL_OPTS, NULL},         /* MAPI_LUA_OPTS_CALL */
    {CALL_OPTS, LIST_OPTS},    /* MAPI_LUA_OPTS_LIST */
    {CALL_OPTS, CONFIRM_OPTS}, /* MAPI_LUA_OPTS_CONFIRM */
    {CALL_OPTS, REQUEST_OPTS}, /* MAPI_LUA_OPTS_REQUEST */
    {PAGES_OPTS, NULL},        /* MAPI_LUA_OPTS_PAGES */
    {NEW_OPTS, NULL},          /* MAPI_LUA_OPTS_NEW */
};

mapi_lua_options mapi_lua_endpoint_options(const struct mapi_endpoint *e)
{
    return e->lists ? MAPI_LUA_OPTS_LIST : e->moves_money ? MAPI_LUA_OPTS_CONFIRM
                                                          : MAPI_LUA_OPTS_CALL;
}

/* The chunk source of merchantapi.lua ("@<dir>/merchantapi.lua": the
   source of package.loaded.merchantapi.new) and in *len the length of its
   "@<dir>/merchantapi" part, which starts the source of every file of the
   module; NULL when the module is not loaded (the core used alone). */
static const char *module_source(lua_State *L, size_t *len)
{
    lua_Debug ar;
    const char *src = NULL;
    size_t n;

    lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED"); /* package.loaded, 5.1 to 5.5 */
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_getfield(L, -1, "merchantapi");
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_getfield(L, -1, "new");
            if (lua_type(L, -1) == LUA_TFUNCTION) {
                lua_getinfo(L, ">S", &ar); /* pops it */
                src = ar.source; /* the function's own string: the module holds it */
            } else {
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    n = src ? strlen(src) : 0;
    if (n < 5 || src[0] != '@' || strcmp(src + n - 4, ".lua") != 0)
        return NULL;
    *len = n - 4;
    return src;
}

/* The stack level of the first Lua function outside the module's files
   (the caller of the public function: the message's position), or 1. */
static int blame_level(lua_State *L)
{
    lua_Debug ar;
    size_t plen = 0;
    const char *prefix = module_source(L, &plen);
    int level;

    for (level = 1; lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "S", &ar))
            break;
        if (strcmp(ar.what, "C") == 0 || strcmp(ar.what, "tail") == 0)
            continue;
        if (!prefix || strncmp(ar.source, prefix, plen) != 0 ||
            (ar.source[plen] != '.' && ar.source[plen] != '/'))
            return level;
    }
    return 1;
}

/* Raises the message pushed on the stack, with the position of the
   caller outside the module. */
static int raise_at_caller(lua_State *L)
{
    luaL_where(L, blame_level(L));
    lua_insert(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
}

/* Pushes the value at idx as tostring shows it (a number, a string; else
   its type name, or "true"/"false"). */
static const char *push_shown(lua_State *L, int idx)
{
    int t = lua_type(L, idx);

    if (t == LUA_TNUMBER || t == LUA_TSTRING) {
        lua_pushvalue(L, idx);
        return lua_tostring(L, -1); /* the copy: a number becomes its text */
    }
    lua_pushstring(L, t == LUA_TBOOLEAN ? (lua_toboolean(L, idx) ? "true" : "false")
                                        : luaL_typename(L, idx));
    return lua_tostring(L, -1);
}

/* Whether the value at idx is of the Lua type `want` (one name, or
   alternatives "a or b"). */
static int type_ok(lua_State *L, int idx, const char *want)
{
    const char *alt = want;
    int t = lua_type(L, idx);

    while (alt) {
        const char *end = strstr(alt, " or ");
        size_t n = end ? (size_t)(end - alt) : strlen(alt);
        if (n == 7 && memcmp(alt, "integer", 7) == 0) {
            lua_Number x = lua_tonumber(L, idx);
            if (t == LUA_TNUMBER && x - x == 0 && /* finite, and no fraction */
                (x >= 9007199254740992.0 || x <= -9007199254740992.0 ||
                 (lua_Number)(int64_t)x == x))
                return 1;
        } else if (strlen(lua_typename(L, t)) == n && memcmp(alt, lua_typename(L, t), n) == 0) {
            return 1;
        }
        alt = end ? end + 4 : NULL;
    }
    return 0;
}

void mapi_lua_check_options(lua_State *L, int idx, mapi_lua_options set, const char *fname)
{
    idx = idx < 0 ? lua_gettop(L) + 1 + idx : idx;
    if (lua_isnil(L, idx))
        return;
    luaL_checkstack(L, 6, MAPI_LUA_NO_STACK);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const opt_type *o = NULL;
        int j;
        for (j = 0; j < 2 && SETS[set][j] && !o; j++) {
            const opt_type *r;
            for (r = SETS[set][j]; r->name; r++)
                if (lua_type(L, -2) == LUA_TSTRING && strcmp(r->name, lua_tostring(L, -2)) == 0) {
                    o = r;
                    break;
                }
        }
        if (!o) {
            lua_pushliteral(L, "unknown option '");
            push_shown(L, -3);
            lua_pushfstring(L, "' to '%s'", fname);
            lua_concat(L, 3);
            raise_at_caller(L);
        }
        if (o->want && !type_ok(L, -1, o->want)) {
            /* a number's value helps ("got 1.5"), but for the key's */
            int shown = lua_type(L, -1) == LUA_TNUMBER && strcmp(o->name, "api_key") != 0;
            lua_pushfstring(L, "bad option '%s' to '%s' (%s expected, got ", o->name, fname,
                            o->want);
            if (shown)
                push_shown(L, -2);
            else
                lua_pushstring(L, luaL_typename(L, -2));
            lua_pushliteral(L, ")");
            lua_concat(L, 3);
            raise_at_caller(L);
        }
        if (o->want && strcmp(o->name, "headers") == 0) {
            int h = lua_gettop(L);
            lua_pushnil(L);
            while (lua_next(L, h)) {
                if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING) {
                    lua_pushfstring(L, "bad option 'headers' to '%s' (string names and values "
                                       "expected, got %s = %s)",
                                    fname, luaL_typename(L, -2), luaL_typename(L, -1));
                    raise_at_caller(L);
                }
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
}

int mapi_lua_check_options_fn(lua_State *L)
{
    const char *call = luaL_checkstring(L, 1);
    const mapi_endpoint *e = mapi_endpoint_find(call);
    mapi_lua_options set = e ? mapi_lua_endpoint_options(e)
                           : strcmp(call, "request") == 0 ? MAPI_LUA_OPTS_REQUEST
                           : strcmp(call, "list_addresses_pages") == 0 ? MAPI_LUA_OPTS_PAGES
                                                                        : (mapi_lua_options)-1;

    if (set == (mapi_lua_options)-1)
        return luaL_error(L, "merchantapi: no options of a call '%s'", call);
    if (!lua_isnil(L, 2))
        luaL_checktype(L, 2, LUA_TTABLE);
    mapi_lua_check_options(L, 2, set, luaL_optstring(L, 3, call));
    return 0;
}

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
    lua_getfield(L, 1, "debug"); /* booleans (their type checked with the names) */
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

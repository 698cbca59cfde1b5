/*
 * lua_merchantapi.c -- merchantapi.core, the Lua binding of libmerchantapi:
 * the module entry, and the functions that hand the core's own rules to Lua
 * (clock, sleep, paths, encoding, the endpoint table, defaults).  The
 * binding's files and what they share: lua_binding.h.  lua/merchantapi.lua
 * is the public face.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"

/* core.monotonic() -> seconds (a number) on a clock that never jumps
   (CLOCK_MONOTONIC): only differences between two readings mean anything.
   The core's own clock (its deadlines), so Lua and C waits agree. */
static int l_monotonic(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)mapi_monotonic_seconds());
    return 1;
}

/* core.sleep(seconds) -- blocks the calling thread (nanosleep, resumed after
   signals) for seconds >= 0 (at most a day; NaN and negatives: no wait):
   the core's sleep (mapi_sleep_seconds). */
static int l_sleep(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TNUMBER)
        return mapic_typeerror(L, 1, "number");
    mapi_sleep_seconds((double)lua_tonumber(L, 1), 86400);
    return 0;
}

/* core.path(endpoint, id) -> string | nil, err: the path of the endpoint
   named by a row of core.endpoints ("get_payout", ...) for id
   (percent-encoded), by the core's one table (calls.c); err: the usage
   error of an id the core refuses (mapi_id_check: "payout_id is empty").
   Raises for another endpoint name. */
static int l_path(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    size_t len;
    const char *id = luaL_checklstring(L, 2, &len);
    const mapi_endpoint *e = mapi_endpoint_find(name);
    size_t room = 64 + 3 * len; /* the longest path: every id byte as %XX */
    char *out;
    mapi_buf b;

    if (!e)
        return luaL_error(L, "merchantapi: no endpoint '%s'", name);
    if (mapi_id_check(e->id_name, id, NULL) < 0) {
        call_box *eb = mapi_lua_push_call_box(L);
        mapi_id_check(e->id_name, id, &eb->err);
        mapi_error_tag_not_sent(e->method, &eb->err);
        return mapi_lua_push_err_results(L, &eb->err);
    }
    out = (char *)mapic_newuserdata(L, room); /* Lua's memory first: nothing to leak */
    mapi_buf_init(&b);
    mapi_endpoint_path(&b, e, id, len);
    if (b.oom || b.len >= room) {
        mapi_buf_free(&b);
        return luaL_error(L, MAPI_LUA_NO_MEMORY);
    }
    memcpy(out, b.data, b.len);
    len = b.len;
    mapi_buf_free(&b);
    lua_pushlstring(L, out, len);
    return 1;
}

/* core.escape(s) -> string: s percent-encoded by the core's one rule
   (url.c, mapi_url_encode_to: every byte but A-Z a-z 0-9 - . _ ~ as %XX,
   upper-case hex), for one path segment or query key or value.  Built in
   a luaL_Buffer (Lua's memory: nothing to free when Lua raises). */
static int l_escape(lua_State *L)
{
    size_t len, i, n;
    const char *s = luaL_checklstring(L, 1, &len);
    luaL_Buffer B;

    luaL_buffinit(L, &B);
    for (i = 0; i < len; i += n) { /* each piece's encoding fits the buffer's room */
        n = len - i < LUAL_BUFFERSIZE / 3 ? len - i : LUAL_BUFFERSIZE / 3;
        luaL_addsize(&B, mapi_url_encode_to(luaL_prepbuffer(&B), s + i, n));
    }
    luaL_pushresult(&B);
    return 1;
}

/* Pushes s[0..n) with ASCII letters in lower case. */
static void push_lower(lua_State *L, const char *s, size_t n)
{
    luaL_Buffer B;
    size_t i;

    luaL_buffinit(L, &B);
    for (i = 0; i < n; i++)
        luaL_addchar(&B, (char)mapi_ascii_lower((unsigned char)s[i]));
    luaL_pushresult(&B);
}

/* core.url_parts(url) -> scheme, host, port, path | nil, message: the
   origin of an absolute URL "scheme://[userinfo@]host[:port]..." by the
   core's one rule (url.c, mapi_url_origin_of): scheme and host in lower
   case (an IPv6 host without its brackets), port a number -- the URL's own,
   else 443 for https and 80 for http -- or nil (another scheme without a
   port, or a port that is not 1 .. 65535); path up to a query or fragment,
   without trailing '/'s (a base URL's prefix, "" for none).  nil and a
   message when url has no "scheme://". */
static int l_url_parts(lua_State *L)
{
    size_t len;
    const char *url = luaL_checklstring(L, 1, &len);
    mapi_url_origin o;

    if (mapi_url_origin_of(url, len, &o) < 0) {
        lua_pushnil(L);
        lua_pushliteral(L, "not a URL with scheme://");
        return 2;
    }
    push_lower(L, o.scheme, o.scheme_len);
    push_lower(L, o.host, o.host_len);
    if (o.port > 0)
        lua_pushinteger(L, o.port);
    else
        lua_pushnil(L);
    lua_pushlstring(L, o.path, o.path_len);
    return 4;
}

/* Pushes core.endpoints: the core's endpoint table (calls.c), an array of
   rows {name=, method=, type=, lists=, moves_money= (booleans)} -- what the
   Lua side reads of it -- each row also under its name
   (core.endpoints.get_channel). */
static void push_endpoints(lua_State *L)
{
    size_t i;

    lua_newtable(L);
    for (i = 0; i < MAPI_EP_COUNT; i++) {
        const mapi_endpoint *e = &mapi_endpoints[i];
        lua_createtable(L, 0, 5);
        mapi_lua_set_string(L, "name", e->name);
        mapi_lua_set_string(L, "method", e->method);
        mapi_lua_set_string(L, "type", e->type);
        lua_pushboolean(L, e->lists);
        lua_setfield(L, -2, "lists");
        lua_pushboolean(L, e->moves_money);
        lua_setfield(L, -2, "moves_money");
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, e->name);
        lua_rawseti(L, -2, (int)i + 1);
    }
}

/* Pushes core.defaults: the options' defaults, written once in the core
   (base.h): timeout, connect_timeout (seconds), max_retries, max_body
   (bytes), max_depth (nesting levels); max_header_bytes, the fixed cap of a
   response's header lines (messages.h); pages_max, the most pages of one
   list_addresses_pages call (the pager's batch); integers are integers in
   5.3+. */
static void push_defaults(lua_State *L)
{
    lua_createtable(L, 0, 7);
    mapi_lua_set_number(L, "timeout", MAPI_DEFAULT_TIMEOUT);
    mapi_lua_set_number(L, "connect_timeout", MAPI_DEFAULT_CONNECT_TIMEOUT);
    mapi_lua_set_int(L, "max_retries", MAPI_DEFAULT_MAX_RETRIES);
    mapi_lua_set_int(L, "max_body", (long)MAPI_DEFAULT_MAX_BODY);
    mapi_lua_set_int(L, "max_depth", MAPI_DEFAULT_MAX_DEPTH);
    mapi_lua_set_int(L, "max_header_bytes", MAPI_MAX_HEADER_BYTES);
    mapi_lua_set_int(L, "pages_max", MAPI_PAGES_MAX);
}

/* core.not_sent(method) -> "not_sent" | nil: the outcome of a call of
   method that failed before anything was sent (the core's rule,
   mapi_error_tag_not_sent: a method that may move money). */
static int l_not_sent(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TSTRING && mapi_method_safety(lua_tostring(L, 1)) == 0)
        lua_pushliteral(L, "not_sent");
    else
        lua_pushnil(L);
    return 1;
}

/* t[name] of the table at 1 as a string, integer or number (absent: NULL, 0, dflt). */
static const char *field_string(lua_State *L, const char *name)
{
    lua_getfield(L, 1, name); /* left on the stack: the string stays alive */
    return lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
}

static double field_number(lua_State *L, const char *name, double dflt)
{
    double v;

    lua_getfield(L, 1, name);
    v = lua_type(L, -1) == LUA_TNUMBER ? (double)lua_tonumber(L, -1) : dflt;
    lua_pop(L, 1);
    return v;
}

/* t[name] of the table at 1 as an int (absent or not a number: 0); a number
   that is not an integer an int holds (NaN, inf, 1e300, 1.5) raises an
   argument error naming the field, before any C memory is taken. */
static int field_int(lua_State *L, const char *name)
{
    lua_Number v;
    int i;

    lua_getfield(L, 1, name);
    if (lua_type(L, -1) != LUA_TNUMBER) {
        lua_pop(L, 1);
        return 0;
    }
    v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    /* the range first (NaN fails it): only then is the cast defined */
    if (!(v >= (lua_Number)INT_MIN && v <= (lua_Number)INT_MAX) ||
        (lua_Number)(i = (int)v) != v)
        return luaL_argerror(L, 1, lua_pushfstring(L, "%s: an integer from %d to %d expected, got %f",
                                                   name, INT_MIN, INT_MAX, v));
    return i;
}

/* core.format_attempt(info) -> line: the MERCHANTAPI_DEBUG line
   (mapi_attempt_format) of the info an on_response hook got.  Raises when
   merchantapi.attempt, max_attempts or http.response.status_code is a
   number but not an integer an int holds (field_int); fields absent or of
   another type read as not given. */
static int l_format_attempt(lua_State *L)
{
    mapi_attempt_info in;
    char *line;
    int n;

    luaL_checktype(L, 1, LUA_TTABLE);
    memset(&in, 0, sizeof in);
    in.method = field_string(L, "http.request.method");
    in.url = field_string(L, "url.full");
    in.request_id = field_string(L, "merchantapi.request_id");
    in.code = field_string(L, "code");
    in.title = field_string(L, "title");
    in.error = mapi_lua_error_kind(field_string(L, "error"));
    in.attempt = field_int(L, "merchantapi.attempt");
    in.max_attempts = field_int(L, "max_attempts");
    in.status = field_int(L, "http.response.status_code");
    in.elapsed = field_number(L, "duration", 0);
    in.retry_in = field_number(L, "retry_in", -1);
    n = mapi_attempt_format(&in, NULL, 0);
    if (n < 0)
        return luaL_error(L, MAPI_LUA_NO_MEMORY);
    line = (char *)mapic_newuserdata(L, (size_t)n + 1); /* collected, whatever raises */
    mapi_attempt_format(&in, line, (size_t)n + 1);
    lua_pushlstring(L, line, (size_t)n);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The module                                                               */
/* ------------------------------------------------------------------------ */

/* The one exported symbol of the module (built with -fvisibility=hidden). */
#if defined(__GNUC__)
#define MAPI_LUA_EXPORT __attribute__((visibility("default")))
#else
#define MAPI_LUA_EXPORT
#endif

MAPI_LUA_EXPORT int luaopen_merchantapi_core(lua_State *L);

#if !defined(LUA_VERSION_NUM) || LUA_VERSION_NUM < 501
#error "merchantapi.core needs the headers of Lua 5.1 or later (or LuaJIT)"
#endif

MAPI_LUA_EXPORT int luaopen_merchantapi_core(lua_State *L)
{
    static const luaL_Reg functions[] = {{"new", mapi_lua_new},
                                         {"decode", mapi_lua_decode},
                                         {"monotonic", l_monotonic},
                                         {"sleep", l_sleep},
                                         {"resource_info", mapi_lua_resource_info},
                                         {"path", l_path},
                                         {"escape", l_escape},
                                         {"url_parts", l_url_parts},
                                         {"not_sent", l_not_sent},
                                         {"format_attempt", l_format_attempt},
                                         {"loop_new", mapi_lua_loop_new},
                                         {"framing", mapi_lua_framing},
                                         {"h1_reader", mapi_lua_h1_reader},
                                         {"retry_wait", mapi_lua_retry_wait},
                                         {"check_options", mapi_lua_check_options_fn},
                                         {"hook_raised", mapi_lua_hook_raised},
                                         {"hook_results", mapi_lua_hook_results},
                                         {"metrics_new", mapi_lua_metrics_new},
                                         {"client_metrics", mapi_lua_client_metrics},
                                         {NULL, NULL}};

    /* Before anything else: a module compiled with another Lua's headers
       than the one loading it (a host's own Lua: 5.4 headers, a 5.5 host)
       would misread every value and crash the host.  The host's own check
       raises a readable error instead: "version mismatch: app. needs 504.0,
       Lua core provides 505.0", or "core and library have incompatible
       numeric types" (another lua_Integer/lua_Number than luaconf.h's).
       5.1 and LuaJIT have no such check; a build for them cannot load into
       5.2+ at all (the loader refuses it: "undefined symbol: lua_tonumber"),
       nor a 5.2+ build into them. */
#if LUA_VERSION_NUM >= 502
    luaL_checkversion(L);
#endif
    luaL_checkstack(L, 8, MAPI_LUA_NO_STACK);
    mapi_lua_convert_open(L);
    mapi_lua_client_open(L);
    mapi_lua_loop_open(L);

    lua_createtable(L, 0, 16);
    mapic_setfuncs(L, functions, 0);
    mapi_lua_walk_open(L); /* page_walk, page_is_last */
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_pushliteral(L, MAPI_VERSION);
    lua_setfield(L, -2, "_VERSION");
    lua_getfield(L, LUA_REGISTRYINDEX, ERROR_MT);
    lua_setfield(L, -2, "error_metatable");
    push_endpoints(L);
    lua_setfield(L, -2, "endpoints");
    push_defaults(L);
    lua_setfield(L, -2, "defaults");
    return 1;
}

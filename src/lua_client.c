/*
 * lua_client.c -- merchantapi.core: the client userdata and its methods,
 * each of which reads its arguments (lua_options.c), has the core build,
 * check and run the call (calls.c, client.c, pages.c) and hands what came
 * back to lua_response.c.
 *
 * Closing while calls run: the client's hold, in the binding's base
 * (lua_base.c), with the client's lifetime.  While one of its hooks runs
 * (over libcurl) the client is busy: a call of it fails.
 * A call takes the mapi_client pointer only from its hold, after the last
 * Lua code it may run first (an option's __index, a __gc that an
 * allocation runs): a client closed before is "the client is closed",
 * nothing sent.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"

/* ------------------------------------------------------------------------ */
/* The client                                                               */
/* ------------------------------------------------------------------------ */

/* Pushes nil, err, message for a usage error held in eb (outcome
   "not_sent" for a method that may move money: nothing was sent) and
   clears it.  Returns 3. */
static int push_usage_failure(lua_State *L, call_box *eb, const char *method)
{
    mapi_error_tag_not_sent(method, &eb->err);
    return mapi_lua_push_err_results(L, &eb->err);
}

/* core.new(opts[, user_agent[, hooks]]) -> client | nil, err: opts as
   merchantapi.new's (names and types checked here, once; transport, hooks
   and metrics are Lua's), read by mapi_lua_read_config and
   mapi_lua_read_headers; user_agent, the product token; hooks, the
   observer's table. */
int mapi_lua_new(lua_State *L)
{
    mapi_config cfg;
    const char *bad;
    client_box *cb;
    call_box *eb;

    luaL_checktype(L, 1, LUA_TTABLE);
    mapi_lua_check_options(L, 1, MAPI_LUA_OPTS_NEW, "new");
    /* a copy of opts with what Lua adds: user_agent (the product token),
       hooks (the observer's table); not options a caller gives */
    lua_settop(L, 3);
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, 4);
    }
    lua_pushvalue(L, 2);
    lua_setfield(L, 4, "user_agent");
    lua_pushvalue(L, 3);
    lua_setfield(L, 4, "hooks");
    lua_replace(L, 1);
    lua_settop(L, 1);
    /* the values stay on the stack (2..14) while the client is made; the
       limits are mapi_client_new's (limits.c), as for C */
    bad = mapi_lua_read_config(L, &cfg);
    if (bad)
        return mapi_lua_new_error_results(L, "usage", bad, NULL);
    lua_getfield(L, 1, "headers"); /* 14, and the array above it */
    if (mapi_lua_read_headers(L, 14, &cfg.headers, &cfg.nheaders) < 0)
        return push_usage_failure(L, (call_box *)lua_touserdata(L, -1), NULL);
    cb = (client_box *)mapic_newuserdata(L, sizeof *cb);
    memset(cb, 0, sizeof *cb);
    cb->hooks.ref = LUA_NOREF;
    cb->hooks.busy = &cb->busy;
    mapic_setmetatable(L, CLIENT_MT);
    eb = mapi_lua_push_call_box(L);
    cb->client = mapi_client_new(&cfg, &eb->err);
    if (cb->client == NULL)
        return mapi_lua_push_err_results(L, &eb->err);
    lua_pop(L, 1);
    lua_getfield(L, 1, "hooks");
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushvalue(L, -1);
        cb->hooks.ref = luaL_ref(L, LUA_REGISTRYINDEX);
        mapi_client_set_observer(cb->client, mapi_lua_observer, &cb->hooks);
    }
    lua_pop(L, 1);
    return 1;
}

static client_box *check_client(lua_State *L, int idx)
{
    return mapi_lua_check_client(L, idx);
}

/* client:close() -- frees the handle; safe to call again; also __gc, __close.
   While calls of the client are under way, the handle is freed when the
   last one ends (the client counts as closed for new calls at once). */
static int l_client_close(lua_State *L)
{
    mapi_lua_client_close(L, check_client(L, 1));
    return 0;
}

/* Why the client cannot take a call now, or NULL. */
static const char *unusable(const client_box *cb)
{
    if (cb->client == NULL || cb->close_pending)
        return MAPI_LUA_CLIENT_CLOSED;
    return cb->busy ? "the client was called from one of its own hooks" : NULL;
}

/* Checks self and the id argument into *id: 0, or the number of the
   failure results it pushed. */
static int call_prelude(lua_State *L, const char *method, const char **id)
{
    client_box *cb = check_client(L, 1);
    size_t len;

    if (lua_type(L, 2) != LUA_TSTRING)
        return mapic_typeerror(L, 2, "string");
    *id = lua_tolstring(L, 2, &len);
    if (unusable(cb))
        return mapi_lua_new_error_results(L, "usage", unusable(cb), method);
    if (mapi_lua_has_nul(*id, len))
        return mapi_lua_new_error_results(L, "usage", "the id contains a NUL byte",
                                          method);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* A call, built once and run by a driver                                   */
/* ------------------------------------------------------------------------ */

/* A method's arguments, read from the stack (strings anchored there). */
typedef struct call_args {
    const mapi_endpoint *e;  /* the row of the endpoint table; NULL: client:request */
    const char *id;          /* the endpoints */
    mapi_call_opts opts;
    mapi_page_params p;      /* a list */
    const char *method;      /* client:request: method, path, body; the row's for the others */
    const char *path, *body;
    size_t body_len;
    mapi_request_opts ropts;
} call_args;

static int build_call(mapi_client *c, const call_args *a, mapi_call *k, mapi_error *err)
{
    if (!a->e)
        return mapi_call_request(c, a->method, a->path, a->body, a->body_len, &a->ropts, k,
                                 err);
    return mapi_call_endpoint(c, a->e, a->id, &a->p, &a->opts, k, err); /* calls.c's table */
}

/* Builds the call once (calls.c) and hands it to its driver: prepare 0,
   libcurl now (the results: value, nil, res | nil, err, message); prepare 1,
   an exchange that a Lua transport drives (lua_transport.c: x:result gives
   the same results); or nil, err when the call failed its checks. */
static int finish_call(lua_State *L, const call_args *a, int prepare)
{
    mapi_client *c;
    mapi_call k;
    call_box *cb;
    int failed;

    if (prepare) {
        exchange_box *xb = mapi_lua_push_exchange_box(L); /* anchors the error too */
        c = mapi_lua_client_ref(L, 1, 0, &xb->cref); /* held until the exchange lets go */
        if (!c)
            return mapi_lua_new_error_results(L, "usage", MAPI_LUA_CLIENT_CLOSED,
                                              a->method);
        if (build_call(c, a, &k, &xb->err) == 0) {
            xb->x = mapi_client_prepare(c, &k, &xb->err);
            mapi_call_release(&k);
            if (!xb->x)
                mapi_error_tag_not_sent(a->method, &xb->err); /* out of memory: nothing sent */
        }
        if (xb->x)
            return 1;
        mapi_lua_client_unref(L, &xb->cref); /* no call to hold the client for */
        return mapi_lua_push_err_results(L, &xb->err);
    }
    cb = mapi_lua_push_call_box(L);
    c = mapi_lua_client_hold(L, 1, NULL); /* no Lua code runs until the release */
    if (!c)
        return mapi_lua_new_error_results(L, "usage", MAPI_LUA_CLIENT_CLOSED, a->method);
    failed = build_call(c, a, &k, &cb->err) < 0 ||
             mapi_client_run(c, &k, &cb->doc, &cb->err) != 0;
    mapi_lua_client_release(L, 1);
    if (failed)
        return mapi_lua_push_err_results(L, &cb->err);
    return mapi_lua_push_doc_results(L, &cb->doc, &cb->err, 0);
}

/* client:<endpoint>(id[, opts]) -> value, nil, res | nil, err, message, for
   the row e of the core's endpoint table (calls.c); opts as merchantapi.lua's
   client:<endpoint> takes them. */
static int endpoint_call(lua_State *L, const mapi_endpoint *e, int prepare)
{
    const char *id;
    int nret;
    call_args a;

    lua_settop(L, 3);
    if (!lua_isnil(L, 3) && lua_type(L, 3) != LUA_TTABLE)
        return mapic_typeerror(L, 3, "table or nil");
    mapi_lua_check_options(L, 3, mapi_lua_endpoint_options(e), e->name); /* once, here */
    if ((nret = call_prelude(L, e->method, &id)) != 0)
        return nret;
    memset(&a, 0, sizeof a);
    if (e->lists) /* the values are checked by the builder (calls.c), once */
        mapi_lua_read_page_options(L, 3, &a.p, 1);
    mapi_lua_read_call_options(L, 3, &a.opts, e->moves_money);
    if (!lua_isnil(L, 3)) {
        lua_getfield(L, 3, "headers");
        if (mapi_lua_read_headers(L, lua_gettop(L), &a.opts.headers, &a.opts.nheaders) < 0)
            return push_usage_failure(L, (call_box *)lua_touserdata(L, -1), e->method);
    }
    a.e = e;
    a.method = e->method;
    a.id = id;
    return finish_call(L, &a, prepare);
}

/* The method of one row (its upvalue). */
static int l_endpoint(lua_State *L)
{
    return endpoint_call(L, (const mapi_endpoint *)lua_touserdata(L, lua_upvalueindex(1)), 0);
}

/* Pushes {}, err for a usage error held in eb (lists: none) and clears it.
   Returns 2. */
static int push_pages_usage(lua_State *L, call_box *eb)
{
    mapi_error_tag_not_sent("GET", &eb->err);
    lua_newtable(L);
    mapi_lua_push_error(L, &eb->err);
    mapi_error_clear(&eb->err);
    return 2;
}

/*
 * client:list_addresses_pages(id, {order=, order_type=, per_page=, headers=,
 *                             traceparent=, tracestate=}, first_page, count,
 *                             concurrency) -> lists, err
 * Pages first_page .. first_page + count - 1 (count 1 .. 1000), fetched with
 * up to `concurrency` requests in flight (src/pages.c, over libcurl now).
 * lists: the pages before the first failed one, each in the list_addresses
 * shape, in page order; err: that page's error table, or nil when every page
 * came.  A usage error is lists = {} and err.  The pager calls this.
 * prepare 1 (client:prepare("list_addresses_pages", ...)): the page batch
 * instead, for a Lua driver (lua_pages.c).
 */
static int pages_call(lua_State *L, int prepare)
{
    const char *id;
    int nret, rc;
    mapi_page_params p;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    int64_t first = 0, count = 0, conc = 0;
    call_box *eb;
    struct mapi_page_batch *b;

    lua_settop(L, 6);
    if (!lua_isnil(L, 3) && lua_type(L, 3) != LUA_TTABLE)
        return mapic_typeerror(L, 3, "table or nil");
    if (!mapic_tointeger(L, 4, &first))
        return mapic_typeerror(L, 4, "integer");
    if (!mapic_tointeger(L, 5, &count))
        return mapic_typeerror(L, 5, "integer");
    if (!mapic_tointeger(L, 6, &conc))
        return mapic_typeerror(L, 6, "integer");
    mapi_lua_check_options(L, 3, MAPI_LUA_OPTS_PAGES, "list_addresses_pages");
    if ((nret = call_prelude(L, "GET", &id)) != 0) { /* nil, err, message */
        lua_newtable(L); /* a usage error is {}, err */
        lua_replace(L, -4);
        lua_pop(L, 1);
        return 2;
    }
    memset(&p, 0, sizeof p);
    mapi_lua_read_page_options(L, 3, &p, 0); /* checked by the builder (calls.c) */
    mapi_lua_read_call_options(L, 3, &opts, 0); /* traceparent, tracestate of every page */
    lua_getfield(L, 3, "headers");
    if (mapi_lua_read_headers(L, lua_gettop(L), &opts.headers, &opts.nheaders) < 0)
        return push_pages_usage(L, (call_box *)lua_touserdata(L, -1));
    eb = mapi_lua_push_call_box(L);
    if (mapi_pages_check(count > LONG_MAX ? LONG_MAX : (long)count,
                         conc > LONG_MAX ? LONG_MAX : (long)conc, &eb->err) < 0)
        return push_pages_usage(L, eb);
    /* first_page (0: refused), the page options and the concurrency's cap: the core's */
    first = first < 1 ? 0 : first > LONG_MAX ? LONG_MAX : first;
    b = mapi_lua_push_page_batch(L, 1, id, &p, (long)first, (size_t)count, (size_t)conc,
                                 &opts, &eb->err); /* it holds the client */
    if (!b)
        return push_pages_usage(L, eb);
    if (prepare)
        return 1;
    rc = mapi_page_batch_run(b, &eb->err);
    if (rc < 0)
        return push_pages_usage(L, eb);
    return mapi_lua_page_batch_result(L, lua_gettop(L));
}

static int l_list_addresses_pages(lua_State *L)
{
    return pages_call(L, 0);
}

/* ------------------------------------------------------------------------ */
/* The generic call                                                         */
/* ------------------------------------------------------------------------ */

/*
 * client:request{method=, path=[, body=, type=, id=, max_retries=, deadline=, headers=,
 *                traceparent=, tracestate=]} -> value, nil, res | nil, err, message
 * The arguments of mapi_request_ex (merchantapi.h), read as every option is
 * (lua_options.c); lua/merchantapi.lua builds the path and the body.
 */
static int request_call(lua_State *L, int prepare)
{
    static const char *const fields[] = {"method", "path", "body", "type", "id", "max_retries",
                                         "deadline", "headers", "traceparent", "tracestate",
                                         NULL};
    client_box *cb = check_client(L, 1);
    mapi_request_opts opts = MAPI_REQUEST_OPTS_INIT;
    const char *s[5]; /* method, path, body, type, id at 3 .. 7 */
    size_t len[5];
    int64_t n;
    int i;
    call_args a;

    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    for (i = 0; fields[i]; i++)
        lua_getfield(L, 2, fields[i]); /* 3 .. 10 */
    for (i = 0; i < 5; i++) {
        len[i] = 0;
        s[i] = mapi_lua_opt_string(L, 3 + i, fields[i], &len[i]);
    }
    if (!s[0] || !s[1])
        return luaL_error(L, "bad argument to 'request' (method and path expected)");
    if (mapi_lua_opt_integer(L, 8, "max_retries", &n))
        opts.max_retries = n < -1 || n > INT_MAX ? -2 : (int)n; /* -2: refused by the core */
    mapi_lua_opt_seconds(L, 9, "deadline", &opts.deadline); /* the core's builder refuses */
    opts.traceparent = mapi_lua_opt_text(L, 11, "traceparent");
    opts.tracestate = mapi_lua_opt_text(L, 12, "tracestate");
    if (unusable(cb))
        return mapi_lua_new_error_results(L, "usage", unusable(cb), s[0]);
    for (i = 0; i < 5; i++)
        if (i != 2 && mapi_lua_has_nul(s[i], len[i]))
            return mapi_lua_new_error_results(
                L, "usage", "method, path, type or id contains a NUL byte", s[0]);
    opts.type = s[3];
    opts.id = s[4];
    if (mapi_lua_read_headers(L, 10, &opts.headers, &opts.nheaders) < 0)
        return push_usage_failure(L, (call_box *)lua_touserdata(L, -1), s[0]);
    memset(&a, 0, sizeof a);
    a.method = s[0];
    a.path = s[1];
    a.body = s[2];
    a.body_len = len[2];
    a.ropts = opts;
    return finish_call(L, &a, prepare);
}

static int l_request(lua_State *L)
{
    return request_call(L, 0);
}

/* ------------------------------------------------------------------------ */
/* Custom transports: the call built once, handed over as an exchange       */
/* ------------------------------------------------------------------------ */

/*
 * client:prepare(name, ...) -> exchange | nil, err
 * Builds the call of client:name(...), with the same checks, once, as an
 * exchange that a Lua transport or a loop drives (lua_transport.c), or for
 * "list_addresses_pages" the page batch (lua_pages.c); nil, err when the
 * call failed its checks.  Raises for a name that is not a method carried
 * by custom transports.
 */
static int l_prepare(lua_State *L)
{
    const char *name = luaL_checkstring(L, 2);
    const mapi_endpoint *e = mapi_endpoint_find(name);
    int request = strcmp(name, "request") == 0;

    check_client(L, 1);
    if (strcmp(name, "list_addresses_pages") == 0) {
        lua_remove(L, 2);
        return pages_call(L, 1); /* the page batch (lua_pages.c) */
    }
    if (!e && !request)
        return luaL_error(L, "merchantapi: client method '%s' does not go through a custom "
                             "transport", name);
    lua_remove(L, 2); /* the method's own arguments from 2 on */
    return e ? endpoint_call(L, e, 1) : request_call(L, 1);
}

/* client:_calls_built() -> integer: the calls the core built for this
   client so far (a test hook: a call is built once, whatever drives it);
   nil once closed. */
static int l_calls_built(lua_State *L)
{
    client_box *cb = check_client(L, 1);

    if (!cb->client)
        return 0;
    lua_pushnumber(L, (lua_Number)mapi_client_calls_built(cb->client));
    return 1;
}

/* client:base_url() -> string: the base URL as the core checked and keeps
   it (src/url.c: no trailing '/'); nil once closed. */
static int l_base_url(lua_State *L)
{
    client_box *cb = check_client(L, 1);

    if (!cb->client)
        return 0;
    lua_pushstring(L, mapi_client_base_url(cb->client));
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

void mapi_lua_client_open(lua_State *L)
{
    static const luaL_Reg client_methods[] = {
        {"list_addresses_pages", l_list_addresses_pages},
        {"request", l_request},
        {"prepare", l_prepare},
        {"_calls_built", l_calls_built},
        {"base_url", l_base_url},
        {"close", l_client_close},
        {NULL, NULL}};
    size_t i;

    luaL_checkstack(L, 4, MAPI_LUA_NO_STACK);

    mapi_lua_pages_open(L); /* the page batch's metatable */
    mapi_lua_transport_open(L); /* the exchange's metatable */

    mapi_lua_new_metatable(L, CLIENT_MT);
    lua_createtable(L, 0, 12);
    mapic_setfuncs(L, client_methods, 0);
    for (i = 0; i < MAPI_EP_COUNT; i++) { /* a method per row */
        lua_pushlightuserdata(L, (void *)(uintptr_t)&mapi_endpoints[i]);
        lua_pushcclosure(L, l_endpoint, 1);
        lua_setfield(L, -2, mapi_endpoints[i].name);
    }
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_client_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, l_client_close);
    lua_setfield(L, -2, "__close");
    lua_pushliteral(L, CLIENT_MT);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

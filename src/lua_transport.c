/*
 * lua_transport.c -- merchantapi.core's side of custom transports and of
 * attempt hooks (lua/merchantapi/dispatch.lua is the Lua side).
 *
 * Custom transports (merchantapi.new{transport = fn}).  An OpenResty
 * cosocket yields, and nothing can yield across a C call, so the attempts
 * of such a call run in a Lua loop -- but every decision stays the core's
 * (src/exchange.c).  The call is built once as an exchange (client:prepare,
 * lua_client.c); x:request begins an attempt, x:response or x:failure ends
 * it, and once the call is done x:result gives the method's own results.
 * Another driver (an event loop, lua_loop.c) runs an exchange the same way.
 *
 * Hooks over libcurl.  A client made with hooks, and a call on a loop with
 * hooks, have a core observer that calls state.on_request / on_response
 * for each attempt, in the middle of the C call, under a protected call
 * (mapic_cpcall): an error in a hook is recorded (the first one, as
 * state.hook_raised and state.hook_error), never unwound through libcurl or
 * the core, and the call goes on.  A hook cannot yield.  The hook rule is
 * kept here alone: the hooks of a Lua transport's loop (which may yield,
 * so Lua calls them) record their errors through core.hook_raised, and
 * every driver's results get hook_error from core.hook_results.
 *
 * Memory: the exchange, the response being built from a Lua table and the
 * call's result all live in the exchange userdata (freed by __gc) before any
 * Lua function that may raise is called.
 */
#include <stdlib.h>
#include <string.h>

#include "h1_reader.h"
#include "lua_binding.h"

/* ------------------------------------------------------------------------ */
/* Attempt facts                                                            */
/* ------------------------------------------------------------------------ */

/* Pushes the Lua record of an attempt, the one conversion of a
   mapi_attempt_info (response 0: the request part only); its fields:
   dispatch.lua's "Attempt records" and the hooks' info. */
static void push_record(lua_State *L, const mapi_attempt_info *in, int response)
{
    lua_createtable(L, 0, 28);
    mapi_lua_set_string(L, "method", in->method);
    mapi_lua_set_string(L, "http.request.method", in->method);
    mapi_lua_set_string(L, "url", in->url);
    mapi_lua_set_string(L, "url.full", in->url);
    mapi_lua_set_string(L, "server.address", in->server_address);
    mapi_lua_set_int(L, "server.port", in->server_port);
    mapi_lua_set_int(L, "attempt", in->attempt);
    mapi_lua_set_int(L, "merchantapi.attempt", in->attempt);
    mapi_lua_set_int(L, "max_attempts", in->max_attempts);
    if (in->resend_count > 0)
        mapi_lua_set_int(L, "http.request.resend_count", in->resend_count);
    mapi_lua_set_string(L, "merchantapi.endpoint", in->endpoint);
    mapi_lua_set_number(L, "start_time", in->start_time);
    mapi_lua_set_string(L, "trace_id", in->trace_id);
    mapi_lua_set_string(L, "span_id", in->span_id);
    mapi_lua_set_string(L, "parent_span_id", in->parent_span_id);
    if (!response)
        return;
    if (in->status > 0) {
        mapi_lua_set_int(L, "status", in->status);
        mapi_lua_set_int(L, "http.response.status_code", in->status);
    }
    mapi_lua_set_number(L, "elapsed", in->elapsed);
    mapi_lua_set_number(L, "duration", in->elapsed);
    mapi_lua_set_string(L, "request_id", in->request_id);
    mapi_lua_set_string(L, "merchantapi.request_id", in->request_id);
    if (in->error != MAPI_ERR_NONE)
        mapi_lua_set_string(L, "error", mapi_error_kind_name(in->error));
    mapi_lua_set_string(L, "error.type", in->error_type);
    mapi_lua_set_string(L, "code", in->code);
    mapi_lua_set_string(L, "title", in->title);
    mapi_lua_set_string(L, "merchantapi.outcome", in->outcome);
    mapi_lua_set_string(L, "merchantapi.settled_by", in->settled_by);
    if (in->retry_in >= 0)
        mapi_lua_set_number(L, "retry_in", in->retry_in);
}

/* ------------------------------------------------------------------------ */
/* Hooks over libcurl: the observer of a client, or of a call on a loop    */
/* ------------------------------------------------------------------------ */

typedef struct hook_call {
    mapi_lua_hooks *ctx;
    mapi_attempt_event event;
    const mapi_attempt_info *info;
} hook_call;

/* The hook rule, its one home: the first error a hook of a call raised is
   the one reported; the error on top (any value, nil and false included)
   goes into the hook state at index state (hook_raised, hook_error) unless
   one came before, and is popped.  Every driver records here: the observer
   below (libcurl, a loop) and core.hook_raised (a Lua transport's loop). */
static void record_hook_error(lua_State *L, int state)
{
    lua_getfield(L, state, "hook_raised");
    if (lua_toboolean(L, -1)) {
        lua_pop(L, 2); /* a hook raised before: that one stays */
        return;
    }
    lua_pop(L, 1);
    lua_setfield(L, state, "hook_error");
    lua_pushboolean(L, 1);
    lua_setfield(L, state, "hook_raised");
}

/* core.hook_raised(state, err): records err, the error a hook raised (the
   value pcall gave), in the call's hook state, by the rule above. */
int mapi_lua_hook_raised(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    record_hook_error(L, 1);
    return 0;
}

/* core.hook_results(state, v, err, res) -> v, err, res: a call's results
   (three), with the hook error recorded in state (nil: no
   hooks) set as hook_error on the response object res when v is not nil,
   else on the error table err: the value raised, or for nil and false,
   which would read as "no error", a string naming it. */
int mapi_lua_hook_results(lua_State *L)
{
    int target = 0;

    lua_settop(L, 4);
    luaL_checkstack(L, 2, MAPI_LUA_NO_STACK);
    if (lua_type(L, 1) == LUA_TTABLE) {
        lua_getfield(L, 1, "hook_raised");
        if (lua_toboolean(L, -1)) {
            if (!lua_isnil(L, 2) && lua_type(L, 4) == LUA_TTABLE)
                target = 4; /* success: the response object */
            else if (lua_type(L, 3) == LUA_TTABLE)
                target = 3; /* failure: the error */
        }
        lua_pop(L, 1);
    }
    if (target) {
        lua_getfield(L, 1, "hook_error");
        if (lua_isnil(L, -1) || (lua_isboolean(L, -1) && !lua_toboolean(L, -1))) {
            int raised_false = !lua_isnil(L, -1);
            lua_pop(L, 1);
            lua_pushstring(L, raised_false ? "merchantapi: a hook raised false" :
                                             "merchantapi: a hook raised nil");
        }
        lua_setfield(L, target, "hook_error");
    }
    return 3;
}

/* Runs protected (mapic_cpcall): calls the hook, records its error. */
static int hook_trampoline(lua_State *L)
{
    hook_call *hc = (hook_call *)lua_touserdata(L, 1);
    int response = hc->event == MAPI_ATTEMPT_RESPONSE;
    int state;

    lua_rawgeti(L, LUA_REGISTRYINDEX, hc->ctx->ref);
    state = lua_gettop(L);
    lua_getfield(L, state, response ? "on_response" : "on_request");
    if (lua_isnil(L, -1))
        return 0;
    push_record(L, hc->info, response);
    if (lua_pcall(L, 1, 0, 0) != 0)
        record_hook_error(L, state);
    return 0;
}

void mapi_lua_observer(void *p, mapi_attempt_event event, const mapi_attempt_info *info)
{
    mapi_lua_hooks *ctx = (mapi_lua_hooks *)p;
    lua_State *L = ctx->L;
    int top = lua_gettop(L);
    hook_call hc;

    hc.ctx = ctx;
    hc.event = event;
    hc.info = info;
    *ctx->busy = 1; /* a call of the client from the hook fails */
    /* an error here (out of memory building the info) is dropped like a hook's */
    (void)mapic_cpcall(L, hook_trampoline, &hc);
    *ctx->busy = 0;
    lua_settop(L, top);
}

/* ------------------------------------------------------------------------ */
/* Exchanges                                                                */
/* ------------------------------------------------------------------------ */

static exchange_box *check_xbox(lua_State *L, int state)
{
    exchange_box *xb = (exchange_box *)luaL_checkudata(L, 1, EXCHANGE_MT);

    if (!xb->x)
        luaL_error(L, "merchantapi: an empty exchange");
    if (state >= 0 && xb->state != state)
        luaL_error(L, "merchantapi: exchange used out of order (%s)",
                   state == X_SENDING ? "no attempt begun" :
                   state == X_DONE ? "the call is not done" : "an attempt is under way");
    return xb;
}

/* x:request([skip]) -> request[, info]: begins an attempt.  request: method,
   url, headers (a table of name -> value), body (string or nil), timeout
   and connect_timeout (seconds), max_body (bytes), fresh_connection
   (boolean: the confirm), attempt; info: the facts for on_request, not
   built when skip is true (no hook). */
static int l_request(lua_State *L)
{
    exchange_box *xb = check_xbox(L, X_IDLE);
    int skip_info = lua_toboolean(L, 2); /* no hook to see it: not built */
    const mapi_attempt_info *info;
    const mapi_call *k;
    const char *name, *value;
    double timeout, connect_timeout;
    size_t max_body, i;
    int anchors, t;

    info = mapi_exchange_begin_attempt(xb->x);
    xb->state = X_SENDING;
    k = mapi_exchange_attempt_call(xb->x); /* the call, or the read settling a confirm */
    mapi_exchange_limits(xb->x, &timeout, &connect_timeout, &max_body);

    anchors = mapi_lua_push_anchors(L); /* the keys: lua_binding.h */
    lua_createtable(L, 0, 10);
    t = lua_gettop(L);
    if (k->method) {
        lua_pushstring(L, k->method);
        mapi_lua_set_lit(L, anchors, t, MAPI_LIT_METHOD);
    }
    if (k->url) {
        lua_pushstring(L, k->url);
        mapi_lua_set_lit(L, anchors, t, MAPI_LIT_URL);
    }
    /* sized for all of them: a traced call's fifth would grow (rehash) it */
    lua_createtable(L, 0, (int)mapi_exchange_header_count(xb->x));
    for (i = 0; mapi_exchange_header_at(xb->x, i, &name, &value); i++) {
        lua_pushstring(L, value);
        lua_setfield(L, -2, name);
    }
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_HEADERS);
    if (k->body) {
        lua_pushlstring(L, k->body, k->body_len);
        mapi_lua_set_lit(L, anchors, t, MAPI_LIT_BODY);
    }
    lua_pushnumber(L, (lua_Number)timeout);
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_TIMEOUT);
    lua_pushnumber(L, (lua_Number)connect_timeout);
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_CONNECT_TIMEOUT);
    lua_pushnumber(L, (lua_Number)max_body);
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_MAX_BODY);
    lua_pushboolean(L, k->moves_money);
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_FRESH_CONNECTION);
    mapic_pushint64(L, (int64_t)info->attempt);
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_ATTEMPT);
    lua_replace(L, anchors); /* the request where the anchors were */
    if (skip_info)
        return 1;
    push_record(L, info, 0);
    return 2;
}

/* Ends the attempt with res (taken) or with xb->err; pushes the results of
   x:response / x:failure: action, info[, wait].  action is "retry" (wait
   seconds first; 0 when a confirm whose outcome is unknown goes on with the
   read of its payout) or "done"; info the facts for on_response, false when
   skip_info (no hook). */
static int end_attempt(lua_State *L, exchange_box *xb, mapi_response *res, int skip_info)
{
    double wait = -1;
    mapi_step step = mapi_exchange_end_attempt(xb->x, res ? MAPI_ENDED_ANSWER : MAPI_ENDED_FAILED,
                                               res, &xb->err, &xb->doc, &wait);
    int again = step == MAPI_STEP_RETRY || step == MAPI_STEP_SETTLE;

    xb->state = again ? X_IDLE : X_DONE;
    lua_rawgeti(L, mapi_lua_push_anchors(L), again ? MAPI_LIT_RETRY : MAPI_LIT_DONE);
    lua_replace(L, -2); /* the action where the anchors were */
    if (skip_info)
        lua_pushboolean(L, 0);
    else
        push_record(L, mapi_exchange_info(xb->x), 1);
    if (!again)
        return 2;
    lua_pushnumber(L, (lua_Number)(step == MAPI_STEP_SETTLE ? 0 : wait));
    mapi_error_clear(&xb->err); /* the info above borrowed from it */
    return 3;
}

/* What takes one header field: the response being built, or the framing. */
typedef int (*field_fn)(void *to, const char *name, size_t nlen, const char *v, size_t vlen);

static int to_response(void *to, const char *name, size_t nlen, const char *v, size_t vlen)
{
    return mapi_response_add_header((mapi_response *)to, name, nlen, v, vlen);
}

static int to_framing(void *to, const char *name, size_t nlen, const char *v, size_t vlen)
{
    return mapi_framing_field((mapi_framing *)to, name, nlen, v, vlen);
}

/* Hands the header `name` with the value at idx -- a string or a number, or
   each one of an array of them (a repeated header); anything else ignored
   -- to fn, until it returns non-zero (returned). */
static int each_value(lua_State *L, int idx, const char *name, size_t nlen, field_fn fn,
                      void *to)
{
    int i, rc = 0, many = lua_type(L, idx) == LUA_TTABLE;
    size_t vlen;
    const char *v;

    for (i = 1; rc == 0 && (many || i == 1); i++) {
        if (many)
            lua_rawgeti(L, idx, i);
        else
            lua_pushvalue(L, idx); /* a copy: tolstring converts a number in place */
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
            v = lua_tolstring(L, -1, &vlen);
            rc = fn(to, name, nlen, v, vlen);
        }
        lua_pop(L, 1);
    }
    return rc;
}

/*
 * x:response(res[, skip]) -> action, info[, wait] (end_attempt)
 * res: a core.h1_reader that read the answer (its answer, or its error as
 * libcurl's path gives it: lua_h1_reader.c), or { status = integer, headers = { name = value | { values... } } | nil,
 *        body = string | nil, head_bytes = integer | nil }.  Raises when
 * status is not an integer from 100 to 999, body is not a string or
 * head_bytes not an integer >= 0 (a mistake of the transport).
 */
static int l_response(lua_State *L)
{
    exchange_box *xb = check_xbox(L, X_SENDING);
    int64_t status, head_bytes = 0;
    const char *body = NULL;
    size_t len = 0;
    mapi_response *res;
    int skip_info = lua_toboolean(L, 3);
    mapi_h1_reader *reader = mapi_lua_to_h1_reader(L, 2);

    if (reader) { /* the core's reader (the cosocket transport): its answer or its error */
        res = NULL;
        mapi_error_clear(&xb->err);
        if (mapi_h1_result(reader, &res, &xb->err) < 0)
            res = NULL;
        return end_attempt(L, xb, res, skip_info);
    }
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_getfield(L, 2, "status");  /* 3 */
    lua_getfield(L, 2, "headers"); /* 4 */
    lua_getfield(L, 2, "body");    /* 5 */
    lua_getfield(L, 2, "head_bytes"); /* 6 */
    check_xbox(L, X_SENDING); /* again: an __index above may have ended the attempt */
    if (!lua_isnil(L, 6) && (!mapic_tointeger(L, 6, &head_bytes) || head_bytes < 0))
        return luaL_error(L, "merchantapi: the transport's head_bytes must be an integer >= 0");
    if (!mapic_tointeger(L, 3, &status) || status < 100 || status > 999)
        return luaL_error(L, "merchantapi: the transport's response needs an integer status");
    if (!lua_isnil(L, 4) && lua_type(L, 4) != LUA_TTABLE)
        return luaL_error(L, "merchantapi: the transport's response headers must be a table");
    if (!lua_isnil(L, 5)) {
        if (lua_type(L, 5) != LUA_TSTRING)
            return luaL_error(L, "merchantapi: the transport's response body must be a string");
        body = lua_tolstring(L, 5, &len);
    }
    mapi_error_clear(&xb->err);
    mapi_response_free(xb->pending);
    xb->pending = mapi_response_new();
    if (!xb->pending)
        goto oom;
    xb->pending->status = (int)status;
    xb->pending->head_bytes = (uint64_t)head_bytes > SIZE_MAX ? SIZE_MAX : (size_t)head_bytes;
    if (lua_type(L, 4) == LUA_TTABLE) {
        lua_pushnil(L);
        while (lua_next(L, 4)) { /* name at -2, value at -1 */
            int rc = 0;
            size_t nlen;
            if (lua_type(L, -2) == LUA_TSTRING) {
                const char *name = lua_tolstring(L, -2, &nlen);
                rc = each_value(L, lua_gettop(L), name, nlen, to_response, xb->pending);
            }
            lua_pop(L, 1);
            if (rc < 0)
                goto oom;
        }
    }
    /* with the JSON reader's padding: the document is read in place */
    xb->pending->body = (char *)malloc(len + MAPI_JSON_PADDING);
    if (!xb->pending->body)
        goto oom;
    if (len)
        memcpy(xb->pending->body, body, len);
    xb->pending->body[len] = '\0';
    xb->pending->len = len;
    xb->pending->cap = len + MAPI_JSON_PADDING;
    res = xb->pending;
    xb->pending = NULL;
    return end_attempt(L, xb, res, skip_info);
oom:
    mapi_error_oom(&xb->err);
    return end_attempt(L, xb, NULL, skip_info);
}

/*
 * x:failure(err[, skip]) -> action, info[, wait] (end_attempt)
 * err: the transport's error: a string, or { message = string, sent = boolean }.
 * sent == false says the request provably never reached the server
 * (outcome "not_sent": a confirm may be retried); anything else is
 * "unknown".  Either way a transport error, retryable.
 */
static int l_failure(lua_State *L)
{
    exchange_box *xb = check_xbox(L, X_SENDING);
    const char *msg = NULL;
    int not_sent = 0;
    int skip_info = lua_toboolean(L, 3);

    lua_settop(L, 2);
    if (lua_type(L, 2) == LUA_TSTRING) {
        msg = lua_tostring(L, 2);
    } else if (lua_type(L, 2) == LUA_TTABLE) {
        lua_getfield(L, 2, "message"); /* 3 */
        lua_getfield(L, 2, "sent");    /* 4 */
        check_xbox(L, X_SENDING); /* again, after any __index */
        if (lua_type(L, 3) == LUA_TSTRING)
            msg = lua_tostring(L, 3);
        not_sent = lua_type(L, 4) == LUA_TBOOLEAN && !lua_toboolean(L, 4);
    }
    mapi_error_clear(&xb->err);
    mapi_error_set(&xb->err, MAPI_ERR_TRANSPORT, "%s", msg && *msg ? msg : "the transport failed");
    if (xb->err.kind == MAPI_ERR_TRANSPORT) {
        xb->err.retryable = 1;
        xb->err.outcome = not_sent ? MAPI_OUTCOME_NOT_SENT : MAPI_OUTCOME_UNKNOWN;
        if (mapi_error_message(&xb->err) < 0)
            mapi_error_oom(&xb->err);
    }
    return end_attempt(L, xb, NULL, skip_info);
}

/* A transport calls it before it reads a body; on nil it reads none and
   hands the head to the exchange, which refuses it with that title. */
int mapi_lua_framing(lua_State *L)
{
    mapi_framing f;

    lua_settop(L, 2);
    mapi_framing_init(&f);
    each_value(L, 1, "content-length", 14, to_framing, &f);
    each_value(L, 2, "transfer-encoding", 17, to_framing, &f);
    if (mapi_framing_title(&f)) {
        lua_pushnil(L);
        lua_pushstring(L, mapi_framing_title(&f));
        return 2;
    }
    if (f.chunked) {
        lua_pushliteral(L, "chunked");
        return 1;
    }
    if (f.has_length) {
        lua_pushliteral(L, "length");
        if (f.length <= (unsigned long long)INT64_MAX)
            mapic_pushint64(L, (int64_t)f.length);
        else
            lua_pushnumber(L, (lua_Number)f.length); /* beyond any body read */
        return 2;
    }
    lua_pushliteral(L, "close");
    return 1;
}

int mapi_lua_retry_wait(lua_State *L)
{
    lua_Integer retry = luaL_checkinteger(L, 2);

    lua_pushnumber(L, (lua_Number)mapi_retry_wait(luaL_optnumber(L, 1, -1),
                                                  retry > 1000 ? 1000 : (int)retry,
                                                  luaL_checknumber(L, 3),
                                                  luaL_checknumber(L, 4), NULL, NULL));
    return 1;
}

/* x:result() -> the call's results, as the method run over libcurl gives
   them (value, nil, res | nil, err, message); once, after the attempts are
   done.  Takes the exchange's document or error, which x anchors. */
static int l_result(lua_State *L)
{
    exchange_box *xb = check_xbox(L, X_DONE);

    xb->state = X_TAKEN;
    mapi_lua_client_unref(L, &xb->cref);
    if (xb->doc)
        return mapi_lua_push_doc_results(L, &xb->doc, &xb->err, 0);
    return mapi_lua_push_err_results(L, &xb->err);
}

void mapi_lua_transport_open(lua_State *L)
{
    static const luaL_Reg exchange_methods[] = {
        {"request", l_request}, {"response", l_response}, {"failure", l_failure},
        {"result", l_result},   {NULL, NULL}};

    mapi_lua_class_metatable(L, EXCHANGE_MT, exchange_methods, mapi_lua_exchange_box_gc);
    mapi_lua_h1_reader_open(L);
}

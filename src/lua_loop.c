/*
 * lua_loop.c -- merchantapi.core's side of the event loop
 * (lua/merchantapi/loop.lua is the Lua side: tasks and their coroutines):
 * core.loop_new() and the methods that run exchanges (calls built by
 * client:prepare, lua_client.c) on the C loop (src/loop.c), where every
 * attempt, wait and decision happens as for a C caller of mapi_loop; the
 * tasks' timers (their sleeps) and a step's budget, which the Lua side
 * checks before each resume, are the C loop's too.
 *
 * Memory: while a call runs, the loop holds registry references to its
 * exchange and its hooks, so neither is collected; the exchange holds its
 * client (lua_base.c's close rule) until it lets go.
 * lua_close finalizes every userdata whatever refers to it, a call's
 * exchange (made after its loop) before the loop: its __gc then leaves
 * the exchange to the loop (exchange_box.on_loop), which frees it when it
 * lets go of the call.
 * The C callback only records the end (no Lua call inside the C loop);
 * step hands the ends over once mapi_loop_step has returned.
 */
#include <stdlib.h>
#include <string.h>

#include "lua_binding.h"

#define LOOP_MT "merchantapi.loop"

typedef struct lua_op lua_op;
typedef struct loop_box loop_box;

struct lua_op {
    lua_op *next;      /* in the box's list of ended calls */
    loop_box *box;
    exchange_box *xb;  /* anchored by xref */
    int xref;          /* registry ref: the exchange (taken before the op exists) */
    mapi_lua_hooks hooks; /* hooks.ref: LUA_NOREF without hooks */
};

struct loop_box {
    mapi_loop *loop;   /* NULL once closed */
    lua_State *L;      /* the thread stepping the loop (for hooks) */
    lua_op *ended;     /* calls ended, not yet handed over */
    mapi_budget budget; /* the step's, from loop:budget() to loop:budget_end() */
    int budgeted;      /* 1 between them */
    int stepping;      /* 1 inside mapi_loop_step_in (a hook may run) */
    int close_due;     /* 1: closed from a hook; freed once the step returns */
};

/* The C loop's report: the exchange gets the call's result. */
static void op_done(void *ctx, mapi_doc *doc, mapi_error *err)
{
    lua_op *o = ctx;
    exchange_box *xb = o->xb;
    mapi_error init = MAPI_ERROR_INIT;

    if (!xb) { /* a timer: over */
        mapi_error_clear(err);
        o->next = o->box->ended;
        o->box->ended = o;
        return;
    }
    mapi_doc_free(xb->doc);
    mapi_error_clear(&xb->err);
    xb->doc = doc;
    xb->err = *err;
    *err = init;
    xb->state = X_DONE;
    o->next = o->box->ended;
    o->box->ended = o;
}

static void op_observe(void *ctx, mapi_attempt_event ev, const mapi_attempt_info *info)
{
    lua_op *o = ctx;

    o->hooks.L = o->box->L;
    if (o->hooks.L)
        mapi_lua_observer(&o->hooks, ev, info);
}

/* Lets go of an ended call: its references dropped.  Pushes nothing. */
static void op_release(lua_State *L, lua_op *o)
{
    if (o->xb && o->xb->on_loop == 2)
        mapi_lua_exchange_box_clear(L, o->xb); /* finalized first, at lua_close */
    if (o->xb)
        o->xb->on_loop = 0;
    luaL_unref(L, LUA_REGISTRYINDEX, o->xref);
    luaL_unref(L, LUA_REGISTRYINDEX, o->hooks.ref); /* nothing for LUA_NOREF */
    free(o);
}

static loop_box *check_loop(lua_State *L)
{
    return (loop_box *)luaL_checkudata(L, 1, LOOP_MT);
}

/* Frees the C loop (every running call ends) and lets go of every call.
   From a hook, inside the step: the C loop cannot be freed under its own
   step, so the step is stopped (mapi_loop_stop) and l_step closes the loop
   once it has returned. */
static void close_loop(lua_State *L, loop_box *b)
{
    if (b->stepping) {
        b->close_due = 1;
        mapi_loop_stop(b->loop);
        return;
    }
    if (b->loop) {
        mapi_loop *loop = b->loop;
        b->loop = NULL;
        b->L = L;
        mapi_loop_free(loop); /* calls op_done for each call still running */
        b->L = NULL;
    }
    while (b->ended) {
        lua_op *o = b->ended;
        b->ended = o->next;
        op_release(L, o);
    }
}

/* loop:close() -- ends the running calls (each exchange gets the error "the
   loop was freed"), frees the loop; safe twice; __gc.  From a hook of a
   call on the loop: the loop counts as closed at once, and is freed when
   the step returns (close_loop). */
static int l_close(lua_State *L)
{
    close_loop(L, check_loop(L));
    return 0;
}

/* core.loop_new() -> loop, or nil, err */
int mapi_lua_loop_new(lua_State *L)
{
    loop_box *b = (loop_box *)mapic_newuserdata(L, sizeof *b);
    call_box *eb;

    memset(b, 0, sizeof *b);
    mapic_setmetatable(L, LOOP_MT);
    eb = mapi_lua_push_call_box(L);
    b->loop = mapi_loop_new(&eb->err);
    if (!b->loop)
        return mapi_lua_push_err_results(L, &eb->err);
    lua_pop(L, 1);
    return 1;
}

/* Runs protected (l_start): luaL_ref of the value at 1, pushed as an integer. */
static int ref_value(lua_State *L)
{
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_pushinteger(L, ref);
    return 1;
}

/* Drops the refs l_start took (LUA_NOREF: nothing). */
static void unref_both(lua_State *L, int xref, int href)
{
    luaL_unref(L, LUA_REGISTRYINDEX, xref);
    luaL_unref(L, LUA_REGISTRYINDEX, href);
}

/* loop:start(client, x[, hooks]) -> true | nil, err: runs the exchange x of
   client.  hooks: a table with on_request / on_response, called for each
   attempt (under a protected call, as over libcurl: lua_transport.c). */
static int l_start(lua_State *L)
{
    loop_box *b = check_loop(L);
    exchange_box *xb = (exchange_box *)luaL_checkudata(L, 3, EXCHANGE_MT);
    mapi_error e = MAPI_ERROR_INIT;
    call_box *eb;
    mapi_client *c;
    lua_op *o;
    int xref, href = LUA_NOREF, hooks;

    lua_settop(L, 4);
    hooks = !lua_isnil(L, 4);
    if (hooks)
        luaL_checktype(L, 4, LUA_TTABLE);
    if (!xb->x || xb->state != X_IDLE)
        return luaL_error(L, "merchantapi: the exchange is not a call to start");
    lua_rawgeti(L, LUA_REGISTRYINDEX, xb->cref); /* the client it holds: c lives */
    if (!lua_rawequal(L, -1, 2))
        return luaL_error(L, "merchantapi: the exchange is not a call of this client");
    lua_pop(L, 1);
    if (!b->loop || b->close_due)
        return mapi_lua_new_error_results(L, "usage", "the loop is closed",
                                          mapi_exchange_call(xb->x)->method);
    /* The refs first, while nothing is taken that a raise would lose: the
       op, once registered, is reachable from the C loop and must hold them
       (luaL_ref raises, out of memory only).  The hooks' ref under a
       protected call, so that its failure gives the exchange's back. */
    if (hooks)
        lua_pushcfunction(L, ref_value); /* 5 (may raise on 5.1: nothing taken yet) */
    lua_pushvalue(L, 3);
    xref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (hooks) {
        lua_pushvalue(L, 4);
        if (lua_pcall(L, 1, 1, 0) != 0) {
            luaL_unref(L, LUA_REGISTRYINDEX, xref);
            return lua_error(L);
        }
        href = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    o = (lua_op *)calloc(1, sizeof *o);
    if (!o) {
        unref_both(L, xref, href);
        eb = mapi_lua_push_call_box(L);
        mapi_error_oom(&eb->err);
        return mapi_lua_push_err_results(L, &eb->err);
    }
    c = mapi_lua_client_hold(L, 2, &o->hooks.busy);
    if (!c) {
        unref_both(L, xref, href);
        free(o);
        return mapi_lua_new_error_results(L, "usage", MAPI_LUA_CLIENT_CLOSED,
                                          mapi_exchange_call(xb->x)->method);
    }
    mapi_lua_client_release(L, 2); /* (the exchange holds it for the call) */
    o->box = b;
    o->xb = xb;
    o->xref = xref;
    o->hooks.ref = href;
    if (mapi_loop_run_exchange(b->loop, c, xb->x, 0, hooks ? op_observe : NULL, o,
                               op_done, o, &e) < 0) {
        unref_both(L, xref, href);
        free(o);
        eb = mapi_lua_push_call_box(L); /* MEMORY: nothing in e to lose if this raises */
        eb->err = e;
        return mapi_lua_push_err_results(L, &eb->err);
    }
    xb->state = X_SENDING;
    xb->on_loop = 1;
    lua_pushboolean(L, 1);
    return 1;
}

/* loop:budget([max_seconds[, max_calls[, wait]]]): the budget of the step
   the Lua loop begins (loop.lua's Loop:step), the one budget of its C
   passes and of its tasks' resumes (loop:take) until loop:budget_end().
   max_seconds, max_calls: nil or <= 0: none (mapi_loop_step_budget); wait:
   true to wait for ready work within max_seconds, the waits counted
   (mapi_loop_step_within). */
static int l_budget(lua_State *L)
{
    loop_box *b = check_loop(L);
    double max_seconds = luaL_optnumber(L, 2, 0);
    lua_Integer max_calls = luaL_optinteger(L, 3, 0);

    mapi_budget_start(&b->budget, max_seconds, max_calls > 0 ? (size_t)max_calls : 0);
    b->budget.wait = lua_toboolean(L, 4) && max_seconds > 0;
    b->budgeted = 1;
    return 0;
}

/* loop:take([call[, cost]]) -> boolean: whether the step's budget allows
   one more piece of work now (a task resumed, one page of a batch turned
   into tables), counted when it does; call: a call's end handed back
   (counted against max_calls); cost: the seconds the piece is expected to
   last, nil if not known (mapi_budget_take_cost).  Always true outside
   loop:budget() .. budget_end(). */
static int l_take(lua_State *L)
{
    loop_box *b = check_loop(L);
    double cost = luaL_optnumber(L, 3, 0);

    lua_pushboolean(L, !b->budgeted ||
                           mapi_budget_take_cost(&b->budget,
                                                 lua_toboolean(L, 2) ? &b->budget.reported
                                                                     : NULL,
                                                 cost));
    return 1;
}

/* loop:left() -> seconds the step may still wait and work (whole ms), 0
   when its budget is spent, nil without a time budget. */
static int l_left(lua_State *L)
{
    loop_box *b = check_loop(L);
    double left = b->budgeted ? mapi_budget_left(&b->budget) : -1.0;

    if (left < 0)
        return 0;
    lua_pushnumber(L, (lua_Number)left);
    return 1;
}

/* loop:budget_end() -> spent: the seconds the step's budget counted (wall
   clock; its waits only with wait), 0 without max_seconds. */
static int l_budget_end(lua_State *L)
{
    loop_box *b = check_loop(L);

    lua_pushnumber(L, b->budgeted ? (lua_Number)mapi_budget_spent(&b->budget) : 0);
    b->budgeted = 0;
    return 1;
}

/* loop:timer(seconds, token) -> true | nil, err: token (any value) comes
   back among a step's finished once `seconds` have passed (a task's sleep:
   a timer of the C loop, mapi_loop_timer). */
static int l_timer(lua_State *L)
{
    loop_box *b = check_loop(L);
    double seconds = luaL_checknumber(L, 2);
    mapi_error e = MAPI_ERROR_INIT;
    call_box *eb;
    lua_op *o;

    luaL_checkany(L, 3);
    if (!b->loop)
        return mapi_lua_new_error_results(L, "usage", "the loop is closed", NULL);
    o = (lua_op *)calloc(1, sizeof *o);
    if (o) {
        o->box = b;
        o->xref = LUA_NOREF; /* until the ref below, should it raise */
        o->hooks.ref = LUA_NOREF;
    }
    if (!o || mapi_loop_timer(b->loop, seconds, op_done, o, &e) < 0) {
        free(o);
        eb = mapi_lua_push_call_box(L); /* MEMORY: nothing in e to lose if this raises */
        if (e.kind == MAPI_ERR_NONE)
            mapi_error_oom(&e);
        eb->err = e;
        return mapi_lua_push_err_results(L, &eb->err);
    }
    lua_pushvalue(L, 3); /* o is the C loop's already: its ref is taken last */
    o->xref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushboolean(L, 1);
    return 1;
}

/* loop:step([timeout]) -> running, finished | nil, spent.  timeout:
   seconds (nil or negative: as long as the next event needs; 0: no wait);
   one pass of the C loop under the budget of loop:budget(), if any
   (mapi_loop_step_in).  finished: the exchanges whose call ended in this
   pass (x:result() gives each one's results) and the tokens of the timers
   that did; spent: the seconds the budget counted so far, 0 without one. */
static int l_step(lua_State *L)
{
    loop_box *b = check_loop(L);
    double timeout = luaL_optnumber(L, 2, -1.0);
    int running = 0, i = 0;

    if (b->loop) {
        if (b->L)
            return luaL_error(L, "merchantapi: loop:step called from a hook");
        b->L = L;
        b->stepping = 1;
        running = mapi_loop_step_in(b->loop, timeout, b->budgeted ? &b->budget : NULL);
        b->stepping = 0;
        b->L = NULL;
        if (b->close_due) { /* closed from a hook: now that the step is over */
            close_loop(L, b);
            running = 0;
        }
    }
    lua_pushinteger(L, running < 0 ? 0 : running);
    if (!b->ended) {
        lua_pushnil(L);
    } else {
        lua_newtable(L);
        while (b->ended) {
            lua_op *o = b->ended;
            b->ended = o->next;
            lua_rawgeti(L, LUA_REGISTRYINDEX, o->xref);
            lua_rawseti(L, -2, ++i);
            op_release(L, o);
        }
    }
    lua_pushnumber(L, b->budgeted ? (lua_Number)mapi_budget_spent(&b->budget) : 0);
    return 3;
}

/* loop:fd() -> integer: the loop's descriptor (nil once closed). */
static int l_fd(lua_State *L)
{
    loop_box *b = check_loop(L);

    if (!b->loop || b->close_due)
        return 0;
    lua_pushinteger(L, mapi_loop_fd(b->loop));
    return 1;
}

/* loop:timeout() -> seconds until a step is needed, or nil when no call runs. */
static int l_timeout(lua_State *L)
{
    loop_box *b = check_loop(L);
    double t = b->loop && !b->close_due ? mapi_loop_timeout(b->loop) : -1.0;

    if (b->ended)
        t = 0; /* ended calls wait to be handed over */
    if (t < 0)
        return 0;
    lua_pushnumber(L, (lua_Number)t);
    return 1;
}

void mapi_lua_loop_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"start", l_start},   {"step", l_step},         {"budget", l_budget},
        {"take", l_take},     {"left", l_left},         {"budget_end", l_budget_end},
        {"timer", l_timer},   {"fd", l_fd},             {"timeout", l_timeout},
        {"close", l_close},   {NULL, NULL}};

    mapi_lua_class_metatable(L, LOOP_MT, methods, l_close);
}

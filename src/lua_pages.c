/*
 * lua_pages.c -- merchantapi.core's page batch (src/pages.c: the one policy
 * of a list's pages fetched together) as a userdata.
 * client:list_addresses_pages (lua_client.c) runs it over libcurl now;
 * client:prepare("list_addresses_pages", ...) hands it to a Lua driver
 * (lua/merchantapi/dispatch.lua: a loop task, light threads, a custom
 * transport), which only starts the exchanges it gives and tells when each
 * ended:
 *
 *   x, page = b:next()   the exchange of the page to start now (as
 *       client:prepare gives one), or nil: none now (the window is full, a
 *       page failed before those left, or none is left).
 *   b:ended(x)           x, done (its result not taken), ended: the batch
 *       takes its result (dropped for a page after a failed one).
 *   list = b:take([max]) the next page kept (every page before it came),
 *       in the list_addresses shape, turned into tables and its document
 *       freed; nil when that page has not come (yet).  With max (an
 *       integer >= 1) a call turns at most max resources of the page into
 *       tables (or, once all are made, sets the relationships of 4 * max:
 *       take_piece) and returns false while some are left: the next call
 *       goes on where it ended, and the page is given whole, by the call
 *       that ends it.  A loop task checks its step's budget between two
 *       calls (pager.lua), so a step stops between pieces of at most max
 *       resources, never in a page nor in a batch.  Without max: the page
 *       at once (the rest of it, when a piece began it).
 *   n, err = b:kept()   how many pages are kept (from the first, every
 *       one before them came), and the error of the page after them when
 *       it failed, else nil; nothing is turned into tables: a loop task's
 *       pager takes the pages one by one as it hands them out, so that a
 *       batch's pages wait in the core's memory, not in Lua's heap.
 *   lists, err = b:result()   once: the pages kept (those before the first
 *       that did not come) that b:take() did not give (a page it began
 *       included, ended), each in the list_addresses shape, in page
 *       order; err the error of the page
 *       after them when it failed, else nil (a driver that lost a page in
 *       flight gives its own).
 */
#include <limits.h>
#include <string.h>

#include "lua_binding.h"

#define PAGE_BATCH_MT "merchantapi.page_batch"

typedef struct batch_box {
    mapi_page_batch *b; /* NULL once the result is taken */
    long first_page;
    size_t taken;       /* pages given by b:take(), from the first */
    int cref;           /* registry ref of the client it holds, or LUA_NOREF */
    int sref;           /* registry ref of the conversion state of page `taken`
                           that pieces began (take_piece), or LUA_NOREF */
} batch_box;

/* Frees the batch and lets go of its client (lua_base.c's close rule). */
static void batch_clear(lua_State *L, batch_box *bb)
{
    mapi_page_batch_free(bb->b);
    bb->b = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, bb->sref);
    bb->sref = LUA_NOREF;
    mapi_lua_client_unref(L, &bb->cref);
}

static int batch_gc(lua_State *L)
{
    batch_clear(L, (batch_box *)luaL_checkudata(L, 1, PAGE_BATCH_MT));
    return 0;
}

mapi_page_batch *mapi_lua_push_page_batch(lua_State *L, int client, const char *account_id,
                                          const mapi_page_params *p, long first_page,
                                          size_t count, size_t concurrency,
                                          const mapi_call_opts *opts, mapi_error *err)
{
    batch_box *bb = (batch_box *)mapic_newuserdata(L, sizeof *bb);
    mapi_client *c;

    bb->b = NULL;
    bb->first_page = first_page;
    bb->taken = 0;
    bb->cref = LUA_NOREF;
    bb->sref = LUA_NOREF;
    mapic_setmetatable(L, PAGE_BATCH_MT);
    c = mapi_lua_client_ref(L, client, 0, &bb->cref);
    if (!c) {
        mapi_error_set(err, MAPI_ERR_USAGE, "%s", MAPI_LUA_CLIENT_CLOSED);
        return NULL;
    }
    bb->b = mapi_page_batch_new(c, account_id, p, first_page, count, concurrency, opts, err);
    if (!bb->b)
        mapi_lua_client_unref(L, &bb->cref);
    return bb->b;
}

static batch_box *check_batch(lua_State *L)
{
    batch_box *bb = (batch_box *)luaL_checkudata(L, 1, PAGE_BATCH_MT);

    if (!bb->b)
        luaL_error(L, "merchantapi: the pages' result was taken");
    return bb;
}

/* b:next() -> x, page | nil */
static int l_next(lua_State *L)
{
    batch_box *bb = check_batch(L);
    exchange_box *xb = mapi_lua_push_exchange_box(L); /* before x is handed over */
    mapi_exchange *x;
    long i = mapi_page_batch_next(bb->b, &x);

    if (i < 0)
        return 0;
    xb->x = x;
    lua_rawgeti(L, LUA_REGISTRYINDEX, bb->cref); /* the exchange holds its client too, */
    mapi_lua_client_ref(L, lua_gettop(L), 1, &xb->cref); /* a close meanwhile or not */
    lua_pop(L, 1);
    mapic_pushint64(L, bb->first_page + i);
    return 2;
}

/* b:ended(x) */
static int l_ended(lua_State *L)
{
    batch_box *bb = check_batch(L);
    exchange_box *xb = (exchange_box *)luaL_checkudata(L, 2, EXCHANGE_MT);
    long i = mapi_page_batch_find(bb->b, xb->x);
    mapi_doc *doc = xb->doc;

    if (i < 0 || xb->state != X_DONE)
        return luaL_error(L, "merchantapi: not a page of this batch that is done");
    xb->doc = NULL;
    mapi_page_batch_ended(bb->b, (size_t)i, doc, &xb->err);
    xb->state = X_TAKEN;
    mapi_lua_exchange_box_clear(L, xb); /* the exchange, and its hold of the client */
    return 0;
}

/*
 * A page turned into tables in pieces (mapi_lua_flatten_steps): the state
 * of page `taken` from one piece to the next is a table (bb->sref) of the
 * conversion's three values, the page's meta and links, and the steps done.
 * A piece of max units: a resource's table is one; its relationships (a
 * lookup and a store each, made once every table is) a quarter.
 */
enum { PIECE_FRAME = 1, PIECE_META = 4, PIECE_LINKS, PIECE_STEPS };

/* Turns up to max units (0: all) of page `taken` (kept) into tables, going
   on from the piece before: when that ends it, pushes its list (a new table
   for a page without one: cannot happen, the core checked data is a list),
   frees its document (one page's document at a time) and returns 1; else
   returns 0, nothing pushed. */
static int take_piece(lua_State *L, batch_box *bb, size_t max)
{
    mapi_doc **doc = mapi_page_batch_doc(bb->b, bb->taken);
    int64_t done = 0;
    size_t n, steps, to;
    int state, i;

    luaL_checkstack(L, 12, MAPI_LUA_NO_STACK);
    if (!*doc || !mapi_doc_is_list(*doc)) {
        if (!*doc || !mapi_lua_push_data(L, *doc))
            lua_newtable(L);
    } else {
        if (bb->sref == LUA_NOREF) {
            lua_createtable(L, PIECE_STEPS, 0);
            mapi_lua_push_doc_members(L, *doc); /* meta, jsonapi, links */
            lua_rawseti(L, -4, PIECE_LINKS);
            lua_pop(L, 1);
            lua_rawseti(L, -2, PIECE_META);
            bb->sref = luaL_ref(L, LUA_REGISTRYINDEX);
        }
        lua_rawgeti(L, LUA_REGISTRYINDEX, bb->sref);
        state = lua_gettop(L);
        n = mapi_doc_resource_count(*doc);
        lua_rawgeti(L, state, PIECE_STEPS);
        mapic_tointeger(L, -1, &done);
        steps = done > 0 && (uint64_t)done < 2 * (uint64_t)n ? (size_t)done : 0;
        lua_pushinteger(L, 0); /* a piece that raises starts again at the first step */
        lua_rawseti(L, state, PIECE_STEPS);
        lua_rawgeti(L, state, PIECE_META);  /* state + 2 */
        lua_rawgeti(L, state, PIECE_LINKS); /* state + 3 */
        for (i = 0; i < 3; i++)
            lua_rawgeti(L, state, PIECE_FRAME + i); /* state + 4 .. state + 6 */
        if (max == 0 || max > (size_t)INT_MAX)
            max = (size_t)INT_MAX;
        to = steps < n ? (max < n - steps ? steps + max : n) : steps;
        if (to == n && max > to - steps) /* the rest of the piece for relationships */
            to = 4 * (uint64_t)(max - (to - steps)) < n ? n + 4 * (max - (to - steps)) : 2 * n;
        else if (steps >= n)
            to = 4 * (uint64_t)max < 2 * n - steps ? steps + 4 * max : 2 * n;
        if (!mapi_lua_flatten_steps(L, *doc, state + 4, steps, to, state + 2, state + 3, 0)) {
            for (i = 2; i >= 0; i--)
                lua_rawseti(L, state, PIECE_FRAME + i);
            lua_pushinteger(L, (lua_Integer)to);
            lua_rawseti(L, state, PIECE_STEPS);
            lua_settop(L, state - 1);
            return 0;
        }
        lua_replace(L, state);
        lua_settop(L, state);
        luaL_unref(L, LUA_REGISTRYINDEX, bb->sref);
        bb->sref = LUA_NOREF;
    }
    mapi_doc_free(*doc);
    *doc = NULL;
    bb->taken++;
    return 1;
}

/* b:take([max]) -> list | false | nil */
static int l_take(lua_State *L)
{
    batch_box *bb = check_batch(L);
    mapi_error *e;
    int64_t max = 0;

    if (!lua_isnoneornil(L, 2) && (!mapic_tointeger(L, 2, &max) || max < 1))
        return mapic_typeerror(L, 2, "integer >= 1 or nil");
    if (bb->taken >= mapi_page_batch_kept(bb->b, &e))
        return 0;
    if (!take_piece(L, bb, (size_t)(max > INT_MAX ? INT_MAX : max)))
        lua_pushboolean(L, 0);
    return 1;
}

/* b:kept() -> n, err */
static int l_kept(lua_State *L)
{
    batch_box *bb = check_batch(L);
    mapi_error *e;
    size_t n = mapi_page_batch_kept(bb->b, &e);

    luaL_checkstack(L, 8, MAPI_LUA_NO_STACK);
    mapic_pushint64(L, (int64_t)n);
    if (e)
        mapi_lua_push_error(L, e);
    else
        lua_pushnil(L);
    return 2;
}

int mapi_lua_page_batch_result(lua_State *L, int idx)
{
    batch_box *bb = (batch_box *)luaL_checkudata(L, idx, PAGE_BATCH_MT);
    mapi_error *e;
    size_t k, n;
    int lists;

    if (!bb->b)
        return luaL_error(L, "merchantapi: the pages' result was taken");
    n = mapi_page_batch_kept(bb->b, &e);
    luaL_checkstack(L, 8, MAPI_LUA_NO_STACK);
    lua_createtable(L, (int)(n - bb->taken), 0);
    lists = lua_gettop(L);
    for (k = 1; bb->taken < n; k++) {
        take_piece(L, bb, 0);
        lua_rawseti(L, lists, (int)k);
    }
    if (e)
        mapi_lua_push_error(L, e);
    else
        lua_pushnil(L);
    batch_clear(L, bb); /* the rest now rather than at the next collection */
    return 2;
}

/* b:result() -> lists, err */
static int l_result(lua_State *L)
{
    return mapi_lua_page_batch_result(L, 1);
}

void mapi_lua_pages_open(lua_State *L)
{
    static const luaL_Reg methods[] = {
        {"next", l_next}, {"ended", l_ended}, {"take", l_take}, {"kept", l_kept},
        {"result", l_result},
        {NULL, NULL}};

    mapi_lua_class_metatable(L, PAGE_BATCH_MT, methods, batch_gc);
}

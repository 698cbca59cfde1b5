/*
 * lua_walk.c -- merchantapi.core's page walk (src/page_walk.c: the pager's
 * stop rules and page checks, once for C and Lua) for the Lua pager
 * (lua/merchantapi/pager.lua), which fetches the pages and hands each one
 * here:
 *
 *   w = core.page_walk(per_page, max_pages, follow)   per_page, max_pages:
 *       integers >= 1 or nil; follow: true for a walk by links.next.
 *   step, title = w:page(page, list[, from[, to]])   the page's checks and
 *       stop rules: "more" (hand it out; another may follow), "last" (hand
 *       it out; the walk is over), "end" (an empty page: nothing to hand
 *       out), or nil and the title of the "decode" error that ends the
 *       walk.  from, to (default 1, #list): the items checked by this call,
 *       so that a loop task can give a turn between two pieces of a page's
 *       checks: a call with from 1 begins the page (its total is checked
 *       then), one with from > 1 goes on with the page begun (the same
 *       page and list; else an error is raised), and while to < #list the
 *       call returns "piece" (no verdict yet: the next items follow).  The page
 *       size and total come from list.meta (per_page an integer >= 1, total
 *       an integer: any other value counts as absent), the items from
 *       list[1 .. #list]: a table item's `id` (tostring'd when not a string;
 *       an item without one is not checked) and `type` (a string, else
 *       none).
 *   ok = w:link(path)   the links.next rule: true when path (nil: none) is
 *       to be requested next, false when the walk ends there.
 *   count = w:batch(concurrency)   pages to fetch next at once (0: none).
 *   received, announced, total_changed = w:counts()   the walk so far
 *       (announced nil until a page tells meta.total).
 *   core.page_is_last(page, n, per_page, total, size)   the stop rule alone.
 */
#include <limits.h>
#include <string.h>

#include "lua_binding.h"
#include "page_walk.h"

#define WALK_MT "merchantapi.page_walk"

#if LUA_VERSION_NUM >= 502
#define raw_len(L, i) lua_rawlen(L, i)
#else
#define raw_len(L, i) lua_objlen(L, i)
#endif

static int walk_gc(lua_State *L)
{
    mapi_walk_clear((mapi_walk *)luaL_checkudata(L, 1, WALK_MT));
    return 0;
}

/* The integer at idx, or 0 when it is nil; raises unless it is an integer
   (>= 1 when count). */
static int64_t opt_count(lua_State *L, int idx, const char *name)
{
    int64_t v = 0;

    if (lua_isnoneornil(L, idx))
        return 0;
    if (!mapic_tointeger(L, idx, &v) || v < 1)
        return luaL_error(L, "bad argument '%s' to 'page_walk' (integer >= 1 expected)", name);
    return v;
}

/* core.page_walk(per_page, max_pages, follow) -> w */
static int l_walk_new(lua_State *L)
{
    int64_t per_page = opt_count(L, 1, "per_page"), max_pages = opt_count(L, 2, "max_pages");
    mapi_walk *w = (mapi_walk *)mapic_newuserdata(L, sizeof *w);

    mapi_walk_init(w, per_page, max_pages > LONG_MAX ? LONG_MAX : (long)max_pages,
                   lua_toboolean(L, 3));
    mapic_setmetatable(L, WALK_MT);
    return 1;
}

/* meta[name] as an integer in *out (count: >= 1): 1, or 0 when it is not. */
static int meta_int(lua_State *L, int meta, const char *name, int count, int64_t *out)
{
    int ok;

    if (meta == 0)
        return 0;
    lua_getfield(L, meta, name);
    ok = mapic_tointeger(L, -1, out) && (!count || *out >= 1);
    lua_pop(L, 1);
    return ok;
}

/* Pushes an error title: nil, title.  Returns 2. */
static int push_refusal(lua_State *L, mapi_error *err)
{
    lua_pushnil(L);
    lua_pushstring(L, err->title ? err->title : "out of memory");
    mapi_error_clear(err);
    return 2;
}

/* The id rule over items from .. to of the list at idx; 0 or -1. */
static int check_items(lua_State *L, mapi_walk *w, int list, size_t from, size_t to,
                       mapi_error *err)
{
    size_t i;

    for (i = from; i <= to; i++) {
        const char *type = NULL, *id;
        size_t type_len = 0, id_len = 0;
        int top = lua_gettop(L), r;

        lua_rawgeti(L, list, (int)i);
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_getfield(L, top + 1, "id");
            if (lua_toboolean(L, -1)) { /* as `item.id or nil` */
                if (lua_type(L, -1) != LUA_TSTRING) {
#if LUA_VERSION_NUM >= 502
                    luaL_tolstring(L, top + 2, NULL); /* as tostring(id) */
#else
                    lua_getglobal(L, "tostring");
                    lua_pushvalue(L, top + 2);
                    lua_call(L, 1, 1);
#endif
                    lua_replace(L, top + 2);
                }
                id = lua_tolstring(L, top + 2, &id_len);
                lua_getfield(L, top + 1, "type");
                if (lua_type(L, -1) == LUA_TSTRING)
                    type = lua_tolstring(L, -1, &type_len);
                r = mapi_walk_item(w, type, type_len, id ? id : "", id_len, err);
                lua_settop(L, top);
                if (r < 0)
                    return -1;
            }
        }
        lua_settop(L, top);
    }
    return 0;
}

/* The item number at idx (nil: dflt), an integer >= 1; one past n at most. */
static size_t opt_item(lua_State *L, int idx, size_t dflt, size_t n)
{
    int64_t v = 0;

    if (lua_isnoneornil(L, idx))
        return dflt;
    if (!mapic_tointeger(L, idx, &v) || v < 1)
        return (size_t)mapic_typeerror(L, idx, "integer >= 1 or nil");
    return (uint64_t)v > (uint64_t)n ? n + 1 : (size_t)v;
}

/* w:page(page, list[, from[, to]]) -> "more" | "last" | "end" | "piece" | nil, title */
static int l_walk_page(lua_State *L)
{
    mapi_walk *w = (mapi_walk *)luaL_checkudata(L, 1, WALK_MT);
    mapi_error err = MAPI_ERROR_INIT;
    int64_t page = 0, per_page = 0, total = 0;
    int meta = 0, has_total;
    size_t n, from, to;

    if (!mapic_tointeger(L, 2, &page) || page < 1 || page > LONG_MAX)
        return mapic_typeerror(L, 2, "page number");
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_checkstack(L, 8, MAPI_LUA_NO_STACK);
    n = raw_len(L, 3);
    from = opt_item(L, 4, 1, n);
    to = opt_item(L, 5, n, n);
    if (to > n)
        to = n;
    if (from == 1) {
        lua_getfield(L, 3, "meta");
        if (lua_type(L, -1) == LUA_TTABLE)
            meta = lua_gettop(L);
        if (!meta_int(L, meta, "per_page", 1, &per_page))
            per_page = 0;
        has_total = meta_int(L, meta, "total", 0, &total);
        if (mapi_walk_begin(w, (long)page, (int64_t)n, per_page, has_total, total, &err) < 0)
            return push_refusal(L, &err);
    } else if (w->done || w->page != (long)page || w->next_page == (long)page + 1 ||
               w->n != (int64_t)n) {
        return luaL_error(L, "merchantapi: page %d's checks go on from item %d, but that "
                             "page is not the one begun", (int)page, (int)from);
    }
    if (check_items(L, w, 3, from, to, &err) < 0)
        return push_refusal(L, &err);
    if (to < n) {
        lua_pushliteral(L, "piece");
        return 1;
    }
    switch (mapi_walk_end(w)) {
    case MAPI_WALK_MORE:
        lua_pushliteral(L, "more");
        break;
    case MAPI_WALK_LAST:
        lua_pushliteral(L, "last");
        break;
    default:
        lua_pushliteral(L, "end");
        break;
    }
    return 1;
}

/* w:link(path) -> boolean */
static int l_walk_link(lua_State *L)
{
    mapi_walk *w = (mapi_walk *)luaL_checkudata(L, 1, WALK_MT);
    mapi_error err = MAPI_ERROR_INIT;
    size_t len = 0;
    const char *link = lua_isnoneornil(L, 2) ? NULL : luaL_checklstring(L, 2, &len);
    int r = mapi_walk_link(w, link, len, &err);

    mapi_error_clear(&err);
    if (r < 0)
        return luaL_error(L, "%s", MAPI_LUA_NO_MEMORY);
    lua_pushboolean(L, r);
    return 1;
}

/* w:batch(concurrency) -> count */
static int l_walk_batch(lua_State *L)
{
    mapi_walk *w = (mapi_walk *)luaL_checkudata(L, 1, WALK_MT);
    int64_t c = 1;

    if (!mapic_tointeger(L, 2, &c) || c < 1)
        c = 1;
    mapic_pushint64(L, (int64_t)mapi_walk_batch(w, c > (int64_t)MAPI_PAGES_MAX
                                                       ? (size_t)MAPI_PAGES_MAX
                                                       : (size_t)c));
    return 1;
}

/* w:counts() -> received, announced | nil, total_changed */
static int l_walk_counts(lua_State *L)
{
    mapi_walk *w = (mapi_walk *)luaL_checkudata(L, 1, WALK_MT);

    mapic_pushint64(L, w->received);
    if (w->has_announced)
        mapic_pushint64(L, w->announced);
    else
        lua_pushnil(L);
    lua_pushboolean(L, w->total_changed);
    return 3;
}

/* core.page_is_last(page, n, per_page, total, size) -> boolean */
static int l_page_is_last(lua_State *L)
{
    int64_t page = 0, n = 0, per_page = 0, total = 0, size = 0;
    int has_total;

    if (!mapic_tointeger(L, 1, &page) || page > LONG_MAX || page < LONG_MIN)
        return mapic_typeerror(L, 1, "integer");
    if (!mapic_tointeger(L, 2, &n))
        return mapic_typeerror(L, 2, "integer");
    if (!lua_isnoneornil(L, 3) && !mapic_tointeger(L, 3, &per_page))
        return mapic_typeerror(L, 3, "integer or nil");
    has_total = !lua_isnoneornil(L, 4);
    if (has_total && !mapic_tointeger(L, 4, &total))
        return mapic_typeerror(L, 4, "integer or nil");
    if (!lua_isnoneornil(L, 5) && !mapic_tointeger(L, 5, &size))
        return mapic_typeerror(L, 5, "integer or nil");
    lua_pushboolean(L, mapi_walk_is_last((long)page, n, per_page, has_total, total, size));
    return 1;
}

void mapi_lua_walk_open(lua_State *L)
{
    static const luaL_Reg methods[] = {{"page", l_walk_page},
                                       {"link", l_walk_link},
                                       {"batch", l_walk_batch},
                                       {"counts", l_walk_counts},
                                       {NULL, NULL}};
    static const luaL_Reg functions[] = {
        {"page_walk", l_walk_new}, {"page_is_last", l_page_is_last}, {NULL, NULL}};

    mapi_lua_class_metatable(L, WALK_MT, methods, walk_gc);
    mapic_setfuncs(L, functions, 0); /* into the module's table, on the top */
}

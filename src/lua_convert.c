/*
 * lua_convert.c -- merchantapi.core: what the core gives back, as Lua values.
 *
 * A mapi_doc becomes Lua tables by the rules of docs/contract.md
 * ("Resources come back flattened and resolved", "Numbers are exact"), a
 * mapi_error the contract's error table (the binding's one C error
 * constructor: mapi_lua_push_error, and mapi_lua_push_simple_error for
 * errors made here), a mapi_response the response object; the anchors
 * (doc_box, err_box) that keep C memory safe from Lua errors; decode and
 * resource_info.  lua_client.c makes the calls, lua_merchantapi.c is the
 * module.
 *
 * Memory rules (the whole binding's)
 *   - Lua errors longjmp.  No Lua function is called while C memory is held
 *     unanchored: a mapi_doc, a mapi_error or a mapi_client is always owned
 *     by a userdata with __gc created *before* the C call that fills it, so a
 *     memory error raised by any lua_* call during the conversion that
 *     follows frees it at the next collection.  On the normal path it is
 *     freed at once.
 *   - The C calls (libcurl, simdjson) never call back into Lua.
 *   - Argument type mistakes raise (luaL_argerror) before anything is
 *     allocated; everything else is returned as nil, err[, res].
 *   - No C globals: metatables live in the registry under the names of
 *     lua_binding.h.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"
#include "internal.h"

/* The metatables that make a table weak-valued / weak-keyed (see "Links,
   meta and relationships" below). */
#define WEAK_V_MT "merchantapi.weak_v"
#define WEAK_K_MT "merchantapi.weak_k"

/* Values nest at most 64 deep (the parser's cap); this only guards the C stack. */
#define MAX_VALUE_DEPTH 200
/* 2^53: every integer of this magnitude or less is exact in a double. */
#define EXACT_INT_MAX INT64_C(9007199254740992)

/* How JSON null is pushed. */
enum null_mode {
    NULL_AS_NIL,     /* resources, meta: null is nil (absent) */
    NULL_AS_SENTINEL /* res:document(): null is merchantapi.null */
};

/* ------------------------------------------------------------------------ */
/* Anchors for C memory                                                     */
/* ------------------------------------------------------------------------ */

static int doc_box_gc(lua_State *L)
{
    doc_box *b = (doc_box *)luaL_checkudata(L, 1, DOC_BOX_MT);
    mapi_doc_free(b->doc);
    b->doc = NULL;
    return 0;
}

static int err_box_gc(lua_State *L)
{
    err_box *b = (err_box *)luaL_checkudata(L, 1, ERR_BOX_MT);
    mapi_error_clear(&b->err);
    return 0;
}

doc_box *mapi_lua_push_doc_box(lua_State *L)
{
    doc_box *b = (doc_box *)mapic_newuserdata(L, sizeof *b);
    b->doc = NULL;
    mapic_setmetatable(L, DOC_BOX_MT);
    return b;
}

err_box *mapi_lua_push_err_box(lua_State *L)
{
    mapi_error init = MAPI_ERROR_INIT;
    err_box *b = (err_box *)mapic_newuserdata(L, sizeof *b);
    b->err = init;
    mapic_setmetatable(L, ERR_BOX_MT);
    return b;
}

static int call_box_gc(lua_State *L)
{
    call_box *b = (call_box *)luaL_checkudata(L, 1, CALL_BOX_MT);
    mapi_doc_free(b->doc);
    b->doc = NULL;
    mapi_error_clear(&b->err);
    return 0;
}

call_box *mapi_lua_push_call_box(lua_State *L)
{
    mapi_error init = MAPI_ERROR_INIT;
    call_box *b = (call_box *)mapic_newuserdata(L, sizeof *b);
    b->doc = NULL;
    b->err = init;
    mapic_setmetatable(L, CALL_BOX_MT);
    return b;
}

static void doc_box_release(doc_box *b)
{
    mapi_doc_free(b->doc);
    b->doc = NULL;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

/* A JSON integer: a Lua integer within +-2^53, else its decimal text. */
static void push_int64(lua_State *L, int64_t n)
{
    if (n >= -EXACT_INT_MAX && n <= EXACT_INT_MAX) {
        mapic_pushint64(L, n);
    } else {
        char buf[32];
        snprintf(buf, sizeof buf, "%" PRId64, n);
        lua_pushstring(L, buf);
    }
}

/*
 * Interned keys.  A document repeats the same member names in every
 * resource (1,000 addresses: "label", "value", "createdAt", "network" 1,000
 * times each) and the core interns them: every distinct name has a number
 * (mapi_members_name_id, mapi_relationship.name_id, mapi_resource_type_id).  One
 * conversion keeps the Lua string of each name it met in a table indexed by
 * that number, made at its final size: a name is hashed into Lua's string
 * table once per document, then fetched by index.
 */
typedef struct key_cache {
    int table;   /* stack index of the table: name number + 1 -> Lua string; then
                    "id", "type", "lid" at table + 1 .. table + 3 */
    size_t size; /* mapi_doc_name_count */
} key_cache;

/* Pushes the cache (four stack slots): pop them with lua_settop(L, kc.table - 1). */
static void key_cache_init(lua_State *L, key_cache *kc, const mapi_doc *doc)
{
    size_t n = mapi_doc_name_count(doc);

    luaL_checkstack(L, 12, "merchantapi: out of stack space");
    kc->size = n < (size_t)INT_MAX ? n : 0;
    lua_createtable(L, (int)kc->size, 0);
    kc->table = lua_gettop(L);
    lua_pushliteral(L, "id");
    lua_pushliteral(L, "type");
    lua_pushliteral(L, "lid");
}

/* Pushes the Lua string of the name name[0..len) numbered id. */
static void push_key(lua_State *L, const key_cache *kc, const char *name, size_t len, size_t id)
{
    if (!kc || id >= kc->size) {
        lua_pushlstring(L, name, len);
        return;
    }
    lua_rawgeti(L, kc->table, (int)id + 1);
    if (lua_type(L, -1) == LUA_TSTRING)
        return;
    lua_pop(L, 1);
    lua_pushlstring(L, name, len);
    lua_pushvalue(L, -1);
    lua_rawseti(L, kc->table, (int)id + 1);
}

static void push_value(lua_State *L, const key_cache *kc, const mapi_value *v,
                       enum null_mode mode, int depth);

static void push_array(lua_State *L, const key_cache *kc, const mapi_value *v,
                       enum null_mode mode, int depth)
{
    size_t i, n = mapi_value_len(v);
    lua_createtable(L, n > INT_MAX ? INT_MAX : (int)n, 0);
    for (i = 0; i < n; i++) {
        push_value(L, kc, mapi_value_at(v, i), mode, depth + 1);
        /* nil (a null in NULL_AS_NIL mode) leaves a hole, as the contract says */
        lua_rawseti(L, -2, (int)(i + 1));
    }
}

static void push_object(lua_State *L, const key_cache *kc, const mapi_value *v,
                        enum null_mode mode, int depth)
{
    size_t n = mapi_value_len(v), len;
    mapi_members it;
    const char *key;
    const mapi_value *m;

    lua_createtable(L, 0, n > INT_MAX ? INT_MAX : (int)n);
    mapi_members_begin(v, &it);
    while (mapi_members_next_n(&it, &key, &len, &m)) {
        if (m == NULL && mode == NULL_AS_NIL)
            continue;
        /* keys with their length: a name with a NUL byte is its own key */
        push_key(L, kc, key, len, mapi_members_name_id(&it));
        push_value(L, kc, m, mode, depth + 1);
        lua_rawset(L, -3);
    }
}

/* Pushes one JSON value by the contract's rules ("Numbers are exact"). */
static void push_value(lua_State *L, const key_cache *kc, const mapi_value *v,
                       enum null_mode mode, int depth)
{
    int64_t n;
    size_t len;
    const char *s;

    if (depth > MAX_VALUE_DEPTH)
        luaL_error(L, "merchantapi: JSON value nested deeper than %d", MAX_VALUE_DEPTH);
    luaL_checkstack(L, 4, "merchantapi: JSON value nested too deeply");
    switch (mapi_value_type(v)) {
    case MAPI_NULL:
        if (mode == NULL_AS_SENTINEL)
            lua_pushlightuserdata(L, NULL);
        else
            lua_pushnil(L);
        break;
    case MAPI_BOOL:
        lua_pushboolean(L, mapi_value_bool(v));
        break;
    case MAPI_INT:
        if (mapi_value_int64(v, &n) == 0)
            push_int64(L, n);
        else
            lua_pushnil(L);
        break;
    case MAPI_NUMBER:
        s = mapi_value_number(v, &len);
        if (s)
            lua_pushlstring(L, s, len);
        else
            lua_pushnil(L);
        break;
    case MAPI_STRING:
        s = mapi_value_string(v, &len);
        lua_pushlstring(L, s ? s : "", s ? len : 0);
        break;
    case MAPI_ARRAY:
        push_array(L, kc, v, mode, depth);
        break;
    case MAPI_OBJECT:
        push_object(L, kc, v, mode, depth);
        break;
    }
}

/* A payout's amount: always a decimal string ("250.10", "1200", "1.5e2" ->
   "150"), by the core's rule (mapi_value_decimal); other types as usual. */
static void push_amount(lua_State *L, const mapi_value *v)
{
    size_t len;
    const char *s = mapi_value_decimal(v, &len);

    if (s)
        lua_pushlstring(L, s, len);
    else
        push_value(L, NULL, v, NULL_AS_NIL, 1);
}

/*
 * Pagination meta (page, per_page, total): a count (mapi_value_count: a
 * whole JSON number >= 0 such as 2, 2.0 or 1e3, or a string of plain digits
 * such as "50") as an integer by the usual rule (its decimal text beyond
 * 2^53); anything else by the usual rules (list calls have refused it).
 */
static void push_meta_int(lua_State *L, const mapi_value *v)
{
    int64_t n;

    if (mapi_value_count(v, &n) == 0)
        push_int64(L, n);
    else
        push_value(L, NULL, v, NULL_AS_NIL, 1);
}

/* Pushes the document's meta (null -> nil), page/per_page/total as integers;
   nil when the document has no meta object. */
static void push_meta(lua_State *L, const mapi_doc *doc)
{
    static const char *const ints[] = {"page", "per_page", "total"};
    const mapi_value *meta = mapi_doc_meta(doc);
    size_t i;

    if (mapi_value_type(meta) != MAPI_OBJECT) {
        lua_pushnil(L);
        return;
    }
    push_value(L, NULL, meta, NULL_AS_NIL, 0);
    for (i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        const mapi_value *v = mapi_value_get(meta, ints[i]);
        if (v == NULL)
            continue;
        push_meta_int(L, v);
        lua_setfield(L, -2, ints[i]);
    }
}

/* ------------------------------------------------------------------------ */
/* Documents -> resource tables                                             */
/* ------------------------------------------------------------------------ */

/* Pushes an attribute value: scalars here, containers by push_value. */
static void push_attribute(lua_State *L, const key_cache *kc, const mapi_value *v)
{
    size_t len;
    const char *s;

    switch (mapi_value_type(v)) {
    case MAPI_STRING:
        s = mapi_value_string(v, &len);
        lua_pushlstring(L, s ? s : "", s ? len : 0);
        break;
    case MAPI_BOOL:
        lua_pushboolean(L, mapi_value_bool(v));
        break;
    default:
        push_value(L, kc, v, NULL_AS_NIL, 1);
        break;
    }
}

/* Pass 1: one table per resource with id (or lid), type and every
   attribute, sized for them and its relationships.  The core refused the
   documents where a field is named id or type (or lid beside a lid), or
   both an attribute and a relationship: no key is set twice. */
static void push_resource_fields(lua_State *L, const key_cache *kc, const mapi_resource *r)
{
    const mapi_value *attrs = mapi_resource_attributes(r);
    size_t size = 2 + mapi_value_len(attrs) + mapi_resource_relationship_count(r), tlen, len;
    const char *type = mapi_resource_type_n(r, &tlen), *id, *lid;
    int is_payout = tlen == 7 && memcmp(type, "payouts", 7) == 0;
    mapi_members it;
    const char *key;
    const mapi_value *v;

    lid = mapi_resource_lid(r, &len);
    lua_createtable(L, 0, size + (lid != NULL) > INT_MAX ? INT_MAX : (int)(size + (lid != NULL)));
    mapi_members_begin(attrs, &it);
    while (mapi_members_next_n(&it, &key, &len, &v)) {
        if (v == NULL)
            continue; /* JSON null: absent */
        push_key(L, kc, key, len, mapi_members_name_id(&it));
        if (is_payout && len == 6 && memcmp(key, "amount", 6) == 0)
            push_amount(L, v);
        else
            push_attribute(L, kc, v);
        lua_rawset(L, -3);
    }
    id = mapi_resource_id_n(r, &len);
    if (id) {
        lua_pushvalue(L, kc->table + 1);
        lua_pushlstring(L, id, len);
        lua_rawset(L, -3);
    }
    lid = mapi_resource_lid(r, &len);
    if (lid) {
        lua_pushvalue(L, kc->table + 3);
        lua_pushlstring(L, lid, len);
        lua_rawset(L, -3);
    }
    lua_pushvalue(L, kc->table + 2);
    push_key(L, kc, type, tlen, mapi_resource_type_id(r));
    lua_rawset(L, -3);
}

/* Pass 2: every relationship of r, set on the table on the top of the stack,
   from the slot array at stack index slots (targets resolved by the core
   while parsing: mapi_resource_relationship_at). */
static void set_relationships(lua_State *L, const key_cache *kc, const mapi_doc *doc,
                              const mapi_resource *r, int slots)
{
    mapi_relationship l;
    size_t i, j;

    for (i = 0; mapi_resource_relationship_at(doc, r, i, &l); i++) {
        if (l.data != MAPI_REL_TO_ONE && l.data != MAPI_REL_TO_MANY)
            continue;
        push_key(L, kc, l.name, l.name_len, l.name_id);
        if (l.data == MAPI_REL_TO_ONE) {
            lua_rawgeti(L, slots, (int)l.targets[0] + 1);
        } else {
            lua_createtable(L, l.count > INT_MAX ? INT_MAX : (int)l.count, 0);
            for (j = 0; j < l.count && j < (size_t)INT_MAX; j++) {
                lua_rawgeti(L, slots, (int)l.targets[j] + 1);
                lua_rawseti(L, -2, (int)j + 1);
            }
        }
        lua_rawset(L, -3);
    }
}

/* Whether a resource has anything the flattened table cannot show: links,
   meta or relationships (whose links, meta, linkage meta and data state --
   not loaded or null -- only the accessors give). */
static int has_extras(const mapi_resource *r)
{
    return mapi_resource_relationship_count(r) > 0 || mapi_resource_links(r) != NULL ||
           mapi_resource_meta(r) != NULL;
}

/* The holder of a document's resource tables (a Lua table, indexes below),
   their metatable: what merchantapi.links / meta / relationship read,
   built lazily. */
enum {
    HOLDER_BODY = 1, /* the document's body string, until the infos are built */
    HOLDER_SLOTS,    /* weak-valued: resource index + 1 -> its table */
    HOLDER_INFO,     /* resource index + 1 -> info table (push_info), once built */
    HOLDER_REV,      /* weak-keyed: resource table -> index + 1, once built */
    HOLDER_MARK      /* holder_mark's address: tells a holder from other metatables */
};

static const char holder_mark = 'h';

/*
 * Pushes the flattened primary data of doc: the resource table, or for a
 * list an array with .meta and .links (the tables at stack indexes meta and
 * links, or nil).  Pushes nothing and returns 0 when the document has no
 * primary data.  Every resource table with links, meta or relationships
 * gets the document's holder as its metatable (it has no metamethods); the
 * holder keeps the body string at stack index body, from which
 * core.resource_info reads them on demand.
 */
int mapi_lua_push_flattened(lua_State *L, const mapi_doc *doc, int meta, int links, int body)
{
    size_t n = mapi_doc_resource_count(doc), i, ndata;
    int slots, holder;
    key_cache kc;

    if (!mapi_doc_is_list(doc) && mapi_doc_data_count(doc) == 0)
        return 0;
    if (n >= (size_t)INT_MAX)
        luaL_error(L, "merchantapi: document holds too many resources");
    luaL_checkstack(L, 12, "merchantapi: out of stack space");

    lua_createtable(L, (int)n, 0);
    slots = lua_gettop(L);
    lua_pushnil(L); /* holder: made when first needed */
    holder = slots + 1;
    key_cache_init(L, &kc, doc);
    for (i = 0; i < n; i++) {
        const mapi_resource *r = mapi_doc_resource(doc, i);
        push_resource_fields(L, &kc, r);
        if (has_extras(r)) {
            if (lua_isnil(L, holder)) {
                lua_createtable(L, 5, 0);
                lua_pushvalue(L, body);
                lua_rawseti(L, -2, HOLDER_BODY);
                lua_pushvalue(L, slots);
                lua_rawseti(L, -2, HOLDER_SLOTS);
                lua_pushlightuserdata(L, (void *)&holder_mark);
                lua_rawseti(L, -2, HOLDER_MARK);
                lua_replace(L, holder);
            }
            lua_pushvalue(L, holder);
            lua_setmetatable(L, -2);
        }
        lua_rawseti(L, slots, (int)(i + 1));
    }
    for (i = 0; i < n; i++) {
        const mapi_resource *r = mapi_doc_resource(doc, i);
        if (mapi_resource_relationship_count(r) == 0)
            continue;
        lua_rawgeti(L, slots, (int)(i + 1));
        set_relationships(L, &kc, doc, r, slots);
        lua_pop(L, 1);
    }
    lua_settop(L, holder); /* the key cache */

    if (mapi_doc_is_list(doc)) {
        ndata = mapi_doc_data_count(doc);
        lua_createtable(L, (int)ndata, 2);
        for (i = 0; i < ndata; i++) {
            lua_rawgeti(L, slots, (int)mapi_resource_index(mapi_doc_data(doc, i)) + 1);
            lua_rawseti(L, -2, (int)(i + 1));
        }
        lua_pushvalue(L, meta);
        lua_setfield(L, -2, "meta");
        lua_pushvalue(L, links);
        lua_setfield(L, -2, "links");
    } else {
        lua_rawgeti(L, slots, (int)mapi_resource_index(mapi_doc_data(doc, 0)) + 1);
    }
    if (!lua_isnil(L, holder)) {
        /* only now, every table placed: the holder must not keep the
           resource tables alive, and a table held by slots alone may go */
        luaL_getmetatable(L, WEAK_V_MT);
        lua_setmetatable(L, slots);
    }
    lua_replace(L, slots);
    lua_settop(L, slots);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Links, meta and relationships (merchantapi.links, meta, relationship)    */
/* ------------------------------------------------------------------------ */

/*
 * The flattened tables hold no key but id, type, lid, the attributes and
 * the resolved relationships.  What else a resource says -- its links and
 * meta, and for every relationship its links, meta, linkage (with each
 * identifier's meta) and whether data was null or absent -- is read on
 * demand: mapi_lua_push_flattened gives each resource table that has any of it its
 * document's holder as metatable (no metamethods: the table behaves as a
 * plain one), and the holder keeps the body.  The first
 * core.resource_info call on a resource of that document parses the body
 * again, builds the info of every such resource at once, and drops the
 * body.  The holder never refers to a resource table strongly (slots
 * weak-valued, rev weak-keyed, infos without resolved tables), so holding
 * it keeps no resource alive.  (A weak-keyed table from resource to holder
 * would do the same without a metatable, but one insertion per resource
 * made merchantapi.decode of the 1,000-address page 20 % slower.)
 */

/* Pushes a JSON object member of the document as a Lua value (null: nil). */
static void push_member_value(lua_State *L, const key_cache *kc, const mapi_value *v)
{
    push_value(L, kc, v, NULL_AS_NIL, 1);
}

/* Pushes a string member as a Lua string, or nil when it is not a string. */
static void push_string_member(lua_State *L, const mapi_value *obj, const char *name)
{
    size_t len;
    const char *s = mapi_value_string(mapi_value_get(obj, name), &len);
    if (s)
        lua_pushlstring(L, s, len);
    else
        lua_pushnil(L);
}

/* Pushes a resource identifier object as { type, id, lid, meta }. */
static void push_identifier(lua_State *L, const key_cache *kc, const mapi_value *link)
{
    const mapi_value *meta = mapi_value_get(link, "meta");

    lua_createtable(L, 0, 4);
    push_string_member(L, link, "type");
    lua_setfield(L, -2, "type");
    push_string_member(L, link, "id");
    lua_setfield(L, -2, "id");
    push_string_member(L, link, "lid");
    lua_setfield(L, -2, "lid");
    if (meta) {
        push_member_value(L, kc, meta);
        lua_setfield(L, -2, "meta");
    }
}

/* Pushes the info of resource r: { links, meta, relationships = { name ->
   { data = "none"|"null"|"one"|"many", links, meta, linkage } },
   names = { relationship names in document order } }. */
static void push_info(lua_State *L, const key_cache *kc, const mapi_doc *doc,
                      const mapi_resource *r)
{
    static const char *const states[] = {"none", "null", "one", "many"};
    size_t i, j, n = mapi_resource_relationship_count(r);
    int nrel = n > INT_MAX ? INT_MAX : (int)n;
    mapi_relationship rel;

    luaL_checkstack(L, 8, "merchantapi: out of stack space");
    lua_createtable(L, 0, 4);
    if (mapi_resource_links(r)) {
        push_member_value(L, kc, mapi_resource_links(r));
        lua_setfield(L, -2, "links");
    }
    if (mapi_resource_meta(r)) {
        push_member_value(L, kc, mapi_resource_meta(r));
        lua_setfield(L, -2, "meta");
    }
    lua_createtable(L, 0, nrel); /* relationships */
    lua_createtable(L, nrel, 0); /* names */
    for (i = 0; i < n && mapi_resource_relationship_at(doc, r, i, &rel); i++) {
        push_key(L, kc, rel.name, rel.name_len, rel.name_id);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, (int)i + 1);
        lua_createtable(L, 0, 4);
        lua_pushstring(L, states[rel.data <= MAPI_REL_TO_MANY ? rel.data : 0]);
        lua_setfield(L, -2, "data");
        if (rel.links) {
            push_member_value(L, kc, rel.links);
            lua_setfield(L, -2, "links");
        }
        if (rel.meta) {
            push_member_value(L, kc, rel.meta);
            lua_setfield(L, -2, "meta");
        }
        if (rel.data == MAPI_REL_NULL_DATA) {
            lua_pushlightuserdata(L, NULL); /* merchantapi.null */
            lua_setfield(L, -2, "linkage");
        } else if (rel.data == MAPI_REL_TO_ONE) {
            push_identifier(L, kc, mapi_relationship_linkage(&rel, 0));
            lua_setfield(L, -2, "linkage");
        } else if (rel.data == MAPI_REL_TO_MANY) {
            lua_createtable(L, rel.count > INT_MAX ? INT_MAX : (int)rel.count, 0);
            for (j = 0; j < rel.count && j < (size_t)INT_MAX; j++) {
                push_identifier(L, kc, mapi_relationship_linkage(&rel, j));
                lua_rawseti(L, -2, (int)j + 1);
            }
            lua_setfield(L, -2, "linkage");
        }
        lua_rawset(L, -4); /* relationships[name] = the record */
    }
    lua_setfield(L, -3, "names");
    lua_setfield(L, -2, "relationships");
}

/* Builds the infos of the holder at stack index holder (HOLDER_INFO,
   HOLDER_REV) from its body, and drops the body.  A body that no longer
   parses (it did once: it cannot) leaves empty infos. */
static void build_infos(lua_State *L, int holder)
{
    const char *body;
    size_t len, n, i;
    int info, rev, slots;
    doc_box *db;
    err_box *eb;

    luaL_checkstack(L, 12, "merchantapi: out of stack space");
    lua_rawgeti(L, holder, HOLDER_SLOTS);
    slots = lua_gettop(L);
    lua_rawgeti(L, holder, HOLDER_BODY);
    body = lua_tolstring(L, -1, &len);
    db = mapi_lua_push_doc_box(L);
    eb = mapi_lua_push_err_box(L);
    if (body == NULL || mapi_doc_parse(body, len, &db->doc, &eb->err) != 0) {
        mapi_error_clear(&eb->err);
        n = 0;
    } else {
        n = mapi_doc_resource_count(db->doc);
    }
    lua_createtable(L, n > INT_MAX ? INT_MAX : (int)n, 0);
    info = lua_gettop(L);
    if (n > 0) {
        key_cache kc;
        key_cache_init(L, &kc, db->doc);
        for (i = 0; i < n && i < (size_t)INT_MAX; i++) {
            const mapi_resource *r = mapi_doc_resource(db->doc, i);
            if (!has_extras(r))
                continue;
            push_info(L, &kc, db->doc, r);
            lua_rawseti(L, info, (int)i + 1);
        }
        lua_settop(L, info);
    }
    doc_box_release(db);
    lua_createtable(L, 0, n > INT_MAX ? INT_MAX : (int)n);
    rev = lua_gettop(L);
    luaL_getmetatable(L, WEAK_K_MT);
    lua_setmetatable(L, rev);
    for (i = 0; i < n && i < (size_t)INT_MAX; i++) {
        lua_rawgeti(L, slots, (int)i + 1);
        if (lua_type(L, -1) == LUA_TTABLE) {
            mapic_pushint64(L, (int64_t)i + 1);
            lua_rawset(L, rev);
        } else {
            lua_pop(L, 1);
        }
    }
    lua_pushvalue(L, info);
    lua_rawseti(L, holder, HOLDER_INFO);
    lua_pushvalue(L, rev);
    lua_rawseti(L, holder, HOLDER_REV);
    lua_pushnil(L);
    lua_rawseti(L, holder, HOLDER_BODY);
    lua_settop(L, slots - 1);
}

/* core.resource_info(t) -> the info of a resource table the module made
   (push_info's shape), or nil for any other value, for a resource without
   links, meta or relationships, and for one whose metatable was replaced.
   lua/merchantapi.lua builds the public accessors on it. */
int mapi_lua_resource_info(lua_State *L)
{
    int64_t index;

    lua_settop(L, 1);
    if (lua_type(L, 1) != LUA_TTABLE) {
        lua_pushnil(L);
        return 1;
    }
    if (!lua_getmetatable(L, 1)) { /* 2: the holder */
        lua_pushnil(L);
        return 1;
    }
    lua_rawgeti(L, 2, HOLDER_MARK);
    if (lua_touserdata(L, -1) != (void *)&holder_mark) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushvalue(L, 2); /* 4 -> 3: the holder */
    lua_replace(L, 3);
    lua_rawgeti(L, 3, HOLDER_REV); /* 4 */
    if (lua_isnil(L, 4)) {
        lua_pop(L, 1);
        build_infos(L, 3);
        lua_rawgeti(L, 3, HOLDER_REV);
    }
    lua_pushvalue(L, 1);
    lua_rawget(L, 4); /* 5: index + 1 */
    if (!mapic_tointeger(L, 5, &index) || index < 1 || index > INT_MAX) {
        lua_pushnil(L);
        return 1;
    }
    lua_rawgeti(L, 3, HOLDER_INFO);
    lua_rawgeti(L, -1, (int)index);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static void set_string(lua_State *L, const char *key, const char *value)
{
    if (value == NULL)
        return;
    lua_pushstring(L, value);
    lua_setfield(L, -2, key);
}

static void set_int(lua_State *L, const char *key, long value)
{
    mapic_pushint64(L, (int64_t)value);
    lua_setfield(L, -2, key);
}

/* The fields an error and each of its entries share, into the table on top. */
static void set_entry(lua_State *L, int status, const char *code, const char *title,
                      const char *detail, const char *pointer)
{
    if (status > 0)
        set_int(L, "status", status);
    set_string(L, "code", code);
    set_string(L, "title", title);
    set_string(L, "detail", detail);
    set_string(L, "pointer", pointer);
}


/* Pushes the contract's error table for e (every field; see docs/contract.md
   "Errors"), with the merchantapi.error metatable. */
void mapi_lua_push_error(lua_State *L, const mapi_error *e)
{
    size_t i;
    const char *kind = mapi_error_kind_name(e->kind);

    luaL_checkstack(L, 8, "merchantapi: out of stack space");
    lua_createtable(L, 0, 22);
    set_string(L, "kind", *kind ? kind : "memory");
    set_entry(L, e->status, e->code, e->title, e->detail, e->pointer);

    lua_createtable(L, e->nerrors > INT_MAX ? INT_MAX : (int)e->nerrors, 0);
    for (i = 0; i < e->nerrors && i < (size_t)INT_MAX; i++) {
        const mapi_error_entry *en = &e->errors[i];
        lua_createtable(L, 0, 5);
        set_entry(L, en->status, en->code, en->title, en->detail, en->pointer);
        lua_rawseti(L, -2, (int)(i + 1));
    }
    lua_setfield(L, -2, "errors");

    set_string(L, "amount", e->amount);
    set_string(L, "minimum", e->minimum);
    set_string(L, "maximum", e->maximum);
    lua_pushboolean(L, e->retryable);
    lua_setfield(L, -2, "retryable");
    if (e->outcome != MAPI_OUTCOME_NONE)
        set_string(L, "outcome", mapi_outcome_name(e->outcome));
    set_string(L, "method", e->method);
    set_string(L, "url", e->url);
    set_string(L, "request_id", e->request_id);
    if (e->retry_after >= 0) {
        lua_pushnumber(L, (lua_Number)e->retry_after);
        lua_setfield(L, -2, "retry_after");
    }
    if (e->attempts > 0)
        set_int(L, "attempts", e->attempts);
    if (e->curl_code != 0)
        set_int(L, "curl_code", e->curl_code);
    if (e->deadline_exceeded) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "deadline_exceeded");
    }
    if (e->payout) { /* a settled confirm's read: the payout, still a draft */
        int body;
        mapi_lua_push_body(L, mapi_doc_response(e->payout));
        body = lua_gettop(L);
        mapi_lua_push_doc_members(L, e->payout);
        if (mapi_lua_push_flattened(L, e->payout, body + 1, body + 3, body))
            lua_setfield(L, body - 1, "payout");
        lua_settop(L, body - 1);
    }
    if (e->settle_error) { /* the read that tried to settle a confirm failed */
        mapi_lua_push_error(L, e->settle_error);
        lua_setfield(L, -2, "settle_error");
    }
    if (e->message) {
        set_string(L, "message", e->message);
    } else {
        lua_pushfstring(L, "merchantapi: %s: %s", *kind ? kind : "memory",
                        e->title ? e->title : "error");
        lua_setfield(L, -2, "message");
    }
    mapic_setmetatable(L, ERROR_MT);
}

/* Pushes an error table made here (a closed client, an id with a NUL byte). */
void mapi_lua_push_simple_error(lua_State *L, const char *kind, const char *title,
                              const char *method)
{
    lua_createtable(L, 0, 6);
    set_string(L, "kind", kind);
    set_string(L, "title", title);
    lua_newtable(L);
    lua_setfield(L, -2, "errors");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "retryable");
    set_string(L, "method", method);
    if (mapi_method_safety(method) == 0)
        set_string(L, "outcome", "not_sent"); /* the core's rule (mapi_call_not_sent) */
    lua_pushfstring(L, "merchantapi: %s: %s", kind, title);
    lua_setfield(L, -2, "message");
    mapic_setmetatable(L, ERROR_MT);
}

/* Pushes the one-line message of the error table at idx: its `message`,
   else one made from its `kind`. */
static void push_error_message(lua_State *L, int idx)
{
    luaL_checkstack(L, 3, "merchantapi: out of stack space");
    if (lua_type(L, idx) == LUA_TTABLE) {
        lua_getfield(L, idx, "message");
        if (lua_type(L, -1) == LUA_TSTRING)
            return;
        lua_pop(L, 1);
        lua_getfield(L, idx, "kind");
        if (lua_type(L, -1) == LUA_TSTRING) {
            lua_pushfstring(L, "merchantapi: %s error", lua_tostring(L, -1));
            lua_remove(L, -2);
            return;
        }
        lua_pop(L, 1);
    }
    lua_pushliteral(L, "merchantapi: error");
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

    luaL_checkstack(L, 4, "merchantapi: out of stack space");
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

/* ------------------------------------------------------------------------ */
/* The response object                                                      */
/* ------------------------------------------------------------------------ */

/* res:document() -- upvalue 1: the body; upvalue 2: the decoded document
   once built.  Returns the whole document unflattened (null as
   merchantapi.null), or nil, err when the body is not a JSON:API document. */
static int res_document(lua_State *L)
{
    const char *body;
    size_t len;
    doc_box *db;
    err_box *eb;

    if (!lua_isnil(L, lua_upvalueindex(2))) {
        lua_pushvalue(L, lua_upvalueindex(2));
        return 1;
    }
    body = lua_tolstring(L, lua_upvalueindex(1), &len);
    if (body == NULL) {
        lua_pushnil(L);
        mapi_lua_push_simple_error(L, "decode", "the response has no body", NULL);
        return 2;
    }
    db = mapi_lua_push_doc_box(L);
    eb = mapi_lua_push_err_box(L);
    if (mapi_doc_parse(body, len, &db->doc, &eb->err) != 0) {
        lua_pushnil(L);
        mapi_lua_push_error(L, &eb->err);
        mapi_error_clear(&eb->err);
        return 2;
    }
    {
        key_cache kc;
        key_cache_init(L, &kc, db->doc);
        push_value(L, &kc, mapi_doc_root(db->doc), NULL_AS_SENTINEL, 0);
        lua_replace(L, kc.table);
        lua_settop(L, kc.table);
    }
    doc_box_release(db);
    lua_pushvalue(L, -1);
    lua_replace(L, lua_upvalueindex(2));
    return 1;
}

/*
 * Pushes the response object: status, headers (lower-case names; the last
 * of repeated headers), request_id, elapsed, body (the string at stack
 * index body), meta, jsonapi and links (the values at stack indexes meta,
 * jsonapi, links; 0 for none) and document().  resp may be NULL (decode).
 */
static void push_response(lua_State *L, const mapi_response *resp, int body, int meta,
                          int jsonapi, int links)
{
    const char *name, *value;
    size_t i;

    luaL_checkstack(L, 6, "merchantapi: out of stack space");
    lua_createtable(L, 0, 10);
    if (resp) {
        set_int(L, "status", mapi_response_status(resp));
        set_string(L, "request_id", mapi_response_request_id(resp));
        lua_pushnumber(L, (lua_Number)mapi_response_elapsed(resp));
        lua_setfield(L, -2, "elapsed");
    }
    /* sized once (a hint: a repeated header takes one slot) */
    lua_createtable(L, 0, resp && resp->nheaders < 64 ? (int)resp->nheaders : 0);
    for (i = 0; resp && mapi_response_header_at(resp, i, &name, &value); i++) {
        lua_pushstring(L, value ? value : "");
        lua_setfield(L, -2, name);
    }
    lua_setfield(L, -2, "headers");
    if (meta) {
        lua_pushvalue(L, meta);
        lua_setfield(L, -2, "meta");
    }
    if (jsonapi) {
        lua_pushvalue(L, jsonapi);
        lua_setfield(L, -2, "jsonapi");
    }
    if (links) {
        lua_pushvalue(L, links);
        lua_setfield(L, -2, "links");
    }
    lua_pushvalue(L, body);
    lua_setfield(L, -2, "body");
    lua_pushvalue(L, body);
    lua_pushnil(L);
    lua_pushcclosure(L, res_document, 2);
    lua_setfield(L, -2, "document");
}

/* Pushes the body of resp as a string ("" for none). */
void mapi_lua_push_body(lua_State *L, const mapi_response *resp)
{
    size_t len = 0;
    const char *body = resp ? mapi_response_body(resp, &len) : NULL;
    lua_pushlstring(L, body ? body : "", body ? len : 0);
}

/* Pushes the document's meta (push_meta), jsonapi and links (objects, or
   nil): three stack slots. */
void mapi_lua_push_doc_members(lua_State *L, const mapi_doc *doc)
{
    luaL_checkstack(L, 6, "merchantapi: out of stack space");
    push_meta(L, doc);
    if (mapi_value_type(mapi_doc_jsonapi(doc)) == MAPI_OBJECT)
        push_value(L, NULL, mapi_doc_jsonapi(doc), NULL_AS_NIL, 0);
    else
        lua_pushnil(L);
    if (mapi_value_type(mapi_doc_links(doc)) == MAPI_OBJECT)
        push_value(L, NULL, mapi_doc_links(doc), NULL_AS_NIL, 0);
    else
        lua_pushnil(L);
}

/*
 * Pushes the three results of a successful call or decode of doc:
 * value, nil, res -- where value is merchantapi.null when the document has
 * no primary data (data null, a meta-only document, a 2xx without a body),
 * so that the first value is truthy on every success -- or nil, err, res
 * when the document is an error document (decode).  body is the stack index
 * of the body string, or 0 to take the document's response body.  Frees the
 * document.  Returns 3.
 */
int mapi_lua_push_results(lua_State *L, doc_box *db, err_box *eb, int body)
{
    return mapi_lua_push_doc_results(L, &db->doc, &eb->err, body);
}

/* mapi_lua_push_results on a document and an error anchored by their owner
   (a call box, an exchange): *docp is freed and set to NULL. */
int mapi_lua_push_doc_results(lua_State *L, mapi_doc **docp, mapi_error *err, int body)
{
    const mapi_doc *doc = *docp;
    int meta;

    luaL_checkstack(L, 10, "merchantapi: out of stack space");
    if (body == 0) {
        mapi_lua_push_body(L, mapi_doc_response(doc));
        body = lua_gettop(L);
    }
    mapi_lua_push_doc_members(L, doc);
    meta = lua_gettop(L) - 2;

    if (mapi_doc_error(doc, err) != 0) {
        /* an error document by the core's one rule (mapi_doc_error_rule): API,
           DECODE (data and errors together) or MEMORY.  Only decode meets one:
           the client's calls were mapped by the same rule. */
        lua_pushnil(L);
        mapi_lua_push_error(L, err);
        mapi_error_clear(err);
    } else if (mapi_lua_push_flattened(L, doc, meta, meta + 2, body)) {
        lua_pushnil(L);
    } else {
        lua_pushlightuserdata(L, NULL); /* merchantapi.null */
        lua_pushnil(L);
    }
    push_response(L, mapi_doc_response(doc), body, meta, meta + 1, meta + 2);
    set_string(L, "settled_by", mapi_doc_settled_by(doc)); /* a settled confirm: "read" */
    mapi_doc_free(*docp);
    *docp = NULL;
    return 3;
}

/* Pushes nil, err[, res] for a failed call and clears the error.  res
   carries meta, jsonapi and links when the answer's body is a JSON:API
   document (an error document, or a 2xx the call refused), as on success.
   Returns the number of results. */
int mapi_lua_push_failure(lua_State *L, err_box *eb)
{
    return mapi_lua_push_err_results(L, &eb->err);
}

/* mapi_lua_push_failure on an error anchored by its owner (a call box, an
   exchange). */
int mapi_lua_push_err_results(lua_State *L, mapi_error *err)
{
    const mapi_response *resp = err->response;
    int top, body, meta = 0;
    const char *text;
    size_t len;
    call_box *pb;

    lua_pushnil(L);
    mapi_lua_push_error(L, err);
    if (!resp) {
        mapi_error_clear(err);
        return 2;
    }
    top = lua_gettop(L);
    luaL_checkstack(L, 10, "merchantapi: out of stack space");
    mapi_lua_push_body(L, resp);
    body = lua_gettop(L);
    text = lua_tolstring(L, body, &len);
    pb = mapi_lua_push_call_box(L);
    if (len > 0 && mapi_doc_parse(text, len, &pb->doc, &pb->err) == 0) {
        mapi_lua_push_doc_members(L, pb->doc);
        meta = lua_gettop(L) - 2;
        mapi_doc_free(pb->doc);
        pb->doc = NULL;
    }
    mapi_error_clear(&pb->err);
    push_response(L, resp, body, meta, meta ? meta + 1 : 0, meta ? meta + 2 : 0);
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
    mapi_error_clear(err);
    return 3;
}

/* ------------------------------------------------------------------------ */
/* decode                                                                   */
/* ------------------------------------------------------------------------ */

/* core.decode(body) -> value, nil, res | nil, err[, res]: value as the
   calls give it (merchantapi.null for no primary data) */
int mapi_lua_decode(lua_State *L)
{
    size_t len;
    const char *body;
    call_box *cb;

    if (lua_type(L, 1) != LUA_TSTRING)
        return mapic_typeerror(L, 1, "string");
    lua_settop(L, 1);
    body = lua_tolstring(L, 1, &len);
    cb = mapi_lua_push_call_box(L);
    if (mapi_doc_parse(body, len, &cb->doc, &cb->err) != 0)
        return mapi_lua_push_err_results(L, &cb->err);
    /* res.body and res:document() use the argument itself, not a copy of it */
    return mapi_lua_push_doc_results(L, &cb->doc, &cb->err, 1);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

void mapi_lua_new_metatable(lua_State *L, const char *name)
{
    luaL_newmetatable(L, name);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__name");
}

void mapi_lua_box_metatable(lua_State *L, const char *name, lua_CFunction gc)
{
    luaL_checkstack(L, 3, "merchantapi: out of stack space");
    mapi_lua_new_metatable(L, name);
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
}

void mapi_lua_class_metatable(lua_State *L, const char *name, const luaL_Reg *methods,
                              lua_CFunction gc)
{
    int n = 0;

    while (methods[n].name)
        n++;
    luaL_checkstack(L, 4, "merchantapi: out of stack space");
    mapi_lua_new_metatable(L, name);
    lua_createtable(L, 0, n);
    mapic_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
}

void mapi_lua_convert_open(lua_State *L)
{
    luaL_checkstack(L, 4, "merchantapi: out of stack space");

    mapi_lua_box_metatable(L, DOC_BOX_MT, doc_box_gc);
    mapi_lua_box_metatable(L, ERR_BOX_MT, err_box_gc);
    mapi_lua_box_metatable(L, CALL_BOX_MT, call_box_gc);

    mapi_lua_new_metatable(L, WEAK_V_MT);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_pop(L, 1);

    mapi_lua_new_metatable(L, WEAK_K_MT);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_pop(L, 1);

    /* the one metatable of every error table, the Lua side's included
       (merchantapi.errors sets it from core.error_metatable) */
    mapi_lua_new_metatable(L, ERROR_MT);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, error_concat);
    lua_setfield(L, -2, "__concat");
    lua_pop(L, 1);
}

/*
 * lua_values.c -- merchantapi.core: Lua values from documents.
 *
 * A mapi_doc becomes Lua tables by the rules of docs/contract.md
 * ("Resources come back flattened and resolved", "Numbers are exact"):
 * JSON values, the pagination meta, the flattened resource tables, the
 * document's meta / jsonapi / links, the whole document for res:document(),
 * and core.resource_info (what merchantapi.links / meta / relationship
 * read).  The memory rules of the binding are in lua_base.c.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"

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
 * (mapi_members_name_id, mapi_relationship.name_id, mapi_resource_type_id).
 * The Lua string of a name numbered below MAPI_LUA_NAME_SLOTS is kept in
 * the state's anchors (lua_base.c) from one document to the next -- the
 * documents of one endpoint number their names alike -- and checked
 * against the name's bytes before it is used; the names numbered above
 * that go in a table of this document's, made at its final size.  Either
 * way a name is hashed into Lua's string table at most once per document.
 */
typedef struct key_cache {
    int anchors; /* stack index of the anchors (mapi_lua_push_anchors) */
    int table;   /* stack index: name number + 1 -> Lua string, for the numbers
                    from MAPI_LUA_NAME_SLOTS on (nil when there are none) */
    size_t size; /* mapi_doc_name_count */
} key_cache;

/* The cache of doc's names, its table at stack index table (nil until it is
   made here; a document made into tables in pieces keeps it there from one
   piece to the next); pushes the anchors (one stack slot). */
static void key_cache_at(lua_State *L, key_cache *kc, const mapi_doc *doc, int table)
{
    size_t n = mapi_doc_name_count(doc);

    luaL_checkstack(L, 12, MAPI_LUA_NO_STACK);
    kc->size = n < (size_t)INT_MAX ? n : 0;
    kc->table = table;
    if (kc->size > MAPI_LUA_NAME_SLOTS && lua_isnil(L, table)) {
        lua_createtable(L, (int)kc->size, 0);
        lua_replace(L, table);
    }
    kc->anchors = mapi_lua_push_anchors(L);
}

/* Pushes the cache (two stack slots): pop them with lua_settop(L, kc.table - 1). */
static void key_cache_init(lua_State *L, key_cache *kc, const mapi_doc *doc)
{
    luaL_checkstack(L, 1, MAPI_LUA_NO_STACK);
    lua_pushnil(L);
    key_cache_at(L, kc, doc, lua_gettop(L));
}

/* Pushes the Lua string of the name name[0..len) numbered id. */
static void push_key(lua_State *L, const key_cache *kc, const char *name, size_t len, size_t id)
{
    if (kc && id < MAPI_LUA_NAME_SLOTS) {
        mapi_lua_push_name(L, kc->anchors, MAPI_LUA_NAME_SLOT(id), name, len);
        return;
    }
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

/* A container: one table, and room for its members (a key and a value at a
   time) above it. */
static void container(lua_State *L, int depth, size_t narr, size_t nrec)
{
    if (depth > MAX_VALUE_DEPTH)
        luaL_error(L, "merchantapi: JSON value nested deeper than %d", MAX_VALUE_DEPTH);
    luaL_checkstack(L, 4, "merchantapi: JSON value nested too deeply");
    lua_createtable(L, narr > INT_MAX ? INT_MAX : (int)narr, nrec > INT_MAX ? INT_MAX : (int)nrec);
}

static void push_array(lua_State *L, const key_cache *kc, const mapi_value *v,
                       enum null_mode mode, int depth)
{
    size_t i, n = mapi_value_len(v);

    container(L, depth, n, 0);
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

    container(L, depth, 0, n);
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

/* Pushes one JSON value by the contract's rules ("Numbers are exact"), in
   the stack slot the caller has room for. */
static void push_value(lua_State *L, const key_cache *kc, const mapi_value *v,
                       enum null_mode mode, int depth)
{
    int64_t n;
    size_t len;
    const char *s;

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

/* Pushes the document's meta (null -> nil; nil when absent).  In a list,
   page/per_page/total that are counts (mapi_value_count: 2, 2.0, 1e3, "50")
   are pushed as integers by the usual rule (their decimal text beyond
   2^53); any other value comes as it came: the list calls refused such a
   list (mapping.c), the other paths keep meta as data (an object
   "page": {"offset": 0, "limit": 10} from another JSON:API server). */
static void push_meta(lua_State *L, const mapi_doc *doc)
{
    static const char *const ints[] = {"page", "per_page", "total"};
    const mapi_value *meta = mapi_doc_meta(doc);
    size_t i;
    int64_t n;

    push_value(L, NULL, meta, NULL_AS_NIL, 0);
    for (i = 0; meta && mapi_doc_is_list(doc) && i < sizeof ints / sizeof ints[0]; i++) {
        if (mapi_value_count(mapi_value_get(meta, ints[i]), &n) == 0) {
            push_int64(L, n);
            lua_setfield(L, -2, ints[i]);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Documents -> resource tables                                             */
/* ------------------------------------------------------------------------ */

/* Pass 1: one table per resource with id (or lid), type and every
   attribute, sized for them and its relationships.  The core refused the
   documents where a field is named id or type (or lid beside a lid), or
   both an attribute and a relationship: no key is set twice. */
static void push_resource_fields(lua_State *L, const key_cache *kc, const mapi_resource *r)
{
    const mapi_value *attrs = mapi_resource_attributes(r);
    size_t tlen, len, lid_len, size;
    const char *type = mapi_resource_type_n(r, &tlen), *id, *lid = mapi_resource_lid(r, &lid_len);
    const char *const *decimals = mapi_decimal_fields(type, tlen); /* calls.c's table */
    mapi_members it;
    const char *key;
    const mapi_value *v;

    size = 2 + (lid != NULL) + mapi_value_len(attrs) + mapi_resource_relationship_count(r);
    lua_createtable(L, 0, size > INT_MAX ? INT_MAX : (int)size);
    mapi_members_begin(attrs, &it);
    while (mapi_members_next_n(&it, &key, &len, &v)) {
        if (v == NULL)
            continue; /* JSON null: absent */
        push_key(L, kc, key, len, mapi_members_name_id(&it));
        if (decimals && mapi_field_listed(decimals, key, len))
            push_amount(L, v);
        else
            push_value(L, kc, v, NULL_AS_NIL, 1);
        lua_rawset(L, -3);
    }
    id = mapi_resource_id_n(r, &len);
    if (id) {
        lua_rawgeti(L, kc->anchors, MAPI_LIT_ID);
        lua_pushlstring(L, id, len);
        lua_rawset(L, -3);
    }
    if (lid) {
        lua_rawgeti(L, kc->anchors, MAPI_LIT_LID);
        lua_pushlstring(L, lid, lid_len);
        lua_rawset(L, -3);
    }
    lua_rawgeti(L, kc->anchors, MAPI_LIT_TYPE);
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
    HOLDER_BODY = 1, /* the document's body (a string or a body box), until the infos are built */
    HOLDER_SLOTS,    /* weak-valued: resource index + 1 -> its table */
    HOLDER_INFO,     /* resource index + 1 -> info table (push_info), once built */
    HOLDER_REV,      /* weak-keyed: resource table -> index + 1, once built */
    HOLDER_MARK      /* holder_mark's address: tells a holder from other metatables */
};

static const char holder_mark = 'h';

/* A list's array gets .meta and .links (the values at stack indexes meta
   and links); a resource table with links, meta or relationships gets the
   document's holder (below), which keeps the body at stack index body, or
   for body 0 a body box made when the first holder is. */
int mapi_lua_push_flattened(lua_State *L, const mapi_doc *doc, int meta, int links, int body)
{
    int slots = lua_gettop(L) + 1;

    if (!mapi_doc_is_list(doc) && mapi_doc_data_count(doc) == 0)
        return 0;
    luaL_checkstack(L, 3, MAPI_LUA_NO_STACK);
    lua_pushnil(L);
    lua_pushnil(L);
    lua_pushnil(L);
    return mapi_lua_flatten_steps(L, doc, slots, 0, 2 * mapi_doc_resource_count(doc), meta,
                                  links, body);
}

int mapi_lua_flatten_steps(lua_State *L, const mapi_doc *doc, int slots, size_t from, size_t to,
                           int meta, int links, int body)
{
    size_t n = mapi_doc_resource_count(doc), i, ndata;
    int holder = slots + 1;
    key_cache kc;

    if (n >= (size_t)INT_MAX)
        luaL_error(L, "merchantapi: document holds too many resources");
    luaL_checkstack(L, 12, MAPI_LUA_NO_STACK);
    if (lua_isnil(L, slots)) {
        lua_createtable(L, (int)n, 0);
        lua_replace(L, slots);
    }
    key_cache_at(L, &kc, doc, slots + 2); /* the anchors popped with the piece's other slots */
    /* pass 1: one table a resource, into slots */
    for (i = from; i < to && i < n; i++) {
        const mapi_resource *r = mapi_doc_resource(doc, i);
        push_resource_fields(L, &kc, r);
        if (has_extras(r)) {
            if (lua_isnil(L, holder)) {
                lua_createtable(L, 5, 0);
                if (body)
                    lua_pushvalue(L, body);
                else
                    mapi_lua_push_body_box(L, doc);
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
    /* pass 2, every table made: the relationships */
    for (i = from > n ? from - n : 0; i + n < to; i++) {
        const mapi_resource *r = mapi_doc_resource(doc, i);
        if (mapi_resource_relationship_count(r) == 0)
            continue;
        lua_rawgeti(L, slots, (int)(i + 1));
        set_relationships(L, &kc, doc, r, slots);
        lua_pop(L, 1);
    }
    lua_settop(L, kc.table);
    if (to < 2 * n)
        return 0;
    lua_settop(L, holder);
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

int mapi_lua_push_data(lua_State *L, const mapi_doc *doc)
{
    int base = lua_gettop(L), pushed;

    luaL_checkstack(L, 5, MAPI_LUA_NO_STACK);
    mapi_lua_push_doc_members(L, doc);
    pushed = mapi_lua_push_flattened(L, doc, base + 1, base + 3, 0); /* the body: a box */
    if (pushed)
        lua_replace(L, base + 1);
    lua_settop(L, base + pushed);
    return pushed;
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

/* t[key] = the value v (nothing for NULL), on the table on top. */
static void set_value(lua_State *L, const key_cache *kc, const char *key, const mapi_value *v)
{
    if (!v)
        return;
    push_value(L, kc, v, NULL_AS_NIL, 1);
    lua_setfield(L, -2, key);
}

/* Pushes a resource identifier object as { type, id, lid, meta }. */
static void push_identifier(lua_State *L, const key_cache *kc, const mapi_value *link)
{
    lua_createtable(L, 0, 4);
    push_string_member(L, link, "type");
    lua_setfield(L, -2, "type");
    push_string_member(L, link, "id");
    lua_setfield(L, -2, "id");
    push_string_member(L, link, "lid");
    lua_setfield(L, -2, "lid");
    set_value(L, kc, "meta", mapi_value_get(link, "meta"));
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

    luaL_checkstack(L, 8, MAPI_LUA_NO_STACK);
    lua_createtable(L, 0, 4);
    set_value(L, kc, "links", mapi_resource_links(r));
    set_value(L, kc, "meta", mapi_resource_meta(r));
    lua_createtable(L, 0, nrel); /* relationships */
    lua_createtable(L, nrel, 0); /* names */
    for (i = 0; i < n && mapi_resource_relationship_at(doc, r, i, &rel); i++) {
        push_key(L, kc, rel.name, rel.name_len, rel.name_id);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, (int)i + 1);
        lua_createtable(L, 0, 4);
        lua_pushstring(L, states[rel.data <= MAPI_REL_TO_MANY ? rel.data : 0]);
        lua_setfield(L, -2, "data");
        set_value(L, kc, "links", rel.links);
        set_value(L, kc, "meta", rel.meta);
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
   parses (it did once: it cannot) leaves empty infos; a holder whose slots
   table was replaced by something else (getmetatable hands the holder out)
   is left as it is. */
static void build_infos(lua_State *L, int holder)
{
    const char *body;
    size_t len, n, i;
    int info, rev, slots;
    call_box *cb;

    luaL_checkstack(L, 12, MAPI_LUA_NO_STACK);
    lua_rawgeti(L, holder, HOLDER_SLOTS);
    slots = lua_gettop(L);
    if (lua_type(L, slots) != LUA_TTABLE) {
        lua_settop(L, slots - 1);
        return;
    }
    lua_rawgeti(L, holder, HOLDER_BODY);
    body = mapi_lua_body_of(L, lua_gettop(L), &len);
    cb = mapi_lua_push_call_box(L);
    if (body == NULL || mapi_doc_parse(body, len, &cb->doc, &cb->err) != 0) {
        mapi_error_clear(&cb->err);
        n = 0;
    } else {
        n = mapi_doc_resource_count(cb->doc);
    }
    lua_createtable(L, n > INT_MAX ? INT_MAX : (int)n, 0);
    info = lua_gettop(L);
    if (n > 0) {
        key_cache kc;
        key_cache_init(L, &kc, cb->doc);
        for (i = 0; i < n && i < (size_t)INT_MAX; i++) {
            const mapi_resource *r = mapi_doc_resource(cb->doc, i);
            if (!has_extras(r))
                continue;
            push_info(L, &kc, cb->doc, r);
            lua_rawseti(L, info, (int)i + 1);
        }
        lua_settop(L, info);
    }
    mapi_doc_free(cb->doc);
    cb->doc = NULL;
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
   links, meta or relationships, and for one whose metatable was replaced
   or edited so that its slots are not what they were (every slot's type is
   checked before it is read: getmetatable hands the holder out).
   lua/merchantapi/document.lua builds the public accessors on it. */
int mapi_lua_resource_info(lua_State *L)
{
    int64_t index;

    lua_settop(L, 1);
    if (lua_type(L, 1) == LUA_TTABLE && lua_getmetatable(L, 1)) /* 2: the holder */
        lua_rawgeti(L, 2, HOLDER_MARK);                          /* 3 */
    if (lua_touserdata(L, -1) != (void *)&holder_mark) {
        lua_pushnil(L);
        return 1;
    }
    lua_rawgeti(L, 2, HOLDER_REV); /* 4 */
    if (lua_isnil(L, 4)) {
        lua_pop(L, 1);
        build_infos(L, 2);
        lua_rawgeti(L, 2, HOLDER_REV);
    }
    lua_rawgeti(L, 2, HOLDER_INFO); /* 5 */
    if (lua_type(L, 4) != LUA_TTABLE || lua_type(L, 5) != LUA_TTABLE) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushvalue(L, 1);
    lua_rawget(L, 4); /* 6: index + 1 */
    if (!mapic_tointeger(L, 6, &index) || index < 1 || index > INT_MAX) {
        lua_pushnil(L);
        return 1;
    }
    lua_rawgeti(L, 5, (int)index);
    return 1;
}

/* meta by push_meta; each of them an object or absent (the parser's rule). */
void mapi_lua_push_doc_members(lua_State *L, const mapi_doc *doc)
{
    luaL_checkstack(L, 6, MAPI_LUA_NO_STACK);
    push_meta(L, doc);
    push_value(L, NULL, mapi_doc_jsonapi(doc), NULL_AS_NIL, 0);
    push_value(L, NULL, mapi_doc_links(doc), NULL_AS_NIL, 0);
}

void mapi_lua_push_root(lua_State *L, const mapi_doc *doc)
{
    key_cache kc;

    key_cache_init(L, &kc, doc);
    push_value(L, &kc, mapi_doc_root(doc), NULL_AS_SENTINEL, 0);
    lua_replace(L, kc.table);
    lua_settop(L, kc.table);
}

void mapi_lua_values_open(lua_State *L)
{
    static const char *const mts[2][2] = {{WEAK_V_MT, "v"}, {WEAK_K_MT, "k"}};
    int i;

    luaL_checkstack(L, 3, MAPI_LUA_NO_STACK);
    for (i = 0; i < 2; i++) {
        mapi_lua_new_metatable(L, mts[i][0]);
        lua_pushstring(L, mts[i][1]);
        lua_setfield(L, -2, "__mode");
        lua_pop(L, 1);
    }
}

/*
 * jsonapi.c -- JSON:API documents over the compact tree json_parse.cpp
 * reads: the envelope, the (type, id) index of primary and included
 * resources (and (type, lid) for JSON:API 1.1's local ids), two copies of
 * one resource merged, the field rules, stubs for linkages to resources the
 * document does not hold, and every relationship resolved -- all in the
 * call that reads the body, touching resource objects only (the values
 * below them are the tree's).  Nothing is allocated per value: the tree is
 * in the document's arena, the index and the resolved relationships in a
 * few arrays.
 *
 * Interface: docs/service-interface.md, "Document envelope"; the
 * resolution rules of docs/contract.md, "Resources come back flattened and
 * resolved"; the field and identity rules of JSON:API 1.1 ("Resource
 * Objects", "Fields", "Identification", "Compound Documents").
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_DEPTH 64
#define ARENA_CHUNK_MAX ((size_t)64 << 10)

/* A relationship of a resource, resolved once while parsing. */
typedef struct rel_rec {
    const mapi_name *name;
    const mapi_value *rel;   /* the relationship object */
    const mapi_value *data;  /* its data member (possibly a null node), or NULL: no data */
    mapi_rel_data state;
    size_t count, first;     /* targets: doc->targets[first .. first + count) */
} rel_rec;

struct mapi_resource {
    const mapi_value *type;       /* a string node (interned: MAPI_TL_NAME) */
    const mapi_value *id, *lid;   /* string nodes, or NULL */
    const mapi_value *obj;        /* the resource object (its first copy), or a stub's linkage */
    const mapi_value *attributes, *relationships, *links, *meta; /* NULL when absent or null */
    size_t index;
    size_t rel_first, rel_count;  /* doc->rels[rel_first ..] */
    size_t link_count;            /* of those, the ones with linkage data (ONE / MANY) */
    int stub;
};

struct mapi_doc {
    mapi_arena arena;             /* the tree, merged objects */
    mapi_response *response;      /* owned; NULL for mapi_doc_parse */
    char *copy;                   /* mapi_doc_parse: the body with padding; owned */
    size_t copy_size;
    mapi_value root_node;
    const mapi_value *root;       /* NULL for a document without a body */
    const mapi_value *data, *included, *meta, *jsonapi, *errors, *links;
    int is_list;
    size_t nnames;
    mapi_resource *res;           /* every distinct resource: primary, included, stubs */
    size_t nres, capres, nreal;
    size_t *data_map;             /* primary resource i -> index in res */
    size_t ndata;
    size_t *slots;                /* the index: ((resource index + 1) << 1) | LID, 0 empty */
    size_t nslots, nkeys;
    rel_rec *rels;
    size_t nrels, caprels;
    size_t *targets;
    size_t ntargets, captargets;
    int settled;                  /* mapi_doc_set_settled: a settled confirm's read */
};

#define KEY_ID 0u
#define KEY_LID 1u

/* ---- small helpers ---- */

static const mapi_value *nonnull(const mapi_value *v)
{
    return v && mapi_tl_type(v) != MAPI_NULL ? v : NULL;
}

static int is_string(const mapi_value *v)
{
    return v && mapi_tl_type(v) == MAPI_STRING;
}

static int is_object(const mapi_value *v)
{
    return v && mapi_tl_type(v) == MAPI_OBJECT;
}

/* 1 when obj's member id is absent, null or an object (JSON:API's links,
   meta and jsonapi). */
static int member_is_object(const mapi_value *obj, size_t id)
{
    const mapi_value *v = nonnull(mapi_value_member_id(obj, id));
    return !v || is_object(v);
}

static const char *str_of(const mapi_value *v)
{
    return (const char *)v->p;
}

/* Room for one more entry in an array of *cap elements of size sz in the
   document's arena (a grown array is a copy: the old one stays unused
   until the document is freed). */
static int grow(mapi_doc *d, void **arr, size_t *cap, size_t n, size_t sz)
{
    size_t c;
    void *p;

    if (n < *cap)
        return 0;
    c = *cap ? *cap * 2 : 64;
    if (c > ((size_t)-1) / 2 / sz)
        return -1;
    p = mapi_arena_alloc(&d->arena, c * sz);
    if (!p)
        return -1;
    if (n)
        memcpy(p, *arr, n * sz);
    *arr = p;
    *cap = c;
    return 0;
}

static int oom(mapi_error *err)
{
    return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
}

/* Text for a message: s[0..n) in double quotes, control bytes and '"' as
   \u escapes, cut after 60 bytes.  Always NUL-terminated in out. */
#define QUOTED_MAX 80
static const char *quoted(const char *s, size_t n, char out[QUOTED_MAX])
{
    static const char hex[] = "0123456789abcdef";
    size_t i, w = 0;

    out[w++] = '"';
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (w + 10 >= QUOTED_MAX) {
            memcpy(out + w, "...", 3);
            w += 3;
            break;
        }
        if (c < 0x20 || c == '"' || c == '\\') {
            memcpy(out + w, "\\u00", 4);
            out[w + 4] = hex[c >> 4];
            out[w + 5] = hex[c & 15];
            w += 6;
        } else {
            out[w++] = (char)c;
        }
    }
    out[w++] = '"';
    out[w] = '\0';
    return out;
}

/* A resource for messages: its type, then "id" or (lid "x"). */
typedef struct label {
    char type[QUOTED_MAX], id[QUOTED_MAX];
    const char *lid; /* "" or "lid " */
} label;

static const char *label_type(label *l, const mapi_value *type)
{
    /* a type is a name: quoted only when it needs it */
    size_t n = mapi_tl_len(type), i;
    for (i = 0; i < n && i < 40; i++) {
        char c = str_of(type)[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            break;
    }
    if (i == n && n > 0) {
        memcpy(l->type, str_of(type), n);
        l->type[n] = '\0';
        return l->type;
    }
    return quoted(str_of(type), n, l->type);
}

static void label_of(label *l, const mapi_value *type, const mapi_value *id, const mapi_value *lid)
{
    label_type(l, type);
    l->lid = id ? "" : "lid ";
    if (!id)
        id = lid;
    quoted(str_of(id), mapi_tl_len(id), l->id);
}

#define LABEL_FMT "%s %s%s"
#define LABEL_ARGS(l) (l).type, (l).lid, (l).id

/* ---- the (type, id) / (type, lid) index ---- */

static uint64_t load64(const char *s)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return w;
}

static uint64_t load32(const char *s)
{
    uint32_t w;
    memcpy(&w, s, 4);
    return w;
}

/* Eight bytes at a time (ids are often 36-byte UUIDs), then the last
   n % 8 bytes as a word of their own (they differ most between ids): read
   with one load ending at s + n, never past it. */
static uint64_t hash_bytes(uint64_t h, const char *s, size_t n)
{
    size_t r = n % 8, i;
    uint64_t w;

    h = mapi_hash_mix(h, (uint64_t)n);
    for (i = 0; i + 8 <= n; i += 8)
        h = mapi_hash_mix(h, load64(s + i));
    if (r == 0)
        return h;
    if (n >= 8) {
        w = load64(s + n - 8) >> (8 * (8 - r));
    } else if (r >= 4) {
        w = load32(s) | load32(s + r - 4) << (8 * (r - 4));
    } else {
        w = 0;
        for (i = 0; i < r; i++)
            w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    }
    return mapi_hash_mix(h, w);
}

static size_t hash_key(const char *type, size_t tlen, unsigned kind, const char *v, size_t vlen)
{
    uint64_t h = hash_bytes(UINT64_C(0xC2B2AE3D27D4EB4F) + kind, type, tlen);
    return (size_t)hash_bytes(h, v, vlen);
}

static const mapi_value *key_value(const mapi_resource *r, unsigned kind)
{
    return kind == KEY_LID ? r->lid : r->id;
}

static int same_bytes(const mapi_value *v, const char *s, size_t n)
{
    return mapi_tl_len(v) == n && (str_of(v) == s || memcmp(str_of(v), s, n) == 0);
}

/* The slot of (type, kind, v): the one holding it, or the empty one where it goes. */
static size_t *find_slot(const mapi_doc *d, const char *type, size_t tlen, unsigned kind,
                         const char *v, size_t vlen)
{
    size_t mask = d->nslots - 1, i = hash_key(type, tlen, kind, v, vlen) & mask;
    for (;;) {
        size_t *s = &d->slots[i];
        if (*s == 0)
            return s;
        if ((*s & 1u) == kind) {
            const mapi_resource *r = &d->res[(*s >> 1) - 1];
            const mapi_value *k = key_value(r, kind);
            if (k && same_bytes(k, v, vlen) && same_bytes(r->type, type, tlen))
                return s;
        }
        i = (i + 1) & mask;
    }
}

static int grow_slots(mapi_doc *d, size_t want)
{
    size_t n = 16, i;
    size_t *old = d->slots, nold = d->nslots;

    while (n < want * 2) {
        if (n > ((size_t)-1) / 4 / sizeof(size_t))
            return -1;
        n *= 2;
    }
    if (n <= d->nslots)
        return 0;
    d->slots = mapi_arena_alloc(&d->arena, n * sizeof(size_t));
    if (!d->slots) {
        d->slots = old;
        return -1;
    }
    memset(d->slots, 0, n * sizeof(size_t));
    d->nslots = n;
    for (i = 0; i < nold; i++) {
        if (old[i]) {
            const mapi_resource *r = &d->res[(old[i] >> 1) - 1];
            const mapi_value *k = key_value(r, (unsigned)(old[i] & 1u));
            *find_slot(d, str_of(r->type), mapi_tl_len(r->type), (unsigned)(old[i] & 1u),
                       str_of(k), mapi_tl_len(k)) = old[i];
        }
    }
    return 0;
}

/* The slot for r's key of this kind (r->id or r->lid set), with room. */
static size_t *slot_for(mapi_doc *d, const mapi_value *type, unsigned kind, const mapi_value *k)
{
    if (d->nkeys + 1 > d->nslots / 2 && grow_slots(d, d->nkeys + 1) != 0)
        return NULL;
    return find_slot(d, str_of(type), mapi_tl_len(type), kind, str_of(k), mapi_tl_len(k));
}

static size_t slot_index(size_t s)
{
    return (s >> 1) - 1;
}

/* ---- reading resource objects ---- */

/* The identity members of obj: 0, or -1 when type is not a string or
   neither id nor lid is one (a member present must be a string). */
static int read_identity(const mapi_value *obj, const mapi_value **type, const mapi_value **id,
                         const mapi_value **lid)
{
    const mapi_value *t = NULL, *i = NULL, *l = NULL;
    const mapi_member *m;
    size_t k, n;

    if (!is_object(obj))
        return -1;
    /* one pass (names are unique in an object) */
    m = (const mapi_member *)obj->p;
    n = mapi_tl_len(obj);
    for (k = 0; k < n; k++) {
        switch (m[k].name->id) {
        case MAPI_N_TYPE: t = &m[k].value; break;
        case MAPI_N_ID: i = &m[k].value; break;
        case MAPI_N_LID: l = &m[k].value; break;
        default: break;
        }
    }
    if (!is_string(t) || (i && !is_string(i)) || (l && !is_string(l)) || (!i && !l))
        return -1;
    *type = t;
    *id = i;
    *lid = l;
    return 0;
}

/* Where a resource object is, for messages: data, data[3], included[2]. */
typedef struct place {
    const char *member;
    size_t i;
    int many;
} place;

static int no_identity(mapi_error *err, const place *p)
{
    if (p->many)
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: %s[%zu] has no string type and id", p->member, p->i);
    return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: %s has no string type and id",
                          p->member);
}

/* The field rules of one resource (a copy, or two merged): attributes,
   relationships, links and meta objects, no field named type or id (nor lid when the
   resource has one), no name both an attribute and a relationship. */
static int check_fields(const mapi_resource *r, uint32_t *stamps, uint32_t *serial,
                        mapi_error *err)
{
    const mapi_value *sets[4];
    static const char *const set_names[4] = {"attributes", "relationships", "links", "meta"};
    label l;
    size_t k, i;

    sets[0] = r->attributes;
    sets[1] = r->relationships;
    sets[2] = r->links;
    sets[3] = r->meta;
    if (++*serial == 0) {
        *serial = 1;
    }
    for (k = 0; k < 4; k++) {
        const mapi_member *m;
        size_t n;
        if (!sets[k])
            continue;
        if (!is_object(sets[k])) {
            label_of(&l, r->type, r->id, r->lid);
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "not JSON:API: the %s member of " LABEL_FMT " is not an object",
                                  set_names[k], LABEL_ARGS(l));
        }
        if (k >= 2)
            continue; /* links and meta: any member names */
        m = (const mapi_member *)sets[k]->p;
        n = mapi_tl_len(sets[k]);
        for (i = 0; i < n; i++) {
            size_t id = m[i].name->id;
            char q[QUOTED_MAX];
            if (id == MAPI_N_ID || id == MAPI_N_TYPE || (id == MAPI_N_LID && r->lid)) {
                label_of(&l, r->type, r->id, r->lid);
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "not JSON:API: " LABEL_FMT " has a field named %s in %s "
                                      "(fields share one namespace with type and id)",
                                      LABEL_ARGS(l), m[i].name->s, set_names[k]);
            }
            if (k == 0) {
                stamps[id] = *serial;
            } else if (stamps[id] == *serial) {
                label_of(&l, r->type, r->id, r->lid);
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "not JSON:API: " LABEL_FMT " has an attribute and a "
                                      "relationship named %s",
                                      LABEL_ARGS(l), quoted(m[i].name->s, m[i].name->len, q));
            }
        }
    }
    return 0;
}

/* Reads the resource object obj into *r (not indexed yet). */
static int read_resource(const mapi_value *obj, const place *p, mapi_resource *r,
                         mapi_error *err)
{
    const mapi_member *m;
    size_t i, n;

    memset(r, 0, sizeof *r);
    if (read_identity(obj, &r->type, &r->id, &r->lid) != 0)
        return no_identity(err, p);
    r->obj = obj;
    m = (const mapi_member *)obj->p;
    n = mapi_tl_len(obj);
    for (i = 0; i < n; i++) {
        switch (m[i].name->id) {
        case MAPI_N_ATTRIBUTES: r->attributes = nonnull(&m[i].value); break;
        case MAPI_N_RELATIONSHIPS: r->relationships = nonnull(&m[i].value); break;
        case MAPI_N_LINKS: r->links = nonnull(&m[i].value); break;
        case MAPI_N_META: r->meta = nonnull(&m[i].value); break;
        default: break;
        }
    }
    return 0;
}

/* ---- merging two copies of one resource ---- */

/* What differs between two copies: a member, and inside a relationship the
   member of the relationship object. */
typedef struct conflict {
    const char *field;       /* "attributes", "relationships", "links", "meta", "lid" */
    const mapi_name *name;   /* the member of that object, or NULL */
    const mapi_name *inner;  /* relationships: the member of the relationship object */
} conflict;

static const mapi_member *find_member(const mapi_member *m, size_t n, const mapi_name *name)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (m[i].name == name) /* interned: one pointer per name */
            return &m[i];
    return NULL;
}

/* The union of objects a and b (either may be NULL; non-objects must be
   equal), members of a first; a member both have must be equal -- or for
   relationships (level 1), be two relationship objects merged by the same
   rule one level down.  -1 on a conflict (*c set), -2 out of memory. */
static int merge_values(mapi_arena *arena, const mapi_value *a, const mapi_value *b, int level,
                        const mapi_value **out, conflict *c)
{
    const mapi_member *ma, *mb;
    mapi_member *mm;
    mapi_value *node;
    size_t na, nb, i, n;

    if (!a || !b || a == b) {
        *out = a ? a : b;
        return 0;
    }
    if (!is_object(a) || !is_object(b)) {
        if (!mapi_value_equal(a, b))
            return -1;
        *out = a;
        return 0;
    }
    ma = (const mapi_member *)a->p;
    mb = (const mapi_member *)b->p;
    na = mapi_tl_len(a);
    nb = mapi_tl_len(b);
    mm = mapi_arena_alloc(arena, (na + nb) * sizeof *mm + 1);
    node = mapi_arena_alloc(arena, sizeof *node);
    if (!mm || !node)
        return -2;
    if (na)
        memcpy(mm, ma, na * sizeof *mm);
    n = na;
    for (i = 0; i < nb; i++) {
        mapi_member *same = (mapi_member *)(uintptr_t)find_member(mm, na, mb[i].name);
        if (!same) {
            mm[n++] = mb[i];
        } else if (level == 1) {
            const mapi_value *merged;
            conflict inner = {NULL, NULL, NULL};
            int rc = merge_values(arena, &same->value, &mb[i].value, 0, &merged, &inner);
            if (rc != 0) {
                c->name = mb[i].name;
                c->inner = inner.name;
                return rc;
            }
            same->value = *merged;
        } else if (!mapi_value_equal(&same->value, &mb[i].value)) {
            c->name = mb[i].name;
            return -1;
        }
    }
    node->p = mm;
    node->tl = (n << MAPI_TL_SHIFT) | MAPI_OBJECT;
    *out = node;
    return 0;
}

/* Merges copy b into resource a (same identity).  0, or -1 with err. */
static int merge_resource(mapi_doc *d, mapi_resource *a, const mapi_resource *b, mapi_error *err)
{
    conflict c = {NULL, NULL, NULL};
    const mapi_value *out;
    label l;
    int rc;

    if ((rc = merge_values(&d->arena, a->attributes, b->attributes, 0, &out, &c)) == 0) {
        a->attributes = out;
        if ((rc = merge_values(&d->arena, a->relationships, b->relationships, 1, &out, &c)) == 0) {
            a->relationships = out;
            if ((rc = merge_values(&d->arena, a->links, b->links, 0, &out, &c)) == 0) {
                a->links = out;
                if ((rc = merge_values(&d->arena, a->meta, b->meta, 0, &out, &c)) == 0)
                    a->meta = out;
                else
                    c.field = "meta";
            } else {
                c.field = "links";
            }
        } else {
            c.field = "relationships";
        }
    } else {
        c.field = "attributes";
    }
    if (rc == 0 && a->lid && b->lid && !mapi_value_equal(a->lid, b->lid)) {
        rc = -1;
        c.field = "lid";
    }
    if (rc == -2)
        return oom(err);
    if (rc != 0) {
        char q1[QUOTED_MAX], q2[QUOTED_MAX];
        label_of(&l, a->type, a->id, a->lid);
        return mapi_error_set(
            err, MAPI_ERR_DECODE,
            "not JSON:API: " LABEL_FMT " comes twice and the copies differ in %s%s%s%s%s",
            LABEL_ARGS(l), c.field, c.name ? " member " : "",
            c.name ? quoted(c.name->s, c.name->len, q1) : "", c.inner ? " at " : "",
            c.inner ? quoted(c.inner->s, c.inner->len, q2) : "");
    }
    return 0;
}

/* ---- adding resources ---- */

/* Room for one more resource. */
static int reserve_resource(mapi_doc *d)
{
    return grow(d, (void **)&d->res, &d->capres, d->nres, sizeof *d->res);
}

/* Makes (type, lid) find resource r.  0, or -1 with err when that lid
   names another resource already. */
static int index_lid(mapi_doc *d, const mapi_resource *r, mapi_error *err)
{
    size_t *slot = slot_for(d, r->type, KEY_LID, r->lid);
    label l;

    if (!slot)
        return oom(err);
    if (*slot && slot_index(*slot) != r->index) {
        label_of(&l, r->type, NULL, r->lid);
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: " LABEL_FMT " names two resources", LABEL_ARGS(l));
    }
    if (!*slot) {
        *slot = ((r->index + 1) << 1) | KEY_LID;
        d->nkeys++;
    }
    return 0;
}

/* Indexes the copy read into d->res[d->nres] (room reserved): a new
   resource, or -- when its (type, id), else its (type, lid), is there
   already -- merged into that one and dropped.  *index gets the resource's
   position.  0, or -1 with err (memory, the copies differ, a field rule, a
   lid naming two resources). */
static int add_resource(mapi_doc *d, uint32_t *stamps, uint32_t *serial, size_t *index,
                        mapi_error *err)
{
    mapi_resource *r = &d->res[d->nres], *a;
    size_t *slot = r->id ? slot_for(d, r->type, KEY_ID, r->id)
                         : slot_for(d, r->type, KEY_LID, r->lid);

    if (!slot)
        return oom(err);
    if (*slot) {
        int new_lid;
        a = &d->res[slot_index(*slot)];
        if (merge_resource(d, a, r, err) != 0)
            return -1;
        new_lid = !a->lid && r->lid;
        if (new_lid)
            a->lid = r->lid;
        *index = a->index;
        if (check_fields(a, stamps, serial, err) != 0)
            return -1;
        return new_lid ? index_lid(d, a, err) : 0;
    }
    if (check_fields(r, stamps, serial, err) != 0)
        return -1;
    r->index = d->nres++;
    *slot = ((r->index + 1) << 1) | (r->id ? KEY_ID : KEY_LID);
    d->nkeys++;
    *index = r->index;
    return r->id && r->lid ? index_lid(d, r, err) : 0;
}

/* Reads, checks and indexes the resource object obj found at p. */
static int take_resource(mapi_doc *d, const mapi_value *obj, const place *p, uint32_t *stamps,
                         uint32_t *serial, size_t *index, mapi_error *err)
{
    if (reserve_resource(d) != 0)
        return oom(err);
    if (read_resource(obj, p, &d->res[d->nres], err) != 0)
        return -1;
    return add_resource(d, stamps, serial, index, err);
}

/* The resource a linkage names (type and id, or type and lid), a stub made
   for it when the document does not hold it.  0 with *index, or -1 with err. */
static int resolve_linkage(mapi_doc *d, const mapi_value *link, size_t *index, size_t owner,
                           const mapi_name *rel, mapi_error *err)
{
    const mapi_value *type, *id, *lid;
    size_t *slot;
    mapi_resource *r;

    if (read_identity(link, &type, &id, &lid) != 0) {
        char q[QUOTED_MAX];
        label l;
        label_of(&l, d->res[owner].type, d->res[owner].id, d->res[owner].lid);
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: relationship %s of " LABEL_FMT
                              " has a linkage without string type and id",
                              quoted(rel->s, rel->len, q), LABEL_ARGS(l));
    }
    slot = id ? slot_for(d, type, KEY_ID, id) : slot_for(d, type, KEY_LID, lid);
    if (!slot)
        return oom(err);
    if (*slot) {
        *index = slot_index(*slot);
        return 0;
    }
    if (reserve_resource(d) != 0)
        return oom(err);
    slot = id ? find_slot(d, str_of(type), mapi_tl_len(type), KEY_ID, str_of(id), mapi_tl_len(id))
              : find_slot(d, str_of(type), mapi_tl_len(type), KEY_LID, str_of(lid),
                          mapi_tl_len(lid));
    r = &d->res[d->nres];
    memset(r, 0, sizeof *r);
    r->type = type;
    r->id = id;
    r->lid = id ? NULL : lid; /* a stub is found by what its linkage named */
    r->obj = link;
    r->stub = 1;
    r->index = d->nres++;
    *slot = ((r->index + 1) << 1) | (id ? KEY_ID : KEY_LID);
    d->nkeys++;
    *index = r->index;
    return 0;
}

/* Every relationship of resource i, resolved (stubs appended as needed). */
static int resolve_relationships(mapi_doc *d, size_t i, mapi_error *err)
{
    const mapi_value *rels = d->res[i].relationships;
    const mapi_member *m;
    size_t n, k, j;
    label owner;

    d->res[i].rel_first = d->nrels;
    if (!rels)
        return 0;
    m = (const mapi_member *)rels->p;
    n = mapi_tl_len(rels);
    for (k = 0; k < n; k++) {
        const mapi_value *rel = &m[k].value, *data;
        rel_rec *rec;
        char q[QUOTED_MAX];
        if (!is_object(rel) && (label_of(&owner, d->res[i].type, d->res[i].id, d->res[i].lid), 1))
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "not JSON:API: relationship %s of " LABEL_FMT
                                  " is not an object",
                                  quoted(m[k].name->s, m[k].name->len, q), LABEL_ARGS(owner));
        if ((!member_is_object(rel, MAPI_N_LINKS) || !member_is_object(rel, MAPI_N_META)) &&
            (label_of(&owner, d->res[i].type, d->res[i].id, d->res[i].lid), 1))
            return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: the %s of relationship %s"
                                  " of " LABEL_FMT " is not an object",
                                  member_is_object(rel, MAPI_N_LINKS) ? "meta" : "links",
                                  quoted(m[k].name->s, m[k].name->len, q), LABEL_ARGS(owner));
        if (grow(d, (void **)&d->rels, &d->caprels, d->nrels, sizeof *d->rels) != 0)
            return oom(err);
        data = mapi_value_member_id(rel, MAPI_N_DATA);
        rec = &d->rels[d->nrels];
        rec->name = m[k].name;
        rec->rel = rel;
        rec->data = data;
        rec->count = 0;
        rec->first = d->ntargets;
        if (!data) {
            rec->state = MAPI_REL_NO_DATA;
        } else if (mapi_tl_type(data) == MAPI_NULL) {
            rec->state = MAPI_REL_NULL_DATA;
        } else if (mapi_tl_type(data) == MAPI_OBJECT || mapi_tl_type(data) == MAPI_ARRAY) {
            int many = mapi_tl_type(data) == MAPI_ARRAY;
            size_t count = many ? mapi_tl_len(data) : 1;
            rec->state = many ? MAPI_REL_TO_MANY : MAPI_REL_TO_ONE;
            for (j = 0; j < count; j++) {
                const mapi_value *link = many ? (const mapi_value *)data->p + j : data;
                size_t idx = 0;
                if (resolve_linkage(d, link, &idx, i, m[k].name, err) != 0)
                    return -1;
                if (grow(d, (void **)&d->targets, &d->captargets, d->ntargets,
                         sizeof *d->targets) != 0)
                    return oom(err);
                d->targets[d->ntargets++] = idx;
            }
            rec->count = count;
            d->res[i].link_count++;
        } else {
            label_of(&owner, d->res[i].type, d->res[i].id, d->res[i].lid);
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "not JSON:API: relationship %s of " LABEL_FMT
                                  " has data that is not a linkage, an array of linkages or null",
                                  quoted(m[k].name->s, m[k].name->len, q), LABEL_ARGS(owner));
        }
        d->nrels++;
        d->res[i].rel_count++;
    }
    return 0;
}

static int build_index(mapi_doc *d, mapi_error *err)
{
    const mapi_value *r = d->root, *data = NULL;
    static const struct { size_t id; const char *name; } tops[3] = {
        {MAPI_N_META, "meta"}, {MAPI_N_LINKS, "links"}, {MAPI_N_JSONAPI, "jsonapi"}};
    uint32_t *stamps = NULL, serial = 0;
    size_t i, n, nincl, nrels, idx = 0;
    int rc = -1;
    place p;

    if (!is_object(r))
        return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: the document is not an object");
    data = mapi_value_member_id(r, MAPI_N_DATA);
    d->data = nonnull(data);
    d->included = nonnull(mapi_value_member_id(r, MAPI_N_INCLUDED));
    d->meta = nonnull(mapi_value_member_id(r, MAPI_N_META));
    d->jsonapi = nonnull(mapi_value_member_id(r, MAPI_N_JSONAPI));
    d->errors = nonnull(mapi_value_member_id(r, MAPI_N_ERRORS));
    d->links = nonnull(mapi_value_member_id(r, MAPI_N_LINKS));
    if (!data && !d->errors && !d->meta)
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: no data, errors or meta member");
    if (d->errors && mapi_tl_type(d->errors) != MAPI_ARRAY)
        return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: errors is not an array");
    for (i = 0; i < 3; i++) /* meta, links, jsonapi: objects (null: absent) */
        if (!member_is_object(r, tops[i].id))
            return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: %s is not an object",
                                  tops[i].name);
    if (d->included && mapi_tl_type(d->included) != MAPI_ARRAY)
        return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: included is not an array");
    if (d->data && mapi_tl_type(d->data) != MAPI_ARRAY && mapi_tl_type(d->data) != MAPI_OBJECT)
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: data is neither a resource, an array nor null");

    d->is_list = d->data && mapi_tl_type(d->data) == MAPI_ARRAY;
    n = d->is_list ? mapi_tl_len(d->data) : (d->data ? 1 : 0);
    nincl = d->included ? mapi_tl_len(d->included) : 0;
    if (n + nincl == 0)
        return 0;
    /* one stamp per name: which attribute names the resource checked now has */
    stamps = calloc(d->nnames ? d->nnames : 1, sizeof *stamps);
    d->capres = n + nincl + 16;
    d->res = mapi_arena_alloc(&d->arena, d->capres * sizeof *d->res);
    d->data_map = n ? mapi_arena_alloc(&d->arena, n * sizeof *d->data_map) : NULL;
    if (!stamps || !d->res || (n && !d->data_map) || grow_slots(d, 2 * (n + nincl) + 8) != 0) {
        rc = oom(err);
        goto out;
    }
    p.member = "data";
    p.many = d->is_list;
    for (i = 0; i < n; i++) {
        p.i = i;
        if (take_resource(d, d->is_list ? (const mapi_value *)d->data->p + i : d->data, &p, stamps,
                          &serial, &idx, err) != 0)
            goto out;
        d->data_map[d->ndata++] = idx;
    }
    p.member = "included";
    p.many = 1;
    for (i = 0; i < nincl; i++) {
        p.i = i;
        if (take_resource(d, (const mapi_value *)d->included->p + i, &p, stamps, &serial, &idx,
                          err) != 0)
            goto out;
    }
    d->nreal = d->nres;
    /* one record per relationship, one target per to-one linkage at least */
    for (i = 0, nrels = 0; i < d->nreal; i++)
        if (is_object(d->res[i].relationships))
            nrels += mapi_tl_len(d->res[i].relationships);
    if (nrels && ((d->rels = mapi_arena_alloc(&d->arena, nrels * sizeof *d->rels)) == NULL ||
                  (d->targets = mapi_arena_alloc(&d->arena, nrels * sizeof *d->targets)) == NULL)) {
        rc = oom(err);
        goto out;
    }
    d->caprels = d->captargets = nrels;
    for (i = 0; i < d->nreal; i++)
        if (resolve_relationships(d, i, err) != 0)
            goto out;
    rc = 0;
out:
    free(stamps);
    return rc;
}

/* ---- parsing ---- */

static int json_error(mapi_json_status st, const mapi_json_result *jr, const char *buf,
                      size_t len, int max_depth, mapi_error *err)
{
    size_t at = jr->offset;
    char q[QUOTED_MAX];

    switch (st) {
    case MAPI_JSON_MEMORY:
        return oom(err);
    case MAPI_JSON_TOO_LARGE:
        return mapi_error_set(err, MAPI_ERR_DECODE, "document too large (%zu bytes)", len);
    case MAPI_JSON_EOF:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: unexpected end of input");
    case MAPI_JSON_UTF8:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid utf-8 string");
    case MAPI_JSON_CONTROL:
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "invalid JSON: a control character (U+0000 to U+001F) "
                              "unescaped in a string");
    case MAPI_JSON_STRING: {
        /* simdjson does not say which escape: a lone surrogate gets its own words */
        size_t i;
        if (at < len)
            for (i = at + 1; i + 1 < len && buf[i] != '"'; i++) {
                if (buf[i] != '\\')
                    continue;
                if (buf[i + 1] == 'u' &&
                    mapi_utf8_escape((const unsigned char *)buf + i, len - i) == 0)
                    return mapi_error_set(err, MAPI_ERR_DECODE,
                                          "invalid JSON: \\u escape of a lone surrogate");
                i++;
            }
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid escape in a string");
    }
    case MAPI_JSON_NUMBER:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid number at byte %zu",
                              at);
    case MAPI_JSON_LITERAL:
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "invalid JSON: unexpected literal at byte %zu (not true, false, "
                              "null, a number, string, array or object)", at);
    case MAPI_JSON_TRAILING:
        if (at < len && ((buf[at] >= 'a' && buf[at] <= 'z') || (buf[at] >= 'A' && buf[at] <= 'Z')))
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "invalid JSON: unexpected literal after the document "
                                  "(byte %zu)", at);
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "invalid JSON: unexpected content after the document (byte %zu)",
                              at);
    case MAPI_JSON_DEPTH:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: nested deeper than %d",
                              max_depth);
    case MAPI_JSON_DUPLICATE:
        mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: duplicate member name");
        if (err && err->kind == MAPI_ERR_DECODE && jr->dup) {
            err->detail = mapi_strdup(quoted(jr->dup->s, jr->dup->len, q));
            if (!err->detail || mapi_error_message(err) != 0)
                return oom(err);
        }
        return -1;
    case MAPI_JSON_SYNTAX:
    case MAPI_JSON_OK:
    default:
        if (at < len)
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "invalid JSON: unexpected character at byte %zu", at);
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: misplaced ',', ':' or bracket");
    }
}

/* Reads buf[0..len), which has MAPI_JSON_PADDING bytes of its own after it,
   into d.  orig NULL: buf stays unchanged; else buf lives as long as d (its
   string values stay in it) and orig is the same bytes unchanged. */
static int read_document(mapi_doc *d, char *buf, const char *orig, size_t len, int max_depth,
                         mapi_error *err)
{
    mapi_json_result jr;
    mapi_json_status st;

    if (max_depth <= 0)
        max_depth = DEFAULT_DEPTH;
    if (max_depth > MAPI_JSON_MAX_DEPTH)
        max_depth = MAPI_JSON_MAX_DEPTH;
    /* the texts have a block of the body's size; the values take about as
       much again, in chunks of a quarter of the body, at most 64 KiB (what
       the last one leaves unused is what is lost) */
    mapi_arena_init(&d->arena, len / 4 < ARENA_CHUNK_MAX ? len / 4 : ARENA_CHUNK_MAX);
    st = mapi_json_parse(buf, len, orig, max_depth, &d->arena, &jr);
    if (st != MAPI_JSON_OK)
        return json_error(st, &jr, orig ? orig : buf, len, max_depth, err);
    d->root_node = jr.root;
    d->root = &d->root_node;
    d->nnames = jr.names;
    return build_index(d, err);
}

int mapi_doc_parse_ex(const char *body, size_t len, int max_depth, mapi_doc **out,
                      mapi_error *err)
{
    mapi_doc *d;

    mapi_error_clear(err);
    if (out)
        *out = NULL;
    if (!out || (!body && len))
        return mapi_error_set(err, MAPI_ERR_USAGE, "mapi_doc_parse: body and out are required");
    if (len > ((size_t)-1) - MAPI_JSON_PADDING - 1)
        return mapi_error_set(err, MAPI_ERR_DECODE, "document too large (%zu bytes)", len);
    d = calloc(1, sizeof *d);
    if (!d)
        return oom(err);
    /* the reader needs padding after the body, and the document keeps its
       strings in what it read: a copy of the caller's bytes, one memcpy */
    d->copy = mapi_block_take(len + MAPI_JSON_PADDING, &d->copy_size);
    if (!d->copy) {
        mapi_doc_free(d);
        return oom(err);
    }
    if (len)
        memcpy(d->copy, body, len);
    if (read_document(d, d->copy, body, len, max_depth, err) != 0) {
        mapi_doc_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

int mapi_doc_parse(const char *body, size_t len, mapi_doc **out, mapi_error *err)
{
    return mapi_doc_parse_ex(body, len, DEFAULT_DEPTH, out, err);
}

int mapi_doc_from_response(mapi_response *res, int max_depth, mapi_doc **out, mapi_error *err)
{
    int rc;

    if (res->body && res->cap >= res->len + MAPI_JSON_PADDING) {
        /* the body was received with room for the reader: read in place (it
           stays as mapi_response_body hands it out: strings are copied) */
        mapi_doc *d = calloc(1, sizeof *d);
        mapi_error_clear(err);
        *out = NULL;
        if (!d) {
            rc = oom(err);
        } else if ((rc = read_document(d, res->body, NULL, res->len, max_depth, err)) != 0) {
            mapi_doc_free(d);
        } else {
            *out = d;
        }
    } else {
        rc = mapi_doc_parse_ex(res->body, res->len, max_depth, out, err);
    }
    if (rc != 0) {
        if (err) {
            mapi_response_free(err->response);
            err->response = res;
            err->status = res->status;
        } else {
            mapi_response_free(res);
        }
        return -1;
    }
    (*out)->response = res;
    return 0;
}

int mapi_doc_from_empty_response(mapi_response *res, mapi_doc **out, mapi_error *err)
{
    mapi_doc *d = calloc(1, sizeof *d);

    if (!d) {
        mapi_response_free(res);
        return oom(err);
    }
    d->response = res;
    *out = d;
    return 0;
}

void mapi_doc_free(mapi_doc *d)
{
    if (!d)
        return;
    mapi_response_free(d->response);
    mapi_arena_free(&d->arena);
    mapi_block_give(d->copy, d->copy_size);
    free(d);
}

/* ---- navigation ---- */

const mapi_value *mapi_doc_root(const mapi_doc *d) { return d->root; }
const mapi_value *mapi_doc_meta(const mapi_doc *d) { return d->meta; }
const mapi_value *mapi_doc_jsonapi(const mapi_doc *d) { return d->jsonapi; }
const mapi_value *mapi_doc_errors(const mapi_doc *d) { return d->errors; }
const mapi_value *mapi_doc_links(const mapi_doc *d) { return d->links; }
int mapi_doc_is_list(const mapi_doc *d) { return d->is_list; }
size_t mapi_doc_data_count(const mapi_doc *d) { return d->ndata; }
size_t mapi_doc_resource_count(const mapi_doc *d) { return d->nres; }
size_t mapi_doc_name_count(const mapi_doc *d) { return d->nnames; }
const mapi_response *mapi_doc_response(const mapi_doc *d) { return d->response; }

size_t mapi_doc_size(const mapi_doc *d)
{
    /* the index, the resources and their relationships are in the arena */
    return sizeof *d + d->arena.bytes + (d->copy ? d->copy_size : 0);
}

void mapi_doc_set_settled(mapi_doc *d) { d->settled = 1; }
const char *mapi_doc_settled_by(const mapi_doc *d) { return d && d->settled ? "read" : NULL; }

const mapi_resource *mapi_doc_data(const mapi_doc *d, size_t i)
{
    return i < d->ndata ? &d->res[d->data_map[i]] : NULL;
}

const mapi_resource *mapi_doc_resource(const mapi_doc *d, size_t i)
{
    return i < d->nres ? &d->res[i] : NULL;
}

static const mapi_resource *find(const mapi_doc *d, const char *type, size_t tlen, unsigned kind,
                                 const char *v, size_t vlen)
{
    size_t *slot;
    if (!type || !v || d->nslots == 0)
        return NULL;
    slot = find_slot(d, type, tlen, kind, v, vlen);
    return *slot ? &d->res[slot_index(*slot)] : NULL;
}

const mapi_resource *mapi_doc_find(const mapi_doc *d, const char *type, const char *id)
{
    if (!type || !id)
        return NULL;
    return find(d, type, strlen(type), KEY_ID, id, strlen(id));
}

const mapi_resource *mapi_doc_find_n(const mapi_doc *d, const char *type, size_t type_len,
                                     const char *id, size_t id_len)
{
    return find(d, type, type_len, KEY_ID, id, id_len);
}

const mapi_resource *mapi_doc_find_lid(const mapi_doc *d, const char *type, size_t type_len,
                                       const char *lid, size_t lid_len)
{
    return find(d, type, type_len, KEY_LID, lid, lid_len);
}

const mapi_resource *mapi_doc_resolve(const mapi_doc *d, const mapi_value *linkage)
{
    const mapi_value *type, *id, *lid;
    if (read_identity(linkage, &type, &id, &lid) != 0)
        return NULL;
    if (id)
        return find(d, str_of(type), mapi_tl_len(type), KEY_ID, str_of(id), mapi_tl_len(id));
    return find(d, str_of(type), mapi_tl_len(type), KEY_LID, str_of(lid), mapi_tl_len(lid));
}

const char *mapi_resource_type(const mapi_resource *r) { return str_of(r->type); }

const char *mapi_resource_type_n(const mapi_resource *r, size_t *len)
{
    if (len)
        *len = mapi_tl_len(r->type);
    return str_of(r->type);
}

size_t mapi_resource_type_id(const mapi_resource *r)
{
    return mapi_tl_name(r->type)->id;
}

const char *mapi_resource_id(const mapi_resource *r) { return r->id ? str_of(r->id) : NULL; }

const char *mapi_resource_id_n(const mapi_resource *r, size_t *len)
{
    if (len)
        *len = r->id ? mapi_tl_len(r->id) : 0;
    return r->id ? str_of(r->id) : NULL;
}

const char *mapi_resource_lid(const mapi_resource *r, size_t *len)
{
    if (len)
        *len = r->lid ? mapi_tl_len(r->lid) : 0;
    return r->lid ? str_of(r->lid) : NULL;
}

int mapi_resource_id_is(const mapi_resource *r, const char *id)
{
    size_t n = strlen(id);

    /* the whole id, NUL bytes included: "p\u0000x" is not "p" */
    return r->id && mapi_tl_len(r->id) == n && memcmp(str_of(r->id), id, n) == 0;
}

size_t mapi_resource_index(const mapi_resource *r) { return r->index; }
int mapi_resource_is_stub(const mapi_resource *r) { return r->stub; }
size_t mapi_resource_link_count(const mapi_resource *r) { return r->link_count; }
size_t mapi_resource_relationship_count(const mapi_resource *r) { return r->rel_count; }
const mapi_value *mapi_resource_attributes(const mapi_resource *r) { return r->attributes; }
const mapi_value *mapi_resource_relationships(const mapi_resource *r) { return r->relationships; }
const mapi_value *mapi_resource_meta(const mapi_resource *r) { return r->meta; }
const mapi_value *mapi_resource_links(const mapi_resource *r) { return r->links; }

const mapi_value *mapi_resource_attr(const mapi_resource *r, const char *name)
{
    return mapi_value_get(r->attributes, name);
}

const mapi_value *mapi_resource_attr_n(const mapi_resource *r, const char *name, size_t len)
{
    return mapi_value_get_n(r->attributes, name, len);
}

/* The i-th relationship record of r with linkage data (ONE or MANY). */
static const rel_rec *nth_link(const mapi_doc *d, const mapi_resource *r, size_t i)
{
    size_t k;
    const rel_rec *rec;

    if (i >= r->link_count)
        return NULL;
    rec = d->rels + r->rel_first;
    if (r->link_count == r->rel_count)
        return rec + i;
    for (k = 0; k < r->rel_count; k++)
        if ((rec[k].state == MAPI_REL_TO_ONE || rec[k].state == MAPI_REL_TO_MANY) && i-- == 0)
            return rec + k;
    return NULL;
}

int mapi_resource_link(const mapi_doc *d, const mapi_resource *r, size_t i, mapi_link *out)
{
    const rel_rec *l = nth_link(d, r, i);

    if (!l)
        return 0;
    out->name = l->name->s;
    out->kind = l->state == MAPI_REL_TO_MANY ? MAPI_REL_MANY : MAPI_REL_ONE;
    out->count = l->count;
    out->targets = l->count ? d->targets + l->first : NULL;
    out->name_len = l->name->len;
    out->name_id = l->name->id;
    return 1;
}

static void fill_relationship(const mapi_doc *d, const rel_rec *l, mapi_relationship *out)
{
    out->name = l->name->s;
    out->name_len = l->name->len;
    out->name_id = l->name->id;
    out->data = l->state;
    out->count = l->count;
    out->targets = l->count ? d->targets + l->first : NULL;
    out->linkage = l->state == MAPI_REL_TO_ONE || l->state == MAPI_REL_TO_MANY ? l->data : NULL;
    out->links = nonnull(mapi_value_member_id(l->rel, MAPI_N_LINKS));
    out->meta = nonnull(mapi_value_member_id(l->rel, MAPI_N_META));
}

int mapi_resource_relationship_at(const mapi_doc *d, const mapi_resource *r, size_t i,
                                  mapi_relationship *out)
{
    if (i >= r->rel_count)
        return 0;
    fill_relationship(d, d->rels + r->rel_first + i, out);
    return 1;
}

static const rel_rec *find_rel(const mapi_doc *d, const mapi_resource *r, const char *name,
                               size_t len)
{
    size_t k;
    const rel_rec *rec;

    if (!name || r->rel_count == 0)
        return NULL;
    rec = d->rels + r->rel_first;
    for (k = 0; k < r->rel_count; k++)
        if (rec[k].name->len == len && memcmp(rec[k].name->s, name, len) == 0)
            return rec + k;
    return NULL;
}

int mapi_resource_relationship(const mapi_doc *d, const mapi_resource *r, const char *name,
                               size_t name_len, mapi_relationship *out)
{
    const rel_rec *l = find_rel(d, r, name, name_len);

    if (!l)
        return 0;
    fill_relationship(d, l, out);
    return 1;
}

const mapi_value *mapi_relationship_linkage(const mapi_relationship *rel, size_t i)
{
    if (!rel || !rel->linkage || i >= rel->count)
        return NULL;
    if (rel->data == MAPI_REL_TO_ONE)
        return rel->linkage;
    return mapi_value_at(rel->linkage, i);
}

mapi_rel_kind mapi_resource_rel(const mapi_doc *d, const mapi_resource *r, const char *name,
                                size_t *count)
{
    const rel_rec *l = name ? find_rel(d, r, name, strlen(name)) : NULL;

    if (count)
        *count = 0;
    if (!l || (l->state != MAPI_REL_TO_ONE && l->state != MAPI_REL_TO_MANY))
        return MAPI_REL_NONE;
    if (count)
        *count = l->count;
    return l->state == MAPI_REL_TO_MANY ? MAPI_REL_MANY : MAPI_REL_ONE;
}

const mapi_resource *mapi_resource_related(const mapi_doc *d, const mapi_resource *r,
                                           const char *name, size_t i)
{
    const rel_rec *l = name ? find_rel(d, r, name, strlen(name)) : NULL;

    if (!l || i >= l->count)
        return NULL;
    return &d->res[d->targets[l->first + i]];
}

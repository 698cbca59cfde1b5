/*
 * doc_index.c -- a JSON:API document built from its tree: the envelope, the
 * index, two copies of one resource merged, the field rules (doc.h); the
 * quoted texts and resource labels of every message of the documents'
 * files (this one, doc_resolve.c and doc_parse.c, which stand above it).
 */
#include <stdlib.h>
#include <string.h>

#include "doc.h"

/* ---- messages ---- */

const char *mapi_doc_quoted(const char *s, size_t n, char out[QUOTED_MAX])
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

void mapi_doc_label(doc_label *l, const mapi_value *type, const mapi_value *id,
                    const mapi_value *lid)
{
    /* a type is a name: quoted only when it needs it */
    size_t n = mapi_tl_len(type), i;
    for (i = 0; i < n && i < 40; i++) {
        if (!mapi_alnum_or((unsigned char)str_of(type)[i], "_-"))
            break;
    }
    if (i == n && n > 0) {
        memcpy(l->type, str_of(type), n);
        l->type[n] = '\0';
    } else {
        mapi_doc_quoted(str_of(type), n, l->type);
    }
    l->lid = id ? "" : "lid ";
    if (!id)
        id = lid;
    mapi_doc_quoted(str_of(id), mapi_tl_len(id), l->id);
}

int mapi_doc_grow(mapi_doc *d, void **arr, size_t *cap, size_t n, size_t sz)
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
uint64_t mapi_hash_bytes(uint64_t h, const char *s, size_t n)
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
        w = mapi_load_short(s, r, 0);
    }
    return mapi_hash_mix(h, w);
}

static size_t hash_key(const char *type, size_t tlen, unsigned kind, const char *v, size_t vlen)
{
    uint64_t h = mapi_hash_bytes(UINT64_C(0xC2B2AE3D27D4EB4F) + kind, type, tlen);
    return (size_t)mapi_hash_bytes(h, v, vlen);
}

static const mapi_value *key_value(const mapi_resource *r, unsigned kind)
{
    return kind == KEY_LID ? r->lid : r->id;
}

static int same_bytes(const mapi_value *v, const char *s, size_t n)
{
    return mapi_tl_len(v) == n && (str_of(v) == s || memcmp(str_of(v), s, n) == 0);
}

size_t *mapi_doc_find_slot(const mapi_doc *d, const char *type, size_t tlen, unsigned kind,
                           const char *v, size_t vlen)
{
    size_t mask = d->nslots - 1, i = hash_key(type, tlen, kind, v, vlen) & mask;
    for (;;) {
        size_t *s = &d->slots[i];
        if (*s == 0)
            return s;
        if ((*s & 1u) == kind) {
            const mapi_resource *r = &d->res[slot_index(*s)];
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
            const mapi_resource *r = &d->res[slot_index(old[i])];
            const mapi_value *k = key_value(r, (unsigned)(old[i] & 1u));
            *mapi_doc_find_slot(d, str_of(r->type), mapi_tl_len(r->type),
                                (unsigned)(old[i] & 1u), str_of(k), mapi_tl_len(k)) = old[i];
        }
    }
    return 0;
}

size_t *mapi_doc_slot_for(mapi_doc *d, const mapi_value *type, unsigned kind,
                          const mapi_value *k)
{
    if (d->nkeys + 1 > d->nslots / 2 && grow_slots(d, d->nkeys + 1) != 0)
        return NULL;
    return mapi_doc_find_slot(d, str_of(type), mapi_tl_len(type), kind, str_of(k),
                              mapi_tl_len(k));
}

/* ---- reading resource objects ---- */

static int is_string(const mapi_value *v)
{
    return v && mapi_tl_type(v) == MAPI_STRING;
}

int mapi_doc_read_identity(const mapi_value *obj, const mapi_value **type,
                           const mapi_value **id, const mapi_value **lid)
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

/* A resource's four objects of fields, in the order check_fields and
   merge_resource read them. */
static const char *const field_sets[4] = {"attributes", "relationships", "links", "meta"};

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
   relationships, links and meta objects, no field named type or id (nor
   lid when the resource has one), no name both an attribute and a
   relationship. */
static int check_fields(const mapi_resource *r, uint32_t *stamps, uint32_t *serial,
                        mapi_error *err)
{
    const mapi_value *sets[4];
    doc_label l;
    size_t k, i;

    sets[0] = r->attributes;
    sets[1] = r->relationships;
    sets[2] = r->links;
    sets[3] = r->meta;
    if (++*serial == 0)
        *serial = 1;
    for (k = 0; k < 4; k++) {
        const mapi_member *m;
        size_t n;
        if (!sets[k])
            continue;
        if (!is_object(sets[k])) {
            mapi_doc_label(&l, r->type, r->id, r->lid);
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "not JSON:API: the %s member of " LABEL_FMT " is not an object",
                                  field_sets[k], LABEL_ARGS(l));
        }
        if (k >= 2)
            continue; /* links and meta: any member names */
        m = (const mapi_member *)sets[k]->p;
        n = mapi_tl_len(sets[k]);
        for (i = 0; i < n; i++) {
            size_t id = m[i].name->id;
            char q[QUOTED_MAX];
            if (id == MAPI_N_ID || id == MAPI_N_TYPE || (id == MAPI_N_LID && r->lid)) {
                mapi_doc_label(&l, r->type, r->id, r->lid);
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "not JSON:API: " LABEL_FMT " has a field named %s in %s "
                                      "(fields share one namespace with type and id)",
                                      LABEL_ARGS(l), m[i].name->s, field_sets[k]);
            }
            if (k == 0) {
                stamps[id] = *serial;
            } else if (stamps[id] == *serial) {
                mapi_doc_label(&l, r->type, r->id, r->lid);
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "not JSON:API: " LABEL_FMT " has an attribute and a "
                                      "relationship named %s",
                                      LABEL_ARGS(l), mapi_doc_quoted(m[i].name->s, m[i].name->len, q));
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
    if (mapi_doc_read_identity(obj, &r->type, &r->id, &r->lid) != 0)
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
    const mapi_value **mine[4], *theirs[4];
    conflict c = {NULL, NULL, NULL};
    doc_label l;
    int rc = 0, k;

    mine[0] = &a->attributes, theirs[0] = b->attributes;
    mine[1] = &a->relationships, theirs[1] = b->relationships;
    mine[2] = &a->links, theirs[2] = b->links;
    mine[3] = &a->meta, theirs[3] = b->meta;
    for (k = 0; k < 4 && rc == 0; k++)
        if ((rc = merge_values(&d->arena, *mine[k], theirs[k], k == 1, mine[k], &c)) != 0)
            c.field = field_sets[k];
    if (rc == 0 && a->lid && b->lid && !mapi_value_equal(a->lid, b->lid)) {
        rc = -1;
        c.field = "lid";
    }
    if (rc == -2)
        return mapi_error_oom(err);
    if (rc != 0) {
        char q1[QUOTED_MAX], q2[QUOTED_MAX];
        mapi_doc_label(&l, a->type, a->id, a->lid);
        return mapi_error_set(
            err, MAPI_ERR_DECODE,
            "not JSON:API: " LABEL_FMT " comes twice and the copies differ in %s%s%s%s%s",
            LABEL_ARGS(l), c.field, c.name ? " member " : "",
            c.name ? mapi_doc_quoted(c.name->s, c.name->len, q1) : "", c.inner ? " at " : "",
            c.inner ? mapi_doc_quoted(c.inner->s, c.inner->len, q2) : "");
    }
    return 0;
}

/* ---- adding resources ---- */

int mapi_doc_reserve(mapi_doc *d)
{
    return mapi_doc_grow(d, (void **)&d->res, &d->capres, d->nres, sizeof *d->res);
}

size_t mapi_doc_add_at(mapi_doc *d, size_t *slot, unsigned kind)
{
    size_t i = d->nres++;

    d->res[i].index = i;
    *slot = ((i + 1) << 1) | kind;
    d->nkeys++;
    return i;
}

/* Makes (type, lid) find resource r.  0, or -1 with err when that lid
   names another resource already. */
static int index_lid(mapi_doc *d, const mapi_resource *r, mapi_error *err)
{
    size_t *slot = mapi_doc_slot_for(d, r->type, KEY_LID, r->lid);
    doc_label l;

    if (!slot)
        return mapi_error_oom(err);
    if (*slot && slot_index(*slot) != r->index) {
        mapi_doc_label(&l, r->type, NULL, r->lid);
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
    size_t *slot = r->id ? mapi_doc_slot_for(d, r->type, KEY_ID, r->id)
                         : mapi_doc_slot_for(d, r->type, KEY_LID, r->lid);

    if (!slot)
        return mapi_error_oom(err);
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
    *index = mapi_doc_add_at(d, slot, r->id ? KEY_ID : KEY_LID);
    return r->id && r->lid ? index_lid(d, r, err) : 0;
}

/* Reads, checks and indexes the resource object obj found at p. */
static int take_resource(mapi_doc *d, const mapi_value *obj, const place *p, uint32_t *stamps,
                         uint32_t *serial, size_t *index, mapi_error *err)
{
    if (mapi_doc_reserve(d) != 0)
        return mapi_error_oom(err);
    if (read_resource(obj, p, &d->res[d->nres], err) != 0)
        return -1;
    return add_resource(d, stamps, serial, index, err);
}

int mapi_doc_build(mapi_doc *d, mapi_error *err)
{
    const mapi_value *r = d->root, *data = NULL;
    uint32_t *stamps = NULL, serial = 0;
    size_t i, n, nincl, idx = 0;
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
    if ((d->meta && !is_object(d->meta)) || (d->links && !is_object(d->links)) ||
        (d->jsonapi && !is_object(d->jsonapi))) /* null: absent */
        return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: %s is not an object",
                              d->meta && !is_object(d->meta)     ? "meta"
                              : d->links && !is_object(d->links) ? "links"
                                                                 : "jsonapi");
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
        rc = mapi_error_oom(err);
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
    rc = 0;
out:
    free(stamps);
    return rc;
}

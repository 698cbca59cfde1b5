/*
 * jsonapi.c -- JSON:API documents: parse (json-c, exact numbers), the
 * (type, id) index of primary and included resources, stubs for linkages to
 * resources the document does not hold, and relationship resolution.
 *
 * Interface: docs/service-interface.md, "Document envelope"; the
 * resolution rules of docs/contract.md, "Resources come back flattened and
 * resolved".
 */
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEFAULT_DEPTH 64

struct mapi_resource {
    struct json_object *obj;   /* the resource object, or the linkage for a stub */
    const char *type, *id;     /* borrowed from obj */
    struct json_object *attributes, *relationships, *meta;
    size_t index;
    int stub;
    size_t link_first, link_count; /* its resolved relationships: doc->links[first..] */
};

/* One relationship with linkage data, resolved once while indexing. */
typedef struct link_rec {
    const char *name;          /* borrowed from the relationships object */
    mapi_rel_kind kind;        /* ONE or MANY */
    size_t count, first;       /* targets: doc->targets[first .. first + count) */
} link_rec;

struct mapi_doc {
    struct json_object *root;
    mapi_response *response;   /* owned; NULL for mapi_doc_parse */
    struct json_object *data, *included, *meta, *jsonapi, *errors;
    int is_list;
    mapi_resource **blocks;    /* every distinct resource, RES_BLOCK per block: no
                                  realloc, and no chunk big enough to make free()
                                  consolidate the heap (>= 64 KiB in glibc) */
    size_t nres, nblocks, capblocks;
    size_t *data_map;          /* primary resource i -> index in res */
    size_t ndata;
    size_t *slots;             /* open addressing: index+1, 0 empty */
    size_t nslots;             /* power of two */
    link_rec *links;           /* every resource's resolved relationships */
    size_t nlinks, caplinks;
    size_t *targets;           /* resource indexes the links point to */
    size_t ntargets, captargets;
    int settled;               /* mapi_doc_set_settled: a settled confirm's read */
};

#define RES_BLOCK 256 /* resources per block (about 20 KiB) */
#define RES(d, i) (&(d)->blocks[(i) / RES_BLOCK][(i) % RES_BLOCK])

/* ---- the (type, id) index ---- */

static size_t hash_key(const char *type, const char *id)
{
    /* FNV-1a over type, a separator, id */
    size_t h = (size_t)2166136261u;
    const unsigned char *p;
    for (p = (const unsigned char *)type; *p; p++)
        h = (h ^ *p) * (size_t)16777619u;
    h = (h ^ 0xffu) * (size_t)16777619u;
    for (p = (const unsigned char *)id; *p; p++)
        h = (h ^ *p) * (size_t)16777619u;
    return h;
}

static size_t *find_slot(const mapi_doc *d, const char *type, const char *id)
{
    size_t mask = d->nslots - 1, i = hash_key(type, id) & mask;
    for (;;) {
        size_t *s = &d->slots[i];
        if (*s == 0)
            return s;
        {
            const mapi_resource *r = RES(d, *s - 1);
            if (strcmp(r->id, id) == 0 && strcmp(r->type, type) == 0)
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
    d->slots = calloc(n, sizeof(size_t));
    if (!d->slots) {
        d->slots = old;
        return -1;
    }
    d->nslots = n;
    for (i = 0; i < nold; i++)
        if (old[i])
            *find_slot(d, RES(d, old[i] - 1)->type, RES(d, old[i] - 1)->id) = old[i];
    free(old);
    return 0;
}

/* Reads {"type": string, "id": string}; 0 when obj is such an object. */
static int read_identity(struct json_object *obj, const char **type, const char **id)
{
    struct json_object *t, *i;
    if (!json_object_is_type(obj, json_type_object) ||
        !json_object_object_get_ex(obj, "type", &t) || !json_object_is_type(t, json_type_string) ||
        !json_object_object_get_ex(obj, "id", &i) || !json_object_is_type(i, json_type_string))
        return -1;
    *type = json_object_get_string(t);
    *id = json_object_get_string(i);
    return 0;
}

static struct json_object *member(struct json_object *obj, const char *key)
{
    struct json_object *m = NULL;
    if (json_object_is_type(obj, json_type_object))
        json_object_object_get_ex(obj, key, &m);
    return m;
}

/* Room for one more entry in an array of *cap elements of size sz. */
static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
    size_t c;
    void *p;

    if (n < *cap)
        return 0;
    c = *cap ? *cap * 2 : 64;
    if (c > ((size_t)-1) / 2 / sz)
        return -1;
    p = realloc(*arr, c * sz);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* Reads a resource object's members in one pass over them (rather than a
   hash lookup for each): string type and id (else -1), and attributes,
   relationships and meta (NULL when absent or null). */
static int read_resource(struct json_object *obj, const char **type, const char **id,
                         struct json_object **attributes, struct json_object **relationships,
                         struct json_object **meta)
{
    struct json_object *t = NULL, *i = NULL;
    struct lh_entry *e;

    if (!json_object_is_type(obj, json_type_object))
        return -1;
    for (e = lh_table_head(json_object_get_object(obj)); e; e = lh_entry_next(e)) {
        const char *k = (const char *)lh_entry_k(e);
        struct json_object *v = (struct json_object *)lh_entry_v(e);
        switch (k[0]) {
        case 'i':
            if (strcmp(k, "id") == 0)
                i = v;
            break;
        case 't':
            if (strcmp(k, "type") == 0)
                t = v;
            break;
        case 'a':
            if (strcmp(k, "attributes") == 0)
                *attributes = v;
            break;
        case 'r':
            if (strcmp(k, "relationships") == 0)
                *relationships = v;
            break;
        case 'm':
            if (strcmp(k, "meta") == 0)
                *meta = v;
            break;
        default:
            break;
        }
    }
    if (!json_object_is_type(t, json_type_string) || !json_object_is_type(i, json_type_string))
        return -1;
    *type = json_object_get_string(t);
    *id = json_object_get_string(i);
    return 0;
}

/* Adds obj (a resource, or a linkage when stub) unless its (type,id) is
   there already; *index gets its position.  -1 on memory, -2 on no identity. */
static int add_resource(mapi_doc *d, struct json_object *obj, int stub, size_t *index)
{
    const char *type, *id;
    size_t *slot;
    mapi_resource *r;

    struct json_object *attributes = NULL, *relationships = NULL, *meta = NULL;

    if (stub ? read_identity(obj, &type, &id) != 0
             : read_resource(obj, &type, &id, &attributes, &relationships, &meta) != 0)
        return -2;
    if (d->nres + 1 > d->nslots / 2 && grow_slots(d, d->nres + 1) != 0)
        return -1;
    slot = find_slot(d, type, id);
    if (*slot) {
        *index = *slot - 1;
        return 0;
    }
    if (d->nres % RES_BLOCK == 0) {
        mapi_resource *block;
        if (d->nblocks == d->capblocks &&
            grow((void **)&d->blocks, &d->capblocks, d->nblocks, sizeof *d->blocks) != 0)
            return -1;
        block = malloc(RES_BLOCK * sizeof *block);
        if (!block)
            return -1;
        d->blocks[d->nblocks++] = block;
    }
    r = RES(d, d->nres);
    memset(r, 0, sizeof *r);
    r->obj = obj;
    r->type = type;
    r->id = id;
    r->index = d->nres;
    r->stub = stub;
    r->attributes = attributes;
    r->relationships = relationships;
    r->meta = meta;
    *slot = ++d->nres;
    *index = r->index;
    return 0;
}

/* ---- parsing ---- */

/* 1 for the types walk() visits: containers and numbers. */
#define WALKED(t) ((t) == json_type_array || (t) == json_type_object || \
                   (t) == json_type_double || (t) == json_type_int)

/* Walks every value once: strips the '.' numscan appended to big integers,
   checks every number kept its text, gives every number the texts
   mapi_value_number / mapi_value_decimal return (value.c), and counts
   object members.  Values are read through json-c's public structures
   (lh_table entries, array_list) and only containers and numbers are
   visited: this pass runs over every value of every document.  0; -1 when
   a number lost its text; -2 when out of memory. */
static int walk(struct json_object *v, size_t *members)
{
    switch (json_object_get_type(v)) {
    case json_type_int:
        return mapi_value_prepare_number(v) == 0 ? 0 : -2;
    case json_type_double: {
        char *text = (char *)json_object_get_userdata(v);
        size_t n;
        if (!text)
            return -1;
        n = strlen(text);
        if (n > 0 && text[n - 1] == '.')
            text[n - 1] = '\0'; /* ours: numscan rejects a source "1." */
        return mapi_value_prepare_number(v) == 0 ? 0 : -2;
    }
    case json_type_array: {
        struct array_list *al = json_object_get_array(v);
        size_t i, n = al ? al->length : 0;
        for (i = 0; i < n; i++) {
            struct json_object *e = (struct json_object *)al->array[i];
            int rc = WALKED(json_object_get_type(e)) ? walk(e, members) : 0;
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    case json_type_object: {
        struct lh_entry *e;
        *members += (size_t)json_object_object_length(v);
        for (e = lh_table_head(json_object_get_object(v)); e; e = lh_entry_next(e)) {
            struct json_object *m = (struct json_object *)lh_entry_v(e);
            int rc = WALKED(json_object_get_type(m)) ? walk(m, members) : 0;
            if (rc != 0)
                return rc;
        }
        return 0;
    }
    default:
        return 0;
    }
}

static int parse_json(const char *body, size_t len, int max_depth, struct json_object **out,
                      mapi_error *err)
{
    mapi_numscan_result scan;
    struct json_tokener *tok;
    struct json_object *root;
    char *marked = NULL;
    size_t members = 0;
    enum json_tokener_error jerr;
    int rc;

    if (len > (size_t)INT_MAX - 1)
        return mapi_error_set(err, MAPI_ERR_DECODE, "document too large (%zu bytes)", len);
    /* one pass: numbers, bare words, UTF-8 and \u escapes (mapi_utf8_check's rules) */
    if (mapi_numscan(body, len, &scan, err) != 0)
        return -1;
    if (scan.big_ints) {
        marked = mapi_numscan_mark(body, len, scan.big_ints, &len);
        if (!marked)
            return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
        body = marked;
    }
    tok = json_tokener_new_ex(max_depth > 0 ? max_depth : DEFAULT_DEPTH);
    if (!tok) {
        free(marked);
        return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
    }
    /* No JSON_TOKENER_VALIDATE_UTF8: mapi_numscan above checked every byte
       by stricter rules (utf8.c); json-c's per-byte check would repeat it. */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, body, (int)len);
    jerr = json_tokener_get_error(tok);
    if (root && json_tokener_get_parse_end(tok) < len) {
        /* only white space may follow the value */
        size_t i;
        for (i = json_tokener_get_parse_end(tok); i < len; i++)
            if (!strchr(" \t\r\n", body[i])) {
                jerr = json_tokener_error_parse_unexpected;
                break;
            }
    }
    json_tokener_free(tok);
    free(marked);
    if (jerr != json_tokener_success || !root) {
        json_object_put(root);
        if (jerr == json_tokener_continue || jerr == json_tokener_success)
            return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: unexpected end of input");
        if (jerr == json_tokener_error_depth)
            return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: nested deeper than %d",
                                  max_depth > 0 ? max_depth : DEFAULT_DEPTH);
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: %s",
                              json_tokener_error_desc(jerr));
    }
    rc = walk(root, &members);
    if (rc != 0) {
        json_object_put(root);
        if (rc == -2)
            return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: a number lost its text");
    }
    if (members != scan.members) {
        json_object_put(root);
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: duplicate member name");
    }
    *out = root;
    return 0;
}

/* Resolves every relationship of every resource once: each linkage to its
   resource's index, with a stub for a resource the document does not hold,
   recorded as the resource's links (mapi_resource_link) so that nothing is
   looked up again.  Stubs are appended while iterating, so only the
   resources present before the call are visited (stubs have none). */
static int add_stubs(mapi_doc *d, mapi_error *err)
{
    size_t i, n = d->nres, j;
    for (i = 0; i < n; i++) {
        struct json_object *rels = RES(d, i)->relationships;
        struct json_object_iterator it, end;
        RES(d, i)->link_first = d->nlinks;
        if (!json_object_is_type(rels, json_type_object))
            continue;
        it = json_object_iter_begin(rels);
        end = json_object_iter_end(rels);
        for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
            struct json_object *data = member(json_object_iter_peek_value(&it), "data");
            int many = json_object_is_type(data, json_type_array);
            size_t count = 1, idx;
            link_rec *l;
            int rc = 0;
            if (!data)
                continue;
            if (many)
                count = json_object_array_length(data);
            if (grow((void **)&d->links, &d->caplinks, d->nlinks, sizeof *d->links) != 0)
                return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
            l = &d->links[d->nlinks];
            l->name = json_object_iter_peek_name(&it);
            l->kind = many ? MAPI_REL_MANY : MAPI_REL_ONE;
            l->count = 0;
            l->first = d->ntargets;
            for (j = 0; j < count && rc == 0; j++) {
                struct json_object *link = many ? json_object_array_get_idx(data, j) : data;
                rc = add_resource(d, link, 1, &idx);
                if (rc == 0 && grow((void **)&d->targets, &d->captargets, d->ntargets,
                                    sizeof *d->targets) != 0)
                    rc = -1;
                if (rc == 0)
                    d->targets[d->ntargets++] = idx;
            }
            if (rc == -1)
                return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
            if (rc == -2)
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "not JSON:API: relationship '%s' has a linkage without "
                                      "string type and id", json_object_iter_peek_name(&it));
            l->count = count;
            d->nlinks++;
        }
        RES(d, i)->link_count = d->nlinks - RES(d, i)->link_first;
    }
    return 0;
}

static int build_index(mapi_doc *d, mapi_error *err)
{
    struct json_object *r = d->root;
    size_t i, n, idx;
    int rc;

    if (!json_object_is_type(r, json_type_object))
        return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: the document is not an object");
    d->data = member(r, "data");
    d->included = member(r, "included");
    d->meta = member(r, "meta");
    d->jsonapi = member(r, "jsonapi");
    d->errors = member(r, "errors");
    if (!json_object_object_get_ex(r, "data", NULL) && !d->errors && !d->meta)
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: no data, errors or meta member");
    if (d->errors && !json_object_is_type(d->errors, json_type_array))
        return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: errors is not an array");
    if (d->included && !json_object_is_type(d->included, json_type_array))
        return mapi_error_set(err, MAPI_ERR_DECODE, "not JSON:API: included is not an array");
    if (d->data && !json_object_is_type(d->data, json_type_array) &&
        !json_object_is_type(d->data, json_type_object))
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: data is neither a resource, an array nor null");

    d->is_list = json_object_is_type(d->data, json_type_array);
    n = d->is_list ? json_object_array_length(d->data) : (d->data ? 1 : 0);
    if (grow_slots(d, n + (d->included ? json_object_array_length(d->included) : 0) + 8) != 0)
        return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
    if (n) {
        d->data_map = malloc(n * sizeof *d->data_map);
        if (!d->data_map)
            return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
    }
    for (i = 0; i < n; i++) {
        struct json_object *o = d->is_list ? json_object_array_get_idx(d->data, i) : d->data;
        rc = add_resource(d, o, 0, &idx);
        if (rc == -1)
            return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
        if (rc == -2)
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "not JSON:API: data[%zu] has no string type and id", i);
        d->data_map[d->ndata++] = idx;
    }
    n = d->included ? json_object_array_length(d->included) : 0;
    for (i = 0; i < n; i++) {
        rc = add_resource(d, json_object_array_get_idx(d->included, i), 0, &idx);
        if (rc == -1)
            return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
        if (rc == -2)
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "not JSON:API: included[%zu] has no string type and id", i);
    }
    return add_stubs(d, err);
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
    d = calloc(1, sizeof *d);
    if (!d)
        return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
    if (parse_json(body ? body : "", len, max_depth, &d->root, err) != 0 ||
        build_index(d, err) != 0) {
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
    if (mapi_doc_parse_ex(res->body, res->len, max_depth, out, err) != 0) {
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
        return mapi_error_set(err, MAPI_ERR_MEMORY, "out of memory");
    }
    d->response = res;
    *out = d;
    return 0;
}

void mapi_doc_free(mapi_doc *d)
{
    size_t i;

    if (!d)
        return;
    /* The large blocks first, the json-c tree last: freeing a large chunk
       makes glibc consolidate every small free chunk it holds (the tree's
       thousands), which would then be merged away instead of serving the
       next document's allocations. */
    mapi_response_free(d->response);
    for (i = 0; i < d->nblocks; i++)
        free(d->blocks[i]);
    free(d->blocks);
    free(d->data_map);
    free(d->slots);
    free(d->links);
    free(d->targets);
    json_object_put(d->root);
    free(d);
}

/* ---- navigation ---- */

const mapi_value *mapi_doc_root(const mapi_doc *d) { return (const mapi_value *)d->root; }
const mapi_value *mapi_doc_meta(const mapi_doc *d) { return (const mapi_value *)d->meta; }
const mapi_value *mapi_doc_jsonapi(const mapi_doc *d) { return (const mapi_value *)d->jsonapi; }
const mapi_value *mapi_doc_errors(const mapi_doc *d) { return (const mapi_value *)d->errors; }
int mapi_doc_is_list(const mapi_doc *d) { return d->is_list; }
size_t mapi_doc_data_count(const mapi_doc *d) { return d->ndata; }
size_t mapi_doc_resource_count(const mapi_doc *d) { return d->nres; }
const mapi_response *mapi_doc_response(const mapi_doc *d) { return d->response; }

void mapi_doc_set_settled(mapi_doc *d) { d->settled = 1; }
const char *mapi_doc_settled_by(const mapi_doc *d) { return d && d->settled ? "read" : NULL; }

const mapi_resource *mapi_doc_data(const mapi_doc *d, size_t i)
{
    return i < d->ndata ? RES(d, d->data_map[i]) : NULL;
}

const mapi_resource *mapi_doc_resource(const mapi_doc *d, size_t i)
{
    return i < d->nres ? RES(d, i) : NULL;
}

const mapi_resource *mapi_doc_find(const mapi_doc *d, const char *type, const char *id)
{
    size_t *slot;
    if (!type || !id || d->nslots == 0)
        return NULL;
    slot = find_slot(d, type, id);
    return *slot ? RES(d, *slot - 1) : NULL;
}

const mapi_resource *mapi_doc_resolve(const mapi_doc *d, const mapi_value *linkage)
{
    const char *type, *id;
    if (read_identity((struct json_object *)linkage, &type, &id) != 0)
        return NULL;
    return mapi_doc_find(d, type, id);
}

const char *mapi_resource_type(const mapi_resource *r) { return r->type; }
const char *mapi_resource_id(const mapi_resource *r) { return r->id; }

int mapi_resource_id_is(const mapi_resource *r, const char *id)
{
    struct json_object *v = member(r->obj, "id");
    size_t n = strlen(id);

    return json_object_is_type(v, json_type_string) &&
           (size_t)json_object_get_string_len(v) == n &&
           memcmp(json_object_get_string(v), id, n) == 0;
}
size_t mapi_resource_index(const mapi_resource *r) { return r->index; }
int mapi_resource_is_stub(const mapi_resource *r) { return r->stub; }
size_t mapi_resource_link_count(const mapi_resource *r) { return r->link_count; }

int mapi_resource_link(const mapi_doc *d, const mapi_resource *r, size_t i, mapi_link *out)
{
    const link_rec *l;

    if (i >= r->link_count)
        return 0;
    l = &d->links[r->link_first + i];
    out->name = l->name;
    out->kind = l->kind;
    out->count = l->count;
    out->targets = l->count ? d->targets + l->first : NULL;
    return 1;
}

const mapi_value *mapi_resource_attributes(const mapi_resource *r)
{
    return (const mapi_value *)r->attributes;
}

const mapi_value *mapi_resource_relationships(const mapi_resource *r)
{
    return (const mapi_value *)r->relationships;
}

const mapi_value *mapi_resource_meta(const mapi_resource *r)
{
    return (const mapi_value *)r->meta;
}

const mapi_value *mapi_resource_attr(const mapi_resource *r, const char *name)
{
    return mapi_value_get((const mapi_value *)r->attributes, name);
}

static struct json_object *rel_data(const mapi_resource *r, const char *name)
{
    return member(member(r->relationships, name), "data");
}

mapi_rel_kind mapi_resource_rel(const mapi_doc *d, const mapi_resource *r, const char *name,
                                size_t *count)
{
    struct json_object *data = rel_data(r, name);
    (void)d;
    if (count)
        *count = 0;
    if (json_object_is_type(data, json_type_array)) {
        if (count)
            *count = json_object_array_length(data);
        return MAPI_REL_MANY;
    }
    if (json_object_is_type(data, json_type_object)) {
        if (count)
            *count = 1;
        return MAPI_REL_ONE;
    }
    return MAPI_REL_NONE;
}

const mapi_resource *mapi_resource_related(const mapi_doc *d, const mapi_resource *r,
                                           const char *name, size_t i)
{
    struct json_object *data = rel_data(r, name);
    if (json_object_is_type(data, json_type_array)) {
        if (i >= json_object_array_length(data))
            return NULL;
        return mapi_doc_resolve(d, (const mapi_value *)json_object_array_get_idx(data, i));
    }
    if (i != 0)
        return NULL;
    return mapi_doc_resolve(d, (const mapi_value *)data);
}

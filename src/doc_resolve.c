/*
 * doc_resolve.c -- the relationships of a JSON:API document (doc.h): each
 * resolved once while the document is built, then read without a lookup.
 */
#include <string.h>

#include "doc.h"

/* The resource a linkage names (type and id, or type and lid), a stub made
   for it when the document does not hold it.  0 with *index, or -1 with err. */
static int resolve_linkage(mapi_doc *d, const mapi_value *link, size_t *index, size_t owner,
                           const mapi_name *rel, mapi_error *err)
{
    const mapi_value *type, *id, *lid;
    size_t *slot;
    mapi_resource *r;

    if (mapi_doc_read_identity(link, &type, &id, &lid) != 0) {
        char q[QUOTED_MAX];
        doc_label l;
        mapi_doc_label(&l, d->res[owner].type, d->res[owner].id, d->res[owner].lid);
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "not JSON:API: relationship %s of " LABEL_FMT
                              " has a linkage without string type and id",
                              mapi_doc_quoted(rel->s, rel->len, q), LABEL_ARGS(l));
    }
    slot = id ? mapi_doc_slot_for(d, type, KEY_ID, id) : mapi_doc_slot_for(d, type, KEY_LID, lid);
    if (!slot || (!*slot && mapi_doc_reserve(d) != 0))
        return mapi_error_oom(err);
    if (*slot) {
        *index = slot_index(*slot);
        return 0;
    }
    r = &d->res[d->nres];
    memset(r, 0, sizeof *r);
    r->type = type;
    r->id = id;
    r->lid = id ? NULL : lid; /* a stub is found by what its linkage named */
    r->obj = link;
    r->stub = 1;
    *index = mapi_doc_add_at(d, slot, id ? KEY_ID : KEY_LID);
    return 0;
}

/* A relationship's record: its name, data, links and meta (one pass over
   the relationship object). */
static void read_relationship(rel_rec *rec, const mapi_name *name, const mapi_value *rel,
                              size_t first)
{
    const mapi_member *m = (const mapi_member *)rel->p;
    size_t k, n = mapi_tl_len(rel);

    memset(rec, 0, sizeof *rec);
    rec->name = name;
    rec->first = first;
    for (k = 0; k < n; k++) {
        switch (m[k].name->id) {
        case MAPI_N_DATA: rec->data = &m[k].value; break;
        case MAPI_N_LINKS: rec->links = nonnull(&m[k].value); break;
        case MAPI_N_META: rec->meta = nonnull(&m[k].value); break;
        default: break;
        }
    }
}

/* Every relationship of resource i resolved (stubs appended as needed), in
   d->rels / d->targets (room for one record per relationship made).  0, or
   -1 with err. */
static int resolve_relationships(mapi_doc *d, size_t i, mapi_error *err)
{
    const mapi_value *rels = d->res[i].relationships;
    const mapi_member *m;
    size_t n, k, j;
    doc_label owner;
    char q[QUOTED_MAX];

    d->res[i].rel_first = d->nrels;
    if (!rels)
        return 0;
    m = (const mapi_member *)rels->p;
    n = mapi_tl_len(rels);
    for (k = 0; k < n; k++) {
        const mapi_value *rel = &m[k].value, *data;
        rel_rec *rec;
        const char *wrong = NULL;
        if (!is_object(rel)) {
            wrong = "is not an object";
        } else {
            if (mapi_doc_grow(d, (void **)&d->rels, &d->caprels, d->nrels, sizeof *d->rels) != 0)
                return mapi_error_oom(err);
            rec = &d->rels[d->nrels];
            read_relationship(rec, m[k].name, rel, d->ntargets);
            data = rec->data;
            if ((rec->links && !is_object(rec->links)) || (rec->meta && !is_object(rec->meta))) {
                wrong = rec->links && !is_object(rec->links) ? "links" : "meta";
                mapi_doc_label(&owner, d->res[i].type, d->res[i].id, d->res[i].lid);
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "not JSON:API: the %s of relationship %s of " LABEL_FMT
                                      " is not an object",
                                      wrong, mapi_doc_quoted(m[k].name->s, m[k].name->len, q),
                                      LABEL_ARGS(owner));
            }
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
                    if (mapi_doc_grow(d, (void **)&d->targets, &d->captargets, d->ntargets,
                                      sizeof *d->targets) != 0)
                        return mapi_error_oom(err);
                    d->targets[d->ntargets++] = idx;
                }
                rec->count = count;
            } else {
                wrong = "has data that is not a linkage, an array of linkages or null";
            }
        }
        if (wrong) {
            mapi_doc_label(&owner, d->res[i].type, d->res[i].id, d->res[i].lid);
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "not JSON:API: relationship %s of " LABEL_FMT " %s",
                                  mapi_doc_quoted(m[k].name->s, m[k].name->len, q),
                                  LABEL_ARGS(owner), wrong);
        }
        d->nrels++;
        d->res[i].rel_count++;
    }
    return 0;
}

/* ---- reading them ---- */

int mapi_doc_resolve_all(mapi_doc *d, mapi_error *err)
{
    size_t i, nrels;

    /* one record per relationship, one target per to-one linkage at least */
    for (i = 0, nrels = 0; i < d->nreal; i++)
        if (is_object(d->res[i].relationships))
            nrels += mapi_tl_len(d->res[i].relationships);
    if (nrels && ((d->rels = mapi_arena_alloc(&d->arena, nrels * sizeof *d->rels)) == NULL ||
                  (d->targets = mapi_arena_alloc(&d->arena, nrels * sizeof *d->targets)) == NULL))
        return mapi_error_oom(err);
    d->caprels = d->captargets = nrels;
    for (i = 0; i < d->nreal; i++)
        if (resolve_relationships(d, i, err) != 0)
            return -1;
    return 0;
}

size_t mapi_resource_relationship_count(const mapi_resource *r) { return r->rel_count; }

static void fill_relationship(const mapi_doc *d, const rel_rec *l, mapi_relationship *out)
{
    out->name = l->name->s;
    out->name_len = l->name->len;
    out->name_id = l->name->id;
    out->data = l->state;
    out->count = l->count;
    out->targets = l->count ? d->targets + l->first : NULL;
    out->linkage = l->state == MAPI_REL_TO_ONE || l->state == MAPI_REL_TO_MANY ? l->data : NULL;
    out->links = l->links;
    out->meta = l->meta;
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

const mapi_resource *mapi_resource_related(const mapi_doc *d, const mapi_resource *r,
                                           const char *name, size_t i)
{
    const rel_rec *l = name ? find_rel(d, r, name, strlen(name)) : NULL;

    if (!l || i >= l->count)
        return NULL;
    return &d->res[d->targets[l->first + i]];
}

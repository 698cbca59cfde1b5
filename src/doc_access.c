/*
 * doc_access.c -- navigation of a JSON:API document and its resources (doc.h).
 */
#include <string.h>

#include "doc.h"

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
    slot = mapi_doc_find_slot(d, type, tlen, kind, v, vlen);
    return *slot ? &d->res[slot_index(*slot)] : NULL;
}

const mapi_resource *mapi_doc_find(const mapi_doc *d, const char *type, const char *id)
{
    return type && id ? find(d, type, strlen(type), KEY_ID, id, strlen(id)) : NULL;
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
    if (mapi_doc_read_identity(linkage, &type, &id, &lid) != 0)
        return NULL;
    return find(d, str_of(type), mapi_tl_len(type), id ? KEY_ID : KEY_LID,
                str_of(id ? id : lid), mapi_tl_len(id ? id : lid));
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

/*
 * doc.h -- what the files of the JSON:API document layer share (not
 * installed): the document and resource structs, and the calls one file
 * makes into another; what the layer offers those above is documents.h (docs/architecture.md's "Layout" names each file's job).
 *
 * Everything is built in the call that reads the body, touching resource
 * objects only (the values below them are the tree's).  Nothing is
 * allocated per value: the tree is in the document's arena, the index and
 * the resolved relationships in a few arrays in it.
 *
 * Interface: docs/service-interface.md, "Document envelope"; the resolution
 * rules of docs/contract.md, "Resources come back flattened and resolved";
 * the field and identity rules of JSON:API 1.1 ("Resource Objects",
 * "Fields", "Identification", "Compound Documents").
 */
#ifndef MAPI_DOC_H
#define MAPI_DOC_H

#include "documents.h"

/* A relationship of a resource, resolved once while parsing. */
typedef struct rel_rec {
    const mapi_name *name;
    const mapi_value *data;  /* its data member (possibly a null node), or NULL: no data */
    const mapi_value *links, *meta; /* its links and meta members, NULL when absent or null */
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
    int stub;
};

struct mapi_doc {
    mapi_owned owned;             /* first: mapi_doc_free, installed by its constructors */
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

/* The two kinds of keys of the index (the low bit of a slot). */
#define KEY_ID 0u
#define KEY_LID 1u

static inline const mapi_value *nonnull(const mapi_value *v)
{
    return v && mapi_tl_type(v) != MAPI_NULL ? v : NULL;
}

static inline int is_object(const mapi_value *v)
{
    return v && mapi_tl_type(v) == MAPI_OBJECT;
}

static inline const char *str_of(const mapi_value *v)
{
    return (const char *)v->p;
}

/* The resource index a (non-empty) slot holds. */
static inline size_t slot_index(size_t s)
{
    return (s >> 1) - 1;
}

/* ---- messages (doc_index.c, for the documents' three files) ---- */

/* Text for a message: s[0..n) in double quotes, control bytes and '"' as
   \u escapes, cut after 60 bytes.  Always NUL-terminated in out. */
#define QUOTED_MAX 80
const char *mapi_doc_quoted(const char *s, size_t n, char out[QUOTED_MAX]);

/* A resource for messages: its type, then "id" or (lid "x"). */
typedef struct doc_label {
    char type[QUOTED_MAX], id[QUOTED_MAX];
    const char *lid; /* "" or "lid " */
} doc_label;

void mapi_doc_label(doc_label *l, const mapi_value *type, const mapi_value *id,
                    const mapi_value *lid);

#define LABEL_FMT "%s %s%s"
#define LABEL_ARGS(l) (l).type, (l).lid, (l).id

/* ---- the index (doc_index.c) ---- */

/* Room for one more entry in an array of *cap elements of size sz in the
   document's arena (a grown array is a copy: the old one stays unused until
   the document is freed).  0, or -1 out of memory. */
int mapi_doc_grow(mapi_doc *d, void **arr, size_t *cap, size_t n, size_t sz);
/* The slot of (type, kind, v): the one holding it, or the empty one where it goes. */
size_t *mapi_doc_find_slot(const mapi_doc *d, const char *type, size_t tlen, unsigned kind,
                           const char *v, size_t vlen);
/* The same for the key k of this kind, with room for one more key; NULL out of memory. */
size_t *mapi_doc_slot_for(mapi_doc *d, const mapi_value *type, unsigned kind,
                          const mapi_value *k);
/* Room for one more resource in d->res: 0, or -1 out of memory. */
int mapi_doc_reserve(mapi_doc *d);
/* Makes d->res[d->nres] (room reserved, read) a new resource, the one the
   empty slot (its key of this kind) finds: returns its index. */
size_t mapi_doc_add_at(mapi_doc *d, size_t *slot, unsigned kind);
/* The identity members of obj: 0, or -1 when type is not a string or
   neither id nor lid is one (a member present must be a string). */
int mapi_doc_read_identity(const mapi_value *obj, const mapi_value **type,
                           const mapi_value **id, const mapi_value **lid);
/* The envelope read, every resource of data and included indexed (copies
   merged, field rules checked): 0, or -1 with err.  Then mapi_doc_resolve_all. */
int mapi_doc_build(mapi_doc *d, mapi_error *err);

/* ---- relationships (doc_resolve.c) ---- */

/* Every relationship of every resource d indexes (mapi_doc_build) resolved,
   stubs appended to the index as needed: 0, or -1 with err. */
int mapi_doc_resolve_all(mapi_doc *d, mapi_error *err);

#endif /* MAPI_DOC_H */

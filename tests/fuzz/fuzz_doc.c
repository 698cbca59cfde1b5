/*
 * fuzz_doc.c -- libFuzzer harness over mapi_doc_parse (the simdjson reader
 * and the JSON:API layer) and the resolver.  Every accepted document is
 * walked completely: every resource (primary, included, stub) found again
 * by its (type, id) or (type, lid) with lengths, every attribute value
 * recursively with lengths and name numbers, every relationship resolved
 * (to-one and to-many, by index and by name), links and meta at every
 * level, jsonapi and errors; an error document is also read as the client
 * reads it (mapi_doc_error) and redacted of a secret, which must then show
 * in no field.
 *   make fuzz FUZZ_SECONDS=120
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base.h" /* mapi_error_redact, as the client calls it */
#include "merchantapi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t sink, names;

static void touch(const mapi_value *v, int depth)
{
    int64_t i;
    size_t n, k, klen;
    const char *key;
    const mapi_value *m;
    mapi_members it;

    switch (mapi_value_type(v)) {
    case MAPI_INT:
        if (mapi_value_int64(v, &i) == 0)
            sink += (size_t)i;
        if (!mapi_value_number(v, &n) || n == 0 || mapi_value_number_text(v) == NULL)
            __builtin_trap(); /* every number has its text */
        break;
    case MAPI_NUMBER:
        sink += strlen(mapi_value_number_text(v));
        if (!mapi_value_number(v, &n) || n != strlen(mapi_value_number_text(v)))
            __builtin_trap();
        if (!mapi_value_decimal(v, &n) || n == 0)
            __builtin_trap(); /* every number has its decimal form */
        break;
    case MAPI_STRING:
        mapi_value_string(v, &n);
        sink += n;
        break;
    case MAPI_ARRAY:
        n = mapi_value_len(v);
        for (k = 0; k < n; k++)
            touch(mapi_value_at(v, k), depth + 1);
        break;
    case MAPI_OBJECT:
        mapi_members_begin(v, &it);
        while (mapi_members_next_n(&it, &key, &klen, &m)) {
            /* every name is found by its bytes, and has a number below the count */
            if (!mapi_value_has_n(v, key, klen) || mapi_value_get_n(v, key, klen) != m ||
                mapi_members_name_id(&it) >= names)
                __builtin_trap();
            sink += klen;
            touch(m, depth + 1);
        }
        break;
    default:
        sink += (size_t)mapi_value_bool(v);
    }
}

/* An error document (errors[]) read as the client reads it, then redacted
   as the client redacts it: afterwards no field may hold the secret. */
#define SECRET "sk_live_fuzzsecret"

static int holds_secret(const char *s)
{
    return s && strstr(s, SECRET) != NULL;
}

static void check_error_doc(const mapi_doc *doc)
{
    mapi_error e = MAPI_ERROR_INIT;
    int rc = mapi_doc_error(doc, &e);
    size_t i;

    /* an error document reads as kind API with a message; a document the
       rule refuses (data beside errors, a list's count that is not a count)
       as kind DECODE with a title (mapi_doc_error) */
    if (rc == 1 && !((e.kind == MAPI_ERR_API && e.message) ||
                     (e.kind == MAPI_ERR_DECODE && e.title)))
        __builtin_trap();
    if (rc == 0 && e.kind != MAPI_ERR_NONE)
        __builtin_trap();
    if (rc == 1) {
        mapi_error_redact(&e, SECRET);
        if (holds_secret(e.code) || holds_secret(e.title) || holds_secret(e.detail) ||
            holds_secret(e.pointer) || holds_secret(e.amount) || holds_secret(e.minimum) ||
            holds_secret(e.maximum) || holds_secret(e.message))
            __builtin_trap(); /* the secret survived redaction */
        for (i = 0; i < e.nerrors; i++)
            if (holds_secret(e.errors[i].code) || holds_secret(e.errors[i].title) ||
                holds_secret(e.errors[i].detail) || holds_secret(e.errors[i].pointer))
                __builtin_trap();
    }
    mapi_error_clear(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    size_t i, n;

    if (mapi_doc_parse((const char *)data, size, &doc, &err) != 0) {
        if (!err.title || err.kind == MAPI_ERR_NONE)
            __builtin_trap(); /* a failure must say what failed */
        mapi_error_clear(&err);
        return 0;
    }
    names = mapi_doc_name_count(doc);
    touch(mapi_doc_root(doc), 0);
    touch(mapi_doc_links(doc), 0);
    check_error_doc(doc);
    n = mapi_doc_data_count(doc);
    for (i = 0; i < n; i++)
        if (!mapi_doc_data(doc, i))
            __builtin_trap();
    n = mapi_doc_resource_count(doc);
    for (i = 0; i < n; i++) {
        const mapi_resource *r = mapi_doc_resource(doc, i);
        const mapi_value *rels = mapi_resource_relationships(r);
        mapi_members it;
        mapi_relationship rel;
        const char *name, *type, *id, *lid;
        size_t tlen, idlen, lidlen, k;
        type = mapi_resource_type_n(r, &tlen);
        id = mapi_resource_id_n(r, &idlen);
        lid = mapi_resource_lid(r, &lidlen);
        if (mapi_resource_index(r) != i || (!id && !lid) ||
            (id && mapi_doc_find_n(doc, type, tlen, id, idlen) != r) ||
            (!id && mapi_doc_find_lid(doc, type, tlen, lid, lidlen) != r) ||
            mapi_resource_type_id(r) >= names)
            __builtin_trap(); /* the index must agree with itself */
        touch(mapi_resource_attributes(r), 0);
        touch(mapi_resource_links(r), 0);
        touch(mapi_resource_meta(r), 0);
        for (k = 0; mapi_resource_relationship_at(doc, r, k, &rel); k++) {
            size_t j;
            mapi_relationship again;
            if (!mapi_resource_relationship(doc, r, rel.name, rel.name_len, &again) ||
                again.targets != rel.targets || again.data != rel.data)
                __builtin_trap(); /* found by its name's bytes */
            for (j = 0; j < rel.count; j++)
                if (rel.targets[j] >= n || !mapi_relationship_linkage(&rel, j))
                    __builtin_trap();
            if ((rel.data == MAPI_REL_NO_DATA || rel.data == MAPI_REL_NULL_DATA) && rel.count)
                __builtin_trap();
            touch(rel.links, 0);
            touch(rel.meta, 0);
        }
        if (k != mapi_resource_relationship_count(r))
            __builtin_trap();
        mapi_members_begin(rels, &it);
        while (mapi_members_next(&it, &name, NULL)) {
            size_t j;
            if (!mapi_resource_relationship(doc, r, name, strlen(name), &rel))
                continue; /* a name holding a NUL byte: found by its length only */
            for (j = 0; j < rel.count; j++)
                if (!mapi_resource_related(doc, r, name, j))
                    __builtin_trap(); /* every linkage resolves (stubs included) */
            if (mapi_resource_related(doc, r, name, rel.count))
                __builtin_trap();
        }
    }
    mapi_doc_free(doc);
    return 0;
}

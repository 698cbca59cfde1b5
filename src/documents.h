/*
 * documents.h -- internal: the documents layer (floor 30 of
 * docs/architecture.md's "The layers") as the layers above see it: values
 * (value.c) and JSON:API documents (doc_*.c).  The JSON reader under them
 * is json_parse.h; what the documents' four files share among themselves,
 * doc.h.  Includes only base.h and json_parse.h.
 */
#ifndef MAPI_DOCUMENTS_H
#define MAPI_DOCUMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "json_parse.h"

/* ---- values (value.c) ---- */

/* The rule of mapi_value_count: NULL with *out set when v is a count, else
   what v is instead ("a fraction", "a string that is not plain digits",
   ...), a static string for an error title.  JSON null (NULL) is "null". */
const char *mapi_value_count_check(const mapi_value *v, int64_t *out);
/* The member of object v named key[0..len), as stored (a null member is a
   node of type MAPI_NULL, not NULL); NULL when absent or v is no object. */
const mapi_value *mapi_value_member(const mapi_value *v, const char *key, size_t len);
/* The same by interned name number (enum mapi_known_name, mapi_name.id). */
const mapi_value *mapi_value_member_id(const mapi_value *v, size_t id);
/* v's JSON text (compact; strings escaped as JSON requires, numbers as
   written, null for NULL), NUL-terminated, with its length in *len (may
   be NULL); caller frees.  NULL when out of memory. */
char *mapi_value_json(const mapi_value *v, size_t *len);
/* 1 when a and b are the same JSON value: members in any order, numbers
   by their text.  NULL reads as null. */
int mapi_value_equal(const mapi_value *a, const mapi_value *b);

/* ---- JSON:API documents (doc_*.c, doc.h) ---- */

/* h mixed with the n bytes at s (any bytes; none read past s + n, so any
   buffer will do): the one hash of the index's keys (doc_index.c) and of
   the page walk's seen items (page_walk.c).  Chain calls for a key of
   several parts: the length is mixed in first, so parts cannot shift. */
uint64_t mapi_hash_bytes(uint64_t h, const char *s, size_t n);

/* Parses res->body into a document that takes ownership of res: on success
   the document owns it (mapi_doc_response); on failure err->response owns it
   (freed by mapi_error_clear).  Either way the caller must not free res.
   Only parses: the caller decides what the status and errors[] mean.
   max_depth <= 0 means MAPI_DEFAULT_MAX_DEPTH. */
int mapi_doc_from_response(mapi_response *res, int max_depth, mapi_doc **out, mapi_error *err);

/* Same as mapi_doc_parse with an explicit depth cap. */
int mapi_doc_parse_ex(const char *body, size_t len, int max_depth, mapi_doc **out,
                      mapi_error *err);
/* A document without root or data that takes ownership of res (a 2xx
   response without a body: HEAD, 204).  0, or -1 (MEMORY; res freed). */
int mapi_doc_from_empty_response(mapi_response *res, mapi_doc **out, mapi_error *err);
/* Marks doc as a settled confirm's read (mapi_doc_settled_by: "read"). */
void mapi_doc_set_settled(mapi_doc *doc);
/* 1 when r's id is exactly the string id (byte for byte: an id holding a
   \u0000 is not equal to its part before it). */
int mapi_resource_id_is(const mapi_resource *r, const char *id);

#endif /* MAPI_DOCUMENTS_H */

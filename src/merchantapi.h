/*
 * merchantapi.h -- the whole public C surface of libmerchantapi.
 *
 * A client for the payments service's JSON:API interface
 * (docs/service-interface.md): confirm a payout draft, read a deposit
 * channel, list an account's receiving addresses.  libcurl does the HTTP,
 * simdjson reads the JSON; this library owns the JSON:API mapping, the
 * client's behaviour (headers, retries, errors) and the exact handling of
 * numbers.
 *
 * Threading rules
 *   - mapi_global_init() runs curl_global_init once; it is thread-safe and is
 *     called by mapi_client_new() itself, so calling it is optional.
 *   - A mapi_client is used by one thread at a time.  Different clients may be
 *     used from different threads at once.
 *   - One thread at a time, not one thread for ever: a client, or a mapi_loop
 *     with the clients whose calls run on it, may move to another thread
 *     between two calls (two mapi_loop_step), as a host with a pool of worker
 *     threads moves a task (skynet moves a service, its Lua state and every
 *     client and loop in it).  The move needs what handing any object to
 *     another thread needs: the first thread's last use happens before the
 *     second's first (a mutex, a queue, pthread_join).
 *   - A mapi_doc is immutable once returned: it, and every mapi_value and
 *     mapi_resource borrowed from it, may be read from several threads at once.
 *   - fork(): a client made before fork() may go on being used in the parent
 *     and in the child.  At each call (and in mapi_client_free) the client
 *     compares getpid() with the process that made its connections; in a
 *     child it never reuses them: it gives up the inherited kept-alive
 *     connections without a byte on them (no request, no TLS close_notify,
 *     no HTTP/2 GOAWAY: its copies of their sockets are pointed at /dev/null
 *     before libcurl lets them go) and opens its own, while the parent's
 *     stay open and in use in the parent.  Fork while no call of the client
 *     is under way in any thread (as for any fork in a threaded program).
 *
 * Conventions
 *   - Functions returning int return 0 on success and -1 on failure; on
 *     failure the mapi_error passed in is filled (see mapi_error below).
 *   - "borrowed" pointers are owned by the object they came from and stay
 *     valid until that object is freed.  "caller frees" results are released
 *     with the matching mapi_*_free / mapi_error_clear.
 *   - Times are in seconds (double); sizes in bytes (size_t).
 *   - Strings are NUL-terminated UTF-8 as received; where a length is also
 *     returned, the string may contain NUL bytes (JSON "\u0000"): ids,
 *     types and member names are byte strings, and the functions ending in
 *     _n take or give their lengths.  A function without a length reads up
 *     to the first NUL byte.
 */
#ifndef MERCHANTAPI_H
#define MERCHANTAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MAPI_BUILDING) && defined(__GNUC__)
#define MAPI_API __attribute__((visibility("default")))
#else
#define MAPI_API
#endif

/* The version of this header: the one place the project's version is written
 * (the Makefile, merchantapi.pc, the shared library's SONAME
 * libmerchantapi.so.<major>, Lua's merchantapi._VERSION read it from here). */
#define MAPI_VERSION "0.1.0"

/*
 * The version of the library the program runs with, e.g. "0.1.0"; compare it
 * with MAPI_VERSION to see whether the header and the library agree.  A static
 * string: never freed, never NULL.  No errors.
 */
MAPI_API const char *mapi_version(void);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* What went wrong; the Lua binding gives the same names as strings. */
typedef enum mapi_error_kind {
    MAPI_ERR_NONE = 0,
    MAPI_ERR_API,       /* "api": the server answered with a JSON:API error document */
    MAPI_ERR_HTTP,      /* "http": non-2xx (3xx included) without an error document */
    MAPI_ERR_TRANSPORT, /* "transport": DNS, connect, TLS, timeout, reset */
    MAPI_ERR_DECODE,    /* "decode": bad JSON, not JSON:API, wrong type, over a cap */
    MAPI_ERR_USAGE,     /* "usage": an invalid argument value */
    MAPI_ERR_TIMEOUT,   /* "timeout": a wait helper's state did not come in time */
    MAPI_ERR_MEMORY     /* "memory": an allocation failed */
} mapi_error_kind;

/* For a failed confirm: did the request reach the server? */
typedef enum mapi_outcome {
    MAPI_OUTCOME_NONE = 0,   /* not a confirm, or the call succeeded */
    MAPI_OUTCOME_NOT_SENT,   /* "not_sent": provably never reached the server; safe to retry */
    MAPI_OUTCOME_UNKNOWN,    /* "unknown": may have been processed (mapi_confirm_payout's
                                "Settling": err->payout, err->settle_error) */
    MAPI_OUTCOME_REJECTED    /* "rejected": the server answered 4xx: not confirmed by this request */
} mapi_outcome;

/* One entry of an error document's errors[] (interface, "Errors"). */
typedef struct mapi_error_entry {
    int status;    /* errors[].status as a number (also when sent as a string); 0 if absent */
    char *code;    /* errors[].code, or NULL */
    char *title;   /* errors[].title, or NULL */
    char *detail;  /* errors[].detail, or NULL */
    char *pointer; /* errors[].source.pointer, or NULL */
} mapi_error_entry;
/* code, title, detail and pointer are the member's string; a member that is
   not a string where JSON:API wants one (a validation array or object in
   detail, a number as code) is kept as its JSON text, e.g. detail
   "[{\"field\":\"amount\"}]"; null or absent members are NULL. */

typedef struct mapi_response mapi_response;
typedef struct mapi_doc mapi_doc;

/*
 * Filled by a failing call.  Start from MAPI_ERROR_INIT (a zeroed struct
 * works too); release its contents with mapi_error_clear(), which leaves it
 * in the MAPI_ERROR_INIT state, ready for reuse.  A failing call clears it
 * first.  No field ever contains the api key (every occurrence a server
 * echoed reads "[REDACTED]"; `response`: see "HTTP responses").  message is
 * set on every failure except kind MEMORY.
 */
typedef struct mapi_error {
    mapi_error_kind kind;
    int status;            /* HTTP status if a response came, else 0 */
    char *code;            /* first errors[] entry's fields (kind API), or NULL */
    char *title;           /* kind API: errors[0].title; other kinds: a short summary */
    char *detail;          /* kind API: errors[0].detail; other kinds: specifics, or NULL */
    char *pointer;         /* errors[0].source.pointer, or NULL */
    mapi_error_entry *errors; /* every errors[] entry, in order */
    size_t nerrors;
    char *amount;          /* decimal text from amount_below_minimum / amount_above_maximum */
    char *minimum;         /*   details ("amount: 5.5, minimum: 10.0"), else NULL */
    char *maximum;
    int retryable;         /* 1 when calling the same method again is safe and may succeed.
                              A GET (and HEAD): its error may pass -- 429, 502-504,
                              transport.  A confirm (and every request that may move money,
                              mapi_request's other methods): only when nothing was sent
                              (outcome NOT_SENT, a transport failure), a 429 refused it
                              (outcome REJECTED: the service did not act), or the read
                              settling it found the payout still a draft (err->payout);
                              never otherwise -- an outcome UNKNOWN after a 502 or a lost
                              answer is not retryable, even where a 5xx would be "safe to
                              send again" in other SDKs: a second confirm could be a second
                              payout.  The client's own retries follow the contract's
                              "Retries", not this field */
    mapi_outcome outcome;  /* set by mapi_confirm_payout failures only */
    char *method;          /* "GET", "PUT" */
    char *url;             /* the URL called (never credentials) */
    char *request_id;      /* X-Request-Id of the response, or NULL */
    double retry_after;    /* Retry-After in seconds (capped at 60), or -1 when absent */
    int curl_code;         /* the CURLcode of a transport error, else 0 */
    int attempts;          /* requests made for this call (1 + retries) */
    char *message;         /* one line: "merchantapi: 422 amount_below_minimum: ..." */
    mapi_response *response; /* the response that carried the error, or NULL; owned */
    int deadline_exceeded; /* 1 when the call's deadline ended it (see "Deadline") */
    mapi_doc *payout;      /* confirm, outcome UNKNOWN, whose settling read found the payout
                              not carried out as far as it shows: still "draft", or another
                              status without a txid ("expired", ...; message names it).
                              That read (data: the payouts resource); else NULL.  Owned
                              (freed by mapi_error_clear) */
    struct mapi_error *settle_error; /* confirm, outcome UNKNOWN: the error of the read that
                              tried to settle it, when that read failed; else NULL.  Owned */
    char *payout_status;   /* with payout: its data.attributes.status as the settling read
                              showed it ("draft", "expired", ...; the message names it);
                              else NULL.  Owned */
} mapi_error;

#define MAPI_ERROR_INIT {MAPI_ERR_NONE, 0, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, \
                         NULL, 0, MAPI_OUTCOME_NONE, NULL, NULL, NULL, -1.0, 0, 0, NULL, NULL, \
                         0, NULL, NULL, NULL}

/* Frees every field of *err and resets it to MAPI_ERROR_INIT.  NULL is ignored;
   safe to call twice. */
MAPI_API void mapi_error_clear(mapi_error *err);

/* The Lua-facing names: "api", "http", ... / "not_sent", "unknown", "rejected";
   "" for NONE.  Static strings. */
MAPI_API const char *mapi_error_kind_name(mapi_error_kind kind);
MAPI_API const char *mapi_outcome_name(mapi_outcome outcome);

/* ------------------------------------------------------------------------ */
/* JSON values, borrowed from a mapi_doc                                    */
/* ------------------------------------------------------------------------ */

typedef struct mapi_value mapi_value;

typedef enum mapi_type {
    MAPI_NULL = 0, /* JSON null.  A NULL mapi_value pointer also reads as MAPI_NULL */
    MAPI_BOOL,
    MAPI_INT,      /* an integer token of at most 18 digits (it fits int64_t) */
    MAPI_NUMBER,   /* any other number: fraction, exponent, or an integer of 19+ digits */
    MAPI_STRING,
    MAPI_ARRAY,
    MAPI_OBJECT
} mapi_type;

/* JSON null is represented by a NULL pointer, so functions that look a member
   up return NULL both for "absent" and for "null": mapi_value_has() tells. */
MAPI_API mapi_type mapi_value_type(const mapi_value *v);
MAPI_API int mapi_value_bool(const mapi_value *v);                  /* 0 unless BOOL true */
/* Stores the integer and returns 0 for MAPI_INT; returns -1 otherwise. */
MAPI_API int mapi_value_int64(const mapi_value *v, int64_t *out);
/* The exact text of any JSON number, MAPI_INT and MAPI_NUMBER alike, as it
   came ("1200", "-12", "250.10", "1.5e-7", "123456789012345678901234567890"),
   with its length in bytes in *len (len may be NULL): the source text,
   byte for byte ("-0" included).  NULL (and *len 0) for other types.
   Borrowed: valid while the document lives; never fails. */
MAPI_API const char *mapi_value_number(const mapi_value *v, size_t *len);
/* mapi_value_number without the length. */
MAPI_API const char *mapi_value_number_text(const mapi_value *v);
/* The value as the plain decimal string a payout amount is in Lua (the
   binding gives `amount` this text), with its length in bytes in *len (len
   may be NULL):
     - a number as written when it has no exponent ("250.10", "1200",
       "0.123456789012345678", "123456789012345678901234567890");
     - a number with an exponent in plain decimal form, the digits moved and
       never rounded ("1.5e2" -> "150", "2.5E-3" -> "0.0025", "1.50e+1" ->
       "15.0"); an exponent beyond +-400 keeps the source text ("1e999");
     - a JSON string as it is (the service also sends amounts as strings:
       "1200"), NUL bytes included (hence the length);
   NULL (and *len 0) for null, booleans, arrays and objects.  Borrowed:
   valid while the document lives; never fails (the decimal forms are made
   when the document is parsed). */
MAPI_API const char *mapi_value_decimal(const mapi_value *v, size_t *len);
/* The string's bytes for MAPI_STRING (len may be NULL), else NULL.  Borrowed. */
MAPI_API const char *mapi_value_string(const mapi_value *v, size_t *len);
/* Elements of an array or members of an object; 0 for other types. */
MAPI_API size_t mapi_value_len(const mapi_value *v);
/* Array element i (0-based), or NULL (also for JSON null elements). */
MAPI_API const mapi_value *mapi_value_at(const mapi_value *v, size_t i);
/* Object member by key, or NULL when absent or null. */
MAPI_API const mapi_value *mapi_value_get(const mapi_value *v, const char *key);
/* The same with the key's length: key[0..key_len) may hold NUL bytes. */
MAPI_API const mapi_value *mapi_value_get_n(const mapi_value *v, const char *key,
                                            size_t key_len);
/* 1 if the object has the member (even when its value is null), else 0. */
MAPI_API int mapi_value_has(const mapi_value *v, const char *key);
MAPI_API int mapi_value_has_n(const mapi_value *v, const char *key, size_t key_len);

/* Iterates an object's members in document order:
 *   mapi_members it; const char *k; size_t klen; const mapi_value *m;
 *   mapi_members_begin(obj, &it);
 *   while (mapi_members_next_n(&it, &k, &klen, &m)) ...   (m NULL for null members)
 * The iterator is a plain struct the caller owns; nothing to free.  Any
 * output pointer may be NULL.  mapi_members_next gives the key without its
 * length (a key with a NUL byte then reads short: prefer the _n form). */
typedef struct mapi_members { const void *pos, *end, *last; } mapi_members;
MAPI_API void mapi_members_begin(const mapi_value *obj, mapi_members *it);
MAPI_API int mapi_members_next(mapi_members *it, const char **key, const mapi_value **value);
MAPI_API int mapi_members_next_n(mapi_members *it, const char **key, size_t *key_len,
                                 const mapi_value **value);
/* The number of the name of the member mapi_members_next(_n) gave last
   (0 before the first): the document interns member names, so equal names
   have equal numbers, 0 .. mapi_doc_name_count() - 1.  For per-name caches
   (the Lua binding keeps one Lua string per number). */
MAPI_API size_t mapi_members_name_id(const mapi_members *it);

/* ------------------------------------------------------------------------ */
/* JSON:API documents (the interface's "Document envelope")                 */
/* ------------------------------------------------------------------------ */

typedef struct mapi_resource mapi_resource;

/*
 * Parses a JSON:API document from body[0..len) without any HTTP (the bytes
 * are copied: the caller's buffer is not kept).  The body must be one JSON
 * value (RFC 8259: strict UTF-8, no unescaped control character U+0000 to
 * U+001F in a string, no \u escape of a lone surrogate, no NaN, "1." or
 * "01", no member name twice in an object, nothing after the value) nested
 * at most 64 deep, and an object with at least one of data, errors, meta.
 * Numbers keep their exact text (integers beyond 64 bits too, digit for
 * digit).
 *
 * The resources of data and included are indexed by (type, id) -- byte
 * strings: ids that differ only after a \u0000 are two resources -- and,
 * for a resource without id (JSON:API 1.1), by (type, lid).  The same
 * (type, id) twice (in data and included, or twice in included) is one
 * resource, merged: the union of the copies' attributes, relationships,
 * links and meta, where every member both copies have must be equal (JSON
 * values; numbers as written).  Every relationship linkage is resolved; one
 * to a resource that is not in the document gets a stub resource (type and
 * id or lid only).
 *
 * On success *out is a new document (caller frees with mapi_doc_free).
 * Errors: MAPI_ERR_DECODE -- invalid JSON, too deep, not JSON:API: a
 * resource without string type and id (or lid), attributes or
 * relationships that are not objects, a top-level meta, links or jsonapi
 * or a resource's or relationship's links or meta that is not an object
 * (null: absent), a field named type or id (or lid,
 * when the resource has a lid), an attribute and a relationship of the
 * same name, two copies of a resource that differ (the title names the
 * resource and the member), a relationship that is not an object or whose
 * data is not a linkage, an array of linkages or null; MAPI_ERR_USAGE
 * (body NULL with len > 0, out NULL); MAPI_ERR_MEMORY.  A document holding
 * errors[] parses fine: see mapi_doc_errors().  A list's meta is data: its
 * page, per_page or total is not judged here (mapi_value_count reads one).
 */
MAPI_API int mapi_doc_parse(const char *body, size_t len, mapi_doc **out, mapi_error *err);

/* Frees the document and everything borrowed from it.  NULL is ignored. */
MAPI_API void mapi_doc_free(mapi_doc *doc);

/* The whole document as parsed (the root object).  Borrowed. */
MAPI_API const mapi_value *mapi_doc_root(const mapi_doc *doc);
/* Top-level members (NULL when absent or null).  Borrowed. */
MAPI_API const mapi_value *mapi_doc_meta(const mapi_doc *doc);
MAPI_API const mapi_value *mapi_doc_jsonapi(const mapi_doc *doc);
MAPI_API const mapi_value *mapi_doc_errors(const mapi_doc *doc);
MAPI_API const mapi_value *mapi_doc_links(const mapi_doc *doc); /* e.g. links.next */
/* How many distinct member names (and resource types) the document has:
   the numbers of mapi_members_name_id, mapi_relationship.name_id and
   mapi_resource_type_id are below it. */
MAPI_API size_t mapi_doc_name_count(const mapi_doc *doc);
/* Bytes the document allocated for itself: its values, strings, index and
   resolved relationships, the copy of the body mapi_doc_parse makes -- not
   the response it holds, nor the reader's per-thread buffers (about five
   times the largest body up to 1 MiB read by that thread, reused). */
MAPI_API size_t mapi_doc_size(const mapi_doc *doc);

/* 1 when data is an array (a list document), else 0. */
MAPI_API int mapi_doc_is_list(const mapi_doc *doc);
/* Primary resources: the array's length, 1 for a single resource, 0 for
   data null or absent. */
MAPI_API size_t mapi_doc_data_count(const mapi_doc *doc);
/* Primary resource i, or NULL past the end.  Borrowed. */
MAPI_API const mapi_resource *mapi_doc_data(const mapi_doc *doc, size_t i);

/* Every distinct resource of the document: primary ones first, then
   included ones, then stubs.  Index i is stable for the document's life and
   equals mapi_resource_index() of the resource. */
MAPI_API size_t mapi_doc_resource_count(const mapi_doc *doc);
MAPI_API const mapi_resource *mapi_doc_resource(const mapi_doc *doc, size_t i);
/* The resource with this (type, id), NULL if none (stubs included).  Borrowed. */
MAPI_API const mapi_resource *mapi_doc_find(const mapi_doc *doc, const char *type, const char *id);
/* The same with lengths: type[0..type_len) and id[0..id_len) may hold NUL bytes. */
MAPI_API const mapi_resource *mapi_doc_find_n(const mapi_doc *doc, const char *type,
                                              size_t type_len, const char *id, size_t id_len);
/* The resource with this (type, lid) (JSON:API 1.1 local ids: a resource
   without id, or one that has both), NULL if none.  Borrowed. */
MAPI_API const mapi_resource *mapi_doc_find_lid(const mapi_doc *doc, const char *type,
                                                size_t type_len, const char *lid, size_t lid_len);
/* Resolves a resource linkage object {"type":..,"id":..} (or {"type":..,"lid":..})
   of this document to its resource (or stub); NULL if v is not a linkage.  Borrowed. */
MAPI_API const mapi_resource *mapi_doc_resolve(const mapi_doc *doc, const mapi_value *linkage);

/* The library's one rule for "is this an error document" (JSON:API 1.0,
   "Top Level"; the client maps every response by the same rule):
     - errors absent, null or [] (empty): not an error document; returns 0
       (err cleared).  A 2xx with data and "errors": [] is a success.
     - errors non-empty, no primary data (data absent or null): an error
       document; fills err as kind API (status from errors[0].status, every
       entry, amount/minimum/maximum, message) and returns 1.
     - errors non-empty AND primary data (a resource or an array, even
       empty): JSON:API forbids both; returns 1 with err kind DECODE ("the
       document holds both data and errors", the entries in errors[]).  A
       client call gets this DECODE under a 2xx status; under any other
       status the status and the errors agree, and the call fails as API.
   A list's meta is data here, whatever it holds (JSON:API leaves meta
   free-form): only the list calls (mapi_list_addresses and its pages)
   refuse a meta.page, per_page or total that is not a count.
   -1 when out of memory (err is then a MEMORY error).  Caller clears err. */
MAPI_API int mapi_doc_error(const mapi_doc *doc, mapi_error *err);

/* The HTTP response a client call got the document from; NULL for
   documents from mapi_doc_parse.  Borrowed. */
MAPI_API const mapi_response *mapi_doc_response(const mapi_doc *doc);

/* "read" when the document is a confirm's settled by the read of its payout,
   which found it carried out -- a txid, or status "processing"
   (mapi_confirm_payout, "Settling"): the document and its response are the
   read's (GET, 200).  NULL for every
   other document.  Static string. */
MAPI_API const char *mapi_doc_settled_by(const mapi_doc *doc);

/* ------------------------------------------------------------------------ */
/* Resources                                                                */
/* ------------------------------------------------------------------------ */

MAPI_API const char *mapi_resource_type(const mapi_resource *r);   /* borrowed */
/* The id, or NULL for a resource identified by a lid only.  Borrowed. */
MAPI_API const char *mapi_resource_id(const mapi_resource *r);
/* The type / id with their lengths in *len (may be NULL; 0 for no id). */
MAPI_API const char *mapi_resource_type_n(const mapi_resource *r, size_t *len);
MAPI_API const char *mapi_resource_id_n(const mapi_resource *r, size_t *len);
/* The type's number among the document's names (mapi_doc_name_count): equal
   types, equal numbers. */
MAPI_API size_t mapi_resource_type_id(const mapi_resource *r);
/* JSON:API 1.1's lid with its length, or NULL when the resource has none.
   Borrowed. */
MAPI_API const char *mapi_resource_lid(const mapi_resource *r, size_t *len);
/* Position in mapi_doc_resource(): 0 .. mapi_doc_resource_count()-1. */
MAPI_API size_t mapi_resource_index(const mapi_resource *r);
/* 1 when the resource is a stub: linked to but not present in the document. */
MAPI_API int mapi_resource_is_stub(const mapi_resource *r);
/* The resource's attributes / relationships / links / meta members, or NULL
   when absent or null (stubs: always NULL); for a resource that came twice,
   the merged objects.  Borrowed. */
MAPI_API const mapi_value *mapi_resource_attributes(const mapi_resource *r);
MAPI_API const mapi_value *mapi_resource_relationships(const mapi_resource *r);
MAPI_API const mapi_value *mapi_resource_meta(const mapi_resource *r);
MAPI_API const mapi_value *mapi_resource_links(const mapi_resource *r);
/* One attribute, or NULL when absent or null. */
MAPI_API const mapi_value *mapi_resource_attr(const mapi_resource *r, const char *name);
MAPI_API const mapi_value *mapi_resource_attr_n(const mapi_resource *r, const char *name,
                                                size_t name_len);

/* What a relationship object says about its data member. */
typedef enum mapi_rel_data {
    MAPI_REL_NO_DATA = 0, /* no data member: not loaded (only links or meta, e.g.
                             meta.included = false) -- nothing is known */
    MAPI_REL_NULL_DATA,   /* "data": null -- an empty to-one relationship */
    MAPI_REL_TO_ONE,      /* "data": one resource linkage */
    MAPI_REL_TO_MANY      /* "data": an array of resource linkages (possibly empty) */
} mapi_rel_data;

/* A relationship of a resource, whatever its data, as resolved when the
   document was parsed: every linkage already mapped to its resource
   (included, primary or stub).  Every pointer is borrowed from the
   document. */
typedef struct mapi_relationship {
    const char *name;        /* the relationship's name (NUL-terminated; may hold NUL bytes) */
    size_t name_len;
    size_t name_id;          /* the name's number (mapi_members_name_id) */
    mapi_rel_data data;
    size_t count;            /* TO_ONE: 1; TO_MANY: the linkages; otherwise 0 */
    const size_t *targets;   /* count indexes for mapi_doc_resource(), in linkage order
                                (NULL when count is 0) */
    const mapi_value *linkage; /* TO_ONE: the linkage object; TO_MANY: the array; else NULL
                                  (read one linkage and its meta with mapi_relationship_linkage) */
    const mapi_value *links; /* the relationship's links object (self, related), or NULL */
    const mapi_value *meta;  /* the relationship's meta object, or NULL */
} mapi_relationship;

/* How many relationships r has (every member of its relationships object;
   0 for stubs). */
MAPI_API size_t mapi_resource_relationship_count(const mapi_resource *r);
/* Relationship i of r, a resource of doc (0-based, document order): fills
   *out and returns 1, or 0 past the end.  The fast way through them all: no
   name lookups.  Example:
     for (i = 0; mapi_resource_relationship_at(doc, r, i, &rel); i++) ... */
MAPI_API int mapi_resource_relationship_at(const mapi_doc *doc, const mapi_resource *r,
                                           size_t i, mapi_relationship *out);
/* The relationship of r named name[0..name_len): fills *out and returns 1,
   or 0 when r has no such relationship. */
MAPI_API int mapi_resource_relationship(const mapi_doc *doc, const mapi_resource *r,
                                        const char *name, size_t name_len,
                                        mapi_relationship *out);
/* Linkage i of a relationship (i < rel->count): its resource identifier
   object {"type", "id" or "lid", "meta"?} as the document wrote it -- read
   its meta with mapi_value_get(.., "meta") -- or NULL.  Borrowed. */
MAPI_API const mapi_value *mapi_relationship_linkage(const mapi_relationship *rel, size_t i);
/* The related resource (included, primary, or stub) of r's relationship
   named name: target i (0 for a to-one relationship, i < count for
   to-many), or NULL (no such relationship, no such target).  Borrowed from
   doc.  Example: mapi_resource_related(doc, payout, "accountCharged", 0). */
MAPI_API const mapi_resource *mapi_resource_related(const mapi_doc *doc, const mapi_resource *r,
                                                    const char *name, size_t i);

/* ------------------------------------------------------------------------ */
/* HTTP responses                                                           */
/*                                                                          */
/* A response a call hands out (mapi_doc_response, mapi_error.response) has */
/* the api key redacted from every header name and value ("[REDACTED]"      */
/* where a server echoed it: X-Request-Id included), by the same one        */
/* redaction as errors, observers and MERCHANTAPI_DEBUG.  The body is the   */
/* bytes as received.                                                       */
/* ------------------------------------------------------------------------ */

MAPI_API int mapi_response_status(const mapi_response *res);
/* The value of the last header with this name (case-insensitive), or NULL.  Borrowed. */
MAPI_API const char *mapi_response_header(const mapi_response *res, const char *name);
/* Header i (0-based, in received order) with its name lower-cased; returns 0
   past the end.  Borrowed. */
MAPI_API int mapi_response_header_at(const mapi_response *res, size_t i,
                                     const char **name, const char **value);
/* The raw body and its length in bytes.  Borrowed. */
MAPI_API const char *mapi_response_body(const mapi_response *res, size_t *len);
/* Seconds from sending the request to the end of the body (last attempt). */
MAPI_API double mapi_response_elapsed(const mapi_response *res);
/* X-Request-Id (the api key redacted), or NULL.  Borrowed. */
MAPI_API const char *mapi_response_request_id(const mapi_response *res);

/* ------------------------------------------------------------------------ */
/* Request headers of one's own                                             */
/* ------------------------------------------------------------------------ */

/*
 * A request header the caller adds (a tracing id, an idempotency key):
 * mapi_config.headers for every request of a client, mapi_call_opts /
 * mapi_request_opts for one call.  Both strings are borrowed for the call
 * that takes them (mapi_client_new and every call copy what they keep).
 */
typedef struct mapi_header_field {
    const char *name;  /* an HTTP token (RFC 9110): letters, digits and !#$%&'*+-.^_`|~ */
    const char *value; /* may be ""; see mapi_header_check */
} mapi_header_field;

/*
 * The rule every header of one's own must pass (the Lua `headers` options
 * too), on name[0..name_len) and value[0..value_len):
 *   - name: non-empty, an HTTP token (so no CR, LF, NUL, space or ':');
 *   - name, case-insensitively, none of the headers the client writes or
 *     that frame the message or the connection: Authorization,
 *     Content-Type, Accept, User-Agent, Host, Content-Length,
 *     Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer,
 *     Expect, Proxy-Connection, Proxy-Authorization;
 *   - value: not NULL; no CR, LF, NUL nor other control byte (tab allowed),
 *     and no space or tab at either end (a receiver would drop them).
 * 0 when it passes; -1 with err USAGE otherwise (its title names the header
 * when the name is a token, never the value).  The calls make this check,
 * and refuse a name given twice in one list (case-insensitively), before
 * anything is sent: a confirm or another unsafe call refused so is outcome
 * NOT_SENT.
 */
MAPI_API int mapi_header_check(const char *name, size_t name_len, const char *value,
                               size_t value_len, mapi_error *err);

/* ------------------------------------------------------------------------ */
/* Client                                                                   */
/* ------------------------------------------------------------------------ */

/* A client of the service: its configuration, its kept-alive connections,
   DNS cache and TLS sessions.  Made by mapi_client_new, freed by
   mapi_client_free; threads: the Threading rules above. */
typedef struct mapi_client mapi_client;

/* The largest max_retries (mapi_config, mapi_request_opts, Lua's max_retries). */
#define MAPI_MAX_RETRIES 100

/* Whether a confirm whose outcome is unknown is settled by a read
   (mapi_config.settle, mapi_call_opts.settle; Lua's `settle`). */
typedef enum mapi_settle {
    MAPI_SETTLE_DEFAULT = 0, /* a client: settle; a call: as its client says */
    MAPI_SETTLE_ON,
    MAPI_SETTLE_OFF
} mapi_settle;

/* Zero (or NULL) members mean the default shown.  Other values beyond their
   limits are USAGE errors in mapi_client_new, with the titles the Lua module
   gives for the same values: seconds (timeout, connect_timeout, deadline)
   > 0 and at most 1e9 (negative, NaN, infinite refused), max_retries 0 ..
   MAPI_MAX_RETRIES, max_body >= 1. */
typedef struct mapi_config {
    const char *base_url;   /* required: "https://host[:port][/prefix]", or http:// only to a
                               loopback host (localhost, 127.0.0.0/8, [::1]) */
    const char *api_key;    /* sent as "Authorization: Bearer <key>"; NULL or "": no header,
                               and confirm / list fail as USAGE (interface, "Authentication") */
    double timeout;         /* seconds for one whole request (default 30) */
    double connect_timeout; /* seconds to connect, TLS included (default 10) */
    int max_retries;        /* retries after the first attempt, 0 .. MAPI_MAX_RETRIES (default
                               2); see the contract */
    size_t max_body;        /* bytes; a larger response body fails as DECODE (default 16 MiB) */
    int max_depth;          /* JSON nesting cap (default 64; at most 1024) */
    const char *cafile;     /* PEM bundle of trusted CAs, or NULL for the system store */
    const char *capath;     /* directory of trusted CAs, or NULL */
    const char *user_agent; /* product token appended to "merchantapi/<v> libcurl/<v>", or NULL;
                               no control characters */
    const char *proxy;      /* NULL or "" (default): no proxy, and proxy variables of the
                               environment are ignored.  "http://[user:password@]host[:port]":
                               that HTTP proxy (an https:// base URL is tunnelled through it
                               with CONNECT, end-to-end TLS).  "env": the environment's, read
                               when the client is made: http_proxy for an http:// base URL,
                               https_proxy / HTTPS_PROXY for https://, then all_proxy /
                               ALL_PROXY; none when no_proxy / NO_PROXY lists the base URL's
                               host ("*", a name and its subdomains, an address or CIDR
                               block); a value without scheme is http://.  The proxy must be
                               http://, and a loopback host when base_url is http:// (the key
                               never crosses anything else in clear): otherwise USAGE */
    const mapi_header_field *headers; /* nheaders headers of one's own, sent on every request
                               after the client's (Content-Type, Accept, Authorization,
                               User-Agent); copied.  Rules: mapi_header_check.  A call's own
                               header of the same name (any case) replaces one of these */
    size_t nheaders;
    double deadline;        /* seconds for one whole call: every attempt, retry and wait
                               (default 0: (max_retries + 1) x timeout plus the backoff caps of
                               max_retries retries, 0.5 + 1 + 2 + 4 + 8 + 8 ... s; with the other
                               defaults 91.5 s).  See "Deadline" below */
    mapi_settle settle;     /* MAPI_SETTLE_OFF: a confirm whose outcome is unknown is not
                               settled by reading the payout (default: it is).  See
                               mapi_confirm_payout */
    int debug;              /* 1: one line per attempt to stderr (mapi_attempt_format), never
                               with the api key nor any request header; default 0: as the
                               environment variable MERCHANTAPI_DEBUG says (set and not
                               "0": on, read when the client is made) */
    int trace;              /* 1: each call starts a new trace (W3C Trace Context): a random
                               16-byte trace id, a traceparent header on every attempt (see
                               mapi_call_opts.traceparent); default 0: only calls given a
                               traceparent are traced */
} mapi_config;

/* Fills *cfg with the defaults above (base_url and api_key NULL). */
MAPI_API void mapi_config_init(mapi_config *cfg);

/* Runs curl_global_init once (thread-safe); 0 or -1 with err filled. */
MAPI_API int mapi_global_init(mapi_error *err);

/*
 * Deadline.  A call -- its attempts, the retries and the waits between them
 * -- ends within its deadline (mapi_config.deadline, or a call's own): each
 * attempt's timeout is the smaller of `timeout` and what is left of the
 * deadline, and a retry whose wait (backoff or Retry-After) would not end
 * before the deadline is not made: the call ends at once with the last
 * attempt's error (a 429 with its retry_after) and deadline_exceeded 1, as
 * it does when an attempt whose timeout the deadline cut fails as
 * TRANSPORT.  The deadline starts with the call's first attempt (for
 * mapi_list_addresses_pages: with each page's first attempt).  The read that
 * settles a confirm (mapi_confirm_payout) is a call of its own with a
 * deadline of the same length: a settled confirm takes at most twice the
 * deadline.
 */

/*
 * Creates a client: copies everything from cfg (which the caller may free
 * afterwards) and opens one libcurl easy handle that is reused, with its
 * connection kept alive, for every call.
 * Returns NULL with err filled on failure: MAPI_ERR_USAGE for a missing or
 * invalid base_url (not http(s), http:// to a non-loopback host, CR/LF/NUL),
 * an api_key with CR, LF or NUL, a negative timeout or deadline, a proxy
 * refused by the rules of mapi_config.proxy (the message names the option or
 * environment variable, never its value), a header that fails
 * mapi_header_check or is given twice; MAPI_ERR_MEMORY.
 * Caller frees with mapi_client_free.
 */
MAPI_API mapi_client *mapi_client_new(const mapi_config *cfg, mapi_error *err);

/* Frees the client and closes its connection.  NULL is ignored. */
MAPI_API void mapi_client_free(mapi_client *client);

/* Options of one call of an endpoint (the mapi_*_ex functions).  Start
   from MAPI_CALL_OPTS_INIT; a zeroed struct is the same. */
typedef struct mapi_call_opts {
    const mapi_header_field *headers; /* nheaders headers of one's own for this call: added
                                         to the client's (mapi_config.headers), replacing
                                         one of the same name (any case).  Rules:
                                         mapi_header_check.  Borrowed for the call */
    size_t nheaders;
    double deadline;    /* seconds for this whole call (see "Deadline"); 0: the client's;
                           other values beyond the limits of mapi_config's: USAGE */
    mapi_settle settle; /* mapi_confirm_payout_ex only */
    const char *traceparent; /* NULL, or the caller's W3C traceparent
                           "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>"
                           (lowercase; neither id all zeros): the call continues that
                           trace.  Each attempt (retries, the settling read) is a span
                           of its own: a new random 8-byte span id, sent as the parent
                           id of a traceparent header with the caller's trace id and
                           flags; the record (mapi_attempt_info) carries trace_id,
                           span_id and parent_span_id (the caller's parent id).  A
                           malformed one is USAGE, nothing sent.  Borrowed */
    const char *tracestate;  /* NULL, or the W3C tracestate sent as is with every
                           traceparent (at most 512 printable ASCII bytes; needs a
                           traceparent, else USAGE).  Borrowed */
} mapi_call_opts;

#define MAPI_CALL_OPTS_INIT {NULL, 0, 0.0, MAPI_SETTLE_DEFAULT, NULL, NULL}

/*
 * Confirms a payout draft: PUT {base_url}/api/public/v1/payouts/:id
 * (interface, "Endpoints 1. Confirm payout draft").  The id is
 * percent-encoded as one path segment.  Sent over HTTP/1.1 on a fresh
 * connection that is not kept, and libcurl is stopped should it try to send
 * it again by itself, so every request that leaves is one of err->attempts;
 * retried only when it provably never reached the server (outcome
 * NOT_SENT) or was answered 429.
 * On success *out is the document (data: the payouts resource of this id);
 * caller frees with mapi_doc_free.  On failure err->outcome says whether it
 * may have gone through.  Errors: API (422 codes of the interface, and any
 * other error document), HTTP, TRANSPORT, DECODE (also when data is not a
 * payouts resource, or another payout than payout_id: "expected payouts <id>,
 * got payouts <other>"), USAGE (NULL/empty id, "." or "..", no api_key:
 * outcome NOT_SENT), MEMORY.  A 2xx whose body cannot be decoded is outcome
 * UNKNOWN: it was probably confirmed.
 *
 * Settling (unless the client's settle, or opts->settle, is MAPI_SETTLE_OFF).  When
 * the confirm ends with outcome UNKNOWN (kind MEMORY aside), the client
 * reads the payout -- GET {base_url}/api/public/v1/payouts/:id, retried as
 * mapi_get_payout is, observed and logged like any attempt -- and trusts
 * only what the service says (interface, "States": a confirm moves a draft
 * to processing; txid is set when it is broadcast):
 *   - a txid (a non-empty string, whatever the status), or status
 *     "processing": the confirm went through.  The call succeeds with the
 *     read's document; mapi_doc_settled_by() gives "read".
 *   - status "draft" (no txid): it did not.  The call fails with the
 *     confirm's error (outcome UNKNOWN, its attempts), err->payout holds
 *     the read, and err->retryable is 1.  Confirming again is then safe: the
 *     interface's only transition out of draft is the confirm itself (draft
 *     -> processing, "States and transitions"), so a payout that was
 *     confirmed meanwhile is no longer a draft and a second confirm is
 *     refused by the service, never carried out twice.
 *   - any other status ("expired", "failed", "cancelled", any text the
 *     interface does not show) and no txid: nothing says whether the money
 *     moved.  The call fails with the confirm's error (outcome UNKNOWN),
 *     err->payout holds the read, the message names its status ("...; the
 *     payout read after it shows status \"expired\""), err->retryable is 0.
 *     A partner_pay payout (never broadcast: no txid) that has moved past
 *     processing is so reported unknown: the safe side.
 *   - the read failed (or showed no status): the call fails with the
 *     confirm's error, and err->settle_error holds the read's.
 * The read has a deadline of its own, as long as the confirm's.
 */
MAPI_API int mapi_confirm_payout(mapi_client *client, const char *payout_id,
                                 mapi_doc **out, mapi_error *err);
/* mapi_confirm_payout with options (opts NULL: MAPI_CALL_OPTS_INIT). */
MAPI_API int mapi_confirm_payout_ex(mapi_client *client, const char *payout_id,
                                    const mapi_call_opts *opts, mapi_doc **out,
                                    mapi_error *err);

/*
 * Reads a deposit channel: GET {base_url}/api/public/v1/channels/:id
 * (interface, "Endpoints 2. Read channel"); the id percent-encoded as one
 * path segment.  Retried on transport errors, 429 and 502/503/504.  Sent
 * without Authorization when the client has no api_key (whether the service
 * needs it here is not shown).  *out: data is the channels resource of this
 * id; caller frees with mapi_doc_free.  Errors: API, HTTP, TRANSPORT, DECODE
 * (also for data of another type or id: "expected channels <id>, got
 * channels <other>"), USAGE (NULL/empty id, "." or ".."), MEMORY.
 */
MAPI_API int mapi_get_channel(mapi_client *client, const char *channel_id,
                              mapi_doc **out, mapi_error *err);
/* mapi_get_channel with options (opts NULL: MAPI_CALL_OPTS_INIT; settle ignored). */
MAPI_API int mapi_get_channel_ex(mapi_client *client, const char *channel_id,
                                 const mapi_call_opts *opts, mapi_doc **out, mapi_error *err);

/* Query parameters of the address list; zero/NULL members are not sent. */
typedef struct mapi_page_params {
    const char *order;      /* e.g. "created_at" */
    const char *order_type; /* "asc" or "desc" */
    long page;              /* 1-based */
    long per_page;
} mapi_page_params;

/*
 * Reads a count -- a list's meta.page, meta.per_page or meta.total
 * (interface, "Endpoints 3. List account addresses") -- as an integer:
 * 0 and *out for a JSON number whose value is a whole number 0 .. INT64_MAX
 * (12, 12.0, 1.2e1) or a string of ASCII digits written as that JSON integer
 * would be ("12"; not "", "+12", "-12", "12.0", " 12", "012", "1e1");
 * -1 for anything else: a negative number, a fraction, a value beyond
 * int64_t, another string, another type, JSON null or an absent member
 * (NULL).  For a document mapi_list_addresses or mapi_list_addresses_pages
 * returned, -1 means the member is absent or null: any other value failed
 * the call as DECODE.  Example:
 *   int64_t total;
 *   if (mapi_value_count(mapi_value_get(mapi_doc_meta(doc), "total"), &total) == 0) ...
 */
MAPI_API int mapi_value_count(const mapi_value *v, int64_t *out);

/*
 * Lists one page of an account's receiving addresses:
 * GET {base_url}/api/public/v1/accounts/:id/addresses?order=..&order_type=..&page=..&per_page=..
 * (interface, "Endpoints 3. List account addresses").  p may be NULL.
 * *out: data is an array of addresses resources; meta holds page, per_page
 * and total as the service sent them: read them with mapi_value_count
 * (the service may write them as strings of digits, "page": "1", and may
 * leave any of them out, "meta": {}).  Errors as mapi_get_channel; USAGE
 * (nothing sent) also for a client without an api_key, a negative page or
 * per_page (0: not sent), an order other than "created_at" or an order_type
 * other than "asc"/"desc" (NULL: not sent) -- the limits Lua has; DECODE
 * when data is not an array of addresses, meta is neither an object nor
 * absent/null, or meta's page, per_page or total is present and not a count
 * (see mapi_value_count; the title names the member, e.g. "expected meta.total
 * to be a non-negative integer, got a fraction").
 */
MAPI_API int mapi_list_addresses(mapi_client *client, const char *account_id,
                                 const mapi_page_params *p, mapi_doc **out, mapi_error *err);
/* mapi_list_addresses with options (opts NULL: MAPI_CALL_OPTS_INIT; settle ignored). */
MAPI_API int mapi_list_addresses_ex(mapi_client *client, const char *account_id,
                                    const mapi_page_params *p, const mapi_call_opts *opts,
                                    mapi_doc **out, mapi_error *err);

/*
 * Lists `count` consecutive pages of an account's addresses at once: pages
 * first_page .. first_page + count - 1, each exactly the request
 * mapi_list_addresses(client, account_id, &{base with page = that page})
 * would send (base->page is ignored; base may be NULL).  Up to `concurrency`
 * requests are in flight at once (0 counts as 1; at most 64), started in
 * page order on an event loop of the call's own (libcurl's multi socket
 * interface, as mapi_loop; the call blocks until its pages are done): they
 * share the client's connections, DNS cache and TLS sessions, and multiplex
 * over one connection when the server speaks HTTP/2.  Each page is retried
 * and its errors are mapped exactly like a single mapi_list_addresses call
 * (its own attempts, method, url, request_id, ...).  Retries run in rounds:
 * once every transfer in flight is done, the client waits until the soonest
 * retry any page asked for (its backoff or Retry-After), then retries the
 * pages whose wait is over; the others wait on.
 *
 * docs and errs are caller-provided arrays of count entries; errs entries
 * start as MAPI_ERROR_INIT (or zeroed) and are cleared first.
 * Returns 0 when every page was fetched: docs[i] is then page
 * first_page + i, a new document the caller frees with mapi_doc_free.
 * Returns -1 when a page k failed (the first in page order): docs[0..k-1]
 * hold the pages before it (caller frees), errs[k] its error (caller clears
 * with mapi_error_clear), and every entry after k is NULL / MAPI_ERR_NONE
 * (pages after a failed one are not kept, or not started).  A USAGE error
 * of the arguments (NULL client, empty or dot id, no api key, first_page <
 * 1, negative per_page) is errs[0], with nothing sent.  count 0 does
 * nothing and returns 0.  Not for use from two threads at once (it drives
 * the client's handles).
 */
MAPI_API int mapi_list_addresses_pages(mapi_client *client, const char *account_id,
                                       const mapi_page_params *base, long first_page,
                                       size_t count, size_t concurrency, mapi_doc **docs,
                                       mapi_error *errs);

/*
 * Reads a payout: GET {base_url}/api/public/v1/payouts/:id (interface,
 * "Events": a confirmed payout is followed by reading it until txid is set;
 * "States and transitions": status and txid).  The id, retries, key and
 * errors as mapi_get_channel's (an unknown id is API with status 404 on the
 * sandbox).  *out: data is the payouts resource of this id (attribute txid
 * null until broadcast); caller frees with mapi_doc_free.
 */
MAPI_API int mapi_get_payout(mapi_client *client, const char *payout_id,
                             mapi_doc **out, mapi_error *err);
/* mapi_get_payout with options (opts NULL: MAPI_CALL_OPTS_INIT; settle ignored). */
MAPI_API int mapi_get_payout_ex(mapi_client *client, const char *payout_id,
                                const mapi_call_opts *opts, mapi_doc **out, mapi_error *err);

/* mapi_list_addresses_pages with options (opts NULL: MAPI_CALL_OPTS_INIT; settle
   ignored): every page's request carries opts->headers, and each page has
   opts->deadline (or the client's); with opts->traceparent every attempt of
   every page is a span of the caller's trace.  An option refused (the rules
   of mapi_call_opts): USAGE in errs[0], nothing sent. */
MAPI_API int mapi_list_addresses_pages_ex(mapi_client *client, const char *account_id,
                                          const mapi_page_params *base, long first_page,
                                          size_t count, size_t concurrency,
                                          const mapi_call_opts *opts, mapi_doc **docs,
                                          mapi_error *errs);

/* ------------------------------------------------------------------------ */
/* Every page of a list: the pager                                          */
/* ------------------------------------------------------------------------ */

/*
 * A pager walks every page of an account's addresses (interface, "Endpoints
 * 3. List account addresses": data, meta.page, per_page, total), one page
 * document at a time, with the stop rules and checks of the Lua pager (the
 * same code: contract, "Lists and pages"):
 *
 *   mapi_pager_opts o = MAPI_PAGER_OPTS_INIT;
 *   mapi_pager *pg;
 *   mapi_doc *page;
 *   int r;
 *   o.params.per_page = 1000;
 *   o.concurrency = 8;
 *   pg = mapi_pager_new(client, "acct-25000", &o, &err);
 *   while (pg && (r = mapi_pager_next(pg, &page, &err)) == 1) {
 *       ... mapi_doc_data_count(page), mapi_doc_data(page, i) ...
 *       mapi_doc_free(page);
 *   }
 *   (r == -1: err says why, and the pages before it were every page before)
 *   mapi_pager_free(pg);
 *
 * The first page is fetched alone; once a page has told meta.total (so the
 * last page is known), the following pages are fetched `concurrency` at a
 * time by mapi_list_addresses_pages_ex (its event loop, retries, Retry-After
 * and deadline per page, errors as a single mapi_list_addresses): every
 * request is one of the list call.  Without a total, one page after the
 * other.
 *
 * The walk ends (mapi_pager_next returns 0) after a page that is empty (not
 * handed out) or short (fewer items than meta.per_page, else the per_page
 * asked for), after the page p with p * per_page >= meta.total, or after
 * max_pages pages.  It ends with DECODE, title "page <k>: ...", when page k
 * repeats an item (type and id) the walk already handed out (a server that
 * ignores `page`, an address created under order_type "desc"), or
 * contradicts meta.total: a negative total, more items than the total
 * leaves for that page, fewer (a short or empty page before the last), or
 * a total that shrank between pages (an address deleted: one of those
 * after it was skipped).  A total that grows (addresses created while
 * walking) is no error: mapi_pager_get_counts says it.  A page whose meta
 * lacks per_page or total is no error: the rules that need it do not
 * apply.  A walk that ends with 0 from page 1 without max_pages has handed
 * out every address once: counts.received == counts.announced whenever a
 * total came.
 */
typedef struct mapi_pager mapi_pager;

/* Options of a pager.  Start from MAPI_PAGER_OPTS_INIT (a zeroed struct is
   the same but for concurrency 0, which counts as 1). */
typedef struct mapi_pager_opts {
    mapi_page_params params; /* order, order_type, per_page as for mapi_list_addresses
                                (zero/NULL: not sent); params.page: the first page
                                (0: 1) */
    long max_pages;          /* pages at most (0: no limit) */
    size_t concurrency;      /* pages fetched at once once the last is known (0 and 1:
                                one at a time); at most 64 in flight, and at most
                                1000 pages fetched ahead of the caller */
    const mapi_call_opts *call; /* every page's call options (headers, deadline per
                                   page, traceparent), or NULL */
} mapi_pager_opts;

#define MAPI_PAGER_OPTS_INIT {{NULL, NULL, 0, 0}, 0, 1, NULL}

/* What the walk saw so far (mapi_pager_get_counts). */
typedef struct mapi_pager_counts {
    long pages;        /* pages handed out (an empty last page not counted) */
    int64_t received;  /* the addresses on them */
    int64_t announced; /* the last meta.total a page told, or -1 when none did */
    int total_changed; /* 1 when meta.total grew between two pages */
} mapi_pager_counts;

/*
 * A new pager over account_id's addresses; nothing is sent until
 * mapi_pager_next.  account_id, opts->params' strings and what opts->call
 * points to are borrowed until mapi_pager_free (the struct opts itself is
 * copied; NULL: MAPI_PAGER_OPTS_INIT).  NULL with err USAGE -- a NULL
 * client, a NULL, empty or dot id, no api key, a negative first page,
 * per_page or max_pages, an order or order_type the list call refuses, an
 * option mapi_call_opts refuses -- or MEMORY.  Caller frees with
 * mapi_pager_free.  A pager drives its client: one thread at a time, and
 * no other call of the client while mapi_pager_next runs.
 */
MAPI_API mapi_pager *mapi_pager_new(mapi_client *client, const char *account_id,
                                    const mapi_pager_opts *opts, mapi_error *err);

/*
 * The next page, in page order: returns 1 with *page a new document (as
 * mapi_list_addresses gives: data the addresses, meta; caller frees with
 * mapi_doc_free), 0 when the walk is over (*page NULL), or -1 with *page
 * NULL and err: the error of the page that failed for good (API, HTTP,
 * TRANSPORT, DECODE, MEMORY: every field of a mapi_list_addresses error of
 * that page, retries done), or DECODE "page <k>: ..." of a page that broke
 * a rule above.  After -1 every call returns -1 again (USAGE "the pager's
 * walk already ended with an error"): a walk never ends silently short.
 * USAGE also for a NULL pager or page.  The pages fetched ahead and not yet
 * handed out are held by the pager (at most max(concurrency, 1) pages).
 */
MAPI_API int mapi_pager_next(mapi_pager *pager, mapi_doc **page, mapi_error *err);

/* The walk's counts so far into *out (pager NULL: zeros, announced -1). */
MAPI_API void mapi_pager_get_counts(const mapi_pager *pager, mapi_pager_counts *out);

/* Frees the pager and the pages it fetched ahead; the documents it handed
   out are the caller's.  NULL is ignored. */
MAPI_API void mapi_pager_free(mapi_pager *pager);

/* ------------------------------------------------------------------------ */
/* Any endpoint: the generic call                                           */
/* ------------------------------------------------------------------------ */

/* Options of one mapi_request_ex call.  Start from MAPI_REQUEST_OPTS_INIT. */
typedef struct mapi_request_opts {
    int max_retries;  /* retries after the first attempt for this call; -1: the client's
                         max_retries.  Which failures are retried never changes (below) */
    const char *type; /* NULL: any primary data, or none.  Else data must be one resource of
                         this type (a list or no data fails as DECODE) */
    const mapi_header_field *headers; /* headers of one's own for this call, as in
                                         mapi_call_opts */
    size_t nheaders;
    const char *id;   /* NULL: any id.  Else (type required) data's id must be this one, byte
                         for byte: "expected <type> <id>, got <type> <other>" fails as DECODE */
    double deadline;  /* seconds for this whole call (see "Deadline"); 0: the client's;
                         limits as mapi_call_opts.deadline */
    const char *traceparent, *tracestate; /* as mapi_call_opts */
} mapi_request_opts;

#define MAPI_REQUEST_OPTS_INIT {-1, NULL, NULL, 0, NULL, 0.0, NULL, NULL}

/*
 * Any endpoint of the service: method path_and_query under base_url, with
 * the same headers, decoding, errors and retry rules as the calls above
 * (JSON:API documents describe themselves: interface, "Document envelope").
 *
 * method          "GET", "HEAD", "POST", "PUT", "PATCH" or "DELETE" (exactly;
 *                 anything else is USAGE).
 * path_and_query  appended to base_url as is: "/api/public/v1/payouts/x?y=1".
 *                 It must start with "/" (not "//": no absolute or
 *                 network-path URLs), hold only RFC 3986 path/query
 *                 characters ('[' and ']' also allowed in the query) and
 *                 well-formed %XX escapes (encode path segments with the
 *                 unreserved set), and no "." or ".." segment (also not as
 *                 %2E escapes).  CR, LF, spaces, '#', other control bytes and
 *                 non-ASCII bytes are USAGE errors: nothing is sent.
 * body, body_len  the request body, sent as is with Content-Type
 *                 application/vnd.api+json; NULL for none (a method other
 *                 than GET/HEAD then sends an empty body, Content-Length: 0).
 *                 GET and HEAD take no body (USAGE).  Borrowed for the call.
 *
 * Retries: GET and HEAD retry transport errors, 429 and 502/503/504 (up to
 * max_retries, backoff and Retry-After as the contract says; a GET may use
 * HTTP/2, and every request of it that leaves is one of err->attempts: libcurl
 * is stopped from resending it by itself).  Every other method is sent and
 * retried as the confirm is (mapi_confirm_payout), and on failure
 * err->outcome is NOT_SENT (a USAGE error too), UNKNOWN or REJECTED (4xx).
 *
 * On success (any 2xx) *out is the document; caller frees with mapi_doc_free.
 * Any primary type is accepted (unless opts->type says one), and a list's
 * meta is data, whatever it holds (JSON:API leaves it free-form: another
 * server's "page": {"offset": 0, "limit": 10} is no error; only the list
 * calls refuse a page, per_page or total that is not a count).  A 2xx without
 * a body (HEAD, 204 No Content) gives a document with no root
 * (mapi_doc_root() NULL, mapi_doc_data_count() 0) holding the response.
 * Errors: API (an error document, any status), HTTP (non-2xx without one),
 * TRANSPORT, DECODE (a non-empty 2xx body that is not a JSON:API document),
 * USAGE (above; NULL client/method/path/out), MEMORY.
 */
MAPI_API int mapi_request(mapi_client *client, const char *method, const char *path_and_query,
                          const char *body, size_t body_len, mapi_doc **out, mapi_error *err);

/* mapi_request with options (opts NULL: MAPI_REQUEST_OPTS_INIT).  USAGE also
   for opts->max_retries < -1 or > 100, an empty opts->type, an opts->id
   without a type or empty, and the refusals of mapi_call_opts. */
MAPI_API int mapi_request_ex(mapi_client *client, const char *method,
                             const char *path_and_query, const char *body, size_t body_len,
                             const mapi_request_opts *opts, mapi_doc **out, mapi_error *err);

/* ------------------------------------------------------------------------ */
/* Observing attempts: hooks and MERCHANTAPI_DEBUG                          */
/* ------------------------------------------------------------------------ */

/* When an observer is called. */
typedef enum mapi_attempt_event {
    MAPI_ATTEMPT_REQUEST = 1, /* attempt n is about to be sent */
    MAPI_ATTEMPT_RESPONSE     /* attempt n is over: answered, or failed without an answer */
} mapi_attempt_event;

/*
 * The record of one attempt (every request that leaves: retries, and the
 * read that settles a confirm, included), by OpenTelemetry's HTTP client
 * semantic conventions.  The fields that were here before keep their names;
 * the comment of each gives the convention's name it stands for.  What each
 * key holds (merchantapi.outcome's verdicts, error.type's rule,
 * http.request.resend_count) is described once, in docs/guide/observe.md,
 * "One record per attempt" (its table gives the C field of every key).
 * REQUEST fills what is known before sending; RESPONSE the whole record.
 * Every pointer is borrowed for the duration of the observer call only;
 * none ever holds the api key (it reads "[REDACTED]", should it occur).
 */
typedef struct mapi_attempt_info {
    const char *method;     /* http.request.method: "GET", "PUT", ... */
    const char *url;        /* url.full: the URL called, query kept */
    int attempt;            /* merchantapi.attempt: 1 for the first request, 2 for the
                               first retry, ... (the settling read counts from 1 again) */
    int status;             /* http.response.status_code: RESPONSE, when an answer came;
                               0 when none came (and always in REQUEST) */
    double elapsed;         /* duration: RESPONSE: seconds from sending to the end of the
                               answer or the failure; 0 in REQUEST */
    const char *request_id; /* merchantapi.request_id: RESPONSE: the response's
                               X-Request-Id, or NULL */
    mapi_error_kind error;  /* RESPONSE: what this attempt's failure is (MAPI_ERR_NONE when
                               the call succeeded with it) */
    double retry_in;        /* RESPONSE: seconds until the next attempt, or -1 when this
                               was the last one */
    /* -- added after 0.1.0: the rest of the record -- */
    const char *server_address; /* server.address: the URL's host (no brackets) */
    int server_port;        /* server.port: the URL's port, or 443 / 80 by its scheme */
    const char *error_type; /* error.type (above): RESPONSE, NULL on success */
    int resend_count;       /* http.request.resend_count: attempt - 1 */
    const char *outcome;    /* merchantapi.outcome (above): RESPONSE; NULL in REQUEST */
    const char *endpoint;   /* merchantapi.endpoint: the endpoint's name ("confirm_payout",
                               "get_channel", "list_addresses", "get_payout"; the settling
                               read is "get_payout"; mapi_request: the row whose method and
                               path it matches), or NULL */
    const char *settled_by; /* merchantapi.settled_by: "read" on the record of the read
                               that settled a confirm as confirmed (mapi_doc_settled_by),
                               else NULL */
    double start_time;      /* start_time: Unix seconds (wall clock) the attempt began */
    const char *trace_id;   /* trace_id, span_id, parent_span_id: lowercase hex when the */
    const char *span_id;    /* call is traced, else NULL */
    const char *parent_span_id;
    int max_attempts;       /* attempts the request may take: max_retries + 1 */
    const char *code;       /* RESPONSE: the error's code (an error document's), or NULL */
    const char *title;      /* RESPONSE: the error's title, or NULL */
} mapi_attempt_info;

/*
 * The MERCHANTAPI_DEBUG line of a RESPONSE record (what a client with
 * mapi_config.debug, or made while the variable is set, writes to stderr;
 * without the newline):
 *   merchantapi: GET <url> attempt 1/3: 503 (api service_unavailable) in 0.004 s,
 *   request id <id>, retry in 0.210 s
 * (one line): method, url, attempt/max_attempts, the status or "no
 * response", the error kind with the code (or, for an error that is not
 * "api" nor "http", ": " and its title), elapsed, request_id and retry_in
 * when given.  Control bytes read as spaces.  Writes at most size bytes
 * (NUL included; buf may be NULL when size is 0) and returns the line's
 * length, as snprintf does; -1 when info is NULL or out of memory.
 */
MAPI_API int mapi_attempt_format(const mapi_attempt_info *info, char *buf, size_t size);

/* An observer: called by the thread making the call, twice per attempt
   (REQUEST before sending, RESPONSE after).  It must not call the client it
   observes.  ctx is what mapi_client_set_observer was given. */
typedef void (*mapi_observer_fn)(void *ctx, mapi_attempt_event event,
                                 const mapi_attempt_info *info);

/*
 * Sets the client's observer (fn NULL removes it); every call of the client
 * reports each of its attempts to it, retries included, whatever drives the
 * call (blocking, a loop, the pages).  The MERCHANTAPI_DEBUG lines
 * (mapi_config.debug) are written independently of it.
 */
MAPI_API void mapi_client_set_observer(mapi_client *client, mapi_observer_fn fn, void *ctx);

/* ------------------------------------------------------------------------ */
/* Calls that never block: an event loop                                    */
/* ------------------------------------------------------------------------ */

/*
 * A mapi_loop runs calls without blocking the thread that makes them, for a
 * host that has a loop of its own (a game's fixed tick, libuv, epoll).  A
 * call started on it runs exactly as the blocking call would -- the same
 * request, the same retries (backoff, Retry-After), deadline, outcome,
 * settling of a confirm and error fields, observed the same way -- but each
 * attempt is a transfer on the loop's libcurl multi handle (sharing the
 * client's connections, DNS cache and TLS sessions), and each wait between
 * attempts is a timer of the loop, never a sleep.  Nothing happens outside
 * mapi_loop_step: the host calls it from its own loop, either every tick
 * with timeout 0, or when mapi_loop_fd() is readable or mapi_loop_timeout()
 * seconds have passed.
 *
 *   mapi_loop *loop = mapi_loop_new(&err);
 *   mapi_loop_get_channel(loop, client, id, NULL, on_channel, my_ctx, &err);
 *   while (mapi_loop_step(loop, 0.0) > 0)
 *       ... the host's own work for this tick ...
 *   mapi_loop_free(loop);
 *
 * Threading: a loop and the clients whose calls run on it are used by the
 * thread stepping it (the Threading rules above); several loops may serve
 * one client on that thread.  A client must outlive the calls started with
 * it (free it once they are done, or after mapi_loop_free).
 */
typedef struct mapi_loop mapi_loop;

/*
 * What a call started on a loop reports when it ends, exactly once, from
 * mapi_loop_step (or mapi_loop_free).  On success doc is the document the
 * blocking call would give (the callback owns it: free with mapi_doc_free)
 * and err->kind is MAPI_ERR_NONE.  On failure doc is NULL and *err is the
 * error the blocking call would give; it is borrowed for the callback (to
 * keep it: copy the struct, then set *err = (mapi_error)MAPI_ERROR_INIT).
 * ctx is what the call was started with.  The callback may start new calls
 * on the loop; it must not step nor free the loop.
 */
typedef void (*mapi_loop_done_fn)(void *ctx, mapi_doc *doc, mapi_error *err);

/* A new loop (its libcurl multi handle and one epoll descriptor); NULL with
   err MEMORY or TRANSPORT (the descriptor could not be made).  Caller frees
   with mapi_loop_free. */
MAPI_API mapi_loop *mapi_loop_new(mapi_error *err);

/* Ends every call still running -- each callback is called once, with the
   call's error: a call between attempts fails with its last attempt's
   error, one under way with TRANSPORT "the loop was freed" (outcome UNKNOWN
   for a confirm, which may have arrived) -- then frees the loop and closes
   its descriptor.  NULL is ignored.  Not from a callback. */
MAPI_API void mapi_loop_free(mapi_loop *loop);

/*
 * Start a call on the loop: the same arguments, checks and results as the
 * blocking function of the same name (mapi_confirm_payout_ex,
 * mapi_get_channel_ex, mapi_list_addresses_ex, mapi_get_payout_ex,
 * mapi_request_ex; opts NULL: the defaults), with done(ctx, doc, err)
 * called when the call is over.  Strings and options are copied: the
 * caller may free them on return.  Nothing is sent before the next
 * mapi_loop_step.  Returns 0 when the call started, or -1 with err filled
 * and done never called: USAGE (a NULL loop, client or done, and every
 * USAGE error of the blocking call; outcome NOT_SENT for a confirm) or
 * MEMORY.
 */
MAPI_API int mapi_loop_confirm_payout(mapi_loop *loop, mapi_client *client,
                                      const char *payout_id, const mapi_call_opts *opts,
                                      mapi_loop_done_fn done, void *ctx, mapi_error *err);
MAPI_API int mapi_loop_get_channel(mapi_loop *loop, mapi_client *client,
                                   const char *channel_id, const mapi_call_opts *opts,
                                   mapi_loop_done_fn done, void *ctx, mapi_error *err);
MAPI_API int mapi_loop_list_addresses(mapi_loop *loop, mapi_client *client,
                                      const char *account_id, const mapi_page_params *p,
                                      const mapi_call_opts *opts, mapi_loop_done_fn done,
                                      void *ctx, mapi_error *err);
MAPI_API int mapi_loop_get_payout(mapi_loop *loop, mapi_client *client, const char *payout_id,
                                  const mapi_call_opts *opts, mapi_loop_done_fn done,
                                  void *ctx, mapi_error *err);
MAPI_API int mapi_loop_request(mapi_loop *loop, mapi_client *client, const char *method,
                               const char *path_and_query, const char *body, size_t body_len,
                               const mapi_request_opts *opts, mapi_loop_done_fn done,
                               void *ctx, mapi_error *err);

/*
 * Moves every call on: begins the attempts that are due, waits at most
 * `timeout` seconds for the loop's sockets or its next timer (0: does not
 * wait; negative: as long as the next event needs; never longer than the
 * next timer, and not at all when a call has already ended or none is
 * running), moves the ready transfers on, and calls the callbacks of the
 * calls that ended.  Returns how many calls are still running (0: none
 * left), or -1 when loop is NULL or the step is made from a callback.
 */
MAPI_API int mapi_loop_step(mapi_loop *loop, double timeout);

/*
 * mapi_loop_step with a budget: how much the step may do, for a host whose
 * tick has a time to keep (a 60 Hz frame is 16.7 ms; a step that finishes
 * eight large pages at once can take longer).  max_seconds: seconds of
 * work -- moving transfers on, reading finished ones (which parses their
 * answers), the callbacks -- measured by the wall clock (monotonic), not
 * CPU time, the wait for `timeout` not counted (<= 0: no bound); max_calls: at most that many finished transfers read and that
 * many callbacks called (<= 0: no bound).  The step checks the budget
 * before each piece of work (a socket event, libcurl's timer, a finished
 * transfer, a callback), so it can overrun by one piece; the first piece is
 * always done, so every step moves the loop on.  What is left -- sockets
 * still ready, transfers finished but not read, calls ended but not
 * reported -- is nothing lost: the next step does it first, and until then
 * mapi_loop_timeout is 0 and the descriptor stays readable.  Returns as
 * mapi_loop_step.  mapi_loop_step(loop, t) is mapi_loop_step_budget(loop,
 * t, 0, 0).
 */
MAPI_API int mapi_loop_step_budget(mapi_loop *loop, double timeout, double max_seconds,
                                   int max_calls);

/*
 * A step that spends its budget on the work that becomes ready within it:
 * as mapi_loop_step_budget, but after the work that is ready it goes on --
 * an attempt a callback started begins at once, and the loop waits on its
 * descriptor for the answers -- until max_seconds (> 0) have passed or
 * max_calls (<= 0: no bound) calls were reported, or no call is left.
 * Here the waits count against the budget: the step's whole time, by the
 * wall clock (monotonic), is at most max_seconds, a wait ending no later
 * than the budget (in whole milliseconds), plus at most the one piece of
 * work begun before the budget ran out (a socket event, an answer read, a
 * callback).  An attempt begun when the budget is spent (by a callback of
 * the last piece) is still sent before the step returns, whatever the
 * budget has left, so that its answer comes before the next step; nothing
 * more is read then.  With nothing ready it returns after max_seconds.
 * Returns as mapi_loop_step; -1 also for max_seconds <= 0.
 */
MAPI_API int mapi_loop_step_within(mapi_loop *loop, double max_seconds, int max_calls);

/* The loop's descriptor (an epoll set of its own): readable when one of its
   transfers' sockets is ready, so a host can poll it among its own and call
   mapi_loop_step(loop, 0) then.  Owned by the loop: never close it or read
   from it.  Timers are not in it: see mapi_loop_timeout.  -1 for NULL. */
MAPI_API int mapi_loop_fd(const mapi_loop *loop);

/* Seconds until mapi_loop_step must be called even when the descriptor
   stays quiet (libcurl's timeouts, a wait before a retry); 0 when a step is
   due now; -1 when no call is running (or loop is NULL). */
MAPI_API double mapi_loop_timeout(const mapi_loop *loop);

#ifdef __cplusplus
}
#endif

#endif /* MERCHANTAPI_H */

/*
 * calls.h -- the service's rules, written once (calls.c): the endpoint
 * table (interface, "Endpoints") and the builders that turn a row, an id
 * and a call's options into the request an exchange sends; the limits of
 * option values (limits.c) and W3C Trace Context's format
 * (trace_context.c).  The header of the service's rules (floor 50 of
 * docs/architecture.md's "The layers"; the page walk's is page_walk.h).
 * Internal.  Includes only messages.h, below it.
 */
#ifndef MAPI_CALLS_H
#define MAPI_CALLS_H

#include <stddef.h>

#include "messages.h"

/* One row of the endpoint table (interface, "Endpoints"): everything the
   core, the binding and the Lua modules know of one call.  The rows are
   static: pointers stay valid for the life of the program. */
typedef struct mapi_endpoint {
    const char *name;        /* "confirm_payout", "get_channel", "list_addresses", "get_payout" */
    const char *method;      /* "PUT", "GET" */
    const char *collection;  /* the path is API prefix "/" collection "/" <id> tail */
    const char *tail;        /* "" or "/addresses" */
    const char *id_name;     /* "payout_id", "channel_id", "account_id" */
    const char *type;        /* the primary data's resource type: "payouts", "channels", ... */
    const char *key_for;     /* NULL: sent without the key; else the usage message's purpose,
                                "confirm a payout" ("an api_key is required to <key_for>") */
    int lists;               /* a list with pagination meta */
    int moves_money;         /* may move money: sent at most once, outcome, settle */
    const char *const *decimal_fields; /* NULL-terminated attribute names kept as decimal
                                          strings ("amount" of payouts); never NULL */
} mapi_endpoint;

/* The rows by index: the C entry points take their row so, with no lookup
   by name per call. */
typedef enum mapi_endpoint_row {
    MAPI_EP_CONFIRM_PAYOUT,
    MAPI_EP_GET_CHANNEL,
    MAPI_EP_LIST_ADDRESSES,
    MAPI_EP_GET_PAYOUT,
    MAPI_EP_COUNT
} mapi_endpoint_row;
/* The endpoint table (calls.c), row r at mapi_endpoints[r]. */
extern const mapi_endpoint mapi_endpoints[MAPI_EP_COUNT];
/* The row named name, or NULL: no such endpoint (name NULL included); for
   names that come from Lua (core.path, client:prepare). */
const mapi_endpoint *mapi_endpoint_find(const char *name);
/* The name of the row a generic call (method, path_and_query under the
   base URL) matches -- same method, the row's path with one id segment,
   then the end or a query -- or NULL. */
const char *mapi_endpoint_match(const char *method, const char *path_and_query);
/* The attributes of resource type type[0..type_len) kept as decimal strings
   (NULL-terminated; the rows of one type list the same), or NULL for none:
   asked once per resource, then mapi_field_listed per attribute. */
const char *const *mapi_decimal_fields(const char *type, size_t type_len);
/* 1 when name[0..name_len) is one of fields (NULL-terminated; NULL: none). */
int mapi_field_listed(const char *const *fields, const char *name, size_t name_len);

/* What one endpoint sends and expects back. */
typedef struct mapi_call {
    const char *method;
    const char *url;
    char *url_buf;        /* what mapi_call_release frees (the builders of calls.c) */
    int moves_money;      /* may move money (the confirm, a generic call not GET/HEAD):
                             fresh connection, outcome, cautious retries */
    const char *type;     /* the primary resources' type; NULL (generic calls): any, or none */
    int list;             /* 1: data is an array with integer meta page/per_page/total */
    const char *body;     /* request body or NULL (request.c) */
    size_t body_len;
    int generic;          /* 1: mapi_request: a 2xx without a body is a document without data */
    int has_max_retries;  /* 1: max_retries below replaces the client's for this call */
    int max_retries;
    const mapi_header_field *headers; /* the call's own headers (checked by the builder),
                                         or NULL */
    size_t nheaders;
    const char *id;       /* with type: the primary resource's id must be this one; or NULL */
    double deadline;      /* seconds for the whole call; 0: the client's */
    int settle;           /* the confirm: settle an unknown outcome by reading the payout */
    const char *endpoint; /* the endpoint row's name (static), or NULL: the record's
                             merchantapi.endpoint */
    const char *traceparent, *tracestate; /* the call's trace context (checked), or NULL */
} mapi_call;

/* 1 for a method safe to repeat (GET, HEAD), 0 for one that may move money
   (POST, PUT, PATCH, DELETE), -1 for one no call sends (NULL included). */
int mapi_method_safety(const char *method);
/* Tags err as the refusal of a call before anything was sent, for every
   caller: when err holds an error and method may move money,
   err->outcome = NOT_SENT; a USAGE error also gets err->method (when it has
   none) and its message ("... [PUT]").  Returns -1. */
int mapi_error_tag_not_sent(const char *method, mapi_error *err);
/* An id for a path segment: non-empty, not "." or "..".  0, or -1 with
   USAGE naming `what`. */
int mapi_id_check(const char *what, const char *id, mapi_error *err);
/* Checks a path and query under the base URL by the rules of merchantapi.h
   (mapi_request).  0, or -1 with USAGE. */
int mapi_path_check(const char *path_and_query, mapi_error *err);
/* Appends the path of endpoint e with id (len bytes) percent-encoded; 0 or
   -1 (oom). */
int mapi_endpoint_path(mapi_buf *b, const mapi_endpoint *e, const char *id, size_t len);

/* What the builders need of the client a call is built for, as plain
   values: the client fills one when it is made (client.c) and hands it to
   every build, so the builder knows no client. */
typedef struct mapi_call_base {
    const char *base_url; /* validated, without a trailing '/' (borrowed from the client) */
    int has_key;          /* 1: the client has an api key */
    int settle;           /* 1: an unknown confirm is settled by default (mapi_config.settle) */
    unsigned long built;  /* calls built from it, counted by the builders (a test hook: a
                             call is built once, whatever drives it) */
} mapi_call_base;

/* The one builder of an endpoint's call: row e of the table with id (the
   row's id_name), p the list's parameters (only for a row that lists; NULL:
   none) and opts (NULL: the defaults), for the client base describes.  The
   checks (USAGE, outcome NOT_SENT for a row that may move money), the key
   when the row needs it, the URL (base->base_url + the path + the list
   query), the call's headers.  0 with *k filled (strings borrowed from the
   arguments, k->url owned: free it with mapi_call_release) and base->built
   counted, or -1 with err (USAGE, MEMORY) and nothing to release.  (The
   client's: mapi_call_endpoint, client.c.) */
int mapi_call_build_endpoint(mapi_call_base *base, const mapi_endpoint *e, const char *id,
                             const mapi_page_params *p, const mapi_call_opts *opts,
                             mapi_call *k, mapi_error *err);
/* The generic call (mapi_request_ex's rules; opts NULL: the defaults). */
int mapi_call_build_request(mapi_call_base *base, const char *method,
                            const char *path_and_query, const char *body, size_t body_len,
                            const mapi_request_opts *opts, mapi_call *k, mapi_error *err);
/* Frees what a builder allocated (k->url); k NULL ignored. */
void mapi_call_release(mapi_call *k);

/* ---- option limits (limits.c): one check per option value, for C and Lua ---- */

/* Each returns NULL when the value is within its limits (mapi_config's and
   mapi_list_addresses's, merchantapi.h; page and per_page >= 1 and within a
   long), else the USAGE title (a static string: the same from the C API and
   from Lua).  NULL is refused: the caller skips what was not given (in the
   C structs 0 or NULL). */
const char *mapi_limit_timeout(double seconds);
const char *mapi_limit_connect_timeout(double seconds);
const char *mapi_limit_deadline(double seconds);
const char *mapi_limit_max_retries(long long n);
const char *mapi_limit_max_body(unsigned long long n);
const char *mapi_limit_max_depth(long long n); /* >= 0 (0: the default) */
const char *mapi_limit_page(long long n);
const char *mapi_limit_per_page(long long n);
const char *mapi_limit_order(const char *s);
const char *mapi_limit_order_type(const char *s);
/* The limits of a list's parameters, each checked when given (order and
   order_type non-NULL, page and per_page non-zero); NULL when p is NULL. */
const char *mapi_limit_page_params(const mapi_page_params *p);
/* title NULL: 0.  Else err = USAGE title, and -1. */
int mapi_limit_refuse(const char *title, mapi_error *err);
/* The caps of one list_addresses_pages call: pages, and transfers in flight
   (a larger concurrency is cut to it). */
#define MAPI_PAGES_MAX 1000
#define MAPI_PAGES_MAX_CONCURRENCY 64
/* count 1 .. MAPI_PAGES_MAX, concurrency >= 1: the binding's own checks of
   list_addresses_pages (its arrays are sized by count; first_page is
   mapi_list_addresses_pages_ex's).  0, or -1 with USAGE. */
int mapi_pages_check(long count, long concurrency, mapi_error *err);
/* concurrency within 1 .. MAPI_PAGES_MAX_CONCURRENCY. */
size_t mapi_pages_concurrency(size_t concurrency);


/* ---- W3C Trace Context: its format (trace_context.c) ---- */

#define MAPI_TRACEPARENT_LEN 55 /* "00-" 32 "-" 16 "-" 2 */
#define MAPI_TRACESTATE_MAX 512
/* The rule of a call's traceparent and tracestate (mapi_call_opts); NULL
   is none.  0, or -1 with USAGE. */
int mapi_trace_check(const char *traceparent, const char *tracestate, mapi_error *err);
/* 1 when s[0..n) is lowercase hex, and not all zeros when nonzero is set
   (an id of the format). */
int mapi_trace_hex(const char *s, size_t n, int nonzero);
/* 1 when the digits s[0..n) are all '0': the rule that such a trace or
   span id is invalid (a caller's is refused, a drawn one drawn again). */
int mapi_trace_id_zero(const char *s, size_t n);

#endif

/*
 * internal.h -- prototypes shared between the C files of libmerchantapi.
 * Not installed.  Every symbol here is hidden (the library is built with
 * -fvisibility=hidden; only MAPI_API symbols of merchantapi.h are exported).
 *
 * Files:
 *   http.c      libcurl: one easy handle per client, request -> mapi_response
 *   jsonapi.c   json-c parse with exact numbers, (type,id) index, resolution
 *   numscan.c   number checks and big-integer marking ahead of json-c
 *   value.c     mapi_value navigation over json-c objects
 *   client.c    the service's endpoints, URL building, retries (mapping.c: responses)
 *   error.c     mapi_error filling, messages (error_doc.c: error documents)
 */
#ifndef MAPI_INTERNAL_H
#define MAPI_INTERNAL_H

#include <stdarg.h>
#include "merchantapi.h"

/* ---- responses (http.c fills them, jsonapi.c / client.c read them) ---- */

typedef struct mapi_header {
    char *name;  /* lower-cased */
    char *value; /* trimmed */
} mapi_header;

struct mapi_response {
    int status;
    mapi_header *headers;
    size_t nheaders, capheaders;
    char *body;       /* NUL-terminated for convenience; len excludes the NUL */
    size_t len, cap;
    double elapsed;   /* seconds */
};

/* Frees a response; NULL ignored. */
void mapi_response_free(mapi_response *res);

/* ---- the HTTP layer (http.c) ---- */

typedef struct mapi_http mapi_http;

typedef struct mapi_http_request {
    const char *method;     /* "GET", "PUT", ... */
    const char *url;        /* full URL, already percent-encoded */
    const char *body;       /* NULL for none */
    size_t body_len;
    int fresh_connection;   /* 1: never reuse a connection, never let libcurl resend */
} mapi_http_request;

/* Settings copied from the config (validated by the caller). */
mapi_http *mapi_http_new(const mapi_config *cfg, const char *api_key, mapi_error *err);
void mapi_http_free(mapi_http *h);

/*
 * Performs one request on the reused easy handle: headers Content-Type and
 * Accept application/vnd.api+json, Authorization when a key is set,
 * User-Agent; no redirects; TLS verification on; max_body enforced while
 * receiving.  Returns 0 with *out set (any HTTP status) or -1 with err
 * filled: TRANSPORT (curl_code set, outcome NOT_SENT when the request
 * provably never left, else UNKNOWN; retryable 1) or DECODE (body over
 * max_body, response attached).  The caller owns *out.
 */
int mapi_http_perform(mapi_http *h, const mapi_http_request *req, mapi_response **out,
                      mapi_error *err);

/* ---- JSON:API documents (jsonapi.c) ---- */

/* Parses res->body into a document that takes ownership of res: on success
   the document owns it (mapi_doc_response); on failure err->response owns it
   (freed by mapi_error_clear).  Either way the caller must not free res.
   Only parses: the caller decides what the status and errors[] mean.
   max_depth <= 0 means 64. */
int mapi_doc_from_response(mapi_response *res, int max_depth, mapi_doc **out, mapi_error *err);

/* Same as mapi_doc_parse with an explicit depth cap. */
int mapi_doc_parse_ex(const char *body, size_t len, int max_depth, mapi_doc **out,
                      mapi_error *err);

/* ---- exact numbers ahead of json-c (numscan.c) ---- */

typedef struct mapi_numscan_result {
    size_t big_ints; /* integer tokens of 19+ digits (json-c would saturate them) */
    size_t members;  /* object members in the source (':' outside strings) */
} mapi_numscan_result;

/* Checks every number token against RFC 8259 and every bare word; counts.
   0, or -1 with a DECODE error. */
int mapi_numscan(const char *body, size_t len, mapi_numscan_result *out, mapi_error *err);
/* A malloc'd copy of body with '.' appended to each big integer token, and
   its length in *out_len; NULL when out of memory. */
char *mapi_numscan_mark(const char *body, size_t len, size_t big_ints, size_t *out_len);

/* ---- errors (error.c) ---- */

/* Clears err, then sets kind and a printf-formatted title. Returns -1. */
int mapi_error_set(mapi_error *err, mapi_error_kind kind, const char *fmt, ...);
/* strdup that returns NULL for NULL. */
char *mapi_strdup(const char *s);

/* ------------------------------------------------------------------------ */
/* Helpers of http.c, client.c, error.c and their small companions          */
/*   buf.c       growable strings                                            */
/*   url.c       percent-encoding, base_url rules, request URLs              */
/*   retry.c     Retry-After, backoff, the default sleep and random hooks    */
/*   response.c  mapi_response: building it, the public accessors            */
/*   mapping.c   a response -> the call's document, or its error             */
/*   error_doc.c errors[] of error documents, limit details                  */
/* ------------------------------------------------------------------------ */

#include <stdint.h>
#include <time.h>

#if defined(__GNUC__)
#define MAPI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MAPI_PRINTF(f, a)
#endif

/* ---- growable strings (buf.c) ---- */

/* A NUL-terminated byte string that grows.  Zero it with mapi_buf_init.
   Out of memory is sticky: appends become no-ops, oom stays 1 and
   mapi_buf_take returns NULL, so a builder checks once at the end. */
typedef struct mapi_buf {
    char *data;  /* NULL until something is appended */
    size_t len;  /* bytes, excluding the NUL */
    size_t cap;
    int oom;
} mapi_buf;

void mapi_buf_init(mapi_buf *b);
void mapi_buf_free(mapi_buf *b);
/* Room for `extra` more bytes (and the NUL); 0 or -1 (oom). */
int mapi_buf_reserve(mapi_buf *b, size_t extra);
/* Append bytes / a C string / printf output; 0 or -1 (oom). */
int mapi_buf_append(mapi_buf *b, const char *s, size_t n);
int mapi_buf_puts(mapi_buf *b, const char *s);
int mapi_buf_printf(mapi_buf *b, const char *fmt, ...) MAPI_PRINTF(2, 3);
/* The built string (caller frees; "" when nothing was appended), or NULL
   after an allocation failure.  Leaves the buffer empty either way. */
char *mapi_buf_take(mapi_buf *b);

/* ---- responses (response.c) ---- */

/* A new empty response (status 0), or NULL when out of memory. */
mapi_response *mapi_response_new(void);
/* Appends a header: the name is lower-cased, the value trimmed of spaces and
   tabs at both ends.  0, or -1 when out of memory. */
int mapi_response_add_header(mapi_response *res, const char *name, size_t name_len,
                             const char *value, size_t value_len);
/* Appends " " + the trimmed text to the last header's value (an obsolete
   folded continuation line).  0, or -1 when out of memory. */
int mapi_response_fold_header(mapi_response *res, const char *value, size_t value_len);
/* Drops every header (a new status line began: 1xx interim responses). */
void mapi_response_clear_headers(mapi_response *res);
/* A deep copy (status, headers, body, elapsed), or NULL when out of memory. */
mapi_response *mapi_response_copy(const mapi_response *res);

/* ---- URLs (url.c) ---- */

/* Appends s percent-encoded: RFC 3986 unreserved bytes (A-Z a-z 0-9 - . _ ~)
   as they are, every other byte as %XX (upper-case hex).  0 or -1 (oom). */
int mapi_url_encode(mapi_buf *b, const char *s);
/* The same into a new string (caller frees), NULL when out of memory. */
char *mapi_percent_encode(const char *s);
/* 1 when host (len bytes, as written in a URL: "[::1]" with brackets) is a
   loopback host: "localhost", an IPv4 address in 127.0.0.0/8, or [::1]. */
int mapi_host_is_loopback(const char *host, size_t len);
/*
 * Checks a base URL against the client's rules: scheme https, or http only
 * to a loopback host; a host; no userinfo, query or fragment; no control
 * bytes, spaces or NUL.  On success *out is a copy without trailing '/'
 * (caller frees) and 0 is returned; otherwise -1 with err USAGE (or MEMORY).
 */
int mapi_base_url_check(const char *url, char **out, mapi_error *err);
/* The path and query of an absolute URL ("/api/...?.."), borrowed from url;
   "/" when it has none. */
const char *mapi_url_path(const char *url);

/* ---- retries (retry.c) ---- */

/* Waits `seconds` before a retry.  Returns 0 to go on, non-zero to stop
   retrying (the call then fails with the last attempt's error). */
typedef int (*mapi_sleep_fn)(void *ctx, double seconds);
/* A uniformly distributed number in [0, 1). */
typedef double (*mapi_random_fn)(void *ctx);

/* The defaults: nanosleep (restarted on EINTR), and a xorshift64* generator
   whose state is the uint64_t that ctx points to (seeded by mapi_rng_seed). */
int mapi_sleep_default(void *ctx, double seconds);
double mapi_random_default(void *ctx);
/* A non-zero seed from the clock and `salt` (e.g. an object's address). */
uint64_t mapi_rng_seed(uintptr_t salt);

/* Replace a client's hooks; fn NULL restores the default.  Tests use them to
   avoid real waits; an event-loop binding may plug a non-blocking sleep. */
void mapi_client_set_sleep(mapi_client *c, mapi_sleep_fn fn, void *ctx);
void mapi_client_set_random(mapi_client *c, mapi_random_fn fn, void *ctx);

/* Seconds to wait before retry number `retry` (0 for the first retry): full
   jitter, u * min(8, 0.5 * 2^retry), with u in [0, 1) from the random hook. */
double mapi_backoff_delay(int retry, double u);
/* A Retry-After value (delta seconds, or an HTTP date compared with `now`) in
   seconds, capped at 60 and never negative; -1 when value is NULL or not
   a valid Retry-After. */
double mapi_retry_after_parse(const char *value, time_t now);
/* 1 for the statuses a call may retry: 429, 502, 503, 504. */
int mapi_status_retryable(int status);

/* ---- errors (error.c) ---- */

/* (mapi_error_set again, with printf format checking where the compiler has it) */
int mapi_error_set(mapi_error *err, mapi_error_kind kind, const char *fmt, ...) MAPI_PRINTF(3, 4);
/* strndup that returns NULL for NULL (or when out of memory). */
char *mapi_strndup(const char *s, size_t n);
/* Sets err to MAPI_ERR_MEMORY "out of memory". Returns -1.  err may be NULL. */
int mapi_error_oom(mapi_error *err);
/* (Re)builds err->message from the other fields; -1 when out of memory
   (message is then NULL: callers turn err into a MEMORY error, so that a
   failed call's message is NULL only for kind MEMORY).
   Format, one line, control bytes as spaces:
     merchantapi: <status> <code>: <title> (<detail>) [<METHOD> <path?query>]   kind API
     merchantapi: HTTP 502 (<detail>) [...]                                     kind HTTP
     merchantapi: <kind>: <title> (<detail>) [...]                              the others */
int mapi_error_message(mapi_error *err);
/* Fills err->errors / nerrors from an errors[] array value, and code,
   title, detail, pointer from its first entry, and amount/minimum/maximum
   from the first amount_below_minimum / amount_above_maximum entry whose
   detail parses.  Sets kind API.  0, or -1 when out of memory. */
int mapi_error_from_errors(mapi_error *err, const mapi_value *errors);
/* Parses a limit detail "amount: 5.5, minimum: 10.0" (or "maximum: ..."):
   each out pointer (may be NULL) gets a new string with the exact decimal
   text of that member, or NULL when the member is absent.  0, or -1 when
   out of memory (all outputs NULL then). */
int mapi_limit_detail_parse(const char *detail, char **amount, char **minimum,
                            char **maximum);
/* Replaces every occurrence of secret in every string field of err (entries
   included) with "[REDACTED]" and rebuilds the message.  Secrets shorter
   than 4 bytes are left alone (they would mangle ordinary text).  Out of
   memory drops a field rather than leave the secret in it; when the message
   cannot be rebuilt, err becomes a MEMORY error. */
void mapi_error_redact(mapi_error *err, const char *secret);

/* ---- mapping responses to results (mapping.c) ---- */

/* What one endpoint sends and expects back. */
typedef struct mapi_call {
    const char *method;
    const char *url;
    int confirm;          /* the PUT confirm: fresh connection, outcome, cautious retries */
    const char *type;     /* the primary resources' type */
    int list;             /* 1: data is an array with integer meta page/per_page/total */
} mapi_call;

/* 1 when a Content-Type is application/vnd.api+json or application/json
   (case-insensitive, parameters allowed). */
int mapi_media_type_is_json(const char *content_type);
/* Maps one response of call k: 0 with *out (a document that owns res), or
   -1 with *e filled (kind, status, request_id, retry_after, retryable and,
   for the confirm, outcome; e->response owns res or a copy of it). */
int mapi_map_response(const mapi_call *k, mapi_response *res, int max_depth, mapi_doc **out,
                      mapi_error *e);

#endif /* MAPI_INTERNAL_H */

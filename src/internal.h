/*
 * internal.h -- prototypes shared between the C files of libmerchantapi.
 * Not installed.  Every symbol here is hidden (the library is built with
 * -fvisibility=hidden; only MAPI_API symbols of merchantapi.h are exported).
 *
 * One section per file, in layer order: each file uses only the sections
 * above its own (docs/architecture.md's "Layout" says what each file
 * holds).  Some sections are headers of their own, included at their place
 * (clock.h, budget.h, exchange.h, attempt.h, calls.h); the HTTP layer's,
 * http.h, is not included here: the drivers include it after this file, and
 * the exchange, its sibling, never sees it.
 */
#ifndef MAPI_INTERNAL_H
#define MAPI_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include <time.h>

#include "merchantapi.h"
#include "json_parse.h" /* and memory.h */

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
int mapi_buf_vprintf(mapi_buf *b, const char *fmt, va_list ap) MAPI_PRINTF(2, 0);
/* The built string (caller frees; "" when nothing was appended), or NULL
   after an allocation failure.  Leaves the buffer empty either way. */
char *mapi_buf_take(mapi_buf *b);
/* Writes zeros over a secret string, then frees it.  NULL ignored. */
void mapi_wipe_free(char *s);
/* Control bytes (< 0x20, 0x7f) of s[0..n) as spaces: text for one line. */
void mapi_blank_controls(char *s, size_t n);
/* 1 when the string s holds a control byte. */
int mapi_has_control(const char *s);
/* ch with ASCII letters in lower case (other bytes as they are). */
int mapi_ascii_lower(int ch);
/* 1 when a[0..alen) and b[0..blen) are equal, ASCII letters compared
   without case (header names, schemes, hosts, media types).  Stops at the
   first difference: a NUL-terminated a is never read past its NUL (a
   prefix test: alen = blen). */
int mapi_ascii_ieq(const char *a, size_t alen, const char *b, size_t blen);
/* 1 when ch is an ASCII letter or digit, or one of the bytes of set (never
   NUL): the character classes of URLs and header names. */
int mapi_alnum_or(int ch, const char *set);
/* The value of hex digit c (0-9, a-f, A-F): 0 .. 15, or -1. */
int mapi_hex_digit(int c);

/* ---- the clocks, the one blocking sleep, randomness (clock.h) ---- */

#include "clock.h"

/* ---- a step's budget (budget.h) ---- */

#include "budget.h"

/* ---- responses: the type (response.c builds, http.c fills, the rest read) ---- */

typedef struct mapi_header {
    char *name;  /* lower-cased; one block with the value: free the name only */
    char *value; /* trimmed; in the name's block (response.c) */
} mapi_header;

struct mapi_response {
    mapi_owned owned; /* first: mapi_response_free, installed by mapi_response_new */
    int status;
    mapi_header *headers;
    size_t nheaders, capheaders;
    char *body;       /* NUL-terminated for convenience; len excludes the NUL.  Bodies
                         received (http.c, lua_transport.c) and copied have
                         cap >= len + MAPI_JSON_PADDING: the reader reads them in place */
    size_t len, cap;
    double elapsed;   /* seconds */
    int framed;       /* 1: its framing was checked while it was read (http.c), so
                         mapi_response_framed has nothing left to check */
    size_t head_bytes; /* the head's bytes as its reader counted them, or 0: then
                          mapi_response_framed counts its header fields */
};

/* Frees a response; NULL ignored. */
void mapi_response_free(mapi_response *res);

/* ---- strings copied (strdup.c); errors (error.c); the one redaction (redact.c) ---- */

/* strdup / strndup that return NULL for NULL (or when out of memory). */
char *mapi_strdup(const char *s);
char *mapi_strndup(const char *s, size_t n);
/* a[0..alen) and b[0..blen) copied into one block, each NUL-terminated:
   the block (a's copy; free it, and so both), *second b's copy; NULL (and
   *second NULL) when out of memory. */
char *mapi_strndup2(const char *a, size_t alen, const char *b, size_t blen, char **second);
/* Clears err, then sets kind and a printf-formatted title. Returns -1. */
int mapi_error_set(mapi_error *err, mapi_error_kind kind, const char *fmt, ...) MAPI_PRINTF(3, 4);
/* Sets err to MAPI_ERR_MEMORY "out of memory". Returns -1.  err may be NULL. */
int mapi_error_oom(mapi_error *err);
/* Fills *err as a TRANSPORT failure of an answer that did not come whole
   (libcurl's, or the HTTP/1.1 reader's): title, detail and request_id
   copied (each may be NULL), retryable, the outcome given, the message
   made.  Always -1 (MEMORY when a copy fails). */
int mapi_error_transport(mapi_error *err, const char *title, const char *detail,
                         const char *request_id, mapi_outcome outcome);
/* (Re)builds err->message from the other fields; -1 when out of memory
   (message is then NULL: callers turn err into a MEMORY error, so that a
   failed call's message is NULL only for kind MEMORY).
   Format, one line, control bytes as spaces:
     merchantapi: <status> <code>: <title> (<detail>) [<METHOD> <path?query>]   kind API
     merchantapi: HTTP 502 (<detail>) [...]                                     kind HTTP
     merchantapi: <kind>: <title> (<detail>) [...]                              the others */
int mapi_error_message(mapi_error *err);
/* The one redaction of the library: replaces every occurrence of secret
   (the api key) in the string *field with "[REDACTED]" (a new string; the
   old one freed).  Secrets shorter than 4 bytes are left alone (they would
   mangle ordinary text).  Out of memory masks each occurrence with '*' in
   place instead: the secret never stays.  icase: ASCII letters compared
   without case (header names, which arrive lower-cased).  Returns 1 when
   the secret was found, else 0.  field or *field NULL: 0. */
int mapi_redact_ex(char **field, const char *secret, int icase);
int mapi_redact(char **field, const char *secret); /* icase 0 */
/* The same redaction of s left in place: 0 when s (NULL: 0) holds no
   secret, *out NULL; else 1 and *out the redacted copy (the caller frees
   it), or, out NULL or out of memory (*out NULL), s masked in place. */
int mapi_redact_into(char *s, const char *secret, int icase, char **out);
/* mapi_redact over every string field of err (entries included) and the
   header names and values of err->response, then rebuilds the message.
   When the message cannot be rebuilt, err becomes a MEMORY error. */
void mapi_error_redact(mapi_error *err, const char *secret);
/* mapi_redact over every header name (without case) and value: what hooks,
   res.headers, res.request_id and err.request_id are made from.  The body is
   left as received.  res NULL ignored. */
void mapi_response_redact(mapi_response *res, const char *secret);

/* ---- responses (response.c) ---- */

/* A new empty response (status 0), or NULL when out of memory. */
mapi_response *mapi_response_new(void);
/* Appends a header: the name is lower-cased, the value trimmed of spaces and
   tabs at both ends.  0, or -1 when out of memory. */
int mapi_response_add_header(mapi_response *res, const char *name, size_t name_len,
                             const char *value, size_t value_len);
/* Appends data[0..n) to the body, which never grows past max_body bytes:
   0; 1 when it would (nothing appended); -1 out of memory.  The body keeps a
   NUL and the JSON reader's padding after it (the document is read in place,
   mapi_doc_from_response); first_cap: the room the first append takes
   (0: 16 KiB; a Content-Length known ahead gives the whole). */
int mapi_response_append_body(mapi_response *res, const char *data, size_t n, size_t max_body,
                              size_t first_cap);
/* A response that got no byte of body gets an empty one, with its NUL and
   padding (read in place as every body is).  0, or -1 out of memory. */
int mapi_response_pad_body(mapi_response *res);
/* Drops every header (a new status line began: 1xx interim responses). */
void mapi_response_clear_headers(mapi_response *res);
/* A deep copy (status, headers, body, elapsed), or NULL when out of memory. */
mapi_response *mapi_response_copy(const mapi_response *res);

/* ---- response framing (framing.c): the one rule every transport applies ---- */

typedef enum mapi_framing_fault {
    MAPI_FRAMING_OK = 0,
    MAPI_FRAMING_CONFLICT,   /* a second Content-Length field (RFC 9110 8.6) */
    MAPI_FRAMING_BAD_LENGTH, /* a Content-Length that is not one number of 64 bits */
    MAPI_FRAMING_BOTH,       /* Content-Length with Transfer-Encoding (RFC 9112 6.3) */
    MAPI_FRAMING_CODING,     /* a Transfer-Encoding other than one "chunked" */
    MAPI_FRAMING_LINE        /* a head line that is not "name: value", or a folded one */
} mapi_framing_fault;

#define MAPI_FRAMING_LENGTH_MAX 0xffffffffffffffffULL

/* What the head of one answer says of its body, read field by field. */
typedef struct mapi_framing {
    int fault;                 /* mapi_framing_fault: the first refusal (sticky) */
    int has_length;            /* a Content-Length came: length, digits */
    int has_coding;            /* a Transfer-Encoding came (then chunked is 1) */
    int chunked;
    unsigned long long length; /* at most MAPI_FRAMING_LENGTH_MAX */
    size_t ndigits;
    char digits[24];           /* the length's digits, no leading zeros, NUL-terminated */
} mapi_framing;

/* An empty head: no length, no coding, no fault. */
void mapi_framing_init(mapi_framing *f);
/* Takes one header field of the head (name in any case, the value with or
   without spaces around it; others than Content-Length and
   Transfer-Encoding are ignored).  0, or -1 once the head is refused (and
   for every field after). */
int mapi_framing_field(mapi_framing *f, const char *name, size_t name_len, const char *value,
                       size_t value_len);
/* Takes one line of a head (not the status line, without its line end):
   0 when it is "name: value" -- a colon, the name's bytes RFC 9110's tchar
   or a space, no CR, LF or NUL in the value -- else -1 (MAPI_FRAMING_LINE),
   also for an obsolete folded line (one that begins with a space or tab).
   The fields themselves go to mapi_framing_field. */
int mapi_framing_line(mapi_framing *f, const char *line, size_t len);
/* 1 when libcurl (7.88.1) fails this field itself, before framing: a
   Content-Length whose value is no number (after spaces and tabs, neither a
   digit nor '+' and a digit: empty, "x", "-1") in the head of an answer of
   `status` with a body (not 1xx, 204, 304); curl 8, "Invalid Content-Length:
   value".  The reader of h1_reader.c fails it as libcurl does. */
int mapi_framing_length_unreadable(int status, const char *name, size_t name_len,
                                   const char *value, size_t value_len);
/* Records fault as the head's refusal when none is yet (a reader that
   found it itself: h1_reader.c).  Always -1. */
int mapi_framing_fault_set(mapi_framing *f, mapi_framing_fault fault);
/* The DECODE title of a refused head ("conflicting Content-Length headers",
   ...), or NULL when the head is not refused. */
const char *mapi_framing_title(const mapi_framing *f);
/* f from every header of res: 0, or -1 when refused. */
int mapi_framing_response(const mapi_response *res, mapi_framing *f);
/* An answer refused on its head: DECODE with title (and detail, may be
   NULL), its status and request id, outcome UNKNOWN (the request was sent;
   kept for a confirm only by the exchange), res attached as err->response.
   Always -1. */
int mapi_refuse_head(mapi_response *res, mapi_error *err, const char *title, const char *detail);
/* An answer whose body grew past max_body, whichever transport read it:
   DECODE "body over max_body (N bytes)" with its status and request id, res
   attached, no outcome (the exchange's outcome rule gives it).  Always -1. */
int mapi_refuse_body(mapi_response *res, size_t max_body, mapi_error *err);
/* The titles of those two refusals, written into buf (64 bytes): "response
   headers over N bytes", "body over max_body (N bytes)".  Return buf. */
const char *mapi_head_over_title(char buf[64]);
const char *mapi_body_over_title(char buf[64], size_t max_body);
/* An answer whose head passed MAPI_MAX_HEADER_BYTES, whichever transport
   read it: refused as mapi_refuse_head, "response headers over N bytes".
   Always -1. */
int mapi_refuse_head_over(mapi_response *res, mapi_error *err);
/* The framing rule applied to a whole answer to method (any transport's):
   0 when it holds; else -1 with err: a head over the cap (head_bytes, else
   the fields counted as "name: value" lines) as mapi_refuse_head_over, a
   refused head as mapi_refuse_head, a
   body longer than its Content-Length as DECODE (res attached), a shorter
   one as TRANSPORT "body cut short" (retryable, outcome UNKNOWN, res
   freed).  HEAD answers and 1xx/204/304 have no body to measure. */
int mapi_response_framed(mapi_response *res, const char *method, mapi_error *err);

/* ---- option limits (limits.c): one check per option value, for C and Lua ---- */

/* The defaults of the options (mapi_config_init; core.defaults for Lua),
   written once: seconds, retries, bytes, nesting levels. */
#define MAPI_DEFAULT_TIMEOUT 30.0
#define MAPI_DEFAULT_CONNECT_TIMEOUT 10.0
#define MAPI_DEFAULT_MAX_RETRIES 2
#define MAPI_DEFAULT_MAX_BODY ((size_t)16 * 1024 * 1024)
#define MAPI_DEFAULT_MAX_DEPTH 64
/* Not an option: the cap of a response's header lines together, interim
   ones included, whatever reads them (mapi_refuse_head_over; core.defaults
   for the cosocket transport, which stops reading past it). */
#define MAPI_MAX_HEADER_BYTES (256 * 1024)

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

/* ---- URLs (url.c) ---- */

/* Appends s percent-encoded: RFC 3986 unreserved bytes (A-Z a-z 0-9 - . _ ~)
   as they are, every other byte as %XX (upper-case hex).  0 or -1 (oom). */
int mapi_url_encode(mapi_buf *b, const char *s);
/* The same for the n bytes at s (a NUL among them is %00). */
int mapi_url_encode_n(mapi_buf *b, const char *s, size_t n);
/* The one percent-encoding (as above) of the n bytes at s into out, which
   has room for 3 * n bytes (not NUL-terminated); returns the bytes written.
   core.escape encodes with it too. */
size_t mapi_url_encode_to(char *out, const char *s, size_t n);
/* 1 when host (len bytes, as written in a URL: "[::1]" with brackets) is a
   loopback host: "localhost", an IPv4 address in 127.0.0.0/8, or [::1]. */
int mapi_host_is_loopback(const char *host, size_t len);
/* The origin of an absolute URL (len bytes): "scheme://[userinfo@]host
   [:port]..." -- the scheme and host as written, pointers into url (host: an
   IPv6 address without its brackets), and the port: the URL's own, else the
   scheme's (443 for https, 80 for http, in any case), else 0; -1 when the
   port is not 1 .. 65535; the path up to '?' or '#' without trailing '/'s
   (mapi_base_url_check's rule).  0, or -1 when url has no "scheme://". */
typedef struct {
    const char *scheme, *host, *path;
    size_t scheme_len, host_len, path_len;
    int port;
} mapi_url_origin;
int mapi_url_origin_of(const char *url, size_t len, mapi_url_origin *o);
/*
 * Checks a base URL against the client's rules: scheme https, or http only
 * to a loopback host; a host; no userinfo, query or fragment; no control
 * bytes, spaces or NUL.  On success *out is a copy without trailing '/'
 * (caller frees) and 0 is returned; otherwise -1 with err USAGE (or MEMORY).
 */
int mapi_base_url_check(const char *url, char **out, mapi_error *err);
/* The proxy a client uses, by the rules of mapi_config.proxy (merchantapi.h;
   base_url already checked; "env" read now).  0 with *out the proxy URL to
   use (caller frees) or NULL for none; -1 with err USAGE (the message names
   the option or variable, never its value: it may hold credentials) or
   MEMORY. */
int mapi_proxy_resolve(const char *option, const char *base_url, char **out, mapi_error *err);

/* ---- retries (retry.c) ---- */

/* Seconds to wait before retry number `retry` (0 for the first retry): full
   jitter, u * min(8, 0.5 * 2^retry), with u in [0, 1) from the random hook. */
double mapi_backoff_delay(int retry, double u);
/* A wait before a retry (the exchange's; wait_for_txid's, core.retry_wait):
   retry_after when >= 0, else the backoff of retry number `retry` (0: the
   first): base <= 0, mapi_backoff_delay's; else base * 2^retry at most cap;
   times jitter's u (NULL: 1), which is drawn only for a backoff. */
double mapi_retry_wait(double retry_after, int retry, double base, double cap,
                       mapi_random_fn jitter, void *ctx);
/* A Retry-After value (delta seconds, or an HTTP date compared with `now`) in
   seconds, capped at 60 and never negative; -1 when value is NULL or not
   a valid Retry-After. */
double mapi_retry_after_parse(const char *value, time_t now);
/* The Retry-After of response res (NULL: none) as above, against the time
   now: the one reading of the header for every answer. */
double mapi_response_retry_after(const mapi_response *res);
/* 1 for the statuses a call may retry: 429, 502, 503, 504. */
int mapi_status_retryable(int status);
/* The default deadline of a call (merchantapi.h, mapi_config.deadline): what
   max_retries + 1 attempts of `timeout` seconds and the longest backoff
   before each retry can take together. */
double mapi_default_deadline(double timeout, int max_retries);

/* ---- request headers (headers.c) ---- */

/* 1 when two header names are equal, ASCII case-insensitively. */
int mapi_header_name_equal(const char *a, const char *b);
/* Checks a list of n headers (h may be NULL when n is 0): each by
   mapi_header_check, and no name twice.  0, or -1 with err USAGE. */
int mapi_headers_check(const mapi_header_field *h, size_t n, mapi_error *err);
/* A new list: copies of base's headers whose names own does not hold, then
   copies of own's (free with mapi_headers_free; NULL and 0 when both are
   empty).  0, or -1 when out of memory. */
int mapi_headers_merge(const mapi_header_field *base, size_t nbase,
                       const mapi_header_field *own, size_t nown, mapi_header_field **out,
                       size_t *nout);
/* Frees a list made by mapi_headers_merge (its strings too).  NULL ignored. */
void mapi_headers_free(mapi_header_field *h, size_t n);
/* The JSON:API media type: sent as Content-Type and Accept, and an answer's
   (with application/json) read as JSON (mapping.c). */
#define MAPI_MEDIA_TYPE "application/vnd.api+json"
/* The headers every request carries, in order, over any transport:
   Content-Type and Accept application/vnd.api+json, Authorization (when
   authorization, "Bearer <key>", is not NULL), User-Agent.  Fills names and
   values (room for MAPI_BASE_HEADERS, borrowed) and returns how many. */
#define MAPI_BASE_HEADERS 4
size_t mapi_base_headers(const char *authorization, const char *user_agent,
                         const char **names, const char **values);
/* "Bearer <api_key>" (caller frees with mapi_wipe_free); NULL for no key or
   when out of memory. */
char *mapi_bearer(const char *api_key);
/* "merchantapi/<v> libcurl/<curl_version>[ <product>]"; NULL when out of memory. */
char *mapi_user_agent(const char *product, const char *curl_version);

/* ---- a request: what one attempt sends, whatever moves it ---- */

/* One attempt's request as the exchange hands it out (mapi_exchange_request)
   and a transport sends it (http.h: mapi_http_perform, mapi_http_loop_add).
   Borrowed from the exchange until its next attempt begins. */
typedef struct mapi_attempt_request {
    const char *method;     /* "GET", "PUT", ... */
    const char *url;        /* full URL, already percent-encoded */
    const char *body;       /* NULL for none */
    size_t body_len;
    int fresh_connection;   /* 1: a request that may move money: HTTP/1.1 on a connection of
                               its own, never resent by the transport (any method but GET/HEAD
                               gets that anyway) */
    int http1;              /* 1: over HTTP/1.1, never multiplexed: the attempt after one whose
                               resend the transport stopped (MAPI_ENDED_RESEND_STOPPED) */
    const mapi_header_field *headers; /* the caller's own, sent after the client's */
    size_t nheaders;
    double timeout;         /* seconds for this request (the deadline may cut it); <= 0: the
                               client's timeout */
} mapi_attempt_request;

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

/* ---- error documents (error_doc.c) ---- */

/* Fills err->errors / nerrors from an errors[] array value, and code,
   title, detail, pointer from its first entry, and amount/minimum/maximum
   from the first amount_below_minimum / amount_above_maximum entry whose
   detail parses.  Sets kind API.  0, or -1 when out of memory. */
int mapi_error_from_errors(mapi_error *err, const mapi_value *errors);
/* mapi_doc_error's rule (merchantapi.h: "is this an error document"), for
   the client's mapping of every response (mapping.c) too: status is the
   HTTP status the document came with (0: none, as mapi_doc_error).  A
   list's meta is not read (its counts: the list calls', mapping.c).  Under
   a non-2xx status errors with primary data is API (status and errors
   agree on a failure); the DECODE of both keeps errors[] only (no code,
   title, detail, pointer). */
int mapi_doc_error_rule(const mapi_doc *doc, int status, mapi_error *err);
/* Parses a limit detail "amount: 5.5, minimum: 10.0" (or "maximum: ..."):
   each out pointer (may be NULL) gets a new string with the exact decimal
   text of that member, or NULL when the member is absent.  0, or -1 when
   out of memory (all outputs NULL then). */
int mapi_limit_detail_parse(const char *detail, char **amount, char **minimum,
                            char **maximum);

/* ---- the service's rules: the endpoint table and the builders (calls.h) ---- */

#include "calls.h"

/* ---- mapping responses to results (mapping.c) ---- */

/* 1 when a Content-Type is application/vnd.api+json or application/json
   (case-insensitive, parameters allowed). */
int mapi_media_type_is_json(const char *content_type);
/* Maps one response of call k: 0 with *out (a document that owns res), or
   -1 with *e filled (kind, status, request_id, retry_after, retryable;
   e->response owns res or a copy of it).  The outcome is the exchange's. */
int mapi_map_response(const mapi_call *k, mapi_response *res, int max_depth, mapi_doc **out,
                      mapi_error *e);

/* ---- one call across its attempts, without I/O (exchange.h) ---- */

#include "exchange.h"

/* ---- the attempt record and W3C trace context (attempt.h) ---- */

#include "attempt.h"
#include "metrics.h"

/* The HTTP layer (http.h) is not included here: the exchange above and it
   are siblings that do not know each other; the drivers below include it. */

/* ---- the client and its blocking driver (client.c) ---- */

/* Runs the built call k with the client's retry rules over libcurl (the
   blocking driver), and releases k (mapi_call_release); on failure err gets
   attempts, method, url, message, and the api key redacted. */
int mapi_client_run(mapi_client *c, mapi_call *k, mapi_doc **out, mapi_error *err);
/* An exchange for the built call k with the client's settings and random
   hook (what every driver runs: the blocking loop, pages.c, a Lua
   transport); NULL with err MEMORY.  k is copied: release it after. */
mapi_exchange *mapi_client_prepare(mapi_client *c, const mapi_call *k, mapi_error *err);
/* How an attempt over libcurl ended, in the exchange's terms: rc and e as
   mapi_http_perform or mapi_http_transfer_result gave them (0: an answer;
   -1: e, a resend libcurl was stopped from making told apart by
   mapi_http_is_stopped_resend).  The one reading of libcurl's result, for
   the blocking driver and the loop's. */
mapi_ended mapi_client_http_ended(int rc, const mapi_error *e);
/* The client's observer, when one is set (for drivers other than client.c's). */
void mapi_client_observe(const mapi_client *c, mapi_attempt_event ev,
                         const mapi_attempt_info *info);
/* calls.c's builders (mapi_call_build_*) for client c, its mapi_call_base. */
int mapi_call_endpoint(mapi_client *c, const mapi_endpoint *e, const char *id,
                       const mapi_page_params *p, const mapi_call_opts *opts, mapi_call *k,
                       mapi_error *err);
int mapi_call_request(mapi_client *c, const char *method, const char *path_and_query,
                      const char *body, size_t body_len, const mapi_request_opts *opts,
                      mapi_call *k, mapi_error *err);
/* c's base URL, checked, without trailing '/'s; owned by c. */
const char *mapi_client_base_url(const mapi_client *c);
/* The calls built for c: a test hook (built once, whatever drives it). */
unsigned long mapi_client_calls_built(const mapi_client *c);
/* Replace a client's hooks; fn NULL restores the default.  Tests use them to
   avoid real waits; an event-loop binding may plug a non-blocking sleep. */
void mapi_client_set_sleep(mapi_client *c, mapi_sleep_fn fn, void *ctx);
void mapi_client_set_random(mapi_client *c, mapi_random_fn fn, void *ctx);

/* What other drivers (pages.c) need of a client: borrowed, valid while the
   client lives. */
typedef struct mapi_client_parts {
    struct mapi_http *http;
    mapi_sleep_fn sleep;
    void *sleep_ctx;
} mapi_client_parts;
void mapi_client_parts_get(mapi_client *c, mapi_client_parts *out);

/* ---- calls driven by an event loop (loop.c) ---- */

/* One pass of mapi_loop_step_budget with a budget of the caller's (started
   with mapi_budget_start; NULL: none), so that the caller can read what the
   step spent (mapi_budget_spent: lua_loop.c, whose tasks share the budget).
   With b->wait, a timeout other than 0 becomes the time b has left when
   that is shorter (mapi_budget_left): lua_loop.c makes its passes so, the
   tasks resumed between them (mapi_loop_step_within, for C). */
int mapi_loop_step_in(mapi_loop *l, double timeout, mapi_budget *b);

/* From inside a step of l (a callback or an observer it calls), for a
   caller that frees l once the step has returned (lua_loop.c: loop:close()
   from a hook): the step begins nothing more -- no attempt (an attempt
   whose REQUEST observer made this call is not sent), no wait -- and
   returns once what it has read is reported; new calls are refused (USAGE,
   "the loop is being freed").  Outside a step: nothing. */
void mapi_loop_stop(mapi_loop *l);

/* Runs exchange x (prepared by mapi_client_prepare) of client c on loop l:
   each attempt a transfer of the loop, the waits between attempts timers of
   the loop, every decision x's.  owns: 1 when the loop frees x once done.
   observer NULL: the client's (mapi_client_observe); else this one for
   every attempt of this call.  0: done(ctx, doc, err) is called exactly
   once, from mapi_loop_step or mapi_loop_free; -1 with err (MEMORY, USAGE
   for a loop being freed), done never called (x freed when owned). */
int mapi_loop_run_exchange(mapi_loop *l, mapi_client *c, mapi_exchange *x, int owns,
                           mapi_observer_fn observer, void *observer_ctx,
                           mapi_loop_done_fn done, void *ctx, mapi_error *err);

/* A loop over io, an HTTP loop it does not own (a client's,
   mapi_http_client_loop: the pages run on the client's connections);
   mapi_loop_free leaves io as it is, with no transfer on it.  NULL with err
   (MEMORY). */
struct mapi_http_loop;
mapi_loop *mapi_loop_over(struct mapi_http_loop *io, mapi_error *err);

/* One attempt of a call on a loop, for a driver that decides its own waits
   (pages.c: the retry rounds).  The handle of a call not yet reported. */
typedef struct mapi_loop_op mapi_loop_op;
/* An attempt's end as exchange x decided it (mapi_exchange_end_attempt): step DONE
   with doc (the callee's), RETRY with wait (seconds) and e this attempt's
   error, FAILED with e the call's final error.  e may be moved out (reset
   it to MAPI_ERROR_INIT then); the loop clears what is left. */
typedef void (*mapi_loop_attempt_fn)(void *ctx, mapi_step step, mapi_doc *doc, double wait,
                                     mapi_error *e);
/* Begins the next attempt of exchange x (not owned: it must outlive the
   call) of client c at l's next step, as x hands it out
   (mapi_exchange_request: over HTTP/1.1 after a stopped resend).  The exchange
   decides as in mapi_loop_run_exchange (a confirm's settling read
   included), except that a retry is not waited for: attempt(ctx, ...) is
   called once, from mapi_loop_step or mapi_loop_free.  0 with *out, or -1
   with err (MEMORY, USAGE for a loop being freed): no attempt began. */
int mapi_loop_attempt(mapi_loop *l, mapi_client *c, mapi_exchange *x,
                      mapi_loop_attempt_fn attempt, void *ctx, mapi_loop_op **out,
                      mapi_error *err);
/* A timer of loop l (a task's sleep, lua_loop.c): done(ctx, NULL, err
   empty) is called once, from the first mapi_loop_step at or after
   `seconds` from now (or from mapi_loop_free), like a call's end; a timer
   is not a call for a budget's max_calls.  0, or -1 with err (MEMORY,
   USAGE for a loop being freed). */
int mapi_loop_timer(mapi_loop *l, double seconds, mapi_loop_done_fn done, void *ctx,
                    mapi_error *err);
/* Drops the call o of l before its callback (a transfer under way is
   abandoned): the callback is never called.  Not for a call being
   reported (from inside its own callback). */
void mapi_loop_cancel(mapi_loop *l, mapi_loop_op *o);

/* ---- a list's pages at once: the page batch (pages.c) ---- */

/* The pages first_page .. first_page + count - 1 of a list, the policy every
   driver follows (pages.c's header).  _new: the arguments checked once, every
   page's exchange prepared; NULL with err (USAGE, MEMORY).  _next: the page
   to start now (its index i), or -1 (the window is full, a page failed
   before those left, or none is left); *x its exchange, handed over (the
   driver frees it), NULL when it starts again (a retry round).  _find: the
   index of a page in flight by its exchange, or -1.  _ended: page i ended
   with doc (taken) or *e its final error (moved); dropped after a failed
   page.  _kept: how many pages are kept (those before the first that did not
   come), *err that page's error when it failed (borrowed), else NULL; _doc:
   kept page k's document (the caller may take it: NULL it).  _run: the
   libcurl driver (-1 with err when its loop cannot be made). */
typedef struct mapi_page_batch mapi_page_batch;
mapi_page_batch *mapi_page_batch_new(mapi_client *client, const char *account_id,
                                     const mapi_page_params *base, long first_page,
                                     size_t count, size_t concurrency,
                                     const mapi_call_opts *opts, mapi_error *err);
void mapi_page_batch_free(mapi_page_batch *b);
long mapi_page_batch_next(mapi_page_batch *b, mapi_exchange **x);
long mapi_page_batch_find(const mapi_page_batch *b, const mapi_exchange *x);
void mapi_page_batch_ended(mapi_page_batch *b, size_t i, mapi_doc *doc, mapi_error *e);
size_t mapi_page_batch_kept(const mapi_page_batch *b, mapi_error **err);
mapi_doc **mapi_page_batch_doc(mapi_page_batch *b, size_t k);
int mapi_page_batch_run(mapi_page_batch *b, mapi_error *err);

#endif /* MAPI_INTERNAL_H */

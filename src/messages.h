/*
 * messages.h -- internal: HTTP messages (floor 40 of docs/architecture.md's
 * "The layers"), what every transport shares: a response (response.c), the
 * one framing rule (framing.c), URLs (url.c), request headers (headers.c),
 * and what one attempt sends (mapi_attempt_request).  The HTTP/1.1 reader
 * of the same floor is h1_reader.h.  Includes only base.h and json_parse.h
 * (a body keeps the JSON reader's padding, MAPI_JSON_PADDING), below it.
 */
#ifndef MAPI_MESSAGES_H
#define MAPI_MESSAGES_H

#include <stddef.h>
#include <time.h>

#include "base.h"
#include "json_parse.h"

/* ---- responses (response.c; the type: base.h) ---- */

/* Frees a response; NULL ignored. */
void mapi_response_free(mapi_response *res);

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

/* Not an option: the cap of a response's header lines together, interim
   ones included, whatever reads them (mapi_refuse_head_over; core.defaults
   for the cosocket transport, which stops reading past it). */
#define MAPI_MAX_HEADER_BYTES (256 * 1024)

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

#endif /* MAPI_MESSAGES_H */

/*
 * base.h -- internal: the base layer (floor 10 of docs/architecture.md's
 * "The layers"), below every other: growable strings (buf.c), strings
 * copied (strdup.c), the error type and its message (error.c), the one
 * redaction of the key (redact.c), the options' defaults, the response
 * type the redaction reads; with memory.h (memory.c), clock.h (clock.c,
 * random.c) and budget.h (budget.c), which it includes.  It includes no
 * header of a layer above (scripts/layers checks every include).  Not
 * installed; every symbol hidden (-fvisibility=hidden).
 */
#ifndef MAPI_BASE_H
#define MAPI_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "merchantapi.h"
#include "memory.h"
#include "clock.h"
#include "budget.h"

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

/* ---- the options' defaults ---- */

/* The defaults of the options (mapi_config_init; core.defaults for Lua),
   written once: seconds, retries, bytes, nesting levels. */
#define MAPI_DEFAULT_TIMEOUT 30.0
#define MAPI_DEFAULT_CONNECT_TIMEOUT 10.0
#define MAPI_DEFAULT_MAX_RETRIES 2
#define MAPI_DEFAULT_MAX_BODY ((size_t)16 * 1024 * 1024)
#define MAPI_DEFAULT_MAX_DEPTH 64

/* ---- responses: the type (response.c builds, http.c fills, the rest read;
   here for the redaction, redact.c: the functions are in messages.h) ---- */

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

/* ---- strings copied (strdup.c); errors (error.c); the one redaction (redact.c) ---- */

/* strdup / strndup that return NULL for NULL (or when out of memory). */
char *mapi_strdup(const char *s);
char *mapi_strndup(const char *s, size_t n);
/* a[0..alen) and b[0..blen) copied into one block, each NUL-terminated:
   the block (a's copy; free it, and so both), *second b's copy; NULL (and
   *second NULL) when out of memory. */
char *mapi_strpair(const char *a, size_t alen, const char *b, size_t blen, char **second);
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

#endif /* MAPI_BASE_H */

/*
 * h1_reader.h -- one HTTP/1.1 response reader for every transport the
 * library drives itself other than libcurl (today the OpenResty cosocket
 * transport, through core.h1_reader: lua_h1_reader.c).  Internal: nothing of
 * it is in merchantapi.h.
 *
 * Bytes are fed as they arrive, in pieces of any size; the reader keeps
 * only the head's fields and the body.  llhttp reads the status line and
 * the header lines (docs/decisions.md: "One HTTP/1.1 reader"); the body is
 * framed by framing.c's rule and read here (a length, chunks, or up to the
 * close).  Every cap is counted as the bytes arrive, so a hostile server
 * makes the reader hold at most about max_body + MAPI_MAX_HEADER_BYTES:
 *   - the head (interim 1xx heads and a chunked body's trailers counted
 *     with it): MAPI_MAX_HEADER_BYTES, refused as DECODE "response headers
 *     over N bytes";
 *   - one line of a head: MAPI_H1_MAX_LINE (libcurl's CURL_MAX_HTTP_HEADER),
 *     refused as DECODE "response header line too long";
 *   - a chunk-size line: at most 16 hex digits (libcurl's), the line
 *     MAPI_H1_MAX_CHUNK_LINE bytes; TRANSPORT past either;
 *   - the body: max_body, DECODE "body over max_body (N bytes)".
 * The answers are the ones libcurl's path gives for the same bytes (kind,
 * outcome, title): framing.c's refusals, and libcurl's own titles for the
 * transport failures (a bad chunk, a body cut short).
 */
#ifndef MAPI_H1_READER_H
#define MAPI_H1_READER_H

#include <stddef.h>

#include "messages.h"

/* libcurl's cap of one header line (CURL_MAX_HTTP_HEADER), in bytes */
#define MAPI_H1_MAX_LINE (100 * 1024)
/* the cap of a chunk-size line (digits, extensions, line end), in bytes */
#define MAPI_H1_MAX_CHUNK_LINE 4096

typedef enum mapi_h1_state {
    MAPI_H1_MORE = 0, /* the answer is not complete: feed more bytes */
    MAPI_H1_DONE = 1, /* the answer is complete (mapi_h1_result gives it) */
    MAPI_H1_ENDED = 2 /* refused or failed: read no more (mapi_h1_result gives the error) */
} mapi_h1_state;

typedef struct mapi_h1_reader mapi_h1_reader;

/* A reader of the answer to one request; head_only: the request was a HEAD
   (no body follows the head).  max_body: bytes of body at most.  NULL when
   out of memory. */
mapi_h1_reader *mapi_h1_reader_new(int head_only, size_t max_body);
/* Makes r, whose answer was taken (mapi_h1_result), a new reader as
   mapi_h1_reader_new(head_only, max_body) makes one (its buffers' room kept,
   up to 4 KiB each):
   0 done, 1 its answer was not taken (r unchanged), -1 out of memory (r
   unchanged). */
int mapi_h1_reader_reset(mapi_h1_reader *r, int head_only, size_t max_body);
/* Frees r and what it holds; NULL ignored. */
void mapi_h1_reader_free(mapi_h1_reader *r);
/* Reads len bytes of the answer (any split: one byte at a time gives the
   same answer as all at once).  Once DONE or ENDED, more bytes are not
   read (a DONE reader's connection is then not kept). */
mapi_h1_state mapi_h1_feed(mapi_h1_reader *r, const char *data, size_t len);
/* The connection closed: DONE when the answer was delimited by the close
   (or already complete), else ENDED (a body cut short, no answer). */
mapi_h1_state mapi_h1_eof(mapi_h1_reader *r);
/* The state the last call left. */
mapi_h1_state mapi_h1_state_of(const mapi_h1_reader *r);
/* 1 when the reader ENDED without an answer (a TRANSPORT failure: a bad
   chunk, the connection closed early), 0 when it refused one (DECODE). */
int mapi_h1_failed(const mapi_h1_reader *r);
/* 1 when the connection may carry another request: DONE, HTTP/1.1, no
   "Connection: close", a body not delimited by the close, and no byte
   after the answer. */
int mapi_h1_keep_alive(const mapi_h1_reader *r);
/* The answer read so far (status 0 before the status line; headers and
   body as far as read), owned by r; NULL once taken by mapi_h1_result. */
const mapi_response *mapi_h1_response(const mapi_h1_reader *r);
/* The title of why the reader ENDED, or NULL. */
const char *mapi_h1_title(mapi_h1_reader *r);
/* The answer, once DONE: 0 with *out (taken: the caller frees it; framed,
   head_bytes counted).  Once ENDED, or when the answer is not complete:
   -1 with err as libcurl's path gives it (mapi_refuse_head and friends
   with the head attached, or TRANSPORT with outcome UNKNOWN, retryable).
   Once only: later calls give MEMORY "the answer was already taken". */
int mapi_h1_result(mapi_h1_reader *r, mapi_response **out, mapi_error *err);

#endif

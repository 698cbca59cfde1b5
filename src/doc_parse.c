/*
 * doc_parse.c -- a body read into a JSON:API document (doc.h): the JSON
 * reader's failures told in words, the index built (doc_index.c), then the
 * relationships resolved (doc_resolve.c), the document freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"

#define ARENA_CHUNK_MAX ((size_t)64 << 10)

/* ---- parsing ---- */

/* The value of the four hex digits at s, or -1. */
static long hex4(const char *s)
{
    long v = 0;
    int i, d;

    for (i = 0; i < 4; i++) {
        if ((d = mapi_hex_digit((unsigned char)s[i])) < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* 1 when the \u escape at s (avail bytes left) is a lone surrogate: a low
   half, or a high half without the \u escape of a low half after it.
   simdjson refuses those but does not say which escape was wrong: the
   message names it (docs/decisions.md). */
static int lone_surrogate(const char *s, size_t avail)
{
    long hi = avail >= 6 ? hex4(s + 2) : -1, lo;

    if (hi < 0xD800 || hi > 0xDFFF)
        return 0;
    if (hi >= 0xDC00)
        return 1;
    lo = avail >= 12 && s[6] == '\\' && s[7] == 'u' ? hex4(s + 8) : -1;
    return lo < 0xDC00 || lo > 0xDFFF;
}

static int json_error(mapi_json_status st, const mapi_json_result *jr, const char *buf,
                      size_t len, int max_depth, mapi_error *err)
{
    size_t at = jr->offset;
    char q[QUOTED_MAX];

    switch (st) {
    case MAPI_JSON_MEMORY:
        return mapi_error_oom(err);
    case MAPI_JSON_TOO_LARGE:
        return mapi_error_set(err, MAPI_ERR_DECODE, "document too large (%zu bytes)", len);
    case MAPI_JSON_EOF:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: unexpected end of input");
    case MAPI_JSON_UTF8:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid utf-8 string");
    case MAPI_JSON_CONTROL:
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "invalid JSON: a control character (U+0000 to U+001F) "
                              "unescaped in a string");
    case MAPI_JSON_STRING: {
        /* simdjson does not say which escape: a lone surrogate gets its own words */
        size_t i;
        if (at < len)
            for (i = at + 1; i + 1 < len && buf[i] != '"'; i++) {
                if (buf[i] != '\\')
                    continue;
                if (buf[i + 1] == 'u' && lone_surrogate(buf + i, len - i))
                    return mapi_error_set(err, MAPI_ERR_DECODE,
                                          "invalid JSON: \\u escape of a lone surrogate");
                i++;
            }
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid escape in a string");
    }
    case MAPI_JSON_NUMBER:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid number at byte %zu",
                              at);
    case MAPI_JSON_LITERAL:
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "invalid JSON: unexpected literal at byte %zu (not true, false, "
                              "null, a number, string, array or object)", at);
    case MAPI_JSON_TRAILING:
        if (at < len && ((buf[at] >= 'a' && buf[at] <= 'z') || (buf[at] >= 'A' && buf[at] <= 'Z')))
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "invalid JSON: unexpected literal after the document "
                                  "(byte %zu)", at);
        return mapi_error_set(err, MAPI_ERR_DECODE,
                              "invalid JSON: unexpected content after the document (byte %zu)",
                              at);
    case MAPI_JSON_DEPTH:
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: nested deeper than %d",
                              max_depth);
    case MAPI_JSON_DUPLICATE:
        mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: duplicate member name");
        if (err && err->kind == MAPI_ERR_DECODE && jr->dup) {
            err->detail = mapi_strdup(mapi_doc_quoted(jr->dup->s, jr->dup->len, q));
            if (!err->detail || mapi_error_message(err) != 0)
                return mapi_error_oom(err);
        }
        return -1;
    case MAPI_JSON_SYNTAX:
    case MAPI_JSON_OK:
    default:
        if (at < len)
            return mapi_error_set(err, MAPI_ERR_DECODE,
                                  "invalid JSON: unexpected character at byte %zu", at);
        return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: misplaced ',', ':' or bracket");
    }
}

static void doc_free(void *d)
{
    mapi_doc_free(d);
}

/* A zeroed document that the layers below free through its owned header
   (an error's payout), or NULL when out of memory. */
static mapi_doc *doc_new(void)
{
    mapi_doc *d = calloc(1, sizeof *d);

    if (d)
        d->owned.free_fn = doc_free;
    return d;
}

/* A new document of body[0..len) in *out.  inplace (body itself, with
   MAPI_JSON_PADDING bytes of its own after it): read where it is, and left
   unchanged (string values are copied); else read from a copy of body that
   the document keeps its strings in (one memcpy). */
static int new_document(const char *body, char *inplace, size_t len, int max_depth,
                        mapi_doc **out, mapi_error *err)
{
    mapi_doc *d = doc_new();
    char *buf = inplace;
    mapi_json_result jr;
    mapi_json_status st;

    if (!d)
        return mapi_error_oom(err);
    if (!inplace) {
        buf = d->copy = mapi_block_take(len + MAPI_JSON_PADDING, &d->copy_size);
        if (buf && len)
            memcpy(buf, body, len);
    }
    if (!buf) {
        mapi_doc_free(d);
        return mapi_error_oom(err);
    }
    if (max_depth <= 0)
        max_depth = MAPI_DEFAULT_MAX_DEPTH;
    if (max_depth > MAPI_JSON_MAX_DEPTH)
        max_depth = MAPI_JSON_MAX_DEPTH;
    /* the texts have a block of the body's size; the values take about as
       much again, in chunks of a quarter of the body, at most 64 KiB (what
       the last one leaves unused is what is lost) */
    mapi_arena_init(&d->arena, len / 4 < ARENA_CHUNK_MAX ? len / 4 : ARENA_CHUNK_MAX);
    st = mapi_json_parse(buf, len, inplace ? NULL : body, max_depth, &d->arena, &jr);
    if (st == MAPI_JSON_OK) {
        d->root_node = jr.root;
        d->root = &d->root_node;
        d->nnames = jr.names;
    }
    if (st != MAPI_JSON_OK ? json_error(st, &jr, body, len, max_depth, err) != 0
                           : mapi_doc_build(d, err) != 0 || mapi_doc_resolve_all(d, err) != 0) {
        mapi_doc_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

int mapi_doc_parse_ex(const char *body, size_t len, int max_depth, mapi_doc **out,
                      mapi_error *err)
{
    mapi_error_clear(err);
    if (out)
        *out = NULL;
    if (!out || (!body && len))
        return mapi_error_set(err, MAPI_ERR_USAGE, "mapi_doc_parse: body and out are required");
    if (len > ((size_t)-1) - MAPI_JSON_PADDING - 1)
        return mapi_error_set(err, MAPI_ERR_DECODE, "document too large (%zu bytes)", len);
    return new_document(body, NULL, len, max_depth, out, err);
}

int mapi_doc_parse(const char *body, size_t len, mapi_doc **out, mapi_error *err)
{
    return mapi_doc_parse_ex(body, len, MAPI_DEFAULT_MAX_DEPTH, out, err);
}

int mapi_doc_from_response(mapi_response *res, int max_depth, mapi_doc **out, mapi_error *err)
{
    int rc;

    mapi_error_clear(err);
    *out = NULL;
    /* a body received with room for the reader is read in place (it stays
       as mapi_response_body hands it out) */
    if (res->body && res->cap >= res->len + MAPI_JSON_PADDING)
        rc = new_document(res->body, res->body, res->len, max_depth, out, err);
    else
        rc = mapi_doc_parse_ex(res->body, res->len, max_depth, out, err);
    if (rc != 0) {
        if (err) {
            mapi_owned_free(err->response);
            err->response = res;
            err->status = res->status;
        } else {
            mapi_owned_free(res);
        }
        return -1;
    }
    (*out)->response = res;
    return 0;
}

int mapi_doc_from_empty_response(mapi_response *res, mapi_doc **out, mapi_error *err)
{
    mapi_doc *d = doc_new();

    if (!d) {
        mapi_owned_free(res);
        return mapi_error_oom(err);
    }
    d->response = res;
    *out = d;
    return 0;
}

void mapi_doc_free(mapi_doc *d)
{
    if (!d)
        return;
    mapi_owned_free(d->response); /* its maker's free: a document knows no response.c */
    mapi_arena_free(&d->arena);
    mapi_block_give(d->copy, d->copy_size);
    free(d);
}

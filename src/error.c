/*
 * error.c -- filling a mapi_error: clearing, kind and outcome names, the
 * one-line message.  (Keeping the api key out of every field: redact.c;
 * error documents and limit details: error_doc.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* The path and query of an absolute URL ("/api/...?.."), borrowed from url;
   "/" when it has none (for messages). */
static const char *url_path(const char *url)
{
    const char *p = strstr(url, "://");
    const char *slash;

    if (!p)
        return url;
    slash = strchr(p + 3, '/');
    return slash ? slash : "/";
}

/* Longest title/detail/path copied into a message, in bytes. */
#define MESSAGE_PART_MAX 400

void mapi_error_clear(mapi_error *err)
{
    size_t i;

    if (!err)
        return;
    free(err->code);
    free(err->title);
    free(err->detail);
    free(err->pointer);
    for (i = 0; i < err->nerrors; i++) {
        free(err->errors[i].code);
        free(err->errors[i].title);
        free(err->errors[i].detail);
        free(err->errors[i].pointer);
    }
    free(err->errors);
    free(err->amount);
    free(err->minimum);
    free(err->maximum);
    free(err->method);
    free(err->url);
    free(err->request_id);
    free(err->message);
    free(err->payout_status);
    /* freed through the functions their makers installed: the error type
       calls nothing above it */
    mapi_owned_free(err->response);
    mapi_owned_free(err->payout);
    if (err->settle_error) {
        mapi_error_clear(err->settle_error);
        free(err->settle_error);
    }
    memset(err, 0, sizeof *err);
    err->retry_after = -1.0; /* as MAPI_ERROR_INIT: "absent" */
}

const char *mapi_error_kind_name(mapi_error_kind kind)
{
    switch (kind) {
    case MAPI_ERR_API: return "api";
    case MAPI_ERR_HTTP: return "http";
    case MAPI_ERR_TRANSPORT: return "transport";
    case MAPI_ERR_DECODE: return "decode";
    case MAPI_ERR_USAGE: return "usage";
    case MAPI_ERR_TIMEOUT: return "timeout";
    case MAPI_ERR_MEMORY: return "memory";
    case MAPI_ERR_NONE: break;
    }
    return "";
}

const char *mapi_outcome_name(mapi_outcome outcome)
{
    switch (outcome) {
    case MAPI_OUTCOME_NOT_SENT: return "not_sent";
    case MAPI_OUTCOME_UNKNOWN: return "unknown";
    case MAPI_OUTCOME_REJECTED: return "rejected";
    case MAPI_OUTCOME_NONE: break;
    }
    return "";
}

int mapi_error_oom(mapi_error *err)
{
    if (!err)
        return -1;
    mapi_error_clear(err);
    err->kind = MAPI_ERR_MEMORY;
    /* Both may fail too; the kind alone still tells what happened. */
    err->title = mapi_strdup("out of memory");
    err->message = mapi_strdup("merchantapi: memory: out of memory");
    return -1;
}

int mapi_error_set(mapi_error *err, mapi_error_kind kind, const char *fmt, ...)
{
    va_list ap;
    mapi_buf title;

    if (!err)
        return -1;
    mapi_error_clear(err);
    mapi_buf_init(&title);
    va_start(ap, fmt);
    mapi_buf_vprintf(&title, fmt, ap);
    va_end(ap);
    err->title = mapi_buf_take(&title);
    if (!err->title)
        return mapi_error_oom(err);
    err->kind = kind;
    if (mapi_error_message(err) < 0)
        return mapi_error_oom(err);
    return -1;
}

/* ---- the message ---- */

/* Appends s as one clean line part: control bytes become spaces, and text
   past max bytes is cut at a UTF-8 character boundary and marked "...". */
static void append_clean(mapi_buf *b, const char *s, size_t max)
{
    size_t n = strlen(s);
    int cut = 0;

    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--; /* do not split a multi-byte character */
        cut = 1;
    }
    if (mapi_buf_reserve(b, n + 3) < 0)
        return;
    mapi_buf_append(b, s, n);
    mapi_blank_controls(b->data + b->len - n, n);
    if (cut)
        mapi_buf_puts(b, "...");
}

/* A confirm's error with the payout its settling read found (err->payout,
   outcome UNKNOWN: mapi_confirm_payout's "Settling"): the status the read
   showed (err->payout_status, copied by the exchange that attached the
   payout), after the call's part. */
static void payout_status(mapi_buf *b, const char *status)
{
    if (!status)
        return;
    mapi_buf_puts(b, "; the payout read after it shows status \"");
    append_clean(b, status, MESSAGE_PART_MAX);
    mapi_buf_puts(b, "\"");
}

int mapi_error_message(mapi_error *err)
{
    mapi_buf b;

    free(err->message);
    err->message = NULL;
    mapi_buf_init(&b);
    mapi_buf_puts(&b, "merchantapi: ");
    if (err->kind == MAPI_ERR_API) {
        if (err->status)
            mapi_buf_printf(&b, "%d ", err->status);
        if (err->code) {
            append_clean(&b, err->code, MESSAGE_PART_MAX);
            if (err->title)
                mapi_buf_puts(&b, ": ");
        }
        if (err->title)
            append_clean(&b, err->title, MESSAGE_PART_MAX);
        else if (!err->code)
            mapi_buf_puts(&b, "error");
    } else if (err->kind == MAPI_ERR_HTTP) {
        if (err->title)
            append_clean(&b, err->title, MESSAGE_PART_MAX);
        else
            mapi_buf_printf(&b, "HTTP %d", err->status);
    } else {
        const char *kind = mapi_error_kind_name(err->kind);
        mapi_buf_printf(&b, "%s: ", *kind ? kind : "error");
        append_clean(&b, err->title ? err->title : "error", MESSAGE_PART_MAX);
    }
    if (err->detail && *err->detail) {
        mapi_buf_puts(&b, " (");
        append_clean(&b, err->detail, MESSAGE_PART_MAX);
        mapi_buf_puts(&b, ")");
    }
    if (err->method || err->url) {
        mapi_buf_puts(&b, " [");
        if (err->method) {
            append_clean(&b, err->method, 16);
            if (err->url)
                mapi_buf_puts(&b, " ");
        }
        if (err->url)
            append_clean(&b, url_path(err->url), 2 * MESSAGE_PART_MAX);
        mapi_buf_puts(&b, "]");
    }
    payout_status(&b, err->payout_status);
    err->message = mapi_buf_take(&b);
    return err->message ? 0 : -1;
}

int mapi_error_transport(mapi_error *err, const char *title, const char *detail,
                         const char *request_id, mapi_outcome outcome)
{
    mapi_error_set(err, MAPI_ERR_TRANSPORT, "%s", title);
    if (!err || err->kind != MAPI_ERR_TRANSPORT)
        return -1; /* (no error to fill, or out of memory) */
    err->retryable = 1;
    err->outcome = outcome;
    err->detail = detail ? mapi_strdup(detail) : NULL;
    err->request_id = request_id ? mapi_strdup(request_id) : NULL;
    if ((detail && !err->detail) || (request_id && !err->request_id) ||
        mapi_error_message(err) < 0)
        return mapi_error_oom(err);
    return -1;
}

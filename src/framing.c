/*
 * framing.c -- the one rule for how a response's body is framed, used by
 * every transport: libcurl (http.c, while it reads the head), the OpenResty
 * cosocket transport (core.framing, before it reads a body) and any answer
 * a Lua transport hands the exchange (mapi_response_framed, exchange.c).
 *
 * Refused, as DECODE with the head kept (outcome UNKNOWN for a confirm):
 *   - Content-Length values that disagree, or one that is not a number
 *     (RFC 9110 8.6: a list of equal numbers, "5, 5", is one length);
 *   - Content-Length together with Transfer-Encoding (RFC 9112 6.3: the
 *     framing is ambiguous, the mark of request smuggling);
 *   - a Transfer-Encoding other than one "chunked" (this client asks for no
 *     coding: gzip, a coding twice or an unknown one cannot be read).
 * A body shorter than its Content-Length is a TRANSPORT error (the
 * connection ended before the body did), never DECODE; longer is DECODE.
 * A head over MAPI_MAX_HEADER_BYTES is refused as DECODE too, however it
 * was read: libcurl's callback and the cosocket transport stop reading past
 * the cap, a Lua transport's headers are counted here.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

void mapi_framing_init(mapi_framing *f)
{
    memset(f, 0, sizeof *f);
}

static int refuse(mapi_framing *f, mapi_framing_fault fault)
{
    if (f->fault == MAPI_FRAMING_OK)
        f->fault = fault;
    return -1;
}

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* The element of a comma-separated field value v[0..len) at *i: returns
   its end, *start its start (spaces around it left out), *i past its comma
   (past len after the last one). */
static size_t list_item(const char *v, size_t len, size_t *i, size_t *start)
{
    size_t end;

    while (*i < len && is_ows(v[*i]))
        (*i)++;
    *start = *i;
    while (*i < len && v[*i] != ',')
        (*i)++;
    end = (*i)++;
    while (end > *start && is_ows(v[end - 1]))
        end--;
    return end;
}

/* One Content-Length value: a comma-separated list of numbers, each equal
   to every one seen before in this head. */
static int content_length(mapi_framing *f, const char *v, size_t len)
{
    size_t i = 0, start, end, k;

    while (i <= len) {
        end = list_item(v, len, &i, &start);
        for (k = start; k < end && v[k] >= '0' && v[k] <= '9'; k++)
            ;
        if (end == start || k < end)
            return refuse(f, MAPI_FRAMING_BAD_LENGTH);
        while (end - start > 1 && v[start] == '0')
            start++;
        if (end - start >= sizeof f->digits) /* far beyond any body we would read */
            return refuse(f, MAPI_FRAMING_BAD_LENGTH);
        if (!f->has_length) {
            memcpy(f->digits, v + start, end - start);
            f->ndigits = end - start;
            f->has_length = 1;
            f->length = 0;
            for (k = start; k < end; k++) /* saturated: at most 23 digits */
                f->length = f->length > (MAPI_FRAMING_LENGTH_MAX - 9) / 10
                                ? MAPI_FRAMING_LENGTH_MAX
                                : f->length * 10 + (unsigned long long)(v[k] - '0');
        } else if (f->ndigits != end - start || memcmp(f->digits, v + start, end - start) != 0) {
            return refuse(f, MAPI_FRAMING_CONFLICT);
        }
    }
    return 0;
}

/* One Transfer-Encoding value: its codings, which with those seen before
   must be exactly one "chunked". */
static int transfer_encoding(mapi_framing *f, const char *v, size_t len)
{
    size_t i = 0, start, end;
    int any = 0;

    while (i <= len) {
        end = list_item(v, len, &i, &start);
        if (end == start)
            continue;
        any = 1;
        if (end - start != 7 || strncasecmp(v + start, "chunked", 7) != 0 || f->chunked)
            return refuse(f, MAPI_FRAMING_CODING);
        f->chunked = 1;
    }
    if (!any)
        return refuse(f, MAPI_FRAMING_CODING);
    f->has_coding = 1;
    return 0;
}

int mapi_framing_field(mapi_framing *f, const char *name, size_t name_len, const char *value,
                       size_t value_len)
{
    int rc = 0;

    if (f->fault != MAPI_FRAMING_OK)
        return -1;
    if (name_len == 14 && strncasecmp(name, "content-length", 14) == 0)
        rc = content_length(f, value, value_len);
    else if (name_len == 17 && strncasecmp(name, "transfer-encoding", 17) == 0)
        rc = transfer_encoding(f, value, value_len);
    else
        return 0;
    if (rc == 0 && f->has_length && f->has_coding)
        return refuse(f, MAPI_FRAMING_BOTH);
    return rc;
}

const char *mapi_framing_title(const mapi_framing *f)
{
    switch (f->fault) {
    case MAPI_FRAMING_CONFLICT:
        return "conflicting Content-Length headers";
    case MAPI_FRAMING_BAD_LENGTH:
        return "invalid Content-Length header";
    case MAPI_FRAMING_BOTH:
        return "Content-Length and Transfer-Encoding together";
    case MAPI_FRAMING_CODING:
        return "unsupported Transfer-Encoding (only chunked)";
    default:
        return NULL;
    }
}

int mapi_framing_response(const mapi_response *res, mapi_framing *f)
{
    size_t i;

    mapi_framing_init(f);
    for (i = 0; i < res->nheaders; i++) {
        const mapi_header *h = &res->headers[i];
        if (mapi_framing_field(f, h->name, strlen(h->name), h->value, strlen(h->value)) < 0)
            return -1;
    }
    return 0;
}

int mapi_refuse_head(mapi_response *res, mapi_error *err, const char *title, const char *detail)
{
    const char *rid = mapi_response_request_id(res);

    mapi_error_set(err, MAPI_ERR_DECODE, "%s", title);
    if (!err || err->kind != MAPI_ERR_DECODE) {
        mapi_response_free(res);
        return -1;
    }
    err->status = res->status;
    err->outcome = MAPI_OUTCOME_UNKNOWN;
    err->request_id = mapi_strdup(rid);
    err->detail = mapi_strdup(detail);
    err->response = res;
    if ((rid && !err->request_id) || (detail && !err->detail))
        return mapi_error_oom(err);
    return -1;
}

int mapi_refuse_head_over(mapi_response *res, mapi_error *err)
{
    char title[64];

    snprintf(title, sizeof title, "response headers over %d bytes", MAPI_MAX_HEADER_BYTES);
    return mapi_refuse_head(res, err, title, NULL);
}

/* The bytes of res's head when its reader did not count them: each header
   field as the line "name: value\r\n" (the status line is not kept). */
static size_t head_bytes(const mapi_response *res)
{
    size_t i, n = 0;

    if (res->head_bytes)
        return res->head_bytes;
    for (i = 0; i < res->nheaders && n <= MAPI_MAX_HEADER_BYTES; i++)
        n += strlen(res->headers[i].name) + strlen(res->headers[i].value) + 4;
    return n;
}

int mapi_refuse_body(mapi_response *res, size_t max_body, mapi_error *err)
{
    char title[64];

    snprintf(title, sizeof title, "body over max_body (%lu bytes)", (unsigned long)max_body);
    mapi_refuse_head(res, err, title, NULL);
    if (err && err->kind == MAPI_ERR_DECODE)
        err->outcome = MAPI_OUTCOME_NONE; /* the head was taken: the outcome rule's to say */
    return -1;
}

/* 1 when the answer to method with status has a body to frame (RFC 9112
   6.3: not a HEAD's, not 1xx, 204 or 304). */
static int has_body(const char *method, int status)
{
    return !(method && strcmp(method, "HEAD") == 0) && status >= 200 && status != 204 &&
           status != 304;
}

int mapi_response_framed(mapi_response *res, const char *method, mapi_error *err)
{
    mapi_framing f;
    const char *rid;
    char detail[96];

    if (res->framed)
        return 0; /* read by http.c, which applied this rule as the head came */
    if (head_bytes(res) > MAPI_MAX_HEADER_BYTES)
        return mapi_refuse_head_over(res, err);
    if (mapi_framing_response(res, &f) < 0)
        return mapi_refuse_head(res, err, mapi_framing_title(&f), NULL);
    if (!f.has_length || !has_body(method, res->status) || res->len == f.length)
        return 0;
    if (res->len > f.length) {
        snprintf(detail, sizeof detail, "%lu bytes, Content-Length %s", (unsigned long)res->len,
                 f.digits);
        return mapi_refuse_head(res, err, "body longer than its Content-Length", detail);
    }
    /* The connection ended before the body did: as libcurl reports it */
    rid = mapi_response_request_id(res);
    mapi_error_set(err, MAPI_ERR_TRANSPORT, "body cut short");
    if (err && err->kind == MAPI_ERR_TRANSPORT) {
        snprintf(detail, sizeof detail, "%lu of %s bytes", (unsigned long)res->len, f.digits);
        err->retryable = 1;
        err->outcome = MAPI_OUTCOME_UNKNOWN;
        err->detail = mapi_strdup(detail);
        err->request_id = mapi_strdup(rid);
        if (!err->detail || (rid && !err->request_id))
            mapi_error_oom(err);
    }
    mapi_response_free(res);
    return -1;
}

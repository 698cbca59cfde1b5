/*
 * framing.c -- the one rule for how a response's body is framed, used by
 * every transport: libcurl (http.c, while it reads the head), the OpenResty
 * cosocket transport (core.framing, before it reads a body) and any answer
 * a Lua transport hands the exchange (mapi_response_framed, exchange.c).
 *
 * Refused, as DECODE with the head kept (outcome UNKNOWN for a confirm):
 *   - a second Content-Length field, even an equal one, and a value that is
 *     not one number of at most 64 bits: a list, even "5, 5" (RFC 9110 8.6
 *     lets a recipient reject both; llhttp, which reads the answers of the
 *     transports the library drives itself, does);
 *   - a header line that is not "name: value" (no colon, a byte in the
 *     name outside RFC 9110's tchar and space, a CR or NUL in the value)
 *     or an obsolete folded line (mapi_framing_line: RFC 9112 5.2 deprecates
 *     folding; llhttp refuses the rest);
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

#include "messages.h"

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

/* One Content-Length field: its value a number (spaces around it aside)
   that fits 64 bits, and the only Content-Length field of the head.  A list,
   even of equal numbers ("5, 5"), and a second field, even an equal one,
   are refused: RFC 9110 8.6 lets a recipient reject them, and llhttp (the
   reader of the transports the library drives itself, h1_reader.c) does. */
static int content_length(mapi_framing *f, const char *v, size_t len)
{
    size_t i = 0, start, end, k;

    if (f->has_length)
        return refuse(f, MAPI_FRAMING_CONFLICT);
    end = list_item(v, len, &i, &start);
    if (i <= len) /* a comma: a list */
        return refuse(f, MAPI_FRAMING_BAD_LENGTH);
    for (k = start; k < end && v[k] >= '0' && v[k] <= '9'; k++)
        ;
    if (end == start || k < end)
        return refuse(f, MAPI_FRAMING_BAD_LENGTH);
    while (end - start > 1 && v[start] == '0')
        start++;
    if (end - start >= sizeof f->digits)
        return refuse(f, MAPI_FRAMING_BAD_LENGTH);
    f->length = 0;
    for (k = start; k < end; k++) {
        unsigned d = (unsigned)(v[k] - '0');
        if (f->length > (MAPI_FRAMING_LENGTH_MAX - d) / 10)
            return refuse(f, MAPI_FRAMING_BAD_LENGTH); /* over 64 bits, as llhttp */
        f->length = f->length * 10 + d;
    }
    memcpy(f->digits, v + start, end - start);
    f->digits[end - start] = '\0';
    f->ndigits = end - start;
    f->has_length = 1;
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

/* 1 when c may be in a header field's name as llhttp reads it (lenient):
   RFC 9110's tchar, and a space. */
static int name_byte(unsigned char c)
{
    return c == ' ' || (c > 32 && c < 127 && !strchr("\"(),/;<=>?@[\\]{}", c));
}

int mapi_framing_line(mapi_framing *f, const char *line, size_t len)
{
    const char *colon;
    size_t i;

    if (f->fault != MAPI_FRAMING_OK)
        return -1;
    if (len > 0 && (line[0] == ' ' || line[0] == '\t'))
        return refuse(f, MAPI_FRAMING_LINE); /* an obsolete folded line */
    colon = memchr(line, ':', len);
    if (!colon)
        return refuse(f, MAPI_FRAMING_LINE);
    for (i = 0; line + i < colon; i++)
        if (!name_byte((unsigned char)line[i]))
            return refuse(f, MAPI_FRAMING_LINE);
    for (i = (size_t)(colon - line) + 1; i < len; i++)
        if (line[i] == '\r' || line[i] == '\n' || line[i] == '\0')
            return refuse(f, MAPI_FRAMING_LINE);
    return 0;
}

int mapi_framing_length_unreadable(int status, const char *name, size_t name_len,
                                   const char *value, size_t value_len)
{
    size_t i = 0;

    if (status < 200 || status == 204 || status == 304 ||
        !mapi_ascii_ieq(name, name_len, "content-length", 14))
        return 0;
    while (i < value_len && is_ows(value[i]))
        i++;
    i += i < value_len && value[i] == '+';
    return i >= value_len || value[i] < '0' || value[i] > '9';
}

int mapi_framing_fault_set(mapi_framing *f, mapi_framing_fault fault)
{
    return refuse(f, fault);
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
    case MAPI_FRAMING_LINE:
        return "malformed response header line";
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

const char *mapi_head_over_title(char buf[64])
{
    snprintf(buf, 64, "response headers over %d bytes", MAPI_MAX_HEADER_BYTES);
    return buf;
}

const char *mapi_body_over_title(char buf[64], size_t max_body)
{
    snprintf(buf, 64, "body over max_body (%lu bytes)", (unsigned long)max_body);
    return buf;
}

int mapi_refuse_head_over(mapi_response *res, mapi_error *err)
{
    char title[64];

    return mapi_refuse_head(res, err, mapi_head_over_title(title), NULL);
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

    mapi_refuse_head(res, err, mapi_body_over_title(title, max_body), NULL);
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

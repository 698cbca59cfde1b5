/*
 * mapping.c -- what an HTTP response means for a call (contract, "Errors"):
 * a 2xx JSON:API document of the expected type, or an error of kind API
 * (an error document, under any status), HTTP (non-2xx without one) or
 * DECODE (unreadable, wrong media type, wrong primary type, a list call's
 * counts that are not counts), with status, request id, Retry-After and
 * retryable (the outcome is the exchange's).
 */
#include <stdlib.h>
#include <string.h>

#include "exchange.h"

int mapi_media_type_is_json(const char *ct)
{
    static const char *const types[] = {MAPI_MEDIA_TYPE, "application/json"};
    size_t i, n;

    if (!ct)
        return 0;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    n = strcspn(ct, "; \t");
    for (i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (mapi_ascii_ieq(ct, n, types[i], strlen(types[i]))) {
            const char *rest = ct + n;
            while (*rest == ' ' || *rest == '\t')
                rest++;
            return *rest == '\0' || *rest == ';';
        }
    }
    return 0;
}

/* 1 when r's type is exactly type (bytes and length: "payouts\0x" is not
   "payouts"). */
static int type_is(const mapi_resource *r, const char *type)
{
    size_t len;
    const char *t = mapi_resource_type_n(r, &len);
    return t && len == strlen(type) && memcmp(t, type, len) == 0;
}

/* The counts a list call relies on (interface, "Endpoints 3"; contract,
   "Numbers are exact"): meta.page, per_page and total of a list the call
   asked for (k->list: mapi_list_addresses, its pages, the Lua list calls
   and pagers), each absent, null or a count (mapi_value_count; the real
   service writes them as strings of digits and may send "meta": {}).
   Only here: a generic call (mapi_request, client:request, client:paginate)
   and a document parsed or decoded alone keep any meta as data, as JSON:API
   leaves it free-form ("meta": {"page": {"offset": 0, "limit": 10}}).
   0, or -1 with e DECODE naming the member (MEMORY when out of memory). */
static int check_list_counts(const mapi_doc *doc, mapi_error *e)
{
    static const char *const names[] = {"page", "per_page", "total"};
    const char *what;
    int64_t count;
    size_t i;

    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        const mapi_value *v = mapi_value_get(mapi_doc_meta(doc), names[i]);
        if (v && (what = mapi_value_count_check(v, &count)) != NULL)
            return mapi_error_set(e, MAPI_ERR_DECODE,
                                  "expected meta.%s to be a non-negative integer, got %s",
                                  names[i], what);
    }
    return 0;
}

/* Checks the primary data of a 2xx document against the call. */
static int check_primary(const mapi_call *k, const mapi_doc *doc, mapi_error *e)
{
    size_t i, n = mapi_doc_data_count(doc);

    if (!k->type)
        return 0; /* a generic call: any primary data, or none */
    if (k->list) {
        if (!mapi_doc_is_list(doc))
            return mapi_error_set(e, MAPI_ERR_DECODE, "expected a list of %s", k->type);
        if (check_list_counts(doc, e) < 0)
            return -1;
        for (i = 0; i < n; i++) {
            const char *t = mapi_resource_type(mapi_doc_data(doc, i));
            if (!type_is(mapi_doc_data(doc, i), k->type))
                return mapi_error_set(e, MAPI_ERR_DECODE, "expected a list of %s, got %s",
                                      k->type, t ? t : "an untyped resource");
        }
        return 0;
    }
    if (mapi_doc_is_list(doc) || n != 1)
        return mapi_error_set(e, MAPI_ERR_DECODE, "expected a %s resource, got %s", k->type,
                              mapi_doc_is_list(doc) ? "a list" : "no data");
    {
        const mapi_resource *r = mapi_doc_data(doc, 0);
        const char *t = mapi_resource_type(r);
        if (!type_is(r, k->type))
            return mapi_error_set(e, MAPI_ERR_DECODE, "expected a %s resource, got %s",
                                  k->type, t ? t : "an untyped resource");
        /* the resource asked for, not another one (an id with a NUL shows cut there) */
        if (k->id && !mapi_resource_id_is(r, k->id))
            return mapi_error_set(e, MAPI_ERR_DECODE, "expected %s %s, got %s %s", k->type,
                                  k->id, t,
                                  mapi_resource_id(r) ? mapi_resource_id(r) : "without id");
    }
    return 0;
}

/* A 2xx response: the document, or a DECODE / API error. *e is set on -1. */
static int map_success(const mapi_call *k, mapi_response *res, int max_depth, mapi_doc **out,
                       mapi_error *e)
{
    const char *ct = mapi_response_header(res, "content-type");
    mapi_doc *doc = NULL;
    mapi_response *copy;
    int rc;

    if (k->generic && !k->type && res->len == 0)
        return mapi_doc_from_empty_response(res, out, e); /* HEAD, 204 No Content */
    if (!mapi_media_type_is_json(ct)) {
        mapi_error_set(e, MAPI_ERR_DECODE, "expected a JSON:API body, got Content-Type %s",
                       ct ? ct : "(none)");
        e->response = res;
        return -1;
    }
    if (mapi_doc_from_response(res, max_depth, &doc, e) < 0)
        return -1; /* e->response owns res */
    rc = mapi_doc_error_rule(doc, res->status, e); /* API, or DECODE: data and errors */
    if (rc < 0) {
        mapi_doc_free(doc);
        return -1; /* e is MEMORY */
    }
    if (rc == 0 && check_primary(k, doc, e) == 0) {
        *out = doc;
        return 0;
    }
    /* the document owns the response: the error gets a copy */
    copy = mapi_response_copy(res);
    mapi_doc_free(doc);
    if (!copy)
        return mapi_error_oom(e);
    e->response = copy;
    return -1;
}

/* A non-2xx response: API when the body is an error document, else HTTP. */
static int map_failure(mapi_response *res, int max_depth, mapi_error *e)
{
    const char *p = res->body, *location = mapi_response_header(res, "location");
    mapi_doc *doc = NULL;
    mapi_error perr = MAPI_ERROR_INIT;
    int rc = 0;

    while (p && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    mapi_error_clear(e);
    if (p && *p == '{' &&
        mapi_doc_parse_ex(res->body, res->len, max_depth, &doc, &perr) == 0) {
        rc = mapi_doc_error_rule(doc, res->status, e); /* 1: API (a non-2xx status) */
        mapi_doc_free(doc);
    } else if (perr.kind == MAPI_ERR_MEMORY) {
        rc = mapi_error_oom(e);
    }
    mapi_error_clear(&perr);
    if (rc == 0) {
        mapi_error_set(e, MAPI_ERR_HTTP, "HTTP %d", res->status);
        if (e->kind == MAPI_ERR_HTTP && res->status >= 300 && res->status < 400 && location) {
            mapi_buf b;
            mapi_buf_init(&b);
            mapi_buf_printf(&b, "redirect to %s not followed", location);
            if (!(e->detail = mapi_buf_take(&b)))
                mapi_error_oom(e);
        }
    }
    if (e->kind == MAPI_ERR_MEMORY) { /* rc < 0: e is MEMORY */
        mapi_response_free(res);
        return -1;
    }
    e->response = res;
    return -1;
}

int mapi_map_response(const mapi_call *k, mapi_response *res, int max_depth, mapi_doc **out,
                      mapi_error *e)
{
    const char *rid;
    int status, rc;
    double retry_after;
    char *request_id;

    status = res->status;
    rid = mapi_response_request_id(res);
    request_id = mapi_strdup(rid);
    if (rid && !request_id) {
        mapi_response_free(res);
        return mapi_error_oom(e);
    }
    retry_after = mapi_response_retry_after(res);
    if (status >= 200 && status < 300)
        rc = map_success(k, res, max_depth, out, e);
    else
        rc = map_failure(res, max_depth, e);
    if (rc == 0 || e->kind == MAPI_ERR_MEMORY) {
        free(request_id);
        return rc;
    }
    e->status = status;
    free(e->request_id);
    e->request_id = request_id;
    e->retry_after = retry_after;
    e->retryable = (e->kind == MAPI_ERR_API || e->kind == MAPI_ERR_HTTP) &&
                   mapi_status_retryable(status);
    return -1;
}

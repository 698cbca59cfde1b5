/*
 * exchange.c -- one call across its attempts, without I/O: what it sends
 * (method, URL, the request headers) and every decision between attempts --
 * what an answer or a failed attempt means, whether to try again and when
 * (the contract's "Retries"), the deadline (each attempt's timeout cut to
 * what is left), the settling of a confirm whose outcome is unknown, the
 * error the call fails with (the api key redacted), the attempt records
 * (attempt.c) and the MERCHANTAPI_DEBUG line.  Whoever moves the bytes
 * (libcurl in client.c, loop.c and pages.c, or a Lua transport) begins an
 * attempt, sends the request the exchange hands out (mapi_exchange_request),
 * and tells how the attempt ended in the exchange's terms (mapi_ended), so
 * every transport behaves the same; the exchange knows no transport (the
 * HTTP layer is a sibling it never calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exchange.h"

struct mapi_exchange {
    mapi_call call;       /* call.method/url/type/id point at the copies below */
    char *method, *url, *type, *id;
    char *body;           /* a copy of the call's body (NUL added), or NULL */
    char *api_key;        /* NULL when none; wiped when freed */
    char *authorization;  /* "Bearer <key>", or NULL; wiped when freed */
    char *user_agent;
    mapi_header_field *headers; /* the client's own and the call's own, merged: copies
                                   (but the traceparent's: trace_headers); its array is
                                   trace_fields when no other header came */
    size_t nheaders;
    int max_retries, max_depth, debug;
    size_t max_body;
    double timeout, connect_timeout;
    int attempts;         /* attempts begun */
    double started;       /* monotonic seconds when the current attempt began */
    mapi_random_fn random;
    void *random_ctx;
    uint64_t rng;         /* state of the default random hook */
    mapi_attempt_info info; /* the record of the attempt begun last */
    char *redacted_url;   /* info.url: the URL with the key (if ever in it) redacted */
    char *server_address; /* info.server_address */
    mapi_metrics *metrics; /* the client's metrics (metrics.c), or NULL */
    uint64_t trace_rng;   /* the call's trace and span ids (trace.c) */
    char *traceparent;    /* the header's value, in x->headers; NULL: not traced */
    char traceparent_buf[MAPI_TRACEPARENT_LEN + 1]; /* where traceparent points */
    mapi_header_field trace_fields[2]; /* headers' array when only the trace's came */
    char trace_id[33], span_id[17], parent_id[17]; /* info's; parent_id "" when none */
    char error_type[8];   /* info.error_type when it is a status code */
    double deadline;      /* seconds for the call, and again for the read settling it */
    double deadline_at;   /* monotonic seconds; 0 until the first attempt (of the read) */
    double attempt_timeout; /* the timeout of the attempt begun last */
    int capped;           /* 1: the deadline cut that timeout */
    int settling;         /* 1: the confirm failed UNKNOWN; its payout is being read */
    int http1;            /* 1: the next attempt over HTTP/1.1 (a resend the transport
                             stopped: mapi_exchange_end_attempt) */
    mapi_call read;       /* that read: GET of the confirm's URL, a payouts resource */
    mapi_error unknown;   /* the confirm's final error while the read runs */
};

/* Traces the call (W3C Trace Context): its trace id (the caller's, or a new
   one), a traceparent header among the call's own (replacing one of that
   name, as a tracestate one when k gives one), whose parent-id field each
   attempt fills with its span id (mapi_exchange_begin_attempt).  0, or -1 when out
   of memory. */
static int trace_headers(mapi_exchange *x, const mapi_call *k)
{
    mapi_header_field *h;
    size_t i, n = 0;

    /* a traced call without headers of its own (the usual one) allocates
       nothing here: its array is the exchange's, the traceparent's value too,
       and its name is not copied (mapi_exchange_free frees neither) */
    h = x->nheaders ? realloc(x->headers, (x->nheaders + 2) * sizeof *h) : x->trace_fields;
    if (!h)
        return -1;
    x->headers = h;
    for (i = 0; i < x->nheaders; i++) {
        if (mapi_header_name_equal(h[i].name, "traceparent") ||
            mapi_header_name_equal(h[i].name, "tracestate")) {
            free((char *)h[i].name);
            free((char *)h[i].value);
        } else {
            h[n++] = h[i];
        }
    }
    x->nheaders = n;
    x->traceparent = x->traceparent_buf;
    h[n].name = "traceparent";
    h[n].value = x->traceparent;
    x->nheaders++;
    if (k->traceparent) { /* checked: 00-trace-parent-flags */
        memcpy(x->trace_id, k->traceparent + 3, 32);
        memcpy(x->parent_id, k->traceparent + 36, 16);
        x->trace_id[32] = x->parent_id[16] = '\0';
        memcpy(x->traceparent, k->traceparent, MAPI_TRACEPARENT_LEN + 1);
    } else {
        mapi_trace_id(&x->trace_rng, x->trace_id, 16); /* 32 digits: 3 + 32 + 20 = 55 */
        memcpy(x->traceparent, "00-", 3);
        memcpy(x->traceparent + 3, x->trace_id, 32);
        memcpy(x->traceparent + 35, "-0000000000000000-01", 21);
    }
    if (k->tracestate) {
        h[++n].name = mapi_strdup("tracestate");
        h[n].value = mapi_strdup(k->tracestate);
        x->nheaders++;
        if (!h[n].name || !h[n].value)
            return -1;
    }
    return 0;
}

mapi_exchange *mapi_exchange_new(const mapi_call *k, const mapi_exchange_settings *s,
                                 mapi_error *err)
{
    mapi_exchange *x = calloc(1, sizeof *x);

    if (!x)
        return mapi_error_oom(err), NULL;
    x->method = mapi_strdup(k->method);
    x->url = mapi_strdup(k->url);
    x->type = mapi_strdup(k->type);
    x->id = mapi_strdup(k->id);
    if (k->body) {
        x->body = malloc(k->body_len + 1);
        if (x->body) {
            memcpy(x->body, k->body, k->body_len);
            x->body[k->body_len] = '\0';
        }
    }
    x->user_agent = mapi_strdup(s->user_agent ? s->user_agent : "merchantapi/" MAPI_VERSION);
    if (s->api_key && *s->api_key) {
        x->api_key = mapi_strdup(s->api_key);
        x->authorization = mapi_bearer(s->api_key);
    }
    x->redacted_url = mapi_strdup(x->url);
    mapi_redact(&x->redacted_url, x->api_key);
    if (x->url)
        x->server_address = mapi_attempt_server(x->url, &x->info.server_port);
    x->trace_rng = s->trace_seed;
    x->metrics = s->metrics;
    if (mapi_headers_merge(s->headers, s->nheaders, k->headers, k->nheaders, &x->headers,
                           &x->nheaders) < 0 ||
        ((k->traceparent || s->trace) && trace_headers(x, k) < 0) || !x->method || !x->url ||
        (k->type && !x->type) || (k->id && !x->id) || (k->body && !x->body) || !x->user_agent ||
        (s->api_key && *s->api_key && (!x->api_key || !x->authorization)) ||
        !x->redacted_url || !x->server_address) {
        mapi_exchange_free(x);
        return mapi_error_oom(err), NULL;
    }
    x->call = *k;
    x->call.method = x->method;
    x->call.url = x->url;
    x->call.type = x->type;
    x->call.id = x->id;
    x->call.body = x->body;
    x->call.headers = x->headers; /* never k's, which the caller frees: the merged copies */
    x->call.nheaders = x->nheaders;
    x->max_retries = s->max_retries < 0 ? 0 : s->max_retries;
    x->max_depth = s->max_depth;
    x->max_body = s->max_body ? s->max_body : MAPI_DEFAULT_MAX_BODY;
    x->timeout = s->timeout > 0 ? s->timeout : MAPI_DEFAULT_TIMEOUT;
    x->connect_timeout = s->connect_timeout > 0 ? s->connect_timeout : MAPI_DEFAULT_CONNECT_TIMEOUT;
    x->deadline = s->deadline > 0 ? s->deadline
                                   : mapi_default_deadline(x->timeout, x->max_retries);
    x->debug = s->debug;
    x->unknown = (mapi_error)MAPI_ERROR_INIT;
    /* the read that settles a confirm: GET of the same URL (interface,
       "Events": a confirmed payout is followed by reading it) */
    x->read.method = "GET";
    x->read.url = x->url;
    x->read.type = x->type; /* the same resource (a payout) */
    x->read.id = x->id;
    x->read.endpoint = "get_payout"; /* calls.c's row of that read */
    x->rng = mapi_rng_seed((uintptr_t)x);
    mapi_exchange_set_random(x, NULL, NULL);
    return x; /* x->info: filled by each attempt's mapi_exchange_begin_attempt */
}

void mapi_exchange_free(mapi_exchange *x)
{
    size_t i;

    if (!x)
        return;
    free(x->method);
    free(x->url);
    free(x->type);
    free(x->id);
    free(x->body);
    mapi_error_clear(&x->unknown);
    mapi_wipe_free(x->api_key);
    mapi_wipe_free(x->authorization);
    free(x->user_agent);
    for (i = 0; i < x->nheaders; i++) {
        if (x->headers[i].value == x->traceparent)
            continue; /* the exchange's own: trace_headers */
        free((char *)x->headers[i].name);
        free((char *)x->headers[i].value);
    }
    if (x->headers != x->trace_fields)
        free(x->headers);
    free(x->redacted_url);
    free(x->server_address);
    free(x);
}

void mapi_exchange_set_random(mapi_exchange *x, mapi_random_fn fn, void *ctx)
{
    x->random = fn ? fn : mapi_random_default;
    x->random_ctx = fn ? ctx : &x->rng;
}

const mapi_call *mapi_exchange_call(const mapi_exchange *x)
{
    return &x->call;
}

const mapi_call *mapi_exchange_attempt_call(const mapi_exchange *x)
{
    return x->settling ? &x->read : &x->call;
}

void mapi_exchange_limits(const mapi_exchange *x, double *timeout, double *connect_timeout,
                          size_t *max_body)
{
    *timeout = x->attempts > 0 ? x->attempt_timeout : x->timeout;
    *connect_timeout = x->connect_timeout < *timeout ? x->connect_timeout : *timeout;
    *max_body = x->max_body;
}

void mapi_exchange_request(const mapi_exchange *x, mapi_attempt_request *req)
{
    const mapi_call *k = mapi_exchange_attempt_call(x); /* the call, or the read settling it */
    double connect_timeout;
    size_t max_body;

    memset(req, 0, sizeof *req);
    req->method = k->method;
    req->url = k->url;
    req->body = k->body;
    req->body_len = k->body_len;
    req->fresh_connection = k->moves_money;
    req->http1 = x->http1;
    req->headers = x->headers;
    req->nheaders = x->nheaders;
    mapi_exchange_limits(x, &req->timeout, &connect_timeout, &max_body);
}

int mapi_exchange_fits(const mapi_exchange *x, double wait)
{
    if (x->deadline_at <= 0)
        return 1; /* not begun: the whole deadline is ahead */
    return mapi_monotonic_seconds() + (wait > 0 ? wait : 0) < x->deadline_at;
}

size_t mapi_exchange_header_count(const mapi_exchange *x)
{
    const char *names[MAPI_BASE_HEADERS], *values[MAPI_BASE_HEADERS];

    return mapi_base_headers(x->authorization, x->user_agent, names, values) + x->nheaders;
}

int mapi_exchange_header_at(const mapi_exchange *x, size_t i, const char **name,
                            const char **value)
{
    const char *names[MAPI_BASE_HEADERS], *values[MAPI_BASE_HEADERS];
    size_t n = mapi_base_headers(x->authorization, x->user_agent, names, values);

    if (i >= n + x->nheaders)
        return 0;
    if (i >= n) {
        *name = x->headers[i - n].name;
        *value = x->headers[i - n].value;
        return 1;
    }
    *name = names[i];
    *value = values[i];
    return 1;
}

const mapi_attempt_info *mapi_exchange_begin_attempt(mapi_exchange *x)
{
    const mapi_call *k = mapi_exchange_attempt_call(x);
    int port = x->info.server_port;
    double left;

    x->attempts++;
    x->started = mapi_monotonic_seconds();
    if (x->deadline_at <= 0)
        x->deadline_at = x->started + x->deadline;
    left = x->deadline_at - x->started;
    if (left > x->deadline)
        left = x->deadline; /* (started + d) - started may round above d */
    x->attempt_timeout = x->timeout;
    x->capped = 0;
    if (left < x->attempt_timeout) {
        x->attempt_timeout = left > 0.001 ? left : 0.001; /* libcurl's unit: 1 ms */
        x->capped = 1;
    }
    memset(&x->info, 0, sizeof x->info); /* a new record: the URL's facts stay */
    x->info.method = k->method;
    x->info.url = x->redacted_url;
    x->info.server_address = x->server_address;
    x->info.server_port = port;
    x->info.endpoint = k->endpoint;
    x->info.attempt = x->attempts;
    x->info.max_attempts = x->max_retries + 1;
    x->info.resend_count = x->attempts - 1;
    x->info.start_time = mapi_wall_seconds();
    x->info.retry_in = -1.0;
    if (x->traceparent) { /* each attempt a span of its own, under the call's trace */
        mapi_trace_id(&x->trace_rng, x->span_id, 8);
        memcpy(x->traceparent + 36, x->span_id, 16);
        x->info.trace_id = x->trace_id;
        x->info.span_id = x->span_id;
        x->info.parent_span_id = x->parent_id[0] ? x->parent_id : NULL;
    }
    return &x->info;
}

const mapi_attempt_info *mapi_exchange_info(const mapi_exchange *x)
{
    return &x->info;
}

/* The contract's "Retries": GET retries what is retryable; the confirm PUT
   only what provably never arrived, or was answered 429. */
static int should_retry(const mapi_call *k, const mapi_error *e)
{
    if (k->moves_money)
        return (e->kind == MAPI_ERR_TRANSPORT && e->outcome == MAPI_OUTCOME_NOT_SENT) ||
               (e->retryable && e->status == 429);
    return e->retryable;
}

/* What a failed attempt means (e as mapi_http_perform, a transport or the
   mapping filled it): the one outcome rule of a call that may move money --
   REJECTED for a 4xx answer, else UNKNOWN (TRANSPORT says its own). */
static void failed_attempt(const mapi_exchange *x, mapi_error *e)
{
    if (e->kind == MAPI_ERR_NONE)
        mapi_error_set(e, MAPI_ERR_TRANSPORT, "the request failed");
    /* (an outcome already set stays: http.c says UNKNOWN for an answer it
       refused before its body, whatever its status) */
    if (mapi_exchange_attempt_call(x)->moves_money && e->kind != MAPI_ERR_TRANSPORT &&
        e->outcome == MAPI_OUTCOME_NONE)
        e->outcome = e->status >= 400 && e->status < 500 ? MAPI_OUTCOME_REJECTED
                                                         : MAPI_OUTCOME_UNKNOWN;
    if (e->kind == MAPI_ERR_DECODE && e->response)
        e->retry_after = mapi_response_retry_after(e->response);
}

/* The record's facts of an attempt that failed with *e (borrowed from it):
   the kind, error.type, the request id, code and title, and the outcome --
   the error's own for a request that may move money, else "error" (the
   retry decision says "retry" after). */
static void record_failure(mapi_exchange *x, const mapi_error *e)
{
    mapi_attempt_info *in = &x->info;

    in->error = e->kind == MAPI_ERR_NONE ? MAPI_ERR_MEMORY : e->kind;
    in->error_type = mapi_attempt_error_type(in->status, in->error, x->error_type,
                                             sizeof x->error_type);
    in->request_id = e->request_id;
    in->code = e->code;
    in->title = e->title;
    in->outcome = mapi_exchange_attempt_call(x)->moves_money && e->outcome != MAPI_OUTCOME_NONE
                      ? mapi_outcome_name(e->outcome)
                      : "error";
}

/* Finishes *e as the error of the request under way (the call, or the
   read settling it). */
static void finish_error(mapi_exchange *x, mapi_error *e)
{
    const mapi_call *k = mapi_exchange_attempt_call(x);

    e->attempts = x->attempts;
    if (!k->moves_money)
        e->outcome = MAPI_OUTCOME_NONE; /* outcome is the confirm's question only */
    if (e->kind != MAPI_ERR_MEMORY) {
        free(e->method);
        free(e->url);
        e->method = mapi_strdup(k->method);
        e->url = mapi_strdup(k->url);
        if (!e->method || !e->url || mapi_error_message(e) < 0) /* now with method and URL */
            mapi_error_oom(e);
        else
            mapi_error_redact(e, x->api_key); /* whatever the server echoed */
    }
    record_failure(x, e);
}

/* ---- settling a confirm whose outcome is unknown (merchantapi.h) ---- */

/* 1 when the confirm that just failed with *e (finished) is to be settled. */
static int settle_wanted(const mapi_exchange *x, const mapi_error *e)
{
    return x->call.settle && !x->settling && e->outcome == MAPI_OUTCOME_UNKNOWN &&
           e->kind != MAPI_ERR_MEMORY;
}

/* Keeps the confirm's error and turns the exchange to the read. */
static void start_read(mapi_exchange *x, mapi_error *e)
{
    mapi_error_clear(&x->unknown);
    x->unknown = *e;
    *e = (mapi_error)MAPI_ERROR_INIT;
    x->settling = 1;
    x->attempts = 0;
    x->deadline_at = 0; /* the read has a deadline of its own */
}

/* The read failed with *e (finished): the call's error is the confirm's,
   with the read's as its settle_error. */
static void read_failed(mapi_exchange *x, mapi_error *e)
{
    mapi_error *read = malloc(sizeof *read);

    if (read) {
        *read = *e; /* the strings x->info borrows move with it */
    } else {
        mapi_error_clear(e); /* out of memory: the confirm's error alone */
        x->info.request_id = x->info.code = x->info.title = NULL;
    }
    *e = x->unknown;
    x->unknown = (mapi_error)MAPI_ERROR_INIT;
    e->settle_error = read;
}

/* The payout's attribute `name` when it is a string of at least one byte
   (*len its length), else NULL. */
static const char *payout_string(const mapi_doc *payout, const char *name, size_t *len)
{
    const char *s;

    *len = 0;
    s = mapi_value_string(mapi_resource_attr(mapi_doc_data(payout, 0), name), len);
    return s && *len > 0 ? s : NULL;
}

/* 1 when payout `doc` reads status "draft". */
static int payout_is_draft(const mapi_doc *doc)
{
    size_t len;
    const char *s = payout_string(doc, "status", &len);

    return s && len == 5 && memcmp(s, "draft", 5) == 0;
}

/* What `retryable` tells the caller of the call's error (merchantapi.h,
   mapi_error.retryable): calling the same method again is safe and may
   succeed.  For a request that may move money that holds only when nothing
   was sent (outcome NOT_SENT, a failure that may pass), the service refused
   it before acting (429), or the settling read showed the payout still a
   draft; never for any other outcome UNKNOWN (a second request could carry
   it out twice).  Other calls keep what the last attempt said (a GET is
   safe to send again).  The exchange's own retries (should_retry) decide on
   the attempt's error before this: every driver's failed call ends here. */
static void caller_retryable(const mapi_exchange *x, mapi_error *e)
{
    if (!x->call.moves_money)
        return;
    if (e->payout)
        e->retryable = payout_is_draft(e->payout);
    else
        e->retryable = e->retryable && (e->outcome == MAPI_OUTCOME_NOT_SENT ||
                                        (e->outcome == MAPI_OUTCOME_REJECTED && e->status == 429));
}

/* The call fails with *e, the error its caller gets. */
static mapi_step call_failed(const mapi_exchange *x, mapi_error *e)
{
    caller_retryable(x, e);
    return MAPI_STEP_FAILED;
}

/* The settle rule: the read got the payout (*out).  The confirm was carried
   out when the read shows a txid (whatever its status: it was broadcast) or
   status "processing" (interface, "States": the confirm moves a draft to
   processing, and txid is set when it is broadcast): the call succeeds with
   the read.  Any other status -- "draft" (not carried out: confirming again
   is safe), or one the interface does not show ("expired", "failed", ...:
   nothing says the money moved, nor that it did not) -- leaves the
   confirm's error, outcome UNKNOWN, with the payout read (err->payout; the
   message names its status).  No status: the read's "no status" error. */
static mapi_step read_done(mapi_exchange *x, mapi_doc **out, mapi_error *e)
{
    size_t len, txid_len;
    const char *s = payout_string(*out, "status", &len);

    if (payout_string(*out, "txid", &txid_len) ||
        (s && len == 10 && memcmp(s, "processing", 10) == 0)) {
        mapi_doc_set_settled(*out);
        return MAPI_STEP_DONE;
    }
    mapi_error_clear(e);
    if (s) { /* not shown carried out */
        *e = x->unknown;
        x->unknown = (mapi_error)MAPI_ERROR_INIT;
        e->payout = *out;
        e->payout_status = mapi_strndup(s, len); /* (a NUL inside ends it) */
        if (!e->payout_status || mapi_error_message(e) < 0) /* now naming the status */
            mapi_error_oom(e);
        else
            mapi_error_redact(e, x->api_key); /* the status is the server's text */
        if (!e->payout) /* out of memory: the read went with the error */
            x->info.request_id = NULL;
    } else {
        const mapi_response *res = mapi_doc_response(*out);
        mapi_error_set(e, MAPI_ERR_DECODE, "the payout read has no status");
        e->status = mapi_response_status(res);
        e->request_id = mapi_strdup(mapi_response_request_id(res)); /* NULL: out of memory */
        e->response = mapi_response_copy(res);                      /* (both optional) */
        finish_error(x, e); /* x->info now borrows from e, not from the document */
        mapi_doc_free(*out);
        read_failed(x, e);
    }
    *out = NULL;
    return call_failed(x, e);
}

void mapi_exchange_fail(mapi_exchange *x, mapi_error *e)
{
    finish_error(x, e);
    if (x->settling)
        read_failed(x, e);
    call_failed(x, e);
}

void mapi_exchange_expire(mapi_exchange *x, mapi_error *e)
{
    e->deadline_exceeded = 1;
    mapi_exchange_fail(x, e);
}

/* MERCHANTAPI_DEBUG: the record's line, never the key nor a header. */
static void debug_line(const mapi_exchange *x)
{
    char *line = mapi_attempt_line(&x->info);

    if (!line)
        return;
    mapi_redact(&line, x->api_key); /* the server's text (an error title) could hold it */
    fprintf(stderr, "%s\n", line);
    free(line);
}

static mapi_step end_attempt(mapi_exchange *x, mapi_ended how, mapi_response *res,
                             mapi_error *e, mapi_doc **out, double *wait)
{
    const mapi_call *k = mapi_exchange_attempt_call(x);
    double elapsed = mapi_monotonic_seconds() - x->started;
    int rc;

    /* the HTTP/1.1 decision, the exchange's: only a resend the transport
       was stopped from making sends the next attempt over HTTP/1.1 */
    int stopped = !res && how == MAPI_ENDED_RESEND_STOPPED;

    *out = NULL;
    *wait = -1.0;
    x->http1 = 0;
    if (elapsed < 0)
        elapsed = 0;
    if (res) {
        mapi_error_clear(e);
        if (res->elapsed > 0)
            elapsed = res->elapsed; /* libcurl's own measure */
        else
            res->elapsed = elapsed;
        x->info.status = res->status;
        /* whatever the server echoed of the key in its headers: before the
           request id reaches the hooks, the document's response or an error */
        mapi_response_redact(res, x->api_key);
        if (res->len > x->max_body) {
            rc = mapi_refuse_body(res, x->max_body, e); /* a transport that does not cap it */
            failed_attempt(x, e); /* the outcome as http.c's cap gives it */
        } else if (mapi_response_framed(res, k->method, e) < 0) {
            /* the framing rule (framing.c), whoever read the answer: then as
               an answer http.c refused */
            failed_attempt(x, e);
            rc = -1;
        } else if ((rc = mapi_map_response(k, res, x->max_depth, out, e)) < 0) {
            failed_attempt(x, e); /* the outcome rule, as for every failed attempt */
        }
    } else {
        failed_attempt(x, e);
        x->info.status = e->status;
        rc = -1;
    }
    x->info.elapsed = elapsed;
    if (rc == 0) {
        mapi_step step;
        x->info.error = MAPI_ERR_NONE;
        x->info.request_id = mapi_response_request_id(mapi_doc_response(*out));
        x->info.outcome = "ok"; /* the attempt's own: a draft's read too */
        step = x->settling ? read_done(x, out, e) : MAPI_STEP_DONE; /* (no status: "error") */
        if (x->settling && step == MAPI_STEP_DONE)
            x->info.settled_by = mapi_doc_settled_by(*out);
        if (x->debug)
            debug_line(x);
        return step;
    }
    mapi_error_redact(e, x->api_key); /* a transport's text, a request id, an attached response */
    record_failure(x, e);
    if (x->attempts <= x->max_retries && should_retry(k, e)) {
        /* a resend the transport was stopped from making: at once, over
           HTTP/1.1 (docs/decisions.md, "No hidden resends") */
        double w = e->retry_after < 0 && stopped
                       ? 0.0
                       : mapi_retry_wait(e->retry_after, x->attempts - 1, 0, 0, x->random,
                                         x->random_ctx);
        if (mapi_exchange_fits(x, w)) {
            *wait = w;
            x->http1 = stopped;
            x->info.retry_in = w;
            x->info.outcome = "retry";
            if (x->debug)
                debug_line(x);
            return MAPI_STEP_RETRY;
        }
        e->deadline_exceeded = 1; /* ends now, with this attempt's error */
    } else if (x->capped && e->kind == MAPI_ERR_TRANSPORT && !mapi_exchange_fits(x, 0)) {
        e->deadline_exceeded = 1; /* its timeout was what was left of the deadline */
    }
    finish_error(x, e);
    if (x->debug)
        debug_line(x);
    if (settle_wanted(x, e)) {
        start_read(x, e);
        *wait = 0;
        return MAPI_STEP_SETTLE;
    }
    if (x->settling)
        read_failed(x, e);
    return call_failed(x, e);
}

mapi_step mapi_exchange_end_attempt(mapi_exchange *x, mapi_ended how, mapi_response *res,
                                    mapi_error *e, mapi_doc **out, double *wait)
{
    mapi_step step = end_attempt(x, how, res, e, out, wait);

    if (x->metrics) /* the record is whole: every driver's attempt counted here */
        mapi_metrics_record(x->metrics, &x->info);
    return step;
}

/*
 * calls.c -- the service's rules, written once (calls.h): the endpoint
 * table, the one builder that reads it, the id and path checks, the list
 * query, which methods are safe to repeat, and the outcome of a call that
 * failed before anything was sent.  Every call -- from the C API (client.c,
 * loop.c, pages.c) and from the binding for any transport -- is built here
 * and run by a driver over an exchange (exchange.c).  Nothing else writes
 * an endpoint path or a resource type; the Lua modules ask the core
 * (core.endpoints, core.path, core.not_sent).
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"

#define API_PREFIX "/api/public/v1"

/* ---- methods ---- */

/* The methods calls send, and whether each is safe to repeat. */
static const struct {
    const char *name;
    int safe; /* GET, HEAD: retried like the GET endpoints */
} methods[] = {
    {"GET", 1}, {"HEAD", 1}, {"POST", 0}, {"PUT", 0}, {"PATCH", 0}, {"DELETE", 0},
};

int mapi_method_safety(const char *method)
{
    size_t i;

    if (!method)
        return -1;
    for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(method, methods[i].name) == 0)
            return methods[i].safe;
    return -1;
}

int mapi_error_tag_not_sent(const char *method, mapi_error *err)
{
    if (!err || err->kind == MAPI_ERR_NONE)
        return -1;
    if (err->kind == MAPI_ERR_USAGE && method && !err->method &&
        (!(err->method = mapi_strdup(method)) || mapi_error_message(err) < 0))
        mapi_error_oom(err);
    if (mapi_method_safety(method) == 0)
        err->outcome = MAPI_OUTCOME_NOT_SENT;
    return -1;
}

/* ---- ids and paths ---- */

int mapi_id_check(const char *what, const char *id, mapi_error *err)
{
    if (!id || !*id)
        return mapi_error_set(err, MAPI_ERR_USAGE, "%s is empty", what);
    /* a dot segment would be normalised away by any intermediary */
    if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "%s must not be \".\" or \"..\"", what);
    return 0;
}

/* ---- the endpoint table (interface, "Endpoints"): one row per call ---- */

static const char *const payout_decimals[] = {"amount", NULL};
static const char *const no_decimals[] = {NULL};

/* Adding an endpoint is one row here and its index in calls.h (and its
   tests and docs): the C entry points, the loop starters, the binding and
   the Lua wrappers read it. */
const mapi_endpoint mapi_endpoints[MAPI_EP_COUNT] = {
    [MAPI_EP_CONFIRM_PAYOUT] = {"confirm_payout", "PUT", "payouts", "", "payout_id", "payouts",
                                "confirm a payout", 0, 1, payout_decimals},
    [MAPI_EP_GET_CHANNEL] = {"get_channel", "GET", "channels", "", "channel_id", "channels",
                             NULL, 0, 0, no_decimals},
    /* the interface shows Authorization on the address list */
    [MAPI_EP_LIST_ADDRESSES] = {"list_addresses", "GET", "accounts", "/addresses", "account_id",
                                "addresses", "list addresses", 1, 0, no_decimals},
    /* the read that follows (and settles) a confirm (interface, "Events") */
    [MAPI_EP_GET_PAYOUT] = {"get_payout", "GET", "payouts", "", "payout_id", "payouts", NULL, 0,
                            0, payout_decimals},
};

const char *mapi_endpoint_match(const char *method, const char *path)
{
    const mapi_endpoint *e;
    size_t i, n = sizeof API_PREFIX - 1;

    if (!method || !path || strncmp(path, API_PREFIX "/", n + 1) != 0)
        return NULL;
    path += n + 1;
    for (i = 0; i < MAPI_EP_COUNT; i++) {
        size_t c, t, id;
        const char *rest;
        e = &mapi_endpoints[i];
        c = strlen(e->collection);
        t = strlen(e->tail);
        rest = path + c + 1;
        if (strcmp(method, e->method) != 0 || strncmp(path, e->collection, c) != 0 ||
            path[c] != '/')
            continue;
        id = strcspn(rest, "/?");
        if (id > 0 && strncmp(rest + id, e->tail, t) == 0 &&
            (rest[id + t] == '\0' || rest[id + t] == '?'))
            return e->name;
    }
    return NULL;
}

const mapi_endpoint *mapi_endpoint_find(const char *name)
{
    size_t i;

    for (i = 0; name && i < MAPI_EP_COUNT; i++)
        if (strcmp(name, mapi_endpoints[i].name) == 0)
            return &mapi_endpoints[i];
    return NULL;
}

const char *const *mapi_decimal_fields(const char *type, size_t type_len)
{
    const mapi_endpoint *e;

    for (e = mapi_endpoints; e < mapi_endpoints + MAPI_EP_COUNT; e++)
        if (e->decimal_fields[0] && strlen(e->type) == type_len &&
            memcmp(e->type, type, type_len) == 0)
            return e->decimal_fields;
    return NULL;
}

int mapi_field_listed(const char *const *fields, const char *name, size_t name_len)
{
    for (; fields && *fields; fields++)
        if (strlen(*fields) == name_len && memcmp(*fields, name, name_len) == 0)
            return 1;
    return 0;
}

int mapi_endpoint_path(mapi_buf *b, const mapi_endpoint *e, const char *id, size_t len)
{
    mapi_buf_puts(b, API_PREFIX "/");
    mapi_buf_puts(b, e->collection);
    mapi_buf_puts(b, "/");
    mapi_url_encode_n(b, id, len);
    return mapi_buf_puts(b, e->tail);
}

/* 1 when the segment s[0..n) is "." or "..", written plainly or with %2E. */
static int is_dot_segment(const char *s, size_t n)
{
    size_t dots = 0, i = 0;

    while (i < n) {
        if (s[i] == '.') {
            i++;
        } else if (n - i >= 3 && s[i] == '%' && s[i + 1] == '2' &&
                   (s[i + 2] == 'e' || s[i + 2] == 'E')) {
            i += 3;
        } else {
            return 0;
        }
        dots++;
    }
    return dots == 1 || dots == 2;
}

int mapi_path_check(const char *p, mapi_error *err)
{
    size_t i, seg = 1; /* start of the current path segment */
    int in_query = 0;

    if (p[0] != '/')
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "path must start with \"/\" (a path under base_url, not a URL)");
    if (p[1] == '/')
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "path must not start with \"//\" (a network-path reference)");
    for (i = 1;; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (!in_query && (ch == '/' || ch == '?' || ch == '\0')) {
            if (is_dot_segment(p + seg, i - seg))
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "path must not hold a \".\" or \"..\" segment");
            seg = i + 1;
            if (ch == '?')
                in_query = 1;
        }
        if (ch == '\0')
            return 0;
        if (ch == '%') {
            if (mapi_hex_digit(p[i + 1]) < 0 || mapi_hex_digit(p[i + 2]) < 0)
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "path has a '%%' at byte %zu that is not a %%XX escape",
                                      i);
            i += 2;
            continue;
        }
        /* RFC 3986 pchar without '%': unreserved, sub-delims, ':' and '@' */
        if (ch == '/' || ch == '?' || mapi_alnum_or(ch, "-._~!$&'()*+,;=:@") ||
            (in_query && (ch == '[' || ch == ']')))
            continue;
        if (ch == '\r' || ch == '\n')
            return mapi_error_set(err, MAPI_ERR_USAGE, "path contains CR or LF");
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "path byte %zu (0x%02x) must be percent-encoded", i, ch);
    }
}

/* ---- building calls ---- */

/* Checks a call's options (NULL: the defaults) and its own headers; 0, or
   -1 with USAGE. */
static int check_opts(const mapi_call_opts *opts, mapi_error *err)
{
    if (!opts)
        return 0;
    if (opts->deadline != 0 && mapi_limit_refuse(mapi_limit_deadline(opts->deadline), err) < 0)
        return -1; /* limits.c; 0: the client's */
    if (opts->settle != MAPI_SETTLE_DEFAULT && opts->settle != MAPI_SETTLE_ON &&
        opts->settle != MAPI_SETTLE_OFF)
        return mapi_error_set(err, MAPI_ERR_USAGE, "settle must be a mapi_settle value");
    if (mapi_trace_check(opts->traceparent, opts->tracestate, err) < 0)
        return -1; /* trace.c */
    return mapi_headers_check(opts->headers, opts->nheaders, err);
}

/* k zeroed, with the call options' headers and deadline. */
static void call_init(mapi_call *k, const char *method, const mapi_call_opts *opts)
{
    memset(k, 0, sizeof *k);
    k->method = method;
    if (opts) {
        k->headers = opts->headers;
        k->nheaders = opts->nheaders;
        k->deadline = opts->deadline;
        k->traceparent = opts->traceparent;
        k->tracestate = opts->tracestate;
    }
}

/* k->url = the URL built in url (taken; a buffer that ran out of memory
   anywhere gives no URL, never a truncated one). */
static int call_url(mapi_call_base *base, mapi_call *k, mapi_buf *url, mapi_error *err)
{
    k->url_buf = mapi_buf_take(url);
    if (!k->url_buf)
        return mapi_error_oom(err), mapi_error_tag_not_sent(k->method, err);
    k->url = k->url_buf;
    base->built++;
    return 0;
}

static void query_string(mapi_buf *b, char *sep, const char *name, const char *value)
{
    if (!value || !*value)
        return;
    mapi_buf_append(b, sep, 1);
    mapi_buf_puts(b, name);
    mapi_buf_puts(b, "=");
    mapi_url_encode(b, value);
    *sep = '&';
}

static void query_long(mapi_buf *b, char *sep, const char *name, long value)
{
    if (value <= 0)
        return;
    mapi_buf_printf(b, "%c%s=%ld", *sep, name, value);
    *sep = '&';
}

/* The checks of an endpoint's call, the only ones (the binding converts
   Lua values, it checks none): 0, or -1 with USAGE. */
static int check_endpoint(const mapi_call_base *base, const mapi_endpoint *e, const char *id,
                          const mapi_page_params *p, const mapi_call_opts *opts,
                          mapi_error *err)
{
    if (mapi_id_check(e->id_name, id, err) < 0 || check_opts(opts, err) < 0 ||
        (e->lists && mapi_limit_refuse(mapi_limit_page_params(p), err) < 0))
        return -1;
    /* the interface shows Authorization on confirm and on the address list:
       a client without a key fails there, before anything is sent */
    if (e->key_for && !base->has_key)
        return mapi_error_set(err, MAPI_ERR_USAGE, "an api_key is required to %s", e->key_for);
    return 0;
}

int mapi_call_build_endpoint(mapi_call_base *base, const mapi_endpoint *e, const char *id,
                             const mapi_page_params *p, const mapi_call_opts *opts,
                             mapi_call *k, mapi_error *err)
{
    mapi_buf b;
    char sep = '?';

    call_init(k, e->method, opts);
    if (check_endpoint(base, e, id, p, opts, err) < 0)
        return mapi_error_tag_not_sent(e->method, err);
    k->moves_money = e->moves_money;
    k->endpoint = e->name;
    k->type = e->type;
    k->list = e->lists;
    k->id = e->lists ? NULL : id;
    if (e->moves_money)
        k->settle = opts && opts->settle != MAPI_SETTLE_DEFAULT ? opts->settle == MAPI_SETTLE_ON
                                                                : base->settle;
    mapi_buf_init(&b);
    mapi_buf_puts(&b, base->base_url);
    mapi_endpoint_path(&b, e, id, strlen(id));
    if (e->lists && p) {
        query_string(&b, &sep, "order", p->order);
        query_string(&b, &sep, "order_type", p->order_type);
        query_long(&b, &sep, "page", p->page);
        query_long(&b, &sep, "per_page", p->per_page);
    }
    return call_url(base, k, &b, err);
}

/* The checks of a generic call (opts not NULL, call: its mapi_call_opts
   part): 0, or -1 with USAGE. */
static int check_request(const char *method, const char *path_and_query, const char *body,
                         size_t body_len, const mapi_request_opts *opts,
                         const mapi_call_opts *call, mapi_error *err)
{
    int safety = mapi_method_safety(method);

    if (safety < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "method must be GET, HEAD, POST, PUT, PATCH or DELETE");
    if (mapi_path_check(path_and_query, err) < 0)
        return -1;
    if (!body && body_len > 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "body is NULL but body_len is %zu", body_len);
    if (body && safety == 1)
        return mapi_error_set(err, MAPI_ERR_USAGE, "a %s request takes no body", method);
    if (opts->max_retries != -1 && /* -1: the client's */
        mapi_limit_refuse(mapi_limit_max_retries(opts->max_retries), err) < 0)
        return -1;
    if (opts->type && !*opts->type)
        return mapi_error_set(err, MAPI_ERR_USAGE, "type must be NULL or a non-empty string");
    if (opts->id && (!*opts->id || !opts->type))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "id must be NULL or a non-empty string with a type");
    return check_opts(call, err);
}

int mapi_call_build_request(mapi_call_base *base, const char *method,
                            const char *path_and_query, const char *body, size_t body_len,
                            const mapi_request_opts *opts, mapi_call *k, mapi_error *err)
{
    mapi_request_opts dflt = MAPI_REQUEST_OPTS_INIT;
    mapi_call_opts call = MAPI_CALL_OPTS_INIT;
    mapi_buf b;

    if (!opts)
        opts = &dflt;
    call.headers = opts->headers;
    call.nheaders = opts->nheaders;
    call.deadline = opts->deadline;
    call.traceparent = opts->traceparent;
    call.tracestate = opts->tracestate;
    call_init(k, method, &call);
    if (check_request(method, path_and_query, body, body_len, opts, &call, err) < 0)
        return mapi_error_tag_not_sent(method, err);
    k->moves_money = mapi_method_safety(method) == 0; /* fresh connection, outcome, ... */
    k->type = opts->type;
    k->id = opts->id;
    k->body = body;
    k->body_len = body ? body_len : 0;
    k->generic = 1;
    k->endpoint = mapi_endpoint_match(method, path_and_query);
    if (opts->max_retries >= 0) {
        k->has_max_retries = 1;
        k->max_retries = opts->max_retries;
    }
    mapi_buf_init(&b);
    mapi_buf_puts(&b, base->base_url);
    mapi_buf_puts(&b, path_and_query);
    return call_url(base, k, &b, err);
}

void mapi_call_release(mapi_call *k)
{
    if (!k)
        return;
    free(k->url_buf);
    k->url_buf = NULL;
    k->url = NULL;
}

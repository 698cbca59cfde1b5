/*
 * calls.c -- the service's rules, written once: the endpoints' paths
 * (interface, "Endpoints"), the id and path checks, the list query and its
 * caps, which calls need the key, which methods are safe to repeat, and
 * the outcome rule of a call that failed before anything was sent.
 *
 * Every call is built here into a mapi_call -- by the C API (client.c,
 * request.c, pages.c) and by the Lua binding for any transport (libcurl or
 * a Lua one) -- and then run by a driver over an exchange (exchange.c).
 * Nothing else writes an endpoint path; the Lua modules ask the core for
 * theirs (core.path, core.not_sent).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

int mapi_call_not_sent(const char *method, mapi_error *err)
{
    if (err && err->kind != MAPI_ERR_NONE && mapi_method_safety(method) == 0)
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

/* Adding an endpoint is one row here (and its tests and docs): the C entry
   points, the loop starters, the binding and the Lua wrappers read it. */
static const mapi_endpoint endpoints[] = {
    {"confirm_payout", "PUT", "payouts", "", "payout_id", "payouts", "confirm a payout", 0, 1,
     payout_decimals},
    {"get_channel", "GET", "channels", "", "channel_id", "channels", NULL, 0, 0, no_decimals},
    /* the interface shows Authorization on the address list */
    {"list_addresses", "GET", "accounts", "/addresses", "account_id", "addresses",
     "list addresses", 1, 0, no_decimals},
    /* the read that follows (and settles) a confirm (interface, "Events") */
    {"get_payout", "GET", "payouts", "", "payout_id", "payouts", NULL, 0, 0, payout_decimals},
};

const mapi_endpoint *mapi_endpoint_at(size_t i)
{
    return i < sizeof endpoints / sizeof endpoints[0] ? &endpoints[i] : NULL;
}

const mapi_endpoint *mapi_endpoint_find(const char *name)
{
    const mapi_endpoint *e;
    size_t i;

    for (i = 0; name && (e = mapi_endpoint_at(i)) != NULL; i++)
        if (strcmp(name, e->name) == 0)
            return e;
    return NULL;
}

int mapi_decimal_field(const char *type, size_t type_len, const char *name, size_t name_len)
{
    const mapi_endpoint *e;
    const char *const *f;
    size_t i;

    for (i = 0; (e = mapi_endpoint_at(i)) != NULL; i++) {
        if (strlen(e->type) != type_len || memcmp(e->type, type, type_len) != 0)
            continue;
        for (f = e->decimal_fields; *f; f++)
            if (strlen(*f) == name_len && memcmp(*f, name, name_len) == 0)
                return 1;
    }
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

static int is_hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* RFC 3986 pchar without '%': unreserved, sub-delims, ':' and '@'. */
static int is_pchar(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
        return 1;
    return ch != '\0' && strchr("-._~!$&'()*+,;=:@", ch) != NULL;
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
            if (!is_hex(p[i + 1]) || !is_hex(p[i + 2]))
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "path has a '%%' at byte %zu that is not a %%XX escape",
                                      i);
            i += 2;
            continue;
        }
        if (ch == '/' || ch == '?' || is_pchar(ch) || (in_query && (ch == '[' || ch == ']')))
            continue;
        if (ch == '\r' || ch == '\n')
            return mapi_error_set(err, MAPI_ERR_USAGE, "path contains CR or LF");
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "path byte %zu (0x%02x) must be percent-encoded", i, ch);
    }
}

/* ---- pages ---- */

int mapi_pages_check(long first_page, long count, long concurrency, mapi_error *err)
{
    if (concurrency < 1)
        return mapi_error_set(err, MAPI_ERR_USAGE, "concurrency must be an integer >= 1");
    if (count < 1 || count > MAPI_PAGES_MAX)
        return mapi_error_set(err, MAPI_ERR_USAGE, "count must be an integer from 1 to %d",
                              MAPI_PAGES_MAX);
    if (first_page < 1 || first_page > LONG_MAX / 2)
        return mapi_error_set(err, MAPI_ERR_USAGE, "first_page must be an integer >= 1");
    return 0;
}

size_t mapi_pages_concurrency(size_t concurrency)
{
    return concurrency < 1 ? 1 : concurrency > MAPI_PAGES_MAX_CONCURRENCY
                                     ? MAPI_PAGES_MAX_CONCURRENCY
                                     : concurrency;
}

/* ---- building calls ---- */

/* The interface shows Authorization on confirm and on the address list: a
   client without a key fails there as USAGE, before anything is sent.
   (Whether reading a channel needs it is not shown: it goes without.) */
static int require_key(const mapi_client *c, const char *what, mapi_error *err)
{
    if (mapi_client_has_key(c))
        return 0;
    return mapi_error_set(err, MAPI_ERR_USAGE, "an api_key is required to %s", what);
}

/* Checks a call's options (NULL: the defaults); 0, or -1 with USAGE. */
static int check_opts(const mapi_call_opts *opts, mapi_error *err)
{
    if (!opts)
        return 0;
    if (opts->deadline != 0 && mapi_limit_refuse(mapi_limit_deadline(opts->deadline), err) < 0)
        return -1; /* limits.c, as for Lua; 0: the client's */
    if (opts->settle != MAPI_SETTLE_CLIENT && opts->settle != MAPI_SETTLE_ON &&
        opts->settle != MAPI_SETTLE_OFF)
        return mapi_error_set(err, MAPI_ERR_USAGE, "settle must be a mapi_settle value");
    return 0;
}

/* Checks the call's own headers (NULL opts: none); 0, or -1 with USAGE. */
static int check_headers(const mapi_call_opts *opts, mapi_error *err)
{
    return opts ? mapi_headers_check(opts->headers, opts->nheaders, err) : 0;
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
    }
}

/* url started with the client's base URL, for the call's path to follow. */
static void url_init(mapi_client *c, mapi_buf *url)
{
    mapi_buf_init(url);
    mapi_buf_puts(url, mapi_client_base_url(c));
}

/* k->url = the URL built in url (taken; a buffer that ran out of memory
   anywhere gives no URL, never a truncated one). */
static int call_url(mapi_client *c, mapi_call *k, mapi_buf *url, mapi_error *err)
{
    k->url_buf = mapi_buf_take(url);
    if (!k->url_buf)
        return mapi_call_not_sent(k->method, err), mapi_error_oom(err);
    k->url = k->url_buf;
    mapi_client_count_build(c);
    return 0;
}

static int endpoint_call(mapi_client *c, mapi_call *k, const mapi_endpoint *e,
                         const char *id, mapi_error *err)
{
    mapi_buf b;

    url_init(c, &b);
    mapi_endpoint_path(&b, e, id, strlen(id));
    return call_url(c, k, &b, err);
}

int mapi_call_confirm_payout(mapi_client *c, const char *payout_id,
                             const mapi_call_opts *opts, mapi_call *k, mapi_error *err)
{
    call_init(k, "PUT", opts);
    if (mapi_id_check("payout_id", payout_id, err) < 0 || check_opts(opts, err) < 0 ||
        require_key(c, "confirm a payout", err) < 0 || check_headers(opts, err) < 0)
        return mapi_call_not_sent("PUT", err);
    k->confirm = 1;
    k->type = "payouts";
    k->id = payout_id;
    k->settle = opts && opts->settle != MAPI_SETTLE_CLIENT ? opts->settle == MAPI_SETTLE_ON
                                                           : mapi_client_settles(c);
    return endpoint_call(c, k, &endpoints[0], payout_id, err);
}

int mapi_call_get_channel(mapi_client *c, const char *channel_id,
                          const mapi_call_opts *opts, mapi_call *k, mapi_error *err)
{
    call_init(k, "GET", opts);
    if (mapi_id_check("channel_id", channel_id, err) < 0 || check_opts(opts, err) < 0 ||
        check_headers(opts, err) < 0)
        return -1;
    k->type = "channels";
    k->id = channel_id;
    return endpoint_call(c, k, &endpoints[1], channel_id, err);
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

int mapi_call_list_addresses(mapi_client *c, const char *account_id,
                             const mapi_page_params *p, const mapi_call_opts *opts,
                             mapi_call *k, mapi_error *err)
{
    mapi_buf b;
    char sep = '?';

    call_init(k, "GET", opts);
    if (check_opts(opts, err) < 0 || mapi_id_check("account_id", account_id, err) < 0 ||
        require_key(c, "list addresses", err) < 0)
        return -1;
    if (mapi_limit_refuse(mapi_limit_page_params(p), err) < 0)
        return -1; /* limits.c, as for Lua: nothing is sent */
    if (check_headers(opts, err) < 0)
        return -1;
    k->type = "addresses";
    k->list = 1;
    url_init(c, &b);
    mapi_endpoint_path(&b, &endpoints[2], account_id, strlen(account_id));
    if (p) {
        query_string(&b, &sep, "order", p->order);
        query_string(&b, &sep, "order_type", p->order_type);
        query_long(&b, &sep, "page", p->page);
        query_long(&b, &sep, "per_page", p->per_page);
    }
    return call_url(c, k, &b, err);
}

int mapi_call_request(mapi_client *c, const char *method, const char *path_and_query,
                      const char *body, size_t body_len, const mapi_request_opts *opts,
                      mapi_call *k, mapi_error *err)
{
    mapi_request_opts dflt = MAPI_REQUEST_OPTS_INIT;
    mapi_buf b;
    int safety = mapi_method_safety(method);

    memset(k, 0, sizeof *k);
    if (!opts)
        opts = &dflt;
    if (safety < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "method must be GET, HEAD, POST, PUT, PATCH or DELETE");
    if (mapi_path_check(path_and_query, err) < 0)
        return mapi_call_not_sent(method, err);
    if (!body && body_len > 0) {
        mapi_error_set(err, MAPI_ERR_USAGE, "body is NULL but body_len is %zu", body_len);
        return mapi_call_not_sent(method, err);
    }
    if (body && safety == 1)
        return mapi_error_set(err, MAPI_ERR_USAGE, "a %s request takes no body", method);
    if (opts->max_retries != -1 &&
        mapi_limit_refuse(mapi_limit_max_retries(opts->max_retries), err) < 0)
        return mapi_call_not_sent(method, err); /* -1: the client's */
    if (opts->type && !*opts->type) {
        mapi_error_set(err, MAPI_ERR_USAGE, "type must be NULL or a non-empty string");
        return mapi_call_not_sent(method, err);
    }
    if (opts->id && (!*opts->id || !opts->type)) {
        mapi_error_set(err, MAPI_ERR_USAGE, "id must be NULL or a non-empty string with a type");
        return mapi_call_not_sent(method, err);
    }
    if (opts->deadline != 0 && mapi_limit_refuse(mapi_limit_deadline(opts->deadline), err) < 0)
        return mapi_call_not_sent(method, err);
    if (mapi_headers_check(opts->headers, opts->nheaders, err) < 0)
        return mapi_call_not_sent(method, err);
    k->method = method;
    k->confirm = !safety; /* fresh connection, outcome, cautious retries */
    k->type = opts->type;
    k->id = opts->id;
    k->deadline = opts->deadline;
    k->body = body;
    k->body_len = body ? body_len : 0;
    k->generic = 1;
    k->headers = opts->headers;
    k->nheaders = opts->nheaders;
    if (opts->max_retries >= 0) {
        k->has_max_retries = 1;
        k->max_retries = opts->max_retries;
    }
    url_init(c, &b);
    mapi_buf_puts(&b, path_and_query);
    return call_url(c, k, &b, err);
}

int mapi_call_get_payout(mapi_client *c, const char *payout_id,
                         const mapi_call_opts *call, mapi_call *k, mapi_error *err)
{
    mapi_request_opts opts = MAPI_REQUEST_OPTS_INIT;
    mapi_buf path;
    char *p;
    int rc;

    memset(k, 0, sizeof *k);
    if (mapi_id_check("payout_id", payout_id, err) < 0)
        return -1;
    mapi_buf_init(&path);
    mapi_endpoint_path(&path, &endpoints[0], payout_id, strlen(payout_id));
    p = mapi_buf_take(&path);
    if (!p)
        return mapi_error_oom(err);
    opts.type = "payouts";
    opts.id = payout_id;
    if (call) {
        opts.headers = call->headers;
        opts.nheaders = call->nheaders;
        opts.deadline = call->deadline; /* checked by mapi_call_request */
    }
    rc = mapi_call_request(c, "GET", p, NULL, 0, &opts, k, err);
    free(p);
    return rc;
}

void mapi_call_release(mapi_call *k)
{
    if (!k)
        return;
    free(k->url_buf);
    k->url_buf = NULL;
    k->url = NULL;
}

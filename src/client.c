/*
 * client.c -- the service's three endpoints (interface, "Endpoints"): the
 * client object, request URLs, and the loop that sends a call's attempts
 * over libcurl (the decisions between them -- the contract's "Retries",
 * errors, observers -- are the exchange's: exchange.c).
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define API_PREFIX "/api/public/v1"

struct mapi_client {
    mapi_http *http;
    char *base_url;       /* validated, without trailing '/' */
    char *api_key;        /* NULL when none; kept only to scrub it from errors */
    int max_retries;
    int max_depth;
    mapi_sleep_fn sleep;  /* hooks: see mapi_client_set_sleep / _random */
    void *sleep_ctx;
    mapi_random_fn random;
    void *random_ctx;
    uint64_t rng;         /* state of the default random hook */
    char *user_agent;     /* the whole User-Agent value, for transports other than libcurl */
    mapi_header_field *headers; /* mapi_config.headers: copies */
    size_t nheaders;
    size_t max_body;      /* copied for exchanges (the limits a transport is handed) */
    double timeout, connect_timeout;
    double deadline;      /* seconds for a whole call; 0: mapi_default_deadline */
    int no_settle;        /* 1: an unknown confirm is not settled by a read */
    int debug;            /* MERCHANTAPI_DEBUG was set when the client was made */
    mapi_observer_fn observer; /* mapi_client_set_observer */
    void *observer_ctx;
    mapi_exchange **capture; /* mapi_client_capture: the next call's exchange goes here */
    const mapi_exchange *replay; /* mapi_client_replay: the next call's result, ... */
    mapi_doc **replay_doc;       /*   taken from here on success */
    mapi_error *replay_err;      /*   or from here */
};

/* ---- configuration and global init ---- */

void mapi_config_init(mapi_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timeout = 30;
    cfg->connect_timeout = 10;
    cfg->max_retries = 2;
    cfg->max_body = (size_t)16 * 1024 * 1024;
    cfg->max_depth = 64;
}

/* The once-guard of curl_global_init: the library's only globals. */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init_once(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int mapi_global_init(mapi_error *err)
{
    if (pthread_once(&global_once, global_init_once) != 0)
        return mapi_error_set(err, MAPI_ERR_TRANSPORT, "pthread_once failed");
    if (global_rc != CURLE_OK) {
        mapi_error_set(err, MAPI_ERR_TRANSPORT, "curl_global_init failed: %s",
                       curl_easy_strerror(global_rc));
        if (err)
            err->curl_code = (int)global_rc;
        return -1;
    }
    return 0;
}

/* ---- the client ---- */

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static void wipe_free(char *s)
{
    volatile char *p = s;

    if (!s)
        return;
    while (*p)
        *p++ = 0;
    free(s);
}

mapi_client *mapi_client_new(const mapi_config *cfg, mapi_error *err)
{
    mapi_client *c;

    if (!cfg)
        return mapi_error_set(err, MAPI_ERR_USAGE, "config is required"), NULL;
    if (mapi_global_init(err) < 0)
        return NULL;
    if (cfg->api_key && has_control(cfg->api_key))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "api_key contains a control character (CR, LF, TAB, ...)"), NULL;
    if (cfg->user_agent && has_control(cfg->user_agent))
        return mapi_error_set(err, MAPI_ERR_USAGE, "user_agent contains a control byte"), NULL;
    if (!(cfg->timeout >= 0) || !(cfg->connect_timeout >= 0))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "timeout and connect_timeout must be >= 0 seconds"), NULL;
    if (!(cfg->deadline >= 0))
        return mapi_error_set(err, MAPI_ERR_USAGE, "deadline must be >= 0 seconds"), NULL;
    if (cfg->max_retries < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "max_retries must be >= 0"), NULL;
    if (cfg->max_depth < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "max_depth must be >= 0"), NULL;
    if (mapi_headers_check(cfg->headers, cfg->nheaders, err) < 0)
        return NULL;

    c = calloc(1, sizeof *c);
    if (!c)
        return mapi_error_oom(err), NULL;
    if (mapi_base_url_check(cfg->base_url, &c->base_url, err) < 0) {
        free(c);
        return NULL;
    }
    if (cfg->api_key && *cfg->api_key) {
        c->api_key = mapi_strdup(cfg->api_key);
        if (!c->api_key) {
            mapi_client_free(c);
            return mapi_error_oom(err), NULL;
        }
    }
    if (mapi_headers_merge(cfg->headers, cfg->nheaders, NULL, 0, &c->headers,
                           &c->nheaders) < 0) {
        mapi_client_free(c);
        return mapi_error_oom(err), NULL;
    }
    {
        char *proxy = NULL;
        if (mapi_proxy_resolve(cfg->proxy, c->base_url, &proxy, err) < 0) {
            mapi_client_free(c);
            return NULL;
        }
        c->http = mapi_http_new(cfg, c->api_key, proxy, err);
        free(proxy); /* libcurl keeps its own copy */
    }
    if (!c->http) {
        mapi_client_free(c);
        return NULL;
    }
    {
        const curl_version_info_data *vi = curl_version_info(CURLVERSION_NOW);
        const char *dbg = getenv("MERCHANTAPI_DEBUG");
        c->user_agent = mapi_user_agent(cfg->user_agent, vi ? vi->version : NULL);
        if (!c->user_agent) {
            mapi_client_free(c);
            return mapi_error_oom(err), NULL;
        }
        c->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    }
    c->max_body = cfg->max_body;
    c->timeout = cfg->timeout;
    c->connect_timeout = cfg->connect_timeout;
    c->deadline = cfg->deadline;
    c->no_settle = cfg->no_settle != 0;
    c->max_retries = cfg->max_retries;
    c->max_depth = cfg->max_depth;
    c->rng = mapi_rng_seed((uintptr_t)c);
    mapi_client_set_sleep(c, NULL, NULL);
    mapi_client_set_random(c, NULL, NULL);
    return c;
}

void mapi_client_free(mapi_client *c)
{
    if (!c)
        return;
    mapi_http_free(c->http);
    free(c->base_url);
    wipe_free(c->api_key);
    free(c->user_agent);
    mapi_headers_free(c->headers, c->nheaders);
    free(c);
}

void mapi_client_set_observer(mapi_client *c, mapi_observer_fn fn, void *ctx)
{
    if (!c)
        return;
    c->observer = fn;
    c->observer_ctx = fn ? ctx : NULL;
}

void mapi_client_capture(mapi_client *c, mapi_exchange **slot)
{
    c->capture = slot;
}

void mapi_client_replay(mapi_client *c, const mapi_exchange *x, mapi_doc **doc,
                        mapi_error *err)
{
    c->replay = x;
    c->replay_doc = doc;
    c->replay_err = err;
}

void mapi_client_set_sleep(mapi_client *c, mapi_sleep_fn fn, void *ctx)
{
    c->sleep = fn ? fn : mapi_sleep_default;
    c->sleep_ctx = fn ? ctx : NULL;
}

void mapi_client_set_random(mapi_client *c, mapi_random_fn fn, void *ctx)
{
    c->random = fn ? fn : mapi_random_default;
    c->random_ctx = fn ? ctx : &c->rng;
}

/* ---- URLs ---- */

static int check_id(const char *what, const char *id, mapi_error *err)
{
    if (!id || !*id)
        return mapi_error_set(err, MAPI_ERR_USAGE, "%s is empty", what);
    /* a dot segment would be normalised away by any intermediary */
    if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "%s must not be \".\" or \"..\"", what);
    return 0;
}

/* base_url + API_PREFIX + "/<collection>/<id>" + tail, id encoded. */
static void endpoint_url(mapi_buf *b, const mapi_client *c, const char *collection,
                         const char *id, const char *tail)
{
    mapi_buf_init(b);
    mapi_buf_puts(b, c->base_url);
    mapi_buf_puts(b, API_PREFIX "/");
    mapi_buf_puts(b, collection);
    mapi_buf_puts(b, "/");
    mapi_url_encode(b, id);
    mapi_buf_puts(b, tail);
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

/* A new exchange for call k with this client's settings. */
static mapi_exchange *client_exchange(mapi_client *c, const mapi_call *k, mapi_error *err)
{
    mapi_exchange_settings s;

    memset(&s, 0, sizeof s);
    s.api_key = c->api_key;
    s.user_agent = c->user_agent;
    s.max_retries = k->has_max_retries ? k->max_retries : c->max_retries;
    s.max_depth = c->max_depth;
    s.max_body = c->max_body;
    s.timeout = c->timeout;
    s.connect_timeout = c->connect_timeout;
    s.deadline = k->deadline > 0 ? k->deadline : c->deadline;
    s.debug = c->debug;
    s.headers = c->headers;
    s.nheaders = c->nheaders;
    return mapi_exchange_new(k, &s, err);
}

/* The call was checked and built: hand its exchange to the capturer
   (mapi_client_capture) instead of sending it. */
static int capture(mapi_client *c, const mapi_call *k, mapi_error *err)
{
    mapi_exchange **slot = c->capture;
    mapi_error e = MAPI_ERROR_INIT;

    c->capture = NULL;
    *slot = client_exchange(c, k, &e);
    if (!*slot) {
        if (err) {
            mapi_error_clear(err);
            *err = e;
        } else {
            mapi_error_clear(&e);
        }
        return -1;
    }
    return mapi_error_set(err, MAPI_ERR_USAGE, "the call was handed to a custom transport");
}

/* The call's attempts ran elsewhere (a Lua transport): give back the result
   they ended with, when it is this call's. */
static int replay(mapi_client *c, const mapi_call *k, mapi_doc **out, mapi_error *err)
{
    const mapi_call *done = mapi_exchange_call(c->replay);
    mapi_doc **doc = c->replay_doc;
    mapi_error *e = c->replay_err;

    mapi_client_replay(c, NULL, NULL, NULL);
    if (strcmp(done->method, k->method) != 0 || strcmp(done->url, k->url) != 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "the replayed result is another call's");
    if (*doc) {
        *out = *doc;
        *doc = NULL;
        return 0;
    }
    if (err) {
        mapi_error init = MAPI_ERROR_INIT;
        mapi_error_clear(err);
        *err = *e;
        *e = init;
    }
    return -1;
}

static void observe(const mapi_client *c, mapi_attempt_event ev, const mapi_attempt_info *info)
{
    if (c->observer)
        c->observer(c->observer_ctx, ev, info);
}

/* The contract's "Retries" over libcurl: every decision is the exchange's
   (exchange.c); this loop sends, observes and sleeps. */
static int run(mapi_client *c, const mapi_call *k, mapi_doc **out, mapi_error *err)
{
    mapi_error e = MAPI_ERROR_INIT;
    mapi_exchange *x;
    mapi_step step = MAPI_STEP_FAILED;
    int http1 = 0;

    if (mapi_headers_check(k->headers, k->nheaders, err) < 0) {
        if (err && k->confirm)
            err->outcome = MAPI_OUTCOME_NOT_SENT;
        return -1;
    }
    if (c->capture)
        return capture(c, k, err);
    if (c->replay)
        return replay(c, k, out, err);
    x = client_exchange(c, k, &e);
    if (x) {
        mapi_exchange_set_random(x, c->random, c->random_ctx);
        for (;;) {
            mapi_http_request req;
            mapi_response *res = NULL;
            const mapi_call *r;
            double wait, connect_timeout;
            size_t max_body;

            observe(c, MAPI_ATTEMPT_REQUEST, mapi_exchange_begin(x));
            r = mapi_exchange_request(x); /* the call, or the read settling it */
            memset(&req, 0, sizeof req);
            req.method = r->method;
            req.url = r->url;
            req.body = r->body;
            req.body_len = r->body_len;
            req.fresh_connection = r->confirm;
            req.http1 = http1;
            mapi_exchange_own_headers(x, &req.headers, &req.nheaders);
            mapi_exchange_limits(x, &req.timeout, &connect_timeout, &max_body);
            if (mapi_http_perform(c->http, &req, &res, &e) < 0)
                res = NULL;
            step = mapi_exchange_end(x, res, &e, out, &wait);
            observe(c, MAPI_ATTEMPT_RESPONSE, mapi_exchange_info(x));
            if (step == MAPI_STEP_SETTLE)
                continue; /* the read of the payout, at once */
            if (step != MAPI_STEP_RETRY)
                break;
            if (c->sleep(c->sleep_ctx, wait) != 0) {
                mapi_exchange_fail(x, &e); /* stop: the last attempt's error */
                step = MAPI_STEP_FAILED;
                break;
            }
            http1 = mapi_http_resend_refused(&e);
            mapi_error_clear(&e);
        }
        mapi_exchange_free(x);
    } else if (k->confirm) {
        e.outcome = MAPI_OUTCOME_NOT_SENT; /* out of memory before anything was sent */
    }
    if (step == MAPI_STEP_DONE)
        return 0;
    if (err) {
        mapi_error_clear(err);
        *err = e;
    } else {
        mapi_error_clear(&e);
    }
    return -1;
}

int mapi_client_run(mapi_client *c, const mapi_call *k, mapi_doc **out, mapi_error *err)
{
    return run(c, k, out, err);
}

const char *mapi_client_base_url(const mapi_client *c)
{
    return c->base_url;
}

/* The interface shows Authorization on confirm and on the address list: a
   client without a key fails there as USAGE, before anything is sent.
   (Whether reading a channel needs it is not shown: it goes without.) */
static int require_key(const mapi_client *c, const char *what, mapi_error *err)
{
    if (c->api_key)
        return 0;
    return mapi_error_set(err, MAPI_ERR_USAGE, "an api_key is required to %s", what);
}

/* Shared argument checks of the endpoints. */
static int check_call(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    if (out)
        *out = NULL;
    if (!c)
        return mapi_error_set(err, MAPI_ERR_USAGE, "client is NULL");
    if (!out)
        return mapi_error_set(err, MAPI_ERR_USAGE, "out is NULL");
    return 0;
}

static int run_url(mapi_client *c, mapi_call *k, mapi_buf *url, mapi_doc **out,
                   mapi_error *err)
{
    char *u = mapi_buf_take(url);
    int rc;

    if (!u)
        return mapi_error_oom(err);
    k->url = u;
    rc = run(c, k, out, err);
    free(u);
    return rc;
}

/* ---- endpoints ---- */

/* Checks a call's options (NULL: the defaults); 0, or -1 with USAGE. */
static int check_opts(const mapi_call_opts *opts, mapi_error *err)
{
    if (!opts)
        return 0;
    if (!(opts->deadline >= 0))
        return mapi_error_set(err, MAPI_ERR_USAGE, "deadline must be >= 0 seconds");
    if (opts->settle != MAPI_SETTLE_CLIENT && opts->settle != MAPI_SETTLE_ON &&
        opts->settle != MAPI_SETTLE_OFF)
        return mapi_error_set(err, MAPI_ERR_USAGE, "settle must be a mapi_settle value");
    return 0;
}

/* The call's own headers from opts (NULL: none). */
static void call_headers(mapi_call *k, const mapi_call_opts *opts)
{
    if (opts) {
        k->headers = opts->headers;
        k->nheaders = opts->nheaders;
    }
}

int mapi_confirm_payout_ex(mapi_client *c, const char *payout_id, const mapi_call_opts *opts,
                           mapi_doc **out, mapi_error *err)
{
    mapi_call k;
    mapi_buf url;

    if (check_call(c, out, err) < 0 || check_id("payout_id", payout_id, err) < 0 ||
        check_opts(opts, err) < 0 || require_key(c, "confirm a payout", err) < 0) {
        if (err && err->kind == MAPI_ERR_USAGE)
            err->outcome = MAPI_OUTCOME_NOT_SENT;
        return -1;
    }
    memset(&k, 0, sizeof k);
    k.method = "PUT";
    k.confirm = 1;
    k.type = "payouts";
    call_headers(&k, opts);
    k.id = payout_id;
    k.deadline = opts ? opts->deadline : 0;
    k.settle = opts && opts->settle != MAPI_SETTLE_CLIENT ? opts->settle == MAPI_SETTLE_ON
                                                          : !c->no_settle;
    endpoint_url(&url, c, "payouts", payout_id, "");
    return run_url(c, &k, &url, out, err);
}

int mapi_confirm_payout(mapi_client *c, const char *payout_id, mapi_doc **out,
                        mapi_error *err)
{
    return mapi_confirm_payout_ex(c, payout_id, NULL, out, err);
}

int mapi_get_channel_ex(mapi_client *c, const char *channel_id, const mapi_call_opts *opts,
                        mapi_doc **out, mapi_error *err)
{
    mapi_call k;
    mapi_buf url;

    if (check_call(c, out, err) < 0 || check_id("channel_id", channel_id, err) < 0 ||
        check_opts(opts, err) < 0)
        return -1;
    memset(&k, 0, sizeof k);
    k.method = "GET";
    k.type = "channels";
    call_headers(&k, opts);
    k.id = channel_id;
    k.deadline = opts ? opts->deadline : 0;
    endpoint_url(&url, c, "channels", channel_id, "");
    return run_url(c, &k, &url, out, err);
}

int mapi_get_channel(mapi_client *c, const char *channel_id, mapi_doc **out, mapi_error *err)
{
    return mapi_get_channel_ex(c, channel_id, NULL, out, err);
}

int mapi_list_addresses_call(mapi_client *c, const char *account_id,
                             const mapi_page_params *p, const mapi_call_opts *opts,
                             mapi_call *k, char **url, mapi_error *err)
{
    mapi_buf b;
    char sep = '?';

    *url = NULL;
    if (check_id("account_id", account_id, err) < 0 ||
        require_key(c, "list addresses", err) < 0)
        return -1;
    if (p && (p->page < 0 || p->per_page < 0))
        return mapi_error_set(err, MAPI_ERR_USAGE, "page and per_page must be >= 0");
    if (opts && mapi_headers_check(opts->headers, opts->nheaders, err) < 0)
        return -1;
    memset(k, 0, sizeof *k);
    k->method = "GET";
    k->type = "addresses";
    k->list = 1;
    call_headers(k, opts);
    endpoint_url(&b, c, "accounts", account_id, "/addresses");
    if (p) {
        query_string(&b, &sep, "order", p->order);
        query_string(&b, &sep, "order_type", p->order_type);
        query_long(&b, &sep, "page", p->page);
        query_long(&b, &sep, "per_page", p->per_page);
    }
    *url = mapi_buf_take(&b);
    if (!*url)
        return mapi_error_oom(err);
    k->url = *url;
    return 0;
}

void mapi_client_parts_get(mapi_client *c, mapi_client_parts *out)
{
    out->http = c->http;
    out->sleep = c->sleep;
    out->sleep_ctx = c->sleep_ctx;
}

mapi_exchange *mapi_client_exchange(mapi_client *c, const mapi_call *k, mapi_error *err)
{
    mapi_exchange *x = client_exchange(c, k, err);

    if (x)
        mapi_exchange_set_random(x, c->random, c->random_ctx);
    return x;
}

void mapi_client_observe(const mapi_client *c, mapi_attempt_event ev,
                         const mapi_attempt_info *info)
{
    observe(c, ev, info);
}

int mapi_list_addresses_ex(mapi_client *c, const char *account_id, const mapi_page_params *p,
                           const mapi_call_opts *opts, mapi_doc **out, mapi_error *err)
{
    mapi_call k;
    char *url;
    int rc;

    if (check_call(c, out, err) < 0 || check_opts(opts, err) < 0 ||
        mapi_list_addresses_call(c, account_id, p, opts, &k, &url, err) < 0)
        return -1;
    k.deadline = opts ? opts->deadline : 0;
    rc = run(c, &k, out, err);
    free(url);
    return rc;
}

int mapi_list_addresses(mapi_client *c, const char *account_id, const mapi_page_params *p,
                        mapi_doc **out, mapi_error *err)
{
    return mapi_list_addresses_ex(c, account_id, p, NULL, out, err);
}

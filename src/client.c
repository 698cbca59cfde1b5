/*
 * client.c -- the service's three endpoints (interface, "Endpoints"): the
 * client object, request URLs, the retry loop of the contract ("Retries")
 * and the mapping of responses to documents or errors.
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
    if (cfg->api_key && strpbrk(cfg->api_key, "\r\n"))
        return mapi_error_set(err, MAPI_ERR_USAGE, "api_key contains CR or LF"), NULL;
    if (cfg->user_agent && has_control(cfg->user_agent))
        return mapi_error_set(err, MAPI_ERR_USAGE, "user_agent contains a control byte"), NULL;
    if (!(cfg->timeout >= 0) || !(cfg->connect_timeout >= 0))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "timeout and connect_timeout must be >= 0 seconds"), NULL;
    if (cfg->max_retries < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "max_retries must be >= 0"), NULL;
    if (cfg->max_depth < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "max_depth must be >= 0"), NULL;

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
    c->http = mapi_http_new(cfg, c->api_key, err);
    if (!c->http) {
        mapi_client_free(c);
        return NULL;
    }
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
    free(c);
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

/* One request and its mapping.  0 with *out, or -1 with *e. */
static int attempt(mapi_client *c, const mapi_call *k, mapi_doc **out, mapi_error *e)
{
    mapi_http_request req;
    mapi_response *res = NULL;

    memset(&req, 0, sizeof req);
    req.method = k->method;
    req.url = k->url;
    req.fresh_connection = k->confirm;
    if (mapi_http_perform(c->http, &req, &res, e) < 0) {
        if (k->confirm && e->kind != MAPI_ERR_TRANSPORT)
            e->outcome = e->status >= 400 && e->status < 500 ? MAPI_OUTCOME_REJECTED
                                                             : MAPI_OUTCOME_UNKNOWN;
        if (e->kind == MAPI_ERR_DECODE && e->response)
            e->retry_after = mapi_retry_after_parse(
                mapi_response_header(e->response, "retry-after"), time(NULL));
        return -1;
    }
    return mapi_map_response(k, res, c->max_depth, out, e);
}

/* The contract's "Retries": GET retries what is retryable; the confirm PUT
   only what provably never arrived, or was answered 429. */
static int should_retry(const mapi_call *k, const mapi_error *e)
{
    if (k->confirm)
        return (e->kind == MAPI_ERR_TRANSPORT && e->outcome == MAPI_OUTCOME_NOT_SENT) ||
               (e->retryable && e->status == 429);
    return e->retryable;
}

static int run(mapi_client *c, const mapi_call *k, mapi_doc **out, mapi_error *err)
{
    mapi_error e = MAPI_ERROR_INIT;
    int attempts = 0;

    for (;;) {
        double wait;
        attempts++;
        if (attempt(c, k, out, &e) == 0) {
            mapi_error_clear(&e);
            return 0;
        }
        if (attempts > c->max_retries || !should_retry(k, &e))
            break;
        wait = e.retry_after >= 0 ? e.retry_after
                                  : mapi_backoff_delay(attempts - 1, c->random(c->random_ctx));
        if (c->sleep(c->sleep_ctx, wait) != 0)
            break;
        mapi_error_clear(&e);
    }
    e.attempts = attempts;
    if (!k->confirm)
        e.outcome = MAPI_OUTCOME_NONE; /* outcome is the confirm's question only */
    if (e.kind != MAPI_ERR_MEMORY) {
        e.method = mapi_strdup(k->method);
        e.url = mapi_strdup(k->url);
        if (!e.method || !e.url)
            mapi_error_oom(&e);
    }
    if (e.kind != MAPI_ERR_MEMORY) {
        if (mapi_error_message(&e) < 0)    /* now with method and URL */
            mapi_error_oom(&e);
        else
            mapi_error_redact(&e, c->api_key); /* the key never shows, whatever the server echoed */
    }
    if (err) {
        mapi_error_clear(err);
        *err = e;
    } else {
        mapi_error_clear(&e);
    }
    return -1;
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

int mapi_confirm_payout(mapi_client *c, const char *payout_id, mapi_doc **out,
                        mapi_error *err)
{
    mapi_call k;
    mapi_buf url;

    if (check_call(c, out, err) < 0 || check_id("payout_id", payout_id, err) < 0)
        return -1;
    if (require_key(c, "confirm a payout", err) < 0) {
        if (err)
            err->outcome = MAPI_OUTCOME_NOT_SENT;
        return -1;
    }
    memset(&k, 0, sizeof k);
    k.method = "PUT";
    k.confirm = 1;
    k.type = "payouts";
    endpoint_url(&url, c, "payouts", payout_id, "");
    return run_url(c, &k, &url, out, err);
}

int mapi_get_channel(mapi_client *c, const char *channel_id, mapi_doc **out, mapi_error *err)
{
    mapi_call k;
    mapi_buf url;

    if (check_call(c, out, err) < 0 || check_id("channel_id", channel_id, err) < 0)
        return -1;
    memset(&k, 0, sizeof k);
    k.method = "GET";
    k.type = "channels";
    endpoint_url(&url, c, "channels", channel_id, "");
    return run_url(c, &k, &url, out, err);
}

int mapi_list_addresses(mapi_client *c, const char *account_id, const mapi_page_params *p,
                        mapi_doc **out, mapi_error *err)
{
    mapi_call k;
    mapi_buf url;
    char sep = '?';

    if (check_call(c, out, err) < 0 || check_id("account_id", account_id, err) < 0 ||
        require_key(c, "list addresses", err) < 0)
        return -1;
    if (p && (p->page < 0 || p->per_page < 0))
        return mapi_error_set(err, MAPI_ERR_USAGE, "page and per_page must be >= 0");
    memset(&k, 0, sizeof k);
    k.method = "GET";
    k.type = "addresses";
    k.list = 1;
    endpoint_url(&url, c, "accounts", account_id, "/addresses");
    if (p) {
        query_string(&url, &sep, "order", p->order);
        query_string(&url, &sep, "order_type", p->order_type);
        query_long(&url, &sep, "page", p->page);
        query_long(&url, &sep, "per_page", p->per_page);
    }
    return run_url(c, &k, &url, out, err);
}

/*
 * client.c -- the client object and the blocking driver: the service's
 * endpoints (interface, "Endpoints") as C functions that build their call
 * (calls.c, the service's rules) and run it, and the loop that sends a
 * call's attempts over the HTTP layer (http.c).  The decisions between the
 * attempts -- the contract's "Retries", errors, observers -- are the
 * exchange's (exchange.c), so any other driver (a Lua transport, the page
 * fetcher of pages.c) runs the same exchange the same way.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drivers.h"
#include "http.h"

struct mapi_client {
    mapi_http *http;
    char *base_url;       /* validated, without trailing '/' */
    char *api_key;        /* NULL when none; kept only to scrub it from errors */
    int max_retries;
    int max_depth;
    mapi_sleep_fn sleep;  /* hooks: see mapi_client_set_sleep / _random */
    void *sleep_ctx;
    mapi_random_fn random;
    void *random_ctx;     /* random NULL: each exchange's own generator */
    char *user_agent;     /* the whole User-Agent value, for transports other than libcurl */
    mapi_header_field *headers; /* mapi_config.headers: copies */
    size_t nheaders;
    size_t max_body;      /* copied for exchanges (the limits a transport is handed) */
    double timeout, connect_timeout;
    double deadline;      /* seconds for a whole call; 0: mapi_default_deadline */
    int debug;            /* mapi_config.debug, or MERCHANTAPI_DEBUG was set when the
                             client was made */
    int trace;            /* mapi_config.trace */
    uint64_t trace_rng;   /* the seed of every traced call's ids; 0 until the first */
    unsigned long trace_forks; /* mapi_trace_forks() when trace_rng was seeded */
    mapi_observer_fn observer; /* mapi_client_set_observer */
    void *observer_ctx;
    mapi_call_base call_base;  /* what calls.c's builders need of it, as plain values */
    mapi_metrics *metrics; /* mapi_client_metrics: NULL until asked for */
};

/* ---- configuration and global init ---- */

void mapi_config_init(mapi_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->timeout = MAPI_DEFAULT_TIMEOUT;
    cfg->connect_timeout = MAPI_DEFAULT_CONNECT_TIMEOUT;
    cfg->max_retries = MAPI_DEFAULT_MAX_RETRIES;
    cfg->max_body = MAPI_DEFAULT_MAX_BODY;
    cfg->max_depth = MAPI_DEFAULT_MAX_DEPTH;
}

/* ---- the client ---- */

mapi_client *mapi_client_new(const mapi_config *cfg, mapi_error *err)
{
    mapi_client *c;
    char *proxy = NULL;
    const char *bad = NULL, *dbg = getenv("MERCHANTAPI_DEBUG");

    if (!cfg)
        return mapi_error_set(err, MAPI_ERR_USAGE, "config is required"), NULL;
    if (mapi_global_init(err) < 0)
        return NULL;
    if (cfg->api_key && mapi_has_control(cfg->api_key))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "api_key contains a control character (CR, LF, TAB, ...)"), NULL;
    if (cfg->user_agent && mapi_has_control(cfg->user_agent))
        return mapi_error_set(err, MAPI_ERR_USAGE, "user_agent contains a control byte"), NULL;
    /* the option limits (limits.c), as for Lua; 0 stands for the default */
    if ((cfg->timeout != 0 && (bad = mapi_limit_timeout(cfg->timeout))) ||
        (cfg->connect_timeout != 0 && (bad = mapi_limit_connect_timeout(cfg->connect_timeout))) ||
        (cfg->deadline != 0 && (bad = mapi_limit_deadline(cfg->deadline))) ||
        (bad = mapi_limit_max_retries(cfg->max_retries)) ||
        (cfg->max_body != 0 && (bad = mapi_limit_max_body(cfg->max_body))) ||
        (bad = mapi_limit_max_depth(cfg->max_depth)))
        return mapi_limit_refuse(bad, err), NULL;
    if (mapi_headers_check(cfg->headers, cfg->nheaders, err) < 0)
        return NULL;

    c = calloc(1, sizeof *c);
    if (!c)
        return mapi_error_oom(err), NULL;
    if (mapi_base_url_check(cfg->base_url, &c->base_url, err) < 0) {
        free(c);
        return NULL;
    }
    c->api_key = cfg->api_key && *cfg->api_key ? mapi_strdup(cfg->api_key) : NULL;
    c->user_agent = mapi_user_agent(cfg->user_agent, mapi_http_version());
    if ((cfg->api_key && *cfg->api_key && !c->api_key) || !c->user_agent ||
        mapi_headers_merge(cfg->headers, cfg->nheaders, NULL, 0, &c->headers, &c->nheaders) < 0) {
        mapi_client_free(c);
        return mapi_error_oom(err), NULL;
    }
    if (mapi_proxy_resolve(cfg->proxy, c->base_url, &proxy, err) < 0) {
        mapi_client_free(c);
        return NULL;
    }
    c->http = mapi_http_new(cfg, c->api_key, proxy, c->user_agent, err);
    free(proxy); /* libcurl keeps its own copy */
    if (!c->http) {
        mapi_client_free(c);
        return NULL;
    }
    c->debug = cfg->debug || (dbg && *dbg && strcmp(dbg, "0") != 0);
    c->max_body = cfg->max_body;
    c->trace = cfg->trace != 0;
    c->timeout = cfg->timeout;
    c->connect_timeout = cfg->connect_timeout;
    c->deadline = cfg->deadline;
    c->call_base.base_url = c->base_url;
    c->call_base.has_key = c->api_key != NULL;
    c->call_base.settle = cfg->settle != MAPI_SETTLE_OFF;
    c->max_retries = cfg->max_retries;
    c->max_depth = cfg->max_depth;
    mapi_client_set_sleep(c, NULL, NULL);
    return c;
}

void mapi_client_free(mapi_client *c)
{
    if (!c)
        return;
    mapi_http_free(c->http);
    free(c->base_url);
    mapi_wipe_free(c->api_key);
    free(c->user_agent);
    mapi_headers_free(c->headers, c->nheaders);
    mapi_metrics_release(c->metrics);
    free(c);
}

void mapi_client_set_observer(mapi_client *c, mapi_observer_fn fn, void *ctx)
{
    if (!c)
        return;
    c->observer = fn;
    c->observer_ctx = fn ? ctx : NULL;
}

void mapi_client_set_sleep(mapi_client *c, mapi_sleep_fn fn, void *ctx)
{
    c->sleep = fn ? fn : mapi_sleep_default;
    c->sleep_ctx = fn ? ctx : NULL;
}

void mapi_client_set_random(mapi_client *c, mapi_random_fn fn, void *ctx)
{
    c->random = fn;
    c->random_ctx = ctx;
}

mapi_exchange *mapi_client_prepare(mapi_client *c, const mapi_call *k, mapi_error *err)
{
    mapi_exchange_settings s;
    mapi_exchange *x;

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
    s.trace = c->trace;
    if (c->trace || k->traceparent) {
        unsigned long forks = mapi_trace_forks();
        if (!c->trace_rng || c->trace_forks != forks) { /* once per process (trace.c) */
            c->trace_rng = mapi_trace_seed();
            c->trace_forks = forks;
        }
        s.trace_seed = mapi_trace_next(&c->trace_rng);
    }
    s.headers = c->headers;
    s.nheaders = c->nheaders;
    s.metrics = c->metrics;
    x = mapi_exchange_new(k, &s, err);
    if (x)
        mapi_exchange_set_random(x, c->random, c->random_ctx);
    return x;
}

mapi_metrics *mapi_client_metrics(mapi_client *c)
{
    mapi_attempt_info seed;
    size_t r;

    if (c->metrics)
        return c->metrics;
    c->metrics = mapi_metrics_new();
    memset(&seed, 0, sizeof seed);
    seed.server_address = c->metrics ? mapi_attempt_server(c->base_url, &seed.server_port) : NULL;
    if (!seed.server_address) {
        mapi_metrics_release(c->metrics);
        return c->metrics = NULL;
    }
    for (r = 0; r < MAPI_EP_COUNT; r++) { /* each endpoint's cell, at 0 from the first read */
        seed.method = mapi_endpoints[r].method;
        seed.endpoint = mapi_endpoints[r].name;
        mapi_metrics_seed(c->metrics, &seed);
    }
    free((char *)seed.server_address);
    return c->metrics;
}

void mapi_client_observe(const mapi_client *c, mapi_attempt_event ev,
                         const mapi_attempt_info *info)
{
    if (c->observer)
        c->observer(c->observer_ctx, ev, info);
}

mapi_ended mapi_client_http_ended(int rc, const mapi_error *e)
{
    if (rc == 0)
        return MAPI_ENDED_ANSWER;
    return mapi_http_is_stopped_resend(e) ? MAPI_ENDED_RESEND_STOPPED : MAPI_ENDED_FAILED;
}

/* Every decision is the exchange's: this loop sends, observes and sleeps. */
int mapi_client_run(mapi_client *c, mapi_call *k, mapi_doc **out, mapi_error *err)
{
    mapi_error e = MAPI_ERROR_INIT;
    mapi_exchange *x;
    mapi_step step = MAPI_STEP_FAILED;

    x = mapi_client_prepare(c, k, &e);
    mapi_call_release(k);
    if (x) {
        for (;;) {
            mapi_attempt_request req;
            mapi_response *res = NULL;
            double wait;
            int rc;

            mapi_client_observe(c, MAPI_ATTEMPT_REQUEST, mapi_exchange_begin_attempt(x));
            mapi_exchange_request(x, &req);
            rc = mapi_http_perform(c->http, &req, &res, &e);
            step = mapi_exchange_end_attempt(x, mapi_client_http_ended(rc, &e),
                                             rc == 0 ? res : NULL, &e, out, &wait);
            mapi_client_observe(c, MAPI_ATTEMPT_RESPONSE, mapi_exchange_info(x));
            if (step == MAPI_STEP_SETTLE)
                continue; /* the read of the payout, at once */
            if (step != MAPI_STEP_RETRY)
                break;
            if (c->sleep(c->sleep_ctx, wait) != 0) {
                mapi_exchange_fail(x, &e); /* stop: the last attempt's error */
                step = MAPI_STEP_FAILED;
                break;
            }
            mapi_error_clear(&e);
        }
        mapi_exchange_free(x);
    } else {
        mapi_error_tag_not_sent(k->method, &e); /* out of memory before anything was sent */
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

int mapi_call_endpoint(mapi_client *c, const mapi_endpoint *e, const char *id,
                       const mapi_page_params *p, const mapi_call_opts *opts, mapi_call *k,
                       mapi_error *err)
{
    return mapi_call_build_endpoint(&c->call_base, e, id, p, opts, k, err);
}

int mapi_call_request(mapi_client *c, const char *method, const char *path_and_query,
                      const char *body, size_t body_len, const mapi_request_opts *opts,
                      mapi_call *k, mapi_error *err)
{
    return mapi_call_build_request(&c->call_base, method, path_and_query, body, body_len,
                                   opts, k, err);
}

const char *mapi_client_base_url(const mapi_client *c)
{
    return c->call_base.base_url;
}

unsigned long mapi_client_calls_built(const mapi_client *c)
{
    return c->call_base.built;
}

void mapi_client_parts_get(mapi_client *c, mapi_client_parts *out)
{
    out->http = c->http;
    out->sleep = c->sleep;
    out->sleep_ctx = c->sleep_ctx;
}

/* ---- endpoints and the generic call: build the call (calls.c), run it ---- */

/* Builds the call of the endpoint table's row r (calls.c) and runs it. */
static int run_endpoint(mapi_client *c, mapi_endpoint_row r, const char *id,
                        const mapi_page_params *p, const mapi_call_opts *opts, mapi_doc **out,
                        mapi_error *err)
{
    const mapi_endpoint *e = &mapi_endpoints[r];
    mapi_call k;

    if (out)
        *out = NULL;
    if (!c || !out) {
        mapi_error_set(err, MAPI_ERR_USAGE, "%s: client and out are required", e->name);
        return mapi_error_tag_not_sent(e->method, err);
    }
    if (mapi_call_endpoint(c, e, id, p, opts, &k, err) < 0)
        return -1;
    return mapi_client_run(c, &k, out, err);
}

int mapi_confirm_payout_ex(mapi_client *c, const char *payout_id, const mapi_call_opts *opts,
                           mapi_doc **out, mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_CONFIRM_PAYOUT, payout_id, NULL, opts, out, err);
}

int mapi_confirm_payout(mapi_client *c, const char *payout_id, mapi_doc **out,
                        mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_CONFIRM_PAYOUT, payout_id, NULL, NULL, out, err);
}

int mapi_get_channel_ex(mapi_client *c, const char *channel_id, const mapi_call_opts *opts,
                        mapi_doc **out, mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_GET_CHANNEL, channel_id, NULL, opts, out, err);
}

int mapi_get_channel(mapi_client *c, const char *channel_id, mapi_doc **out, mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_GET_CHANNEL, channel_id, NULL, NULL, out, err);
}

int mapi_list_addresses_ex(mapi_client *c, const char *account_id, const mapi_page_params *p,
                           const mapi_call_opts *opts, mapi_doc **out, mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_LIST_ADDRESSES, account_id, p, opts, out, err);
}

int mapi_list_addresses(mapi_client *c, const char *account_id, const mapi_page_params *p,
                        mapi_doc **out, mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_LIST_ADDRESSES, account_id, p, NULL, out, err);
}

int mapi_get_payout_ex(mapi_client *c, const char *payout_id, const mapi_call_opts *opts,
                       mapi_doc **out, mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_GET_PAYOUT, payout_id, NULL, opts, out, err);
}

int mapi_get_payout(mapi_client *c, const char *payout_id, mapi_doc **out, mapi_error *err)
{
    return run_endpoint(c, MAPI_EP_GET_PAYOUT, payout_id, NULL, NULL, out, err);
}

int mapi_request_ex(mapi_client *c, const char *method, const char *path_and_query,
                    const char *body, size_t body_len, const mapi_request_opts *opts,
                    mapi_doc **out, mapi_error *err)
{
    mapi_call k;

    if (out)
        *out = NULL;
    if (!c || !out || !method || !path_and_query)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "mapi_request: client, method, path and out are required");
    if (mapi_call_request(c, method, path_and_query, body, body_len, opts, &k, err) < 0)
        return -1;
    return mapi_client_run(c, &k, out, err);
}

int mapi_request(mapi_client *c, const char *method, const char *path_and_query,
                 const char *body, size_t body_len, mapi_doc **out, mapi_error *err)
{
    return mapi_request_ex(c, method, path_and_query, body, body_len, NULL, out, err);
}

/*
 * test_exchange.c -- the decisions between attempts (src/exchange.c), fed
 * answers by hand as a Lua transport feeds them, and the observer of a
 * client (mapi_client_set_observer) over libcurl against the sandbox.
 */
#include "testutil.h"

static const char CHANNEL_DOC[] =
    "{\"data\":{\"type\":\"channels\",\"id\":\"c1\",\"attributes\":{\"status\":\"enabled\"}},"
    "\"meta\":{},\"jsonapi\":{\"version\":\"1.0\"}}";

/* An exchange for a call: GET of a channel, or the confirm PUT. */
static mapi_exchange *new_exchange(int confirm, int max_retries, const char *key)
{
    mapi_call k;
    mapi_exchange_settings s;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_exchange *x;

    memset(&k, 0, sizeof k);
    k.method = confirm ? "PUT" : "GET";
    k.url = confirm ? "http://h/api/public/v1/payouts/p" : "http://h/api/public/v1/channels/c1";
    k.moves_money = confirm;
    k.type = confirm ? "payouts" : "channels";
    memset(&s, 0, sizeof s);
    s.api_key = key;
    s.user_agent = "merchantapi/test";
    s.max_retries = max_retries;
    s.max_body = 4096;
    x = mapi_exchange_new(&k, &s, &err);
    if (!x)
        fail_msg("mapi_exchange_new: %s", err.message ? err.message : "?");
    return x;
}

/* A response as a transport hands it over, with X-Request-Id "rid". */
static mapi_response *response(int status, const char *ct, const char *retry_after,
                               const char *body)
{
    return tu_response(status, ct, retry_after, "rid", body);
}

static void transport_failure(mapi_error *e, mapi_outcome outcome)
{
    mapi_error_set(e, MAPI_ERR_TRANSPORT, "connection refused");
    e->retryable = 1;
    e->outcome = outcome;
}

static void get_retries_then_succeeds(void **state)
{
    mapi_exchange *x = new_exchange(0, 2, "sk_secret_key");
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    const mapi_attempt_info *in;
    const char *name, *value;
    (void)state;

    /* the headers a transport sends: libcurl's */
    assert_int_equal(mapi_exchange_header_at(x, 2, &name, &value), 1);
    assert_string_equal(name, "Authorization");
    assert_string_equal(value, "Bearer sk_secret_key");
    assert_int_equal(mapi_exchange_header_at(x, 3, &name, &value), 1);
    assert_string_equal(name, "User-Agent");
    assert_int_equal(mapi_exchange_header_at(x, 4, &name, &value), 0);

    in = mapi_exchange_begin_attempt(x);
    assert_int_equal(in->attempt, 1);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               response(503, NULL, NULL, "<html>"), &e, &doc,
                                               &wait),
                     MAPI_STEP_RETRY);
    assert_true(wait >= 0 && wait <= 0.5);
    in = mapi_exchange_info(x);
    assert_int_equal(in->status, 503);
    assert_int_equal(in->error, MAPI_ERR_HTTP);
    assert_string_equal(in->request_id, "rid");
    assert_true(in->retry_in == wait);
    mapi_error_clear(&e);

    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, response(429, NULL, "3", ""),
                                               &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    assert_true(wait == 3.0); /* Retry-After, not the backoff */
    mapi_error_clear(&e);

    in = mapi_exchange_begin_attempt(x);
    assert_int_equal(in->attempt, 3);
    assert_int_equal(
        mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                  response(200, "application/vnd.api+json", NULL, CHANNEL_DOC), &e,
                                  &doc, &wait),
        MAPI_STEP_DONE);
    assert_non_null(doc);
    assert_string_equal(mapi_resource_id(mapi_doc_data(doc, 0)), "c1");
    assert_int_equal(mapi_exchange_info(x)->error, MAPI_ERR_NONE);
    assert_true(mapi_exchange_info(x)->retry_in < 0);
    mapi_doc_free(doc);
    mapi_exchange_free(x);
}

static void get_gives_up_after_max_retries(void **state)
{
    mapi_exchange *x = new_exchange(0, 1, NULL);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    const char *name, *value;
    (void)state;

    /* no key: no Authorization header */
    assert_int_equal(mapi_exchange_header_at(x, 2, &name, &value), 1);
    assert_string_equal(name, "User-Agent");
    mapi_exchange_begin_attempt(x);
    transport_failure(&e, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    mapi_error_clear(&e);
    mapi_exchange_begin_attempt(x);
    transport_failure(&e, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_int_equal(e.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(e.attempts, 2);
    assert_int_equal(e.outcome, MAPI_OUTCOME_NONE); /* a GET has no outcome */
    assert_string_equal(e.method, "GET");
    assert_string_equal(e.message,
                        "merchantapi: transport: connection refused "
                        "[GET /api/public/v1/channels/c1]");
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

/* A jitter source of u = 0.5: the backoff's wait is never 0. */
static double half(void *ctx)
{
    (void)ctx;
    return 0.5;
}

/* The HTTP/1.1 decision is the exchange's: after an attempt whose resend
   the transport stopped (libcurl's code 42), the retry goes at once and its
   request says HTTP/1.1; after any other failure, the backoff and the
   transport's default again; a confirm whose resend was stopped is settled
   by a read, never resent. */
static void stopped_resend_retries_at_once_over_http1(void **state)
{
    mapi_exchange *x = new_exchange(0, 3, NULL);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    mapi_attempt_request req;
    double wait;
    (void)state;

    mapi_exchange_set_random(x, half, NULL);
    mapi_exchange_begin_attempt(x);
    mapi_exchange_request(x, &req);
    assert_int_equal(req.http1, 0);
    transport_failure(&e, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_RESEND_STOPPED, NULL, &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    assert_true(wait == 0.0);
    mapi_error_clear(&e);
    mapi_exchange_begin_attempt(x);
    mapi_exchange_request(x, &req);
    assert_int_equal(req.http1, 1);
    assert_string_equal(req.method, "GET");
    /* the same failure, not a stopped resend: the backoff, no HTTP/1.1 */
    transport_failure(&e, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    assert_true(wait > 0.0);
    mapi_error_clear(&e);
    mapi_exchange_begin_attempt(x);
    mapi_exchange_request(x, &req);
    assert_int_equal(req.http1, 0);
    assert_int_equal(
        mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                  response(200, "application/vnd.api+json", NULL, CHANNEL_DOC), &e,
                                  &doc, &wait),
        MAPI_STEP_DONE);
    mapi_doc_free(doc);
    doc = NULL;
    mapi_exchange_free(x);

    /* a confirm: the stopped resend may have reached the server -- settled
       by the read of its payout, which is no resend over HTTP/1.1 */
    x = new_exchange(1, 3, NULL);
    mapi_exchange_begin_attempt(x);
    transport_failure(&e, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_RESEND_STOPPED, NULL, &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void confirm_retries_only_what_was_not_sent(void **state)
{
    mapi_exchange *x = new_exchange(1, 2, "sk_secret_key");
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    (void)state;

    mapi_exchange_begin_attempt(x);
    transport_failure(&e, MAPI_OUTCOME_NOT_SENT);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    mapi_error_clear(&e);
    mapi_exchange_begin_attempt(x);
    transport_failure(&e, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(e.attempts, 2);
    mapi_error_clear(&e);
    mapi_exchange_free(x);

    /* a 503 may have been processed: never retried */
    x = new_exchange(1, 2, NULL);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, response(503, NULL, NULL, ""),
                                               &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void body_over_max_body_is_decode(void **state)
{
    mapi_exchange *x = new_exchange(0, 2, NULL);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    char *big = malloc(5000);
    (void)state;

    assert_non_null(big);
    memset(big, ' ', 4999);
    big[4999] = '\0';
    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               response(200, "application/vnd.api+json", NULL, big),
                                               &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_int_equal(e.kind, MAPI_ERR_DECODE);
    assert_int_equal(e.status, 200);
    assert_non_null(e.response);
    free(big);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void key_is_redacted_from_the_url_and_errors(void **state)
{
    mapi_call k;
    mapi_exchange_settings s;
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    mapi_exchange *x;
    double wait;
    (void)state;

    memset(&k, 0, sizeof k);
    k.method = "GET";
    k.url = "http://h/api/public/v1/channels/xsk_secret_key";
    k.type = "channels";
    memset(&s, 0, sizeof s);
    s.api_key = "sk_secret_key";
    x = mapi_exchange_new(&k, &s, &e);
    assert_non_null(x);
    assert_string_equal(mapi_exchange_begin_attempt(x)->url,
                        "http://h/api/public/v1/channels/x[REDACTED]");
    mapi_error_set(&e, MAPI_ERR_TRANSPORT, "echo Bearer sk_secret_key");
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_null(strstr(e.message, "sk_secret_key"));
    assert_null(strstr(e.url, "sk_secret_key"));
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

/* ---- the observer over libcurl ---- */

typedef struct seen {
    int n;
    mapi_attempt_event events[16];
    int attempts[16], statuses[16];
    double retry_in[16];
    char request_ids[16][40];
    char url[256];
} seen;

static void record(void *ctx, mapi_attempt_event ev, const mapi_attempt_info *in)
{
    seen *s = ctx;
    if (s->n >= 16)
        return;
    s->events[s->n] = ev;
    s->attempts[s->n] = in->attempt;
    s->statuses[s->n] = in->status;
    s->retry_in[s->n] = in->retry_in;
    snprintf(s->request_ids[s->n], sizeof s->request_ids[0], "%s",
             in->request_id ? in->request_id : "");
    snprintf(s->url, sizeof s->url, "%s", in->url);
    s->n++;
}

static void observer_sees_every_attempt(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    seen s;
    int i;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    memset(&s, 0, sizeof s);
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    mapi_client_set_observer(c, record, &s);
    if (mapi_get_channel(c, "fault-flaky-2-503", &doc, &err) != 0)
        fail_msg("%s", err.message);
    mapi_doc_free(doc);
    assert_int_equal(s.n, 6);
    for (i = 0; i < 6; i++) {
        assert_int_equal(s.events[i], i % 2 ? MAPI_ATTEMPT_RESPONSE : MAPI_ATTEMPT_REQUEST);
        assert_int_equal(s.attempts[i], i / 2 + 1);
    }
    assert_int_equal(s.statuses[0], 0);
    assert_int_equal(s.statuses[1], 503);
    assert_int_equal(s.statuses[3], 503);
    assert_int_equal(s.statuses[5], 200);
    assert_true(s.retry_in[1] == sl.waits[0]);
    assert_true(s.retry_in[3] == sl.waits[1]);
    assert_true(s.retry_in[5] < 0);
    assert_int_equal(strlen(s.request_ids[5]), 32);
    assert_non_null(strstr(s.url, "/api/public/v1/channels/fault-flaky-2-503"));
    /* removed: no more calls */
    mapi_client_set_observer(c, NULL, NULL);
    s.n = 0;
    assert_int_equal(mapi_get_channel(c, "fault-flaky-2-503", &doc, &err), 0);
    mapi_doc_free(doc);
    assert_int_equal(s.n, 0);
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(get_retries_then_succeeds),
        cmocka_unit_test(get_gives_up_after_max_retries),
        cmocka_unit_test(stopped_resend_retries_at_once_over_http1),
        cmocka_unit_test(confirm_retries_only_what_was_not_sent),
        cmocka_unit_test(body_over_max_body_is_decode),
        cmocka_unit_test(key_is_redacted_from_the_url_and_errors),
        cmocka_unit_test(observer_sees_every_attempt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

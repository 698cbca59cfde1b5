/*
 * test_faults.c -- the client against the sandbox's fault ids and against
 * no server at all: HTTP errors, unreadable bodies, the body cap, transport
 * failures and their outcome, retries and their waits, and the api key kept
 * out of every error.
 */
#include "testutil.h"

/* A port nobody listens on: the discard port on loopback. */
#define DEAD_BASE "http://127.0.0.1:9"

/* ---- faults ---- */

static void fault_redirect_is_http_302(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_get_channel(c, "fault-redirect", &doc, &err), -1);
    TU_ASSERT_ERROR(err, MAPI_ERR_HTTP, 302, MAPI_OUTCOME_NONE, 0, 1);
    assert_string_equal(err.title, "HTTP 302");
    assert_true(tu_contains(err.detail, "other-host.invalid"));
    assert_non_null(err.response);
    assert_non_null(mapi_response_header(err.response, "location"));
    assert_true(strncmp(err.message, "merchantapi: HTTP 302 (redirect to ", 35) == 0);
    mapi_error_clear(&err);
    /* the confirm PUT: answered, but not a 4xx, so the outcome is unknown */
    assert_int_equal(mapi_confirm_payout(c, "fault-redirect", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_HTTP);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void fault_html_502_is_retried_http(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    assert_int_equal(mapi_get_channel(c, "fault-html-502", &doc, &err), -1);
    TU_ASSERT_ERROR(err, MAPI_ERR_HTTP, 502, MAPI_OUTCOME_NONE, 1, 3);
    assert_int_equal(tu_sandbox_count("fault-html-502"), 3);
    /* backoff: full jitter under 0.5 s, then under 1 s */
    assert_int_equal(sl.calls, 2);
    assert_true(sl.waits[0] >= 0 && sl.waits[0] < 0.5);
    assert_true(sl.waits[1] >= 0 && sl.waits[1] < 1.0);
    assert_true(tu_contains(mapi_response_header(err.response, "content-type"), "text/html"));
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void fault_5xx(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    /* 500: not retryable, for GET either */
    assert_int_equal(mapi_get_channel(c, "fault-500", &doc, &err), -1);
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 500, MAPI_OUTCOME_NONE, 0, 1);
    mapi_error_clear(&err);
    /* 503, 504, 502 with an error document: GET retries them */
    assert_int_equal(mapi_get_channel(c, "fault-503", &doc, &err), -1);
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 503, MAPI_OUTCOME_NONE, 1, 3);
    mapi_error_clear(&err);
    assert_int_equal(mapi_get_channel(c, "fault-504", &doc, &err), -1);
    assert_int_equal(err.status, 504);
    assert_int_equal(err.attempts, 3);
    mapi_error_clear(&err);
    assert_int_equal(mapi_get_channel(c, "fault-502-json", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_API);
    assert_int_equal(err.status, 502);
    assert_string_equal(err.code, "bad_gateway");
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-503"), 3);
    /* the confirm PUT is not retried on a 5xx: it may have gone through */
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-503", tu_no_settle(), &doc, &err), -1);
    /* calling again is not known to be safe */
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 503, MAPI_OUTCOME_UNKNOWN, 0, 1);
    mapi_error_clear(&err);
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-500", tu_no_settle(), &doc, &err), -1);
    assert_int_equal(err.attempts, 1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-503"), 4);
    mapi_client_free(c);
}

static void fault_429_honours_retry_after(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    assert_int_equal(mapi_get_channel(c, "fault-429", &doc, &err), -1);
    assert_int_equal(err.status, 429);
    assert_int_equal(err.retryable, 1);
    assert_int_equal(err.attempts, 3);
    assert_true(err.retry_after == 1.0);
    assert_int_equal(sl.calls, 2);
    assert_true(sl.waits[0] == 1.0 && sl.waits[1] == 1.0);
    mapi_error_clear(&err);
    /* the confirm PUT is retried on 429: the server did not take it */
    assert_int_equal(mapi_confirm_payout(c, "fault-429", &doc, &err), -1);
    assert_int_equal(err.attempts, 3);
    assert_int_equal(err.outcome, MAPI_OUTCOME_REJECTED);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-429"), 6);
    /* Retry-After as an HTTP date, one second ahead: 0..2 s (clock granularity) */
    assert_int_equal(mapi_get_channel(c, "fault-429-date", &doc, &err), -1);
    assert_int_equal(err.status, 429);
    assert_true(err.retry_after >= 0.0 && err.retry_after <= 2.0);
    assert_true(sl.waits[2] >= 0.0 && sl.waits[2] <= 2.0);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void fault_flaky_recovers(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    TU_OK(mapi_get_channel(c, "fault-flaky-2-503", &doc, &err), err);
    assert_string_equal(mapi_resource_type(mapi_doc_data(doc, 0)), "channels");
    assert_int_equal(err.kind, MAPI_ERR_NONE);
    mapi_doc_free(doc);
    assert_int_equal(sl.calls, 2);
    assert_int_equal(tu_sandbox_count("fault-flaky-2-503"), 3);
    /* more failures than retries: the last failure comes back */
    assert_int_equal(mapi_get_channel(c, "fault-flaky-5-504", &doc, &err), -1);
    assert_int_equal(err.status, 504);
    assert_int_equal(err.attempts, 3);
    mapi_error_clear(&err);
    /* confirm through a flaky 429 */
    TU_OK(mapi_confirm_payout(c, "fault-flaky-1-429", &doc, &err), err);
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 201);
    mapi_doc_free(doc);
    mapi_client_free(c);
}

static void fault_bodies_fail_as_decode(void **state)
{
    static const char *const ids[] = {"fault-bad-json", "fault-wrong-type",
                                      "fault-not-jsonapi", "fault-text-plain", "fault-deep",
                                      "fault-bad-utf8"};
    mapi_client *c;
    size_t i;
    (void)state;
    c = tu_sandbox_client();
    for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        assert_int_equal(mapi_get_channel(c, ids[i], &doc, &err), -1);
        assert_null(doc);
        if (err.kind != MAPI_ERR_DECODE)
            fail_msg("%s: %s", ids[i], err.message);
        assert_int_equal(err.status, 200);
        assert_int_equal(err.retryable, 0);
        assert_int_equal(err.attempts, 1);
        assert_non_null(err.response);
        assert_true(strncmp(err.message, "merchantapi: decode: ", 21) == 0);
        mapi_error_clear(&err);
        /* a 2xx to the confirm that cannot be read: it may have gone through */
        assert_int_equal(mapi_confirm_payout(c, ids[i], &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_DECODE);
        assert_int_equal(err.status, 201);
        assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
        mapi_error_clear(&err);
    }
    mapi_client_free(c);
}

static void fault_big_body_is_capped(void **state)
{
    mapi_config cfg;
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_get_channel(c, "fault-big-body", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "body over max_body (16777216 bytes)");
    assert_int_equal(err.status, 200);
    assert_non_null(err.response);
    assert_true(err.response->len <= 16777216);
    mapi_error_clear(&err);
    mapi_client_free(c);
    /* a small cap cuts the body while it arrives */
    mapi_config_init(&cfg);
    cfg.base_url = tu_base_url();
    cfg.api_key = tu_api_key();
    cfg.max_body = 1000;
    c = mapi_client_new(&cfg, &err);
    assert_non_null(c);
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "body over max_body (1000 bytes)");
    assert_true(err.response->len <= 1000);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void transport_failures(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 2, 1.0, &sl);
    /* the server reads the PUT and closes without answering */
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-no-response", tu_no_settle(), &doc, &err), -1);
    /* it may have gone through: not safe to send again */
    TU_ASSERT_ERROR(err, MAPI_ERR_TRANSPORT, 0, MAPI_OUTCOME_UNKNOWN, 0, 1);
    assert_int_equal(err.curl_code, CURLE_GOT_NOTHING);
    assert_null(err.response);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-no-response"), 1);
    /* a reset or a cut after half the body: for GET retried, then transport */
    assert_int_equal(mapi_get_channel(c, "fault-reset", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.attempts, 3);
    mapi_error_clear(&err);
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-truncated-chunked", tu_no_settle(), &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(err.attempts, 1);
    mapi_error_clear(&err);
    /* timeout (1 s) after the request was sent: outcome unknown, not retried */
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-slow-first-byte", tu_no_settle(), &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.curl_code, CURLE_OPERATION_TIMEDOUT);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(err.attempts, 1);
    assert_true(strncmp(err.message, "merchantapi: transport: ", 24) == 0);
    mapi_error_clear(&err);
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-slow-body", tu_no_settle(), &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

/* Nobody listens: the PUT provably never left, so it is retried. */
static void connection_refused_not_sent(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    (void)state;
    c = tu_client_ex(DEAD_BASE, TU_DEFAULT_KEY, 2, 0, &sl);
    assert_int_equal(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), -1);
    assert_null(doc);
    TU_ASSERT_ERROR(err, MAPI_ERR_TRANSPORT, 0, MAPI_OUTCOME_NOT_SENT, 1, 3);
    assert_int_equal(err.curl_code, CURLE_COULDNT_CONNECT);
    assert_int_equal(sl.calls, 2);
    assert_true(err.retry_after == -1.0);
    assert_string_equal(err.method, "PUT");
    assert_string_equal(err.url, DEAD_BASE "/api/public/v1/payouts/" TU_PAYOUT_ID);
    assert_non_null(err.title);
    assert_true(strncmp(err.message, "merchantapi: transport: ", 24) == 0);
    assert_true(tu_contains(err.message, "[PUT /api/public/v1/payouts/" TU_PAYOUT_ID "]"));
    tu_assert_no_key(&err, TU_DEFAULT_KEY);
    mapi_error_clear(&err);
    /* a GET likewise; with max_retries 0 a single attempt */
    mapi_client_free(c);
    c = tu_client_ex(DEAD_BASE, TU_DEFAULT_KEY, 0, 0, &sl);
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.attempts, 1);
    assert_int_equal(sl.calls, 0);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NONE);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

/* https:// to the sandbox's plain-HTTP port: the TLS handshake fails, so
   the request provably never left. */
static void tls_handshake_failure_not_sent(void **state)
{
    char base[256];
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    const char *plain;
    (void)state;
    TU_NEED_SANDBOX();
    plain = tu_base_url();
    assert_true(strncmp(plain, "http://", 7) == 0);
    snprintf(base, sizeof base, "https://%s", plain + 7);
    c = tu_client_ex(base, tu_api_key(), 1, 5.0, &sl);
    assert_int_equal(mapi_confirm_payout(c, "fault-500", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.curl_code, CURLE_SSL_CONNECT_ERROR);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    assert_int_equal(err.attempts, 2);
    mapi_error_clear(&err);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("fault-500"), 0);
}

/* A sleep hook that asks to stop: the call ends with the error it has. */
static int stop_sleep(void *ctx, double seconds)
{
    (void)seconds;
    ++*(int *)ctx;
    return 1;
}

static void sleep_hook_can_stop_retries(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    int calls = 0;
    (void)state;
    c = tu_client_ex(DEAD_BASE, NULL, 5, 0, NULL);
    mapi_client_set_sleep(c, stop_sleep, &calls);
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), -1);
    assert_int_equal(err.attempts, 1);
    assert_int_equal(calls, 1);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

/* The api key shows in no field and no message, whatever failed. */
static void api_key_never_in_errors(void **state)
{
    static const char *const ids[] = {"draft-amount-below-minimum", "no-such-draft",
                                      "fault-redirect", "fault-html-502", "fault-bad-json",
                                      "fault-no-response", "fault-429"};
    const char *key = tu_api_key();
    mapi_client *c;
    size_t i;
    tu_sleeps sl;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, key, 1, 2.0, &sl);
    for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        assert_int_equal(mapi_confirm_payout(c, ids[i], &doc, &err), -1);
        assert_non_null(err.message);
        tu_assert_no_key(&err, key);
        assert_false(tu_contains(err.message, "Bearer"));
        mapi_error_clear(&err);
        assert_int_equal(mapi_get_channel(c, ids[i], &doc, &err), -1);
        tu_assert_no_key(&err, key);
        mapi_error_clear(&err);
    }
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(fault_redirect_is_http_302, tu_setup_reset),
        cmocka_unit_test_setup(fault_html_502_is_retried_http, tu_setup_reset),
        cmocka_unit_test_setup(fault_5xx, tu_setup_reset),
        cmocka_unit_test_setup(fault_429_honours_retry_after, tu_setup_reset),
        cmocka_unit_test_setup(fault_flaky_recovers, tu_setup_reset),
        cmocka_unit_test_setup(fault_bodies_fail_as_decode, tu_setup_reset),
        cmocka_unit_test_setup(fault_big_body_is_capped, tu_setup_reset),
        cmocka_unit_test_setup(transport_failures, tu_setup_reset),
        cmocka_unit_test(connection_refused_not_sent),
        cmocka_unit_test_setup(tls_handshake_failure_not_sent, tu_setup_reset),
        cmocka_unit_test(sleep_hook_can_stop_retries),
        cmocka_unit_test_setup(api_key_never_in_errors, tu_setup_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_error.c -- src/error.c: kind and outcome names, the one-line message,
 * clearing, and the api key redacted from every field.
 */
#include "testutil.h"

static void names(void **state)
{
    (void)state;
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_API), "api");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_HTTP), "http");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_TRANSPORT), "transport");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_DECODE), "decode");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_USAGE), "usage");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_TIMEOUT), "timeout");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_MEMORY), "memory");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_NONE), "");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_NOT_SENT), "not_sent");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_UNKNOWN), "unknown");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_REJECTED), "rejected");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_NONE), "");
}

static void messages(void **state)
{
    mapi_error e = MAPI_ERROR_INIT;
    char long_detail[2000];
    (void)state;

    e.kind = MAPI_ERR_API;
    e.status = 422;
    e.code = mapi_strdup("amount_below_minimum");
    e.title = mapi_strdup("amount is below minimum");
    e.detail = mapi_strdup("amount: 5.5, minimum: 10.0");
    e.method = mapi_strdup("PUT");
    e.url = mapi_strdup("https://api.example/api/public/v1/payouts/6ecebf80-b210");
    assert_int_equal(mapi_error_message(&e), 0);
    assert_string_equal(e.message,
                        "merchantapi: 422 amount_below_minimum: amount is below minimum "
                        "(amount: 5.5, minimum: 10.0) [PUT /api/public/v1/payouts/6ecebf80-b210]");
    mapi_error_clear(&e);

    mapi_error_set(&e, MAPI_ERR_TRANSPORT, "%s", "Couldn't connect to server");
    e.detail = mapi_strdup("Failed to connect to 127.0.0.1 port 9 after 0 ms");
    e.method = mapi_strdup("GET");
    e.url = mapi_strdup("http://127.0.0.1:9/api/public/v1/channels/x?a=b");
    assert_int_equal(mapi_error_message(&e), 0);
    assert_string_equal(e.message,
                        "merchantapi: transport: Couldn't connect to server (Failed to connect "
                        "to 127.0.0.1 port 9 after 0 ms) [GET /api/public/v1/channels/x?a=b]");
    mapi_error_clear(&e);

    mapi_error_set(&e, MAPI_ERR_HTTP, "HTTP %d", 502);
    e.status = 502;
    e.method = mapi_strdup("GET");
    e.url = mapi_strdup("https://h/p");
    mapi_error_message(&e);
    assert_string_equal(e.message, "merchantapi: HTTP 502 [GET /p]");
    mapi_error_clear(&e);

    /* no code, no title */
    e.kind = MAPI_ERR_API;
    e.status = 500;
    mapi_error_message(&e);
    assert_string_equal(e.message, "merchantapi: 500 error");
    mapi_error_clear(&e);

    /* one line: control bytes become spaces; long server text is cut */
    memset(long_detail, 'x', sizeof long_detail - 1);
    long_detail[sizeof long_detail - 1] = '\0';
    e.kind = MAPI_ERR_API;
    e.code = mapi_strdup("c");
    e.title = mapi_strdup("line1\nline2\r\x1b[31m");
    e.detail = mapi_strdup(long_detail);
    mapi_error_message(&e);
    assert_null(strchr(e.message, '\n'));
    assert_null(strchr(e.message, '\r'));
    assert_null(strchr(e.message, '\x1b'));
    assert_true(tu_contains(e.message, "line1 line2"));
    assert_true(tu_contains(e.message, "...)"));
    assert_true(strlen(e.message) < 600);
    mapi_error_clear(&e);

    assert_int_equal(mapi_error_set(&e, MAPI_ERR_USAGE, "%s is empty", "payout_id"), -1);
    assert_string_equal(e.message, "merchantapi: usage: payout_id is empty");
    mapi_error_clear(&e);
}

static void clear_leaves_init_state(void **state)
{
    mapi_error e = MAPI_ERROR_INIT;
    (void)state;
    mapi_error_set(&e, MAPI_ERR_DECODE, "x");
    e.response = mapi_response_new();
    e.retry_after = 3;
    mapi_error_clear(&e);
    assert_int_equal(e.kind, MAPI_ERR_NONE);
    assert_null(e.title);
    assert_null(e.message);
    assert_null(e.response);
    assert_true(e.retry_after == -1.0);
    mapi_error_clear(&e);  /* twice is fine */
    mapi_error_clear(NULL);
}

static void redaction(void **state)
{
    const char *key = "sk_test_sandbox_4f9a2c";
    mapi_error e = MAPI_ERROR_INIT;
    (void)state;
    e.kind = MAPI_ERR_API;
    e.status = 401;
    e.title = mapi_strdup("bad key sk_test_sandbox_4f9a2c");
    e.detail = mapi_strdup("Bearer sk_test_sandbox_4f9a2csk_test_sandbox_4f9a2c!");
    e.errors = calloc(1, sizeof *e.errors);
    assert_non_null(e.errors);
    e.nerrors = 1;
    e.errors[0].detail = mapi_strdup("sk_test_sandbox_4f9a2c");
    mapi_error_redact(&e, key);
    tu_assert_no_key(&e, key);
    assert_string_equal(e.title, "bad key [REDACTED]");
    assert_string_equal(e.detail, "Bearer [REDACTED][REDACTED]!");
    assert_string_equal(e.errors[0].detail, "[REDACTED]");
    mapi_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(messages),
        cmocka_unit_test(clear_leaves_init_state),
        cmocka_unit_test(redaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

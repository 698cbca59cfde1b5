/*
 * test_request.c -- mapi_request / mapi_request_ex (the generic call) and
 * mapi_get_payout against the sandbox: the same document as the endpoints,
 * the bytes of a body, path and query as the server received them (the echo
 * endpoint), documents without primary data (HEAD, 204, data null), the
 * retry rules per method, usage errors that send nothing, and reading a
 * payout before and after its confirm and broadcast.
 */
#include "testutil.h"

#define PAYOUT_TXID "dd8368b4d2d702d26f01443a3adeeb150b4f989b058f002e8953cd618fc2fb56"
#define ECHO "/api/public/v1/echo"

/* POST /__sandbox/config {"id":<id>,"txid_after_ms":<ms>} (ids without
   characters that need JSON escaping). */
static void config_txid(const char *id, long ms)
{
    char url[1024], body[512];
    CURL *easy = curl_easy_init();
    long status = 0;
    tu_body out;

    assert_non_null(easy);
    assert_true((size_t)snprintf(url, sizeof url, "%s/__sandbox/config", tu_base_url()) <
                sizeof url);
    assert_true((size_t)snprintf(body, sizeof body, "{\"id\":\"%s\",\"txid_after_ms\":%ld}",
                                 id, ms) < sizeof body);
    out.len = 0;
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, tu_collect);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &out);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT, 10L);
    assert_int_equal(curl_easy_perform(easy), CURLE_OK);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(easy);
    assert_int_equal(status, 200);
}

/* An echo document's attribute as a string ("" when not a string); the
   length in *len when given. */
static const char *echo_attr(const mapi_doc *doc, const char *name, size_t *len)
{
    const mapi_resource *r = mapi_doc_data(doc, 0);
    const char *s;

    assert_non_null(r);
    assert_string_equal(mapi_resource_type(r), "echoes");
    s = mapi_value_string(mapi_resource_attr(r, name), len);
    return s ? s : "";
}

/* ---- GET: the same as the endpoints ---- */

static void request_get_equals_get_channel(void **state)
{
    mapi_client *c;
    mapi_doc *a = NULL, *b = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_resource *ra, *rb;
    size_t la, lb;
    const char *ba, *bb;
    (void)state;
    c = tu_sandbox_client();
    TU_OK(mapi_request(c, "GET", "/api/public/v1/channels/" TU_CHANNEL_ID, NULL, 0, &a, &err), err);
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &b, &err), 0);
    ba = mapi_response_body(mapi_doc_response(a), &la);
    bb = mapi_response_body(mapi_doc_response(b), &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
    assert_int_equal(mapi_response_status(mapi_doc_response(a)), 200);
    assert_int_equal(mapi_doc_data_count(a), 1);
    assert_int_equal(mapi_doc_resource_count(a), mapi_doc_resource_count(b));
    ra = mapi_doc_data(a, 0);
    rb = mapi_doc_data(b, 0);
    assert_string_equal(mapi_resource_type(ra), "channels");
    assert_string_equal(mapi_resource_id(ra), mapi_resource_id(rb));
    assert_string_equal(tu_attr_str(ra, "status"), "enabled");
    assert_string_equal(tu_attr_str(mapi_resource_related(a, ra, "targetAccount", 0), "balance"),
                        "6194.43");
    mapi_doc_free(a);
    mapi_doc_free(b);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count(TU_CHANNEL_ID), 2);
}

static void request_any_type_and_lists(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_request(c, "GET",
                                  "/api/public/v1/accounts/acct-22/addresses?page=2&per_page=5",
                                  NULL, 0, &doc, &err), 0);
    assert_true(mapi_doc_is_list(doc));
    assert_int_equal(mapi_doc_data_count(doc), 5);
    assert_int_equal(tu_int(mapi_doc_meta(doc), "page"), 2);
    assert_int_equal(tu_int(mapi_doc_meta(doc), "total"), 22);
    assert_string_equal(mapi_resource_type(mapi_doc_data(doc, 0)), "addresses");
    mapi_doc_free(doc);
    assert_int_equal(mapi_request(c, "GET", ECHO, NULL, 0, &doc, &err), 0);
    assert_string_equal(echo_attr(doc, "method", NULL), "GET");
    mapi_doc_free(doc);
    mapi_client_free(c);
}

/* ---- what reaches the server ---- */

static void request_body_reaches_server_byte_for_byte(void **state)
{
    static const char body[] = "{\"amount\": 250.10, \"n\": 42, \"s\": \"Z\xc3\xbcrich \xe2\x9c\x93\","
                               " \"z\": \"a\0b\"}\n";
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const char *got, *ct;
    size_t len = 0;
    (void)state;
    c = tu_sandbox_client();
    /* sizeof - 1: the NUL inside is part of the body, the final one is not */
    TU_OK(mapi_request(c, "POST", ECHO "/x", body, sizeof body - 1, &doc, &err), err);
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 201);
    assert_string_equal(echo_attr(doc, "method", NULL), "POST");
    ct = echo_attr(doc, "contentType", NULL);
    assert_string_equal(ct, "application/vnd.api+json");
    got = echo_attr(doc, "body", &len);
    assert_int_equal(len, sizeof body - 1);
    assert_memory_equal(got, body, len);
    mapi_doc_free(doc);

    /* PUT, PATCH and DELETE carry the method; no body: an empty one */
    assert_int_equal(mapi_request(c, "PATCH", ECHO, "{}", 2, &doc, &err), 0);
    assert_string_equal(echo_attr(doc, "method", NULL), "PATCH");
    assert_string_equal(echo_attr(doc, "body", NULL), "{}");
    mapi_doc_free(doc);
    assert_int_equal(mapi_request(c, "DELETE", ECHO, NULL, 0, &doc, &err), 0);
    assert_string_equal(echo_attr(doc, "method", NULL), "DELETE");
    assert_int_equal(mapi_value_type(mapi_resource_attr(mapi_doc_data(doc, 0), "body")),
                     MAPI_STRING);
    assert_string_equal(echo_attr(doc, "body", NULL), "");
    mapi_doc_free(doc);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("echo"), 3);
}

static void request_path_and_query_as_written(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    TU_OK(mapi_request(c, "GET", ECHO "/a%2Fb/..c?x=1&y=%20&z[0]=../&q=a?b", NULL, 0, &doc,
                       &err), err);
    assert_string_equal(echo_attr(doc, "path", NULL), ECHO "/a%2Fb/..c");
    assert_string_equal(echo_attr(doc, "query", NULL), "x=1&y=%20&z[0]=../&q=a?b");
    assert_null(mapi_resource_attr(mapi_doc_data(doc, 0), "body")); /* a GET sends none */
    mapi_doc_free(doc);
    mapi_client_free(c);
}

/* ---- no primary data ---- */

static void request_documents_without_data(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_response *res;
    size_t len = 1;
    (void)state;
    c = tu_sandbox_client();

    TU_OK(mapi_request(c, "HEAD", ECHO, NULL, 0, &doc, &err), err);
    res = mapi_doc_response(doc);
    assert_int_equal(mapi_response_status(res), 200);
    assert_null(mapi_doc_root(doc));
    assert_null(mapi_doc_meta(doc));
    assert_int_equal(mapi_doc_data_count(doc), 0);
    assert_false(mapi_doc_is_list(doc));
    assert_null(mapi_doc_find(doc, "echoes", "x"));
    assert_string_equal(mapi_response_body(res, &len), "");
    assert_int_equal(len, 0);
    assert_true(strtol(mapi_response_header(res, "content-length"), NULL, 10) > 100);
    mapi_doc_free(doc);

    /* the handle is a GET again after the HEAD, and a POST after that */
    assert_int_equal(mapi_request(c, "GET", ECHO, NULL, 0, &doc, &err), 0);
    assert_string_equal(echo_attr(doc, "method", NULL), "GET");
    mapi_doc_free(doc);
    assert_int_equal(mapi_request(c, "HEAD", ECHO, NULL, 0, &doc, &err), 0);
    mapi_doc_free(doc);
    assert_int_equal(mapi_request(c, "POST", ECHO, "[1]", 3, &doc, &err), 0);
    assert_string_equal(echo_attr(doc, "body", NULL), "[1]");
    mapi_doc_free(doc);

    assert_int_equal(mapi_request(c, "DELETE", ECHO "/no-content", NULL, 0, &doc, &err), 0);
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 204);
    assert_null(mapi_doc_root(doc));
    mapi_doc_free(doc);

    assert_int_equal(mapi_request(c, "PUT", ECHO "/data-null", "{\"a\":1}", 7, &doc, &err), 0);
    assert_non_null(mapi_doc_root(doc));
    assert_int_equal(mapi_doc_data_count(doc), 0);
    assert_false(mapi_doc_is_list(doc));
    assert_string_equal(mapi_value_string(mapi_value_get(mapi_doc_meta(doc), "method"), NULL),
                        "PUT");
    assert_string_equal(mapi_value_string(mapi_value_get(mapi_doc_meta(doc), "body"), NULL),
                        "{\"a\":1}");
    mapi_doc_free(doc);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("echo"), 6);
}

/* ---- usage errors send nothing ---- */

static void request_usage_errors(void **state)
{
    static const char *const bad_paths[] = {
        "http://other.example" ECHO, "api/public/v1/echo", "//other.example/x", "",
        "/api/public/v1/../v1/echo", "/api/public/v1/echo/..", "/api/./echo",
        "/api/%2E%2e/echo", "/api/.%2E", "/api/%2e", ECHO "\r\nX-Evil: 1", ECHO "\n",
        ECHO " x", ECHO "#f", "/api/\xc3\xa9", ECHO "%zz", ECHO "%4", ECHO "?a=\r",
        ECHO "?a=b c", ECHO "[x]", ECHO "\x7f",
    };
    static const char *const bad_methods[] = {"get", "TRACE", "OPTIONS", "CONNECT", "", "GET "};
    mapi_request_opts opts = MAPI_REQUEST_OPTS_INIT;
    mapi_client *c;
    mapi_doc *doc = (mapi_doc *)&opts; /* must be set to NULL */
    mapi_error err = MAPI_ERROR_INIT;
    size_t i;
    (void)state;
    c = tu_sandbox_client();
    for (i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        assert_int_equal(mapi_request(c, "POST", bad_paths[i], NULL, 0, &doc, &err), -1);
        assert_null(doc);
        if (err.kind != MAPI_ERR_USAGE)
            fail_msg("path %zu (%s): kind %d", i, bad_paths[i], (int)err.kind);
        assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
        assert_true(tu_contains(err.message, "merchantapi: usage: "));
        assert_int_equal(mapi_request(c, "GET", bad_paths[i], NULL, 0, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(err.outcome, MAPI_OUTCOME_NONE);
    }
    assert_true(tu_contains(err.title, "percent-encoded"));
    for (i = 0; i < sizeof bad_methods / sizeof bad_methods[0]; i++) {
        assert_int_equal(mapi_request(c, bad_methods[i], ECHO, NULL, 0, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
    }
    assert_int_equal(mapi_request(c, "GET", ECHO, "{}", 2, &doc, &err), -1);
    assert_true(tu_contains(err.title, "takes no body"));
    assert_int_equal(mapi_request(c, "HEAD", ECHO, "", 0, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(mapi_request(c, "POST", ECHO, NULL, 3, &doc, &err), -1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    assert_int_equal(mapi_request(NULL, "GET", ECHO, NULL, 0, &doc, &err), -1);
    assert_int_equal(mapi_request(c, NULL, ECHO, NULL, 0, &doc, &err), -1);
    assert_int_equal(mapi_request(c, "GET", NULL, NULL, 0, &doc, &err), -1);
    assert_int_equal(mapi_request(c, "GET", ECHO, NULL, 0, NULL, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    opts.max_retries = 101;
    assert_int_equal(mapi_request_ex(c, "PUT", ECHO, NULL, 0, &opts, &doc, &err), -1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    opts.max_retries = -2;
    assert_int_equal(mapi_request_ex(c, "GET", ECHO, NULL, 0, &opts, &doc, &err), -1);
    opts.max_retries = -1;
    opts.type = "";
    assert_int_equal(mapi_request_ex(c, "GET", ECHO, NULL, 0, &opts, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(mapi_request(c, "TRACE", ECHO, NULL, 0, &doc, NULL), -1); /* err may be NULL */
    mapi_error_clear(&err);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("echo"), 0);
}

/* ---- retries and outcomes by method ---- */

static void request_retry_rules(void **state)
{
    mapi_request_opts opts = MAPI_REQUEST_OPTS_INIT;
    tu_sleeps sleeps;
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sleeps);

    /* GET: a 503 is retried */
    TU_OK(mapi_request(c, "GET", "/api/public/v1/channels/fault-flaky-1-503", NULL, 0, &doc,
                       &err), err);
    assert_string_equal(mapi_resource_id(mapi_doc_data(doc, 0)), "fault-flaky-1-503");
    mapi_doc_free(doc);
    assert_int_equal(sleeps.calls, 1);
    assert_int_equal(tu_sandbox_count("fault-flaky-1-503"), 2);

    /* ... unless this call says max_retries 0 */
    tu_sandbox_reset();
    sleeps.calls = 0;
    opts.max_retries = 0;
    assert_int_equal(mapi_request_ex(c, "GET", "/api/public/v1/channels/fault-flaky-1-503", NULL,
                                     0, &opts, &doc, &err), -1);
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 503, MAPI_OUTCOME_NONE, 1, 1);
    assert_int_equal(sleeps.calls, 0);

    /* PUT: a 503 is not retried, and may have been carried out */
    tu_sandbox_reset();
    assert_int_equal(mapi_request(c, "PUT", "/api/public/v1/payouts/fault-flaky-1-503", NULL, 0,
                                  &doc, &err), -1);
    /* unknown: not safe to send again */
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 503, MAPI_OUTCOME_UNKNOWN, 0, 1);
    assert_string_equal(err.method, "PUT");
    assert_int_equal(tu_sandbox_count("fault-flaky-1-503"), 1);

    /* ... a 429 is */
    sleeps.calls = 0;
    TU_OK(mapi_request(c, "PUT", "/api/public/v1/payouts/fault-flaky-1-429", NULL, 0, &doc,
                       &err), err);
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 201);
    assert_string_equal(tu_attr_str(mapi_doc_data(doc, 0), "status"), "processing");
    mapi_doc_free(doc);
    assert_int_equal(sleeps.calls, 1);
    assert_int_equal(tu_sandbox_count("fault-flaky-1-429"), 2);

    /* a 4xx to a POST: rejected */
    assert_int_equal(mapi_request(c, "POST", "/api/public/v1/payouts/" TU_PAYOUT_ID, "{}", 2, &doc,
                                  &err), -1);
    assert_int_equal(err.status, 405);
    assert_int_equal(err.outcome, MAPI_OUTCOME_REJECTED);
    assert_true(tu_contains(err.message, "[POST /api/public/v1/payouts/" TU_PAYOUT_ID "]"));
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void request_type_option(void **state)
{
    mapi_request_opts opts = MAPI_REQUEST_OPTS_INIT;
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    opts.type = "payouts";
    assert_int_equal(mapi_request_ex(c, "GET", "/api/public/v1/channels/" TU_CHANNEL_ID, NULL, 0,
                                     &opts, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_int_equal(err.status, 200);
    assert_true(tu_contains(err.title, "expected a payouts resource"));
    assert_int_equal(mapi_request_ex(c, "GET", ECHO "/no-content", NULL, 0, &opts, &doc, &err),
                     -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_int_equal(mapi_request_ex(c, "GET", "/api/public/v1/payouts/" TU_PAYOUT_ID, NULL, 0, &opts,
                                     &doc, &err), 0);
    assert_string_equal(mapi_resource_type(mapi_doc_data(doc, 0)), "payouts");
    mapi_doc_free(doc);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

/* ---- mapi_get_payout ---- */

static void get_payout_follows_the_confirm(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_resource *p;
    (void)state;
    TU_NEED_SANDBOX();
    config_txid(TU_PAYOUT_ID, -1);
    c = tu_client();
    TU_OK(mapi_get_payout(c, TU_PAYOUT_ID, &doc, &err), err);
    p = mapi_doc_data(doc, 0);
    assert_string_equal(mapi_resource_type(p), "payouts");
    assert_string_equal(tu_attr_str(p, "status"), "draft");
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 200);
    mapi_doc_free(doc);

    assert_int_equal(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), 0);
    mapi_doc_free(doc);
    assert_int_equal(mapi_get_payout(c, TU_PAYOUT_ID, &doc, &err), 0);
    p = mapi_doc_data(doc, 0);
    assert_string_equal(tu_attr_str(p, "status"), "processing");
    assert_string_equal(tu_attr_num(p, "amount"), "250.10");
    assert_true(mapi_value_has(mapi_resource_attributes(p), "txid"));
    assert_null(mapi_resource_attr(p, "txid"));
    assert_string_equal(tu_attr_str(mapi_resource_related(doc, p, "accountCharged", 0),
                                    "currencyCode"), "EUR");
    mapi_doc_free(doc);

    config_txid(TU_PAYOUT_ID, 0); /* broadcast now */
    assert_int_equal(mapi_get_payout(c, TU_PAYOUT_ID, &doc, &err), 0);
    p = mapi_doc_data(doc, 0);
    assert_string_equal(tu_attr_str(p, "txid"), PAYOUT_TXID);
    assert_string_equal(tu_attr_str(p, "status"), "processing");
    mapi_doc_free(doc);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 4);
}

static void get_payout_errors(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_get_payout(c, "no-such-payout", &doc, &err), -1);
    assert_null(doc);
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 404, MAPI_OUTCOME_NONE, 0, 1);
    assert_string_equal(err.code, "not_found");
    assert_string_equal(err.method, "GET");
    assert_true(tu_contains(err.url, "/api/public/v1/payouts/no-such-payout"));
    /* the id is one path segment */
    assert_int_equal(mapi_get_payout(c, "a/b c", &doc, &err), -1);
    assert_int_equal(err.status, 404);
    assert_string_equal(err.detail, "no payout a/b c");
    assert_true(tu_contains(err.url, "/api/public/v1/payouts/a%2Fb%20c"));
    assert_int_equal(mapi_get_payout(c, "", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(mapi_get_payout(c, "..", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(mapi_get_payout(c, NULL, &doc, &err), -1);
    assert_int_equal(mapi_get_payout(NULL, TU_PAYOUT_ID, &doc, &err), -1);
    assert_int_equal(mapi_get_payout(c, TU_PAYOUT_ID, NULL, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    /* a wrong primary type is DECODE */
    assert_int_equal(mapi_get_payout(c, "fault-wrong-type", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    mapi_error_clear(&err);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("no-such-payout"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(request_get_equals_get_channel, tu_setup_reset),
        cmocka_unit_test_setup(request_any_type_and_lists, tu_setup_reset),
        cmocka_unit_test_setup(request_body_reaches_server_byte_for_byte, tu_setup_reset),
        cmocka_unit_test_setup(request_path_and_query_as_written, tu_setup_reset),
        cmocka_unit_test_setup(request_documents_without_data, tu_setup_reset),
        cmocka_unit_test_setup(request_usage_errors, tu_setup_reset),
        cmocka_unit_test_setup(request_retry_rules, tu_setup_reset),
        cmocka_unit_test_setup(request_type_option, tu_setup_reset),
        cmocka_unit_test_setup(get_payout_follows_the_confirm, tu_setup_reset),
        cmocka_unit_test_setup(get_payout_errors, tu_setup_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

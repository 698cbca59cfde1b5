/*
 * test_headers.c -- request headers of one's own: mapi_config.headers on
 * every request, mapi_call_opts / mapi_request_opts per call (replacing a
 * client header of the same name), what crossed the wire (the sandbox's
 * GET /__sandbox/headers?id=), and the refused ones (mapi_header_check:
 * the client's own headers, non-tokens, CR/LF/NUL) with nothing sent (the
 * sandbox's request counters).
 */
#include "testutil.h"


static const char *const forbidden[] = {
    "Authorization", "Content-Type", "Accept", "User-Agent", "Host", "Content-Length",
    "authorization", "CONTENT-TYPE", "accept", "user-agent", "HOST", "content-length",
    "Transfer-Encoding", "Connection", "Expect",
};

/* ---- the rule ---- */

static void check_usage(const char *name, size_t nlen, const char *value, size_t vlen,
                        const char *title_part)
{
    mapi_error err = MAPI_ERROR_INIT;
    assert_int_equal(mapi_header_check(name, nlen, value, vlen, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_non_null(err.message);
    if (!tu_contains(err.title, title_part))
        fail_msg("title \"%s\" lacks \"%s\"", err.title, title_part);
    /* the value is never shown: it may be a secret */
    if (value && vlen > 3)
        assert_false(tu_contains(err.message, "s3cr3t"));
    mapi_error_clear(&err);
}

static void test_rule(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    size_t i;
    (void)state;
    assert_int_equal(mapi_header_check("X-Trace", 7, "abc-123", 7, &err), 0);
    assert_int_equal(mapi_header_check("Idempotency-Key", 15, "", 0, &err), 0);
    assert_int_equal(mapi_header_check("x!#$%&'*+-.^_`|~9", 17, "a\tb c\x80\xff", 7, &err), 0);
    assert_int_equal(err.kind, MAPI_ERR_NONE);

    for (i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
        check_usage(forbidden[i], strlen(forbidden[i]), "v", 1, forbidden[i]);
    check_usage("", 0, "v", 1, "empty");
    check_usage(NULL, 0, "v", 1, "empty");
    check_usage("X Trace", 7, "v", 1, "not an HTTP token");
    check_usage("X-Trace:", 8, "v", 1, "not an HTTP token");
    check_usage("X-(Trace)", 9, "v", 1, "not an HTTP token");
    check_usage("X-\xc3\xa9", 4, "v", 1, "not an HTTP token");
    check_usage("X-Trace\r\nX-Evil", 15, "v", 1, "CR, LF or NUL");
    check_usage("X-Trace\n", 8, "v", 1, "CR, LF or NUL");
    check_usage("X-\0Trace", 8, "v", 1, "CR, LF or NUL");
    check_usage("X-Trace", 7, NULL, 0, "no value");
    check_usage("X-Trace", 7, "s3cr3t\r\nX-Evil: 1", 17, "CR, LF or NUL");
    check_usage("X-Trace", 7, "s3cr3t\n", 7, "CR, LF or NUL");
    check_usage("X-Trace", 7, "s3cr3t\0tail", 11, "CR, LF or NUL");
    check_usage("X-Trace", 7, "s3cr3t\x01", 7, "control byte");
    check_usage("X-Trace", 7, "s3cr3t\x7f", 7, "control byte");
    check_usage("X-Trace", 7, " s3cr3t", 7, "space or tab");
    check_usage("X-Trace", 7, "s3cr3t\t", 7, "space or tab");
}

/* ---- mapi_client_new ---- */

static void test_config_refused(void **state)
{
    mapi_header_field twice[] = {{"X-Trace", "a"}, {"x-trace", "b"}};
    mapi_header_field bad[] = {{"X-Ok", "a"}, {"Authorization", "Bearer other"}};
    mapi_header_field crlf[] = {{"X-Trace", "a\r\nX-Evil: 1"}};
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    mapi_config_init(&cfg);
    cfg.base_url = "http://127.0.0.1:9";
    cfg.headers = twice;
    cfg.nheaders = 2;
    assert_null(mapi_client_new(&cfg, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_true(tu_contains(err.title, "given twice"));
    cfg.headers = bad;
    assert_null(mapi_client_new(&cfg, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_true(tu_contains(err.title, "Authorization"));
    assert_false(tu_contains(err.message, "other"));
    cfg.headers = crlf;
    cfg.nheaders = 1;
    assert_null(mapi_client_new(&cfg, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    cfg.headers = NULL;
    assert_null(mapi_client_new(&cfg, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
}

/* ---- what crossed the wire ---- */

/* The headers the sandbox saw on the last request for id: its answer
   ({"headers": {...}}, not JSON:API) read by the library's own parser as
   the meta of a document (caller frees with mapi_doc_free). */
static mapi_doc *seen_headers(const char *id)
{
    tu_body b;
    char path[512], wrapped[sizeof b.buf + 16];
    char *enc = tu_percent_encode(id);
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    int n;

    assert_non_null(enc);
    assert_true((size_t)snprintf(path, sizeof path, "/__sandbox/headers?id=%s", enc) <
                sizeof path);
    free(enc);
    assert_int_equal(tu_sandbox("GET", path, &b), 200);
    n = snprintf(wrapped, sizeof wrapped, "{\"meta\":%.*s}", (int)b.len, b.buf);
    assert_true(n > 0 && (size_t)n < sizeof wrapped);
    if (mapi_doc_parse(wrapped, (size_t)n, &doc, &err) != 0)
        fail_msg("the sandbox's headers answer: %s", err.message ? err.message : "?");
    if (mapi_value_type(mapi_value_get(mapi_doc_meta(doc), "headers")) != MAPI_OBJECT)
        fail_msg("no headers seen for %s: %s", id, b.buf);
    return doc;
}

/* The one value of header name (lower case) seen in doc, or NULL when
   absent; fails when it came more than once. */
static const char *seen(const mapi_doc *doc, const char *name)
{
    const mapi_value *h = mapi_value_get(mapi_doc_meta(doc), "headers");
    const mapi_value *v;
    size_t len;
    const char *s;

    if (!mapi_value_has(h, name))
        return NULL;
    v = mapi_value_get(h, name);
    s = mapi_value_string(v, &len);
    if (!s || strlen(s) != len)
        fail_msg("header %s came as type %d, not one string", name, (int)mapi_value_type(v));
    return s;
}

static mapi_client *client_with(const mapi_header_field *h, size_t n)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;

    mapi_config_init(&cfg);
    cfg.base_url = tu_base_url();
    cfg.api_key = tu_api_key();
    cfg.headers = h;
    cfg.nheaders = n;
    c = mapi_client_new(&cfg, &err);
    if (!c)
        fail_msg("mapi_client_new: %s", err.message ? err.message : "?");
    return c;
}

/* The client's headers, and the call's replacing one of them. */
static void assert_call_headers(const char *id)
{
    mapi_doc *h = seen_headers(id);
    assert_string_equal(seen(h, "x-trace"), "call-7");  /* the call's, not the client's */
    assert_string_equal(seen(h, "x-client"), "c1");     /* the client's */
    assert_string_equal(seen(h, "idempotency-key"), "k-42");
    assert_string_equal(seen(h, "x-empty"), "");
    assert_string_equal(seen(h, "accept"), "application/vnd.api+json"); /* still the client's */
    assert_true(tu_contains(seen(h, "user-agent"), "merchantapi/"));
    mapi_doc_free(h);
}

static void test_sent_on_every_call(void **state)
{
    static const mapi_header_field client_h[] = {{"X-Trace", "client-1"}, {"X-Client", "c1"},
                                                 {"X-Empty", ""}};
    static const mapi_header_field call_h[] = {{"x-TRACE", "call-7"},
                                               {"Idempotency-Key", "k-42"}};
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_request_opts ropts = MAPI_REQUEST_OPTS_INIT;
    mapi_page_params p = {NULL, NULL, 0, 5};
    mapi_doc *doc = NULL, *docs[3];
    mapi_error err = MAPI_ERROR_INIT, errs[3] = {MAPI_ERROR_INIT, MAPI_ERROR_INIT,
                                                  MAPI_ERROR_INIT};
    mapi_client *c;
    mapi_doc *h;
    size_t i;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = client_with(client_h, 3);
    opts.headers = call_h;
    opts.nheaders = 2;

    /* the client's alone */
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), 0);
    mapi_doc_free(doc);
    h = seen_headers(TU_CHANNEL_ID);
    assert_string_equal(seen(h, "x-trace"), "client-1");
    assert_string_equal(seen(h, "x-client"), "c1");
    assert_null(seen(h, "idempotency-key"));
    mapi_doc_free(h);

    assert_int_equal(mapi_get_channel_ex(c, TU_CHANNEL_ID, &opts, &doc, &err), 0);
    mapi_doc_free(doc);
    assert_call_headers(TU_CHANNEL_ID);

    assert_int_equal(mapi_confirm_payout_ex(c, TU_PAYOUT_ID, &opts, &doc, &err), 0);
    mapi_doc_free(doc);
    assert_call_headers(TU_PAYOUT_ID);

    assert_int_equal(mapi_get_payout_ex(c, "draft-integer-amount", &opts, &doc, &err), 0);
    mapi_doc_free(doc);
    assert_call_headers("draft-integer-amount");

    assert_int_equal(mapi_list_addresses_ex(c, "acct-one", &p, &opts, &doc, &err), 0);
    mapi_doc_free(doc);
    assert_call_headers("acct-one");

    ropts.headers = call_h;
    ropts.nheaders = 2;
    assert_int_equal(mapi_request_ex(c, "POST", "/api/public/v1/echo/h", "{}", 2, &ropts,
                                     &doc, &err), 0);
    mapi_doc_free(doc);
    assert_call_headers("echo");

    /* every page of a concurrent fetch; the next call without opts: the client's only */
    assert_int_equal(mapi_list_addresses_pages_ex(c, "acct-22", &p, 1, 3, 2, &opts, docs, errs),
                     0);
    for (i = 0; i < 3; i++)
        mapi_doc_free(docs[i]);
    assert_int_equal(tu_sandbox_count("acct-22"), 3);
    assert_call_headers("acct-22");
    assert_int_equal(mapi_list_addresses(c, "acct-22", &p, &doc, &err), 0);
    mapi_doc_free(doc);
    h = seen_headers("acct-22");
    assert_string_equal(seen(h, "x-trace"), "client-1");
    assert_null(seen(h, "idempotency-key"));
    mapi_doc_free(h);
    mapi_client_free(c);
}

/* ---- refused, nothing sent ---- */

static void test_refused_nothing_sent(void **state)
{
    mapi_header_field one[1];
    mapi_call_opts opts = {one, 1, 0.0, MAPI_SETTLE_DEFAULT, NULL, NULL};
    mapi_request_opts ropts = MAPI_REQUEST_OPTS_INIT;
    mapi_page_params p = {NULL, NULL, 0, 5};
    mapi_doc *doc = NULL, *docs[2];
    mapi_error err = MAPI_ERROR_INIT, errs[2] = {MAPI_ERROR_INIT, MAPI_ERROR_INIT};
    mapi_client *c;
    size_t i;
    static const char *const bad_values[] = {"a\r\nX-Evil: 1", "a\rb", "a\nb", "a\x01"};
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client();
    ropts.headers = one;
    ropts.nheaders = 1;
    for (i = 0; i < sizeof forbidden / sizeof forbidden[0] + 4; i++) {
        if (i < sizeof forbidden / sizeof forbidden[0]) {
            one[0].name = forbidden[i];
            one[0].value = "Bearer other";
        } else {
            one[0].name = "X-Trace";
            one[0].value = bad_values[i - sizeof forbidden / sizeof forbidden[0]];
        }
        assert_int_equal(mapi_confirm_payout_ex(c, TU_PAYOUT_ID, &opts, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
        assert_null(doc);
        assert_int_equal(mapi_get_channel_ex(c, TU_CHANNEL_ID, &opts, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(mapi_get_payout_ex(c, TU_PAYOUT_ID, &opts, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(mapi_list_addresses_ex(c, "acct-22", &p, &opts, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(
            mapi_list_addresses_pages_ex(c, "acct-22", &p, 1, 2, 2, &opts, docs, errs), -1);
        assert_int_equal(errs[0].kind, MAPI_ERR_USAGE);
        assert_int_equal(errs[1].kind, MAPI_ERR_NONE);
        assert_null(docs[0]);
        assert_int_equal(mapi_request_ex(c, "PATCH", "/api/public/v1/echo", NULL, 0, &ropts,
                                         &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
        assert_false(tu_contains(err.message, "other"));
    }
    /* a name given twice in one call */
    {
        mapi_header_field twice[] = {{"X-A", "1"}, {"x-a", "2"}};
        mapi_call_opts o2 = {twice, 2, 0.0, MAPI_SETTLE_DEFAULT, NULL, NULL};
        assert_int_equal(mapi_get_channel_ex(c, TU_CHANNEL_ID, &o2, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
    }
    mapi_error_clear(&err);
    mapi_error_clear(&errs[0]);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 0);
    assert_int_equal(tu_sandbox_count(TU_CHANNEL_ID), 0);
    assert_int_equal(tu_sandbox_count("acct-22"), 0);
    assert_int_equal(tu_sandbox_count("echo"), 0);
    mapi_client_free(c);
}

/* ---- the request a custom transport gets (the Lua binding's path) ---- */

static void test_exchange_headers(void **state)
{
    static const mapi_header_field client_h[] = {{"X-Trace", "client-1"}, {"X-Client", "c1"}};
    static const mapi_header_field call_h[] = {{"X-TRACE", "call-7"}};
    mapi_call_opts opts = {call_h, 1, 0.0, MAPI_SETTLE_DEFAULT, NULL, NULL};
    mapi_exchange *x = NULL;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_config cfg;
    mapi_client *c;
    const char *name, *value;
    const char *want[][2] = {{"Content-Type", "application/vnd.api+json"},
                             {"Accept", "application/vnd.api+json"},
                             {"Authorization", "Bearer k3y-of-the-client"},
                             {"User-Agent", NULL},
                             {"X-Client", "c1"},
                             {"X-TRACE", "call-7"}};
    size_t i;
    (void)state;
    mapi_config_init(&cfg);
    cfg.base_url = "http://127.0.0.1:9";
    cfg.api_key = "k3y-of-the-client";
    cfg.headers = client_h;
    cfg.nheaders = 2;
    c = mapi_client_new(&cfg, &err);
    assert_non_null(c);
    {
        mapi_call k; /* the call built once, as every driver gets it */
        assert_int_equal(mapi_call_endpoint(c, &mapi_endpoints[MAPI_EP_CONFIRM_PAYOUT], "p1", NULL, &opts, &k, &err), 0);
        x = mapi_client_prepare(c, &k, &err);
        mapi_call_release(&k);
    }
    assert_non_null(x);
    for (i = 0; i < 6; i++) {
        assert_int_equal(mapi_exchange_header_at(x, i, &name, &value), 1);
        assert_string_equal(name, want[i][0]);
        if (want[i][1])
            assert_string_equal(value, want[i][1]);
    }
    assert_int_equal(mapi_exchange_header_at(x, 6, &name, &value), 0);
    mapi_exchange_free(x);

    /* refused before any call is built */
    x = NULL;
    {
        mapi_header_field host[] = {{"Host", "evil.example"}};
        mapi_call_opts o2 = {host, 1, 0.0, MAPI_SETTLE_DEFAULT, NULL, NULL};
        mapi_call k;
        unsigned long built = mapi_client_calls_built(c);
        if (mapi_call_endpoint(c, &mapi_endpoints[MAPI_EP_CONFIRM_PAYOUT], "p1", NULL, &o2, &k, &err) == 0) {
            x = mapi_client_prepare(c, &k, &err);
            mapi_call_release(&k);
        }
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
        assert_null(x);
        assert_int_equal(mapi_client_calls_built(c), built);
        assert_int_equal(mapi_confirm_payout_ex(c, "p1", &o2, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    }
    mapi_error_clear(&err);
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_config_refused),
        cmocka_unit_test(test_sent_on_every_call),
        cmocka_unit_test(test_refused_nothing_sent),
        cmocka_unit_test(test_exchange_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

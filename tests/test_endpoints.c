/*
 * test_endpoints.c -- the client against the sandbox (MERCHANTAPI_BASE_URL):
 * the three endpoints, the 422 error documents, 404 and 401, percent-encoding
 * as the server sees it, pages, and the client's rules.  Failures, retries
 * and transport errors: test_faults.c.
 */
#include "testutil.h"


/* ---- confirm ---- */

static void confirm_payout_201(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_resource *p, *acct, *author;
    const mapi_response *res;
    (void)state;
    c = tu_sandbox_client();
    TU_OK(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), err);
    assert_int_equal(err.kind, MAPI_ERR_NONE);
    res = mapi_doc_response(doc);
    assert_int_equal(mapi_response_status(res), 201);
    assert_string_equal(mapi_response_header(res, "Content-Type"), "application/vnd.api+json");
    assert_non_null(mapi_response_request_id(res));
    assert_true(mapi_response_elapsed(res) >= 0.0);
    assert_int_equal(mapi_doc_data_count(doc), 1);
    p = mapi_doc_data(doc, 0);
    assert_string_equal(mapi_resource_type(p), "payouts");
    assert_string_equal(mapi_resource_id(p), TU_PAYOUT_ID);
    assert_string_equal(tu_attr_str(p, "status"), "processing");
    assert_int_equal(mapi_value_type(mapi_resource_attr(p, "amount")), MAPI_NUMBER);
    assert_string_equal(tu_attr_num(p, "amount"), "250.10");
    assert_true(mapi_value_has(mapi_resource_attributes(p), "txid"));
    assert_null(mapi_resource_attr(p, "txid"));
    acct = mapi_resource_related(doc, p, "accountCharged", 0);
    assert_non_null(acct);
    assert_string_equal(mapi_resource_type(acct), "accounts");
    assert_string_equal(tu_attr_str(acct, "currencyCode"), "EUR");
    author = mapi_resource_related(doc, p, "author", 0);
    assert_string_equal(tu_attr_str(author, "name"), "payouts-bot");
    mapi_doc_free(doc);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 1);
}

static void confirm_twice_is_rejected(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), 0);
    mapi_doc_free(doc);
    doc = NULL;
    assert_int_equal(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), -1);
    assert_null(doc);
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 422, MAPI_OUTCOME_REJECTED, 0, 1);
    assert_string_equal(err.code, "payout_not_draft");
    assert_string_equal(err.method, "PUT");
    assert_true(tu_contains(err.url, "/api/public/v1/payouts/" TU_PAYOUT_ID));
    assert_true(strncmp(err.message, "merchantapi: 422 payout_not_draft: ", 35) == 0);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void confirm_partner_pay_amount_string(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_resource *p;
    (void)state;
    c = tu_sandbox_client();
    TU_OK(mapi_confirm_payout(c, TU_PARTNER_ID, &doc, &err), err);
    p = mapi_doc_data(doc, 0);
    assert_int_equal(mapi_value_type(mapi_resource_attr(p, "amount")), MAPI_STRING);
    assert_string_equal(tu_attr_str(p, "amount"), "1200");
    assert_string_equal(tu_attr_str(p, "paymentMethod"), "partner_pay");
    assert_string_equal(tu_attr_str(mapi_resource_related(doc, p, "accountCharged", 0),
                                    "currencyCode"), "USDT");
    mapi_doc_free(doc);
    mapi_client_free(c);
}

static void confirm_exact_numbers(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_resource *p;
    int64_t n = 0;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_confirm_payout(c, "draft-integer-amount", &doc, &err), 0);
    p = mapi_doc_data(doc, 0);
    assert_int_equal(mapi_value_type(mapi_resource_attr(p, "amount")), MAPI_INT);
    assert_int_equal(mapi_value_int64(mapi_resource_attr(p, "amount"), &n), 0);
    assert_int_equal(n, 1200);
    mapi_doc_free(doc);
    assert_int_equal(mapi_confirm_payout(c, "draft-18-decimals", &doc, &err), 0);
    assert_string_equal(tu_attr_num(mapi_doc_data(doc, 0), "amount"), "0.123456789012345678");
    mapi_doc_free(doc);
    assert_int_equal(mapi_confirm_payout(c, "draft-big-numbers", &doc, &err), 0);
    p = mapi_doc_data(doc, 0);
    assert_string_equal(tu_attr_num(p, "bigInteger"), "123456789012345678901234567890");
    assert_string_equal(tu_attr_num(p, "exponent"), "1.5e-7");
    assert_string_equal(tu_attr_num(p, "amount"), "250.10");
    mapi_doc_free(doc);
    mapi_client_free(c);
}

/* Each 422 draft: what the fixture of its code says, field by field. */
static void confirm_422_codes(void **state)
{
    static const struct {
        const char *id, *fixture;
    } cases[] = {
        {"draft-amount-below-minimum", "confirm_payout.422.amount_below_minimum.json"},
        {"draft-amount-above-maximum", "confirm_payout.422.amount_above_maximum.json"},
        {"draft-invalid-address", "confirm_payout.422.invalid_address.json"},
        {"draft-payout-invalid", "confirm_payout.422.payout_invalid.json"},
        {"draft-insufficient-balance", "confirm_payout.422.account_has_insufficient_balance.json"},
        {"draft-high-risk-address", "confirm_payout.422.address_has_high_risk_score.json"},
    };
    mapi_client *c;
    size_t i;
    (void)state;
    c = tu_sandbox_client();
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_doc *doc = NULL, *fx = tu_fixture_doc(cases[i].fixture);
        mapi_error err = MAPI_ERROR_INIT, want = MAPI_ERROR_INIT;
        assert_int_equal(mapi_error_from_errors(&want, mapi_doc_errors(fx)), 0);
        mapi_doc_free(fx);
        assert_int_equal(mapi_confirm_payout(c, cases[i].id, &doc, &err), -1);
        assert_null(doc);
        TU_ASSERT_ERROR(err, MAPI_ERR_API, 422, MAPI_OUTCOME_REJECTED, 0, 1);
        assert_int_equal(err.nerrors, 1);
        assert_int_equal(err.errors[0].status, 422);
        assert_string_equal(err.code, want.code);
        assert_string_equal(err.title, want.title);
        TU_ASSERT_STR_OR_NULL(err.detail, want.detail);
        TU_ASSERT_STR_OR_NULL(err.pointer, want.pointer);
        TU_ASSERT_STR_OR_NULL(err.amount, want.amount);
        TU_ASSERT_STR_OR_NULL(err.minimum, want.minimum);
        TU_ASSERT_STR_OR_NULL(err.maximum, want.maximum);
        assert_non_null(err.request_id);
        assert_non_null(err.response);
        assert_int_equal(mapi_response_status(err.response), 422);
        mapi_error_clear(&err);
        mapi_error_clear(&want);
    }
    {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        assert_int_equal(mapi_confirm_payout(c, "draft-amount-below-minimum", &doc, &err), -1);
        assert_string_equal(err.amount, "5.5");
        assert_string_equal(err.minimum, "10.0");
        assert_null(err.maximum);
        assert_string_equal(err.message,
                            "merchantapi: 422 amount_below_minimum: amount is below minimum "
                            "(amount: 5.5, minimum: 10.0) "
                            "[PUT /api/public/v1/payouts/draft-amount-below-minimum]");
        mapi_error_clear(&err);
        assert_int_equal(mapi_confirm_payout(c, "draft-amount-above-maximum", &doc, &err), -1);
        assert_string_equal(err.amount, "250000.0");
        assert_null(err.minimum);
        assert_string_equal(err.maximum, "100000.0");
        mapi_error_clear(&err);
        assert_int_equal(mapi_confirm_payout(c, "draft-payout-invalid", &doc, &err), -1);
        assert_string_equal(err.pointer, "/data/attributes/externalId");
        mapi_error_clear(&err);
    }
    mapi_client_free(c);
}

static void unknown_payout_404(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_confirm_payout(c, "no-such-draft", &doc, &err), -1);
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 404, MAPI_OUTCOME_REJECTED, 0, 1);
    assert_string_equal(err.code, "not_found");
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void no_key_401(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, NULL, 2, 0, NULL);
    /* confirm and list carry Authorization in the interface: refused here */
    assert_int_equal(mapi_list_addresses(c, "acct-one", NULL, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(err.attempts, 0);
    mapi_error_clear(&err);
    assert_int_equal(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 0);
    /* reading a channel goes without, and the service answers 401 */
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), -1);
    TU_ASSERT_ERROR(err, MAPI_ERR_API, 401, MAPI_OUTCOME_NONE, 0, 1);
    assert_string_equal(err.code, "unauthorized");
    mapi_error_clear(&err);
    mapi_client_free(c);
    /* a wrong key: 401 on confirm (rejected), and it stays out of the error */
    c = tu_client_ex(NULL, "sk_wrong_key_123456", 2, 0, NULL);
    assert_int_equal(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), -1);
    assert_int_equal(err.status, 401);
    assert_int_equal(err.outcome, MAPI_OUTCOME_REJECTED);
    tu_assert_no_key(&err, "sk_wrong_key_123456");
    mapi_error_clear(&err);
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), -1);
    assert_int_equal(err.status, 401);
    tu_assert_no_key(&err, "sk_wrong_key_123456");
    mapi_error_clear(&err);
    mapi_client_free(c);
}

/* ---- channels ---- */

static void get_channel_200(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_resource *ch, *acct;
    (void)state;
    c = tu_sandbox_client();
    TU_OK(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), err);
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 200);
    ch = mapi_doc_data(doc, 0);
    assert_string_equal(mapi_resource_type(ch), "channels");
    assert_string_equal(mapi_resource_id(ch), TU_CHANNEL_ID);
    assert_string_equal(tu_attr_str(ch, "status"), "enabled");
    assert_string_equal(tu_attr_str(ch, "network"), "ttrx:usdt");
    acct = mapi_resource_related(doc, ch, "targetAccount", 0);
    assert_non_null(acct);
    assert_int_equal(mapi_resource_is_stub(acct), 0);
    assert_string_equal(tu_attr_str(acct, "balance"), "6194.43");
    mapi_doc_free(doc);
    assert_int_equal(mapi_get_channel(c, "ch-disabled", &doc, &err), 0);
    assert_string_equal(tu_attr_str(mapi_doc_data(doc, 0), "status"), "disabled");
    mapi_doc_free(doc);
    mapi_client_free(c);
}

/* The request target the sandbox received: one encoded path segment. */
static void ids_are_percent_encoded(void **state)
{
    static const struct { const char *id, *path; } cases[] = {
        {"echo-a/b?c d", "/api/public/v1/channels/echo-a%2Fb%3Fc%20d"},
        {"echo-%2F#x", "/api/public/v1/channels/echo-%252F%23x"},
        {"echo-\xc3\xbc+&=", "/api/public/v1/channels/echo-%C3%BC%2B%26%3D"},
        {"echo-..", "/api/public/v1/channels/echo-.."},
    };
    mapi_client *c;
    size_t i;
    (void)state;
    c = tu_sandbox_client();
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        const char *path;
        if (mapi_get_channel(c, cases[i].id, &doc, &err) != 0)
            fail_msg("%s: %s", cases[i].id, err.message);
        path = mapi_value_string(mapi_value_get(mapi_doc_meta(doc), "received_path"), NULL);
        assert_non_null(path);
        assert_string_equal(path, cases[i].path);
        mapi_doc_free(doc);
    }
    mapi_client_free(c);
}

/* ---- addresses ---- */

static void list_addresses_pages(void **state)
{
    mapi_client *c;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_page_params p = {"created_at", "asc", 1, 10};
    char seen[22][64];
    size_t nseen = 0, i, j;
    long page;
    (void)state;
    c = tu_sandbox_client();
    for (page = 1; page <= 3; page++) {
        mapi_doc *doc = NULL;
        const mapi_value *meta;
        p.page = page;
        TU_OK(mapi_list_addresses(c, "acct-22", &p, &doc, &err), err);
        assert_true(mapi_doc_is_list(doc));
        meta = mapi_doc_meta(doc);
        assert_int_equal(tu_int(meta, "page"), page);
        assert_int_equal(tu_int(meta, "per_page"), 10);
        assert_int_equal(tu_int(meta, "total"), 22);
        assert_int_equal(mapi_doc_data_count(doc), page < 3 ? 10 : 2);
        for (i = 0; i < mapi_doc_data_count(doc); i++) {
            const mapi_resource *a = mapi_doc_data(doc, i);
            const mapi_resource *net = mapi_resource_related(doc, a, "network", 0);
            assert_string_equal(mapi_resource_type(a), "addresses");
            assert_non_null(net);
            assert_string_equal(mapi_resource_type(net), "network");
            assert_true(strlen(mapi_resource_id(a)) < sizeof seen[0]);
            for (j = 0; j < nseen; j++)
                assert_string_not_equal(seen[j], mapi_resource_id(a));
            strcpy(seen[nseen++], mapi_resource_id(a));
        }
        mapi_doc_free(doc);
    }
    assert_int_equal(nseen, 22);
    /* desc: the newest first, i.e. the last of asc */
    {
        mapi_page_params d = {"created_at", "desc", 1, 1};
        mapi_doc *doc = NULL;
        assert_int_equal(mapi_list_addresses(c, "acct-22", &d, &doc, &err), 0);
        assert_string_equal(mapi_resource_id(mapi_doc_data(doc, 0)), seen[21]);
        mapi_doc_free(doc);
    }
    mapi_client_free(c);
}

static void list_addresses_shapes(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    size_t i, nulls = 0;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(mapi_list_addresses(c, "acct-empty", NULL, &doc, &err), 0);
    assert_true(mapi_doc_is_list(doc));
    assert_int_equal(mapi_doc_data_count(doc), 0);
    assert_int_equal(tu_int(mapi_doc_meta(doc), "total"), 0);
    mapi_doc_free(doc);
    assert_int_equal(mapi_list_addresses(c, "acct-one", NULL, &doc, &err), 0);
    assert_int_equal(mapi_doc_data_count(doc), 1);
    assert_int_equal(tu_int(mapi_doc_meta(doc), "total"), 1);
    mapi_doc_free(doc);
    /* addresses still being generated: value present and null */
    assert_int_equal(mapi_list_addresses(c, "acct-generating", NULL, &doc, &err), 0);
    for (i = 0; i < mapi_doc_data_count(doc); i++) {
        const mapi_resource *a = mapi_doc_data(doc, i);
        assert_true(mapi_value_has(mapi_resource_attributes(a), "value"));
        if (!mapi_resource_attr(a, "value"))
            nulls++;
    }
    assert_true(nulls > 0);
    mapi_doc_free(doc);
    {
        mapi_page_params big = {NULL, NULL, 3, 1000};
        assert_int_equal(mapi_list_addresses(c, "acct-25000", &big, &doc, &err), 0);
        assert_int_equal(mapi_doc_data_count(doc), 1000);
        assert_int_equal(tu_int(mapi_doc_meta(doc), "page"), 3);
        assert_int_equal(tu_int(mapi_doc_meta(doc), "total"), 25000);
        mapi_doc_free(doc);
    }
    mapi_client_free(c);
}

/* ---- the client's rules (no network) ---- */

static mapi_error_kind new_client_kind(const char *base, const char *key, double timeout)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;
    mapi_error_kind kind;

    mapi_config_init(&cfg);
    cfg.base_url = base;
    cfg.api_key = key;
    cfg.timeout = timeout;
    c = mapi_client_new(&cfg, &err);
    kind = err.kind;
    if (c) {
        assert_int_equal(kind, MAPI_ERR_NONE);
        mapi_client_free(c);
    } else {
        assert_non_null(err.message);
        if (key)
            tu_assert_no_key(&err, key);
    }
    mapi_error_clear(&err);
    return kind;
}

static void client_new_rules(void **state)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    assert_int_equal(new_client_kind("https://api.example", "sk_live_rules_1", 30), MAPI_ERR_NONE);
    assert_int_equal(new_client_kind("http://localhost:8089/", NULL, 30), MAPI_ERR_NONE);
    assert_int_equal(new_client_kind("http://[::1]:8089", NULL, 30), MAPI_ERR_NONE);
    assert_int_equal(new_client_kind("http://api.example", "sk_live_rules_1", 30), MAPI_ERR_USAGE);
    assert_int_equal(new_client_kind("http://192.168.1.1:8089", "sk_live_rules_1", 30), MAPI_ERR_USAGE);
    assert_int_equal(new_client_kind(NULL, "sk_live_rules_1", 30), MAPI_ERR_USAGE);
    assert_int_equal(new_client_kind("https://u:p@api.example", "sk_live_rules_1", 30), MAPI_ERR_USAGE);
    assert_int_equal(new_client_kind("https://api.example\r\n", "sk_live_rules_1", 30), MAPI_ERR_USAGE);
    assert_int_equal(new_client_kind("https://api.example", "sk_test_abc\r\nX-Evil: 1", 30),
                     MAPI_ERR_USAGE);
    assert_int_equal(new_client_kind("https://api.example", "sk_test_abc\n", 30),
                     MAPI_ERR_USAGE);
    assert_int_equal(new_client_kind("https://api.example", "sk_live_rules_1", -1), MAPI_ERR_USAGE);
    mapi_config_init(&cfg);
    cfg.base_url = "https://api.example";
    cfg.max_retries = -1;
    assert_null(mapi_client_new(&cfg, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_null(mapi_client_new(NULL, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_global_init(&err), 0);
}

static void config_defaults(void **state)
{
    mapi_config cfg;
    (void)state;
    memset(&cfg, 0x55, sizeof cfg);
    mapi_config_init(&cfg);
    assert_null(cfg.base_url);
    assert_null(cfg.api_key);
    assert_true(cfg.timeout == 30.0);
    assert_true(cfg.connect_timeout == 10.0);
    assert_int_equal(cfg.max_retries, 2);
    assert_int_equal(cfg.max_body, 16 * 1024 * 1024);
    assert_int_equal(cfg.max_depth, 64);
    assert_null(cfg.cafile);
    assert_null(cfg.capath);
    assert_null(cfg.user_agent);
}

static void empty_ids_are_usage(void **state)
{
    mapi_client *c = tu_client_ex("https://api.example", "k", 2, 0, NULL);
    mapi_doc *doc = (mapi_doc *)&doc; /* reset to NULL by the call */
    mapi_error err = MAPI_ERROR_INIT;
    mapi_page_params bad = {NULL, NULL, -1, 0};
    (void)state;
    assert_int_equal(mapi_confirm_payout(c, "", &doc, &err), -1);
    assert_null(doc);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    /* the builder's refusal carries the method (calls.c, mapi_error_tag_not_sent) */
    assert_string_equal(err.message, "merchantapi: usage: payout_id is empty [PUT]");
    assert_string_equal(err.method, "PUT");
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    assert_int_equal(err.attempts, 0);
    mapi_error_clear(&err);
    assert_int_equal(mapi_confirm_payout(c, NULL, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_get_channel(c, "..", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_list_addresses(c, "", NULL, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_list_addresses(c, "acct-one", &bad, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_get_channel(NULL, "x", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_get_channel(c, "x", NULL, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    mapi_client_free(c);
    mapi_client_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(confirm_payout_201, tu_setup_reset),
        cmocka_unit_test_setup(confirm_twice_is_rejected, tu_setup_reset),
        cmocka_unit_test_setup(confirm_partner_pay_amount_string, tu_setup_reset),
        cmocka_unit_test_setup(confirm_exact_numbers, tu_setup_reset),
        cmocka_unit_test_setup(confirm_422_codes, tu_setup_reset),
        cmocka_unit_test_setup(unknown_payout_404, tu_setup_reset),
        cmocka_unit_test_setup(no_key_401, tu_setup_reset),
        cmocka_unit_test_setup(get_channel_200, tu_setup_reset),
        cmocka_unit_test_setup(ids_are_percent_encoded, tu_setup_reset),
        cmocka_unit_test_setup(list_addresses_pages, tu_setup_reset),
        cmocka_unit_test_setup(list_addresses_shapes, tu_setup_reset),
        cmocka_unit_test(client_new_rules),
        cmocka_unit_test(config_defaults),
        cmocka_unit_test(empty_ids_are_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

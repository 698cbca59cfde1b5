/*
 * test_error_doc.c -- src/error_doc.c: a JSON:API error document into a
 * mapi_error (every 422 fixture, errors[] of any shape, the limits of a
 * detail), and the one rule for "is this an error document"
 * (mapi_doc_error_rule, JSON:API "Top Level"), on documents and through the
 * client: "errors": [] next to data is a success, data and a non-empty
 * errors[] under a 2xx is DECODE, errors without data is API.  The Lua
 * binding decides by the same function (spec/errors/error_rule_spec.lua).
 */
#include "testutil.h"

static mapi_doc *parse(const char *text)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;

    if (mapi_doc_parse(text, strlen(text), &doc, &err) != 0)
        fail_msg("parse %s: %s", text, err.message ? err.message : "?");
    return doc;
}

/* mapi_doc_error_rule(text, status): its return and the error's kind. */
static int rule(const char *text, int status, mapi_error_kind *kind, size_t *nerrors)
{
    mapi_doc *doc = parse(text);
    mapi_error err = MAPI_ERROR_INIT;
    int rc = mapi_doc_error_rule(doc, status, &err);

    *kind = err.kind;
    *nerrors = err.nerrors;
    if (rc == 1)
        assert_non_null(err.message);
    mapi_error_clear(&err);
    mapi_doc_free(doc);
    return rc;
}

static void the_rule_on_documents(void **state)
{
    static const char res[] = "{\"type\":\"payouts\",\"id\":\"p1\"}";
    char text[512];
    mapi_error_kind kind;
    size_t n;
    (void)state;

    /* errors absent, null or []: never an error document, whatever the status */
    snprintf(text, sizeof text, "{\"data\":%s,\"errors\":[]}", res);
    assert_int_equal(rule(text, 201, &kind, &n), 0);
    assert_int_equal(kind, MAPI_ERR_NONE);
    assert_int_equal(rule(text, 0, &kind, &n), 0);
    snprintf(text, sizeof text, "{\"data\":%s,\"errors\":null}", res);
    assert_int_equal(rule(text, 200, &kind, &n), 0);
    assert_int_equal(rule("{\"data\":null,\"errors\":[]}", 200, &kind, &n), 0);
    assert_int_equal(rule("{\"meta\":{},\"errors\":[]}", 404, &kind, &n), 0);

    /* errors without primary data: API under any status, or none */
    assert_int_equal(rule("{\"errors\":[{\"code\":\"x\"},{\"code\":\"y\"}]}", 422, &kind, &n), 1);
    assert_int_equal(kind, MAPI_ERR_API);
    assert_int_equal(n, 2);
    assert_int_equal(rule("{\"errors\":[{\"code\":\"x\"}]}", 200, &kind, &n), 1);
    assert_int_equal(kind, MAPI_ERR_API);
    assert_int_equal(rule("{\"data\":null,\"errors\":[{\"code\":\"x\"}]}", 0, &kind, &n), 1);
    assert_int_equal(kind, MAPI_ERR_API);

    /* data and errors together: DECODE under a 2xx or no status, API otherwise */
    snprintf(text, sizeof text, "{\"data\":%s,\"errors\":[{\"code\":\"x\"}]}", res);
    assert_int_equal(rule(text, 201, &kind, &n), 1);
    assert_int_equal(kind, MAPI_ERR_DECODE);
    assert_int_equal(n, 1); /* the entries are kept */
    assert_int_equal(rule(text, 0, &kind, &n), 1);
    assert_int_equal(kind, MAPI_ERR_DECODE);
    assert_int_equal(rule(text, 409, &kind, &n), 1);
    assert_int_equal(kind, MAPI_ERR_API);
    assert_int_equal(rule("{\"data\":[],\"errors\":[{\"code\":\"x\"}]}", 200, &kind, &n), 1);
    assert_int_equal(kind, MAPI_ERR_DECODE);
}

static void mapi_doc_error_follows_the_rule(void **state)
{
    mapi_doc *doc;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;

    doc = parse("{\"data\":{\"type\":\"payouts\",\"id\":\"p1\"},\"errors\":[]}");
    assert_int_equal(mapi_doc_error(doc, &err), 0);
    assert_int_equal(err.kind, MAPI_ERR_NONE);
    mapi_doc_free(doc);

    doc = parse("{\"data\":{\"type\":\"payouts\",\"id\":\"p1\"},"
                "\"errors\":[{\"status\":\"409\",\"code\":\"c\",\"title\":\"t\"}]}");
    assert_int_equal(mapi_doc_error(doc, &err), 1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "not JSON:API: the document holds both data and errors");
    assert_null(err.code); /* the entry's fields stay in errors[] */
    assert_int_equal(err.nerrors, 1);
    assert_string_equal(err.errors[0].code, "c");
    assert_int_equal(err.errors[0].status, 409);
    assert_true(strncmp(err.message, "merchantapi: decode: not JSON:API", 33) == 0);
    mapi_error_clear(&err);
    mapi_doc_free(doc);

    /* a list's meta is data to this rule: its counts are the list calls' */
    doc = parse("{\"data\":[],\"meta\":{\"page\":\"1\",\"total\":1.5}}");
    assert_int_equal(mapi_doc_error(doc, &err), 0);
    assert_int_equal(err.kind, MAPI_ERR_NONE);
    mapi_doc_free(doc);
    doc = parse("{\"data\":{\"type\":\"t\",\"id\":\"1\"},\"meta\":{\"total\":1.5}}");
    assert_int_equal(mapi_doc_error(doc, &err), 0); /* not a list: no counts */
    mapi_doc_free(doc);
}

/* The sandbox's fault-empty-errors: the document with "errors": [] first. */
static void empty_errors_next_to_data_is_success(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();

    TU_OK(mapi_confirm_payout(c, "fault-empty-errors", &doc, &err), err);
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 201);
    assert_string_equal(mapi_resource_id(mapi_doc_data(doc, 0)), "fault-empty-errors");
    assert_string_equal(tu_attr_str(mapi_doc_data(doc, 0), "status"), "processing");
    mapi_doc_free(doc);
    doc = NULL;

    TU_OK(mapi_get_channel(c, "fault-empty-errors", &doc, &err), err);
    assert_string_equal(mapi_resource_id(mapi_doc_data(doc, 0)), "fault-empty-errors");
    mapi_doc_free(doc);
    doc = NULL;

    TU_OK(mapi_list_addresses(c, "fault-empty-errors", NULL, &doc, &err), err);
    assert_int_equal(mapi_doc_data_count(doc), 22);
    mapi_doc_free(doc);
    assert_int_equal(tu_sandbox_count("fault-empty-errors"), 3); /* one request each */
    mapi_client_free(c);
}

/* The sandbox's fault-data-and-errors: a 201/200 with data and one error. */
static void data_and_errors_under_2xx_is_decode(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    c = tu_sandbox_client();

    /* settling off: the confirm's own answer (settling is test_settle's) */
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-data-and-errors", tu_no_settle(), &doc, &err), -1);
    assert_null(doc);
    /* answered 201: it may have happened */
    TU_ASSERT_ERROR(err, MAPI_ERR_DECODE, 201, MAPI_OUTCOME_UNKNOWN, 0, 1);
    assert_string_equal(err.method, "PUT");
    assert_true(tu_contains(err.url, "/api/public/v1/payouts/fault-data-and-errors"));
    assert_int_equal(err.nerrors, 1);
    assert_string_equal(err.errors[0].code, "sandbox_conflict");
    assert_non_null(err.response);
    assert_true(tu_contains(err.message, "both data and errors"));
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-data-and-errors"), 1);

    assert_int_equal(mapi_get_channel(c, "fault-data-and-errors", &doc, &err), -1);
    /* DECODE is not retried */
    TU_ASSERT_ERROR(err, MAPI_ERR_DECODE, 200, MAPI_OUTCOME_NONE, 0, 1);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-data-and-errors"), 2);
    mapi_client_free(c);
}

static void limit_details(void **state)
{
    char *a, *mn, *mx;
    (void)state;
    assert_int_equal(mapi_limit_detail_parse("amount: 5.5, minimum: 10.0", &a, &mn, &mx), 0);
    assert_string_equal(a, "5.5");
    assert_string_equal(mn, "10.0");
    assert_null(mx);
    free(a); free(mn);
    assert_int_equal(mapi_limit_detail_parse("amount: 250000.0, maximum: 100000.0", &a, &mn, &mx), 0);
    assert_string_equal(a, "250000.0");
    assert_null(mn);
    assert_string_equal(mx, "100000.0");
    free(a); free(mx);
    /* exact text however long; any order; trailing words ignored */
    assert_int_equal(mapi_limit_detail_parse("minimum: 0.000000000000000001 USDT,amount:1e-19",
                                             &a, &mn, &mx), 0);
    assert_string_equal(a, "1e-19");
    assert_string_equal(mn, "0.000000000000000001");
    assert_null(mx);
    free(a); free(mn);
    assert_int_equal(mapi_limit_detail_parse("amount: 123456789012345678901234567890.10, maximum: -3",
                                             &a, NULL, &mx), 0);
    assert_string_equal(a, "123456789012345678901234567890.10");
    assert_string_equal(mx, "-3");
    free(a); free(mx);
    /* no numbers: nothing */
    assert_int_equal(mapi_limit_detail_parse("amount is too small", &a, &mn, &mx), 0);
    assert_null(a); assert_null(mn); assert_null(mx);
    assert_int_equal(mapi_limit_detail_parse("amount: abc, minimum: .5", &a, &mn, &mx), 0);
    assert_null(a); assert_null(mn); assert_null(mx);
    assert_int_equal(mapi_limit_detail_parse("", &a, &mn, &mx), 0);
    assert_null(a);
}

/* Every 422 fixture read as an error document: the fields the client reports. */
static void error_documents_from_fixtures(void **state)
{
    static const struct {
        const char *file, *code, *title, *detail, *pointer, *amount, *minimum, *maximum;
    } cases[] = {
        {"confirm_payout.422.amount_below_minimum.json", "amount_below_minimum",
         "amount is below minimum", "amount: 5.5, minimum: 10.0", NULL, "5.5", "10.0", NULL},
        {"confirm_payout.422.amount_above_maximum.json", "amount_above_maximum",
         "amount is above maximum", "amount: 250000.0, maximum: 100000.0", NULL, "250000.0",
         NULL, "100000.0"},
        {"confirm_payout.422.invalid_address.json", "invalid_address", "Invalid address", NULL,
         NULL, NULL, NULL, NULL},
        {"confirm_payout.422.payout_invalid.json", "payout_invalid", "Invalid attribute",
         "Reference has already been taken", "/data/attributes/externalId", NULL, NULL, NULL},
        {"confirm_payout.422.account_has_insufficient_balance.json",
         "account_has_insufficient_balance", "account has insufficient balance", NULL, NULL,
         NULL, NULL, NULL},
        {"confirm_payout.422.address_has_high_risk_score.json", "address_has_high_risk_score",
         "Funds cannot be sent to this address. Please try another address.", NULL, NULL, NULL,
         NULL, NULL},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_doc *doc = tu_fixture_doc(cases[i].file);
        mapi_error e = MAPI_ERROR_INIT;
        assert_int_equal(mapi_error_from_errors(&e, mapi_doc_errors(doc)), 0);
        mapi_doc_free(doc);
        assert_int_equal(e.kind, MAPI_ERR_API);
        assert_int_equal(e.nerrors, 1);
        assert_int_equal(e.errors[0].status, 422);
        assert_string_equal(e.code, cases[i].code);
        assert_string_equal(e.errors[0].code, cases[i].code);
        assert_string_equal(e.title, cases[i].title);
        TU_ASSERT_STR_OR_NULL(e.detail, cases[i].detail);
        TU_ASSERT_STR_OR_NULL(e.pointer, cases[i].pointer);
        TU_ASSERT_STR_OR_NULL(e.errors[0].pointer, cases[i].pointer);
        TU_ASSERT_STR_OR_NULL(e.amount, cases[i].amount);
        TU_ASSERT_STR_OR_NULL(e.minimum, cases[i].minimum);
        TU_ASSERT_STR_OR_NULL(e.maximum, cases[i].maximum);
        mapi_error_clear(&e);
    }
}

/* errors[].status as a string; every entry kept; limits from a later entry. */
static void error_document_shapes(void **state)
{
    static const char body[] =
        "{\"errors\":["
        "{\"status\":\"409\",\"code\":\"first\",\"title\":\"First\"},"
        "{\"status\":\"x\",\"code\":\"amount_below_minimum\",\"detail\":\"amount: 1, minimum: 2.50\"},"
        "7,"
        "{\"status\":422,\"code\":\"amount_above_maximum\",\"detail\":\"amount: 9, maximum: 8\"}"
        "]}";
    mapi_doc *doc = NULL;
    mapi_error e = MAPI_ERROR_INIT;
    (void)state;
    assert_int_equal(mapi_doc_parse(body, sizeof body - 1, &doc, &e), 0);
    assert_int_equal(mapi_error_from_errors(&e, mapi_doc_errors(doc)), 0);
    mapi_doc_free(doc);
    assert_int_equal(e.nerrors, 4);
    assert_int_equal(e.errors[0].status, 409);
    assert_int_equal(e.errors[1].status, 0);
    assert_null(e.errors[2].code); /* not an object: an empty entry */
    assert_int_equal(e.errors[3].status, 422);
    assert_string_equal(e.code, "first");
    assert_string_equal(e.title, "First");
    assert_null(e.detail);
    assert_string_equal(e.amount, "1");     /* the first limit entry wins */
    assert_string_equal(e.minimum, "2.50");
    assert_null(e.maximum);
    mapi_error_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limit_details),
        cmocka_unit_test(error_documents_from_fixtures),
        cmocka_unit_test(error_document_shapes),
        cmocka_unit_test(the_rule_on_documents),
        cmocka_unit_test(mapi_doc_error_follows_the_rule),
        cmocka_unit_test_setup(empty_errors_next_to_data_is_success, tu_setup_reset),
        cmocka_unit_test_setup(data_and_errors_under_2xx_is_decode, tu_setup_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

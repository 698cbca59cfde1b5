/*
 * test_numbers.c -- the text of every JSON number in C, and the decimal
 * string of an amount: mapi_value_number (exact text, integers included,
 * with its length), mapi_value_number_text, mapi_value_decimal (the rule
 * the Lua module applies to a payout's amount: spec/decode/numbers_spec.lua
 * checks the same cases through Lua).
 */
#include "testutil.h"

/* A document whose one payout has `"amount": <json>` (caller frees). */
static mapi_doc *payout_with(const char *json)
{
    char body[1024];
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    int n = snprintf(body, sizeof body,
                     "{\"data\":{\"type\":\"payouts\",\"id\":\"p\",\"attributes\":"
                     "{\"amount\":%s}}}",
                     json);

    assert_true(n > 0 && (size_t)n < sizeof body);
    if (mapi_doc_parse(body, (size_t)n, &doc, &err) != 0)
        fail_msg("%s: %s", json, err.message ? err.message : "?");
    return doc;
}

static const mapi_value *amount_of(const mapi_doc *doc)
{
    return mapi_resource_attr(mapi_doc_data(doc, 0), "amount");
}

/* The amount cases of spec/decode/numbers_spec.lua, plus the corners of the rule. */
static const struct {
    const char *json, *decimal;
} amounts[] = {
    {"1200", "1200"},
    {"250.10", "250.10"},
    {"\"250.10\"", "250.10"},
    {"\"1200\"", "1200"},
    {"-12", "-12"},
    {"0.123456789012345678", "0.123456789012345678"},
    {"1.5e2", "150"},
    {"2.5E-3", "0.0025"},
    {"15e-1", "1.5"},
    {"1.50e+1", "15.0"},
    {"123456789012345678901234567890", "123456789012345678901234567890"},
    {"-2.5e-3", "-0.0025"},
    {"0e5", "0"},
    {"0.001e2", "0.1"},
    {"12e0", "12"},
    {"1e400", NULL},  /* filled below: 1 and 400 zeros */
    {"1e401", "1e401"}, /* beyond the exponent cap: the source text */
    {"-1E-401", "-1E-401"},
};

static void test_decimal_of_amounts(void **state)
{
    size_t i;
    char big[402];
    (void)state;
    big[0] = '1';
    memset(big + 1, '0', 400);
    big[401] = '\0';
    for (i = 0; i < sizeof amounts / sizeof amounts[0]; i++) {
        mapi_doc *doc = payout_with(amounts[i].json);
        const char *want = amounts[i].decimal ? amounts[i].decimal : big;
        size_t len = 99;
        const char *got = mapi_value_decimal(amount_of(doc), &len);
        if (!got || strcmp(got, want) != 0 || len != strlen(want))
            fail_msg("amount %s: want \"%s\", got \"%s\" (len %zu)", amounts[i].json, want,
                     got ? got : "(NULL)", len);
        assert_ptr_equal(mapi_value_decimal(amount_of(doc), NULL), got); /* len optional */
        mapi_doc_free(doc);
    }
}

static void test_number_text_of_integers(void **state)
{
    static const char *ints[] = {"1200", "-12", "0", "-0", "9007199254740993",
                                 "999999999999999999", "-999999999999999999"};
    size_t i, len;
    int64_t n;
    (void)state;
    for (i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        mapi_doc *doc = payout_with(ints[i]);
        const mapi_value *v = amount_of(doc);
        assert_int_equal(mapi_value_type(v), MAPI_INT);
        assert_int_equal(mapi_value_int64(v, &n), 0);
        len = 99;
        assert_string_equal(mapi_value_number(v, &len), ints[i]);
        assert_int_equal(len, strlen(ints[i]));
        /* the old accessor no longer returns NULL for integers */
        assert_string_equal(mapi_value_number_text(v), ints[i]);
        mapi_doc_free(doc);
    }
}

static void test_number_text_is_the_source(void **state)
{
    /* numbers other than integers: the exact source, exponent kept */
    static const char *nums[] = {"250.10", "1.5e-7", "1.5e2", "2.5E-3", "-0.0",
                                 "123456789012345678901234567890", "1E+2"};
    size_t i, len;
    (void)state;
    for (i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        mapi_doc *doc = payout_with(nums[i]);
        const mapi_value *v = amount_of(doc);
        assert_int_equal(mapi_value_type(v), MAPI_NUMBER);
        len = 0;
        assert_string_equal(mapi_value_number(v, &len), nums[i]);
        assert_int_equal(len, strlen(nums[i]));
        assert_string_equal(mapi_value_number_text(v), nums[i]);
        mapi_doc_free(doc);
    }
}

static void test_other_types(void **state)
{
    static const char *others[] = {"null", "true", "[1]", "{\"a\":1}"};
    size_t i, len;
    mapi_doc *doc;
    (void)state;
    for (i = 0; i < sizeof others / sizeof others[0]; i++) {
        doc = payout_with(others[i]);
        len = 99;
        assert_null(mapi_value_number(amount_of(doc), &len));
        assert_int_equal(len, 0);
        len = 99;
        assert_null(mapi_value_decimal(amount_of(doc), &len));
        assert_int_equal(len, 0);
        assert_null(mapi_value_number_text(amount_of(doc)));
        mapi_doc_free(doc);
    }
    /* a string is no number, but an amount sent as a string is its decimal
       string, NUL bytes included */
    doc = payout_with("\"12\\u00003\"");
    assert_null(mapi_value_number(amount_of(doc), NULL));
    len = 0;
    assert_memory_equal(mapi_value_decimal(amount_of(doc), &len), "12\0003", 4);
    assert_int_equal(len, 4);
    mapi_doc_free(doc);
    /* NULL values (absent members) */
    assert_null(mapi_value_number(NULL, NULL));
    assert_null(mapi_value_decimal(NULL, NULL));
}

/* Numbers deep in a document, in arrays and meta, all get their text. */
static void test_numbers_everywhere(void **state)
{
    static const char body[] =
        "{\"data\":[],\"meta\":{\"page\":2,\"list\":[7,[1.5e1,-3]],\"o\":{\"x\":10}}}";
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const mapi_value *meta, *list;
    (void)state;
    assert_int_equal(mapi_doc_parse(body, sizeof body - 1, &doc, &err), 0);
    meta = mapi_doc_meta(doc);
    list = mapi_value_get(meta, "list");
    assert_string_equal(mapi_value_number(mapi_value_get(meta, "page"), NULL), "2");
    assert_string_equal(mapi_value_number(mapi_value_at(list, 0), NULL), "7");
    assert_string_equal(mapi_value_number(mapi_value_at(mapi_value_at(list, 1), 0), NULL),
                        "1.5e1");
    assert_string_equal(mapi_value_decimal(mapi_value_at(mapi_value_at(list, 1), 0), NULL),
                        "15");
    assert_string_equal(mapi_value_number(mapi_value_at(mapi_value_at(list, 1), 1), NULL),
                        "-3");
    assert_string_equal(
        mapi_value_number(mapi_value_get(mapi_value_get(meta, "o"), "x"), NULL), "10");
    mapi_doc_free(doc);
}

/* The payouts of the sandbox: the normal draft (250.10), the integer amount
   (1200) and the partner_pay draft ("1200", a string) read the same. */
static void test_sandbox_amounts(void **state)
{
    static const struct {
        const char *id, *amount;
        mapi_type type;
    } drafts[] = {
        {"6ecebf80-b210-413b-b396-df4760d142c5", "250.10", MAPI_NUMBER},
        {"draft-integer-amount", "1200", MAPI_INT},
        {"9a1d2f64-58c3-4b0e-a7d1-3f2c6b8e4a17", "1200", MAPI_STRING},
    };
    mapi_client *c;
    size_t i, len;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client();
    for (i = 0; i < sizeof drafts / sizeof drafts[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        const mapi_value *v;
        if (mapi_confirm_payout(c, drafts[i].id, &doc, &err) != 0)
            fail_msg("%s: %s", drafts[i].id, err.message ? err.message : "?");
        v = amount_of(doc);
        assert_int_equal(mapi_value_type(v), drafts[i].type);
        len = 0;
        assert_string_equal(mapi_value_decimal(v, &len), drafts[i].amount);
        assert_int_equal(len, strlen(drafts[i].amount));
        if (drafts[i].type != MAPI_STRING)
            assert_string_equal(mapi_value_number(v, NULL), drafts[i].amount);
        mapi_doc_free(doc);
    }
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decimal_of_amounts),
        cmocka_unit_test(test_number_text_of_integers),
        cmocka_unit_test(test_number_text_is_the_source),
        cmocka_unit_test(test_other_types),
        cmocka_unit_test(test_numbers_everywhere),
        cmocka_unit_test(test_sandbox_amounts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_list_meta.c -- lists as the real service renders them: pagination
 * meta written as strings of digits ("page": "1") or left out ("meta": {}).
 * mapi_value_count's rule on crafted documents (no HTTP), then
 * mapi_list_addresses and mapi_list_addresses_pages against the sandbox's
 * meta-<mode>-<account> and meta-<member>=<text> accounts: string counts read
 * as integers, absent ones absent, anything else DECODE naming the member --
 * in the list calls only: mapi_request, mapi_doc_parse and mapi_doc_error
 * keep a list's meta as data.
 */
#include <inttypes.h>

#include "testutil.h"

/* mapi_value_count of the JSON text `json` as a meta member. */
static int count_of(const char *json, int64_t *out)
{
    char body[256];
    mapi_doc *d = NULL;
    mapi_error e = MAPI_ERROR_INIT;
    int rc;

    assert_true((size_t)snprintf(body, sizeof body, "{\"meta\":{\"n\":%s}}", json) < sizeof body);
    if (mapi_doc_parse(body, strlen(body), &d, &e) != 0)
        fail_msg("%s: %s", json, e.message);
    rc = mapi_value_count(mapi_value_get(mapi_doc_meta(d), "n"), out);
    mapi_doc_free(d);
    return rc;
}

static void value_count_forms(void **state)
{
    static const struct {
        const char *json;
        int64_t want;
    } good[] = {
        {"0", 0},
        {"12", 12},
        {"-0", 0},
        {"12.0", 12},
        {"1.2e1", 12},
        {"1E+2", 100},
        {"1200e-2", 12},
        {"9223372036854775807", INT64_MAX},
        {"9.223372036854775807e18", INT64_MAX},
        {"1000000000000000000", INT64_C(1000000000000000000)},
        {"\"0\"", 0},
        {"\"12\"", 12},
        {"\"9223372036854775807\"", INT64_MAX},
    };
    static const char *const bad[] = {
        "-1", "-12.0", "0.5", "1.25e1", "1e-400", "9223372036854775808", "1e19",
        "123456789012345678901234567890", "\"\"", "\"+1\"", "\"-1\"", "\"1.0\"", "\" 1\"",
        "\"1 \"", "\"01\"", "\"00\"", "\"1e3\"", "\"0x10\"", "\"1\\u00002\"",
        "\"9223372036854775808\"", "true", "null", "[1]", "{}",
    };
    size_t i;
    int64_t n;
    (void)state;
    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        n = -1;
        if (count_of(good[i].json, &n) != 0 || n != good[i].want)
            fail_msg("%s: expected %" PRId64 ", got %" PRId64, good[i].json, good[i].want, n);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = 77;
        if (count_of(bad[i], &n) != -1 || n != 77)
            fail_msg("%s: expected no count", bad[i]);
    }
    assert_int_equal(mapi_value_count(NULL, &n), -1); /* absent */
}

/* The count of a meta member; fails the test when it is not one. */
static int64_t meta_count(const mapi_doc *doc, const char *name)
{
    int64_t n = -1;
    if (mapi_value_count(mapi_value_get(mapi_doc_meta(doc), name), &n) != 0)
        fail_msg("meta.%s is not a count", name);
    return n;
}

static void string_meta_reads_as_integers(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_page_params p = {NULL, NULL, 2, 5};
    int64_t n;
    (void)state;
    c = tu_sandbox_client();
    TU_OK(mapi_list_addresses(c, "meta-strings-acct-22", &p, &doc, &err), err);
    assert_int_equal(mapi_doc_data_count(doc), 5);
    assert_string_equal(mapi_resource_id(mapi_doc_data(doc, 0)),
                        "00000022-0000-4000-8000-000000000006");
    assert_int_equal(meta_count(doc, "page"), 2);
    assert_int_equal(meta_count(doc, "per_page"), 5);
    assert_int_equal(meta_count(doc, "total"), 22);
    /* the text as sent stays readable; it is not an integer token */
    assert_int_equal(mapi_value_int64(mapi_value_get(mapi_doc_meta(doc), "total"), &n), -1);
    assert_string_equal(mapi_value_string(mapi_value_get(mapi_doc_meta(doc), "total"), NULL), "22");
    mapi_doc_free(doc);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("meta-strings-acct-22"), 1);
}

static void missing_meta_is_kept_as_it_came(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_page_params p = {NULL, NULL, 1, 5};
    int64_t n;
    (void)state;
    c = tu_sandbox_client();
    TU_OK(mapi_list_addresses(c, "meta-empty-acct-22", &p, &doc, &err), err);
    assert_int_equal(mapi_doc_data_count(doc), 5);
    assert_int_equal(mapi_value_type(mapi_doc_meta(doc)), MAPI_OBJECT);
    assert_int_equal(mapi_value_len(mapi_doc_meta(doc)), 0);
    assert_int_equal(mapi_value_count(mapi_value_get(mapi_doc_meta(doc), "total"), &n), -1);
    mapi_doc_free(doc);

    TU_OK(mapi_list_addresses(c, "meta-none-acct-22", &p, &doc, &err), err);
    assert_int_equal(mapi_doc_data_count(doc), 5);
    assert_null(mapi_doc_meta(doc));
    mapi_doc_free(doc);

    TU_OK(mapi_list_addresses(c, "meta-no-total-acct-22", &p, &doc, &err), err);
    assert_int_equal(meta_count(doc, "page"), 1);
    assert_int_equal(meta_count(doc, "per_page"), 5);
    assert_false(mapi_value_has(mapi_doc_meta(doc), "total"));
    mapi_doc_free(doc);

    TU_OK(mapi_list_addresses(c, "meta-total=null", &p, &doc, &err), err);
    assert_int_equal(meta_count(doc, "page"), 1);
    assert_int_equal(mapi_value_count(mapi_value_get(mapi_doc_meta(doc), "total"), &n), -1);
    mapi_doc_free(doc);
    mapi_client_free(c);
}

static void other_forms_are_decode_naming_the_member(void **state)
{
    static const struct {
        const char *id, *title;
    } cases[] = {
        {"meta-total=\"01\"",
         "expected meta.total to be a non-negative integer, got a string that is not plain digits"},
        {"meta-page=\"1.0\"",
         "expected meta.page to be a non-negative integer, got a string that is not plain digits"},
        {"meta-per_page=\"+5\"",
         "expected meta.per_page to be a non-negative integer, got a string that is not plain "
         "digits"},
        {"meta-total=-1", "expected meta.total to be a non-negative integer, got a negative number"},
        {"meta-page=1.5", "expected meta.page to be a non-negative integer, got a fraction"},
        {"meta-total=9223372036854775808",
         "expected meta.total to be a non-negative integer, got a number beyond 64 bits"},
        {"meta-total=\"9223372036854775808\"",
         "expected meta.total to be a non-negative integer, got a string of digits beyond 64 bits"},
        {"meta-per_page=false", "expected meta.per_page to be a non-negative integer, got a boolean"},
    };
    mapi_client *c;
    size_t i;
    (void)state;
    c = tu_sandbox_client();
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_doc *doc = (mapi_doc *)1;
        mapi_error err = MAPI_ERROR_INIT;
        assert_int_equal(mapi_list_addresses(c, cases[i].id, NULL, &doc, &err), -1);
        assert_null(doc);
        assert_int_equal(err.kind, MAPI_ERR_DECODE);
        assert_string_equal(err.title, cases[i].title);
        assert_int_equal(err.status, 200);
        assert_false(err.retryable);
        mapi_error_clear(&err);
        assert_int_equal(tu_sandbox_count(cases[i].id), 1); /* not retried */
    }
    mapi_client_free(c);
}

/* Pages 1..5 of acct-22 by 5 through mapi_list_addresses_pages. */
static void pages_with_meta(const char *account, int has_counts)
{
    mapi_client *c;
    mapi_doc *docs[5];
    mapi_error errs[5];
    mapi_page_params p = {NULL, NULL, 0, 5};
    size_t i;
    TU_NEED_SANDBOX();
    memset(errs, 0, sizeof errs);
    c = tu_client();
    if (mapi_list_addresses_pages(c, account, &p, 1, 5, 4, docs, errs) != 0)
        fail_msg("%s", errs[0].message ? errs[0].message : "a later page failed");
    for (i = 0; i < 5; i++) {
        int64_t n;
        assert_int_equal(errs[i].kind, MAPI_ERR_NONE);
        assert_int_equal(mapi_doc_data_count(docs[i]), i < 4 ? 5 : 2);
        if (has_counts) {
            assert_int_equal(meta_count(docs[i], "page"), (int64_t)i + 1);
            assert_int_equal(meta_count(docs[i], "per_page"), 5);
            assert_int_equal(meta_count(docs[i], "total"), 22);
        } else {
            assert_int_equal(mapi_value_count(mapi_value_get(mapi_doc_meta(docs[i]), "page"), &n),
                             -1);
        }
        mapi_doc_free(docs[i]);
    }
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count(account), 5);
}

static void pages_with_string_meta(void **state)
{
    (void)state;
    pages_with_meta("meta-strings-acct-22", 1);
}

static void pages_with_empty_meta(void **state)
{
    (void)state;
    pages_with_meta("meta-empty-acct-22", 0);
}

static void pages_refuse_like_one_page(void **state)
{
    mapi_client *c;
    mapi_doc *docs[3];
    mapi_error errs[3];
    mapi_page_params p = {NULL, NULL, 0, 5};
    (void)state;
    TU_NEED_SANDBOX();
    memset(errs, 0, sizeof errs);
    c = tu_client();
    assert_int_equal(mapi_list_addresses_pages(c, "meta-page=1.5", &p, 1, 3, 3, docs, errs), -1);
    assert_null(docs[0]);
    assert_int_equal(errs[0].kind, MAPI_ERR_DECODE);
    assert_string_equal(errs[0].title,
                        "expected meta.page to be a non-negative integer, got a fraction");
    mapi_error_clear(&errs[0]);
    mapi_client_free(c);
}

/* Another JSON:API server's meta.page ({offset, limit, total}) and a total
   that is no count, as the sandbox's meta-<member>=<text> accounts serve
   them: the list calls rely on the counts and refuse them naming the
   member; mapi_request, mapi_doc_parse and mapi_doc_error keep meta as
   data (src/mapping.c, check_list_counts: the rule's one home). */
#define OFFSET_PAGE "{\"offset\":0,\"limit\":10,\"total\":40}"
static const struct {
    const char *id, *member, *title;
} not_counts[] = {
    {"meta-page=" OFFSET_PAGE, "page",
     "expected meta.page to be a non-negative integer, got an object"},
    {"meta-total=\"x\"", "total",
     "expected meta.total to be a non-negative integer, got a string that is not plain digits"},
};

/* meta.page as jsonapi-server writes it, or meta.total "x": which one. */
static void assert_kept(const mapi_doc *doc, const char *member)
{
    const mapi_value *v = mapi_value_get(mapi_doc_meta(doc), member);
    size_t len;

    if (strcmp(member, "page") == 0) {
        assert_int_equal(mapi_value_type(v), MAPI_OBJECT);
        assert_int_equal(tu_int(v, "offset"), 0);
        assert_int_equal(tu_int(v, "limit"), 10);
        assert_int_equal(tu_int(v, "total"), 40);
    } else {
        assert_int_equal(mapi_value_type(v), MAPI_STRING);
        assert_string_equal(mapi_value_string(v, &len), "x");
    }
}

static void list_calls_refuse_what_is_not_a_count(void **state)
{
    mapi_client *c;
    size_t i;
    (void)state;
    c = tu_sandbox_client();
    for (i = 0; i < sizeof not_counts / sizeof not_counts[0]; i++) {
        mapi_doc *doc = (mapi_doc *)1, *docs[3];
        mapi_error err = MAPI_ERROR_INIT, errs[3];
        mapi_page_params p = {NULL, NULL, 0, 5};
        memset(errs, 0, sizeof errs);
        assert_int_equal(mapi_list_addresses(c, not_counts[i].id, &p, &doc, &err), -1);
        assert_null(doc);
        assert_int_equal(err.kind, MAPI_ERR_DECODE);
        assert_string_equal(err.title, not_counts[i].title);
        mapi_error_clear(&err);
        assert_int_equal(mapi_list_addresses_pages(c, not_counts[i].id, &p, 1, 3, 3, docs, errs),
                         -1);
        assert_null(docs[0]);
        assert_int_equal(errs[0].kind, MAPI_ERR_DECODE);
        assert_string_equal(errs[0].title, not_counts[i].title);
        mapi_error_clear(&errs[0]);
        mapi_error_clear(&errs[1]);
        mapi_error_clear(&errs[2]);
    }
    mapi_client_free(c);
}

static void request_keeps_meta_as_data(void **state)
{
    mapi_client *c;
    size_t i;
    (void)state;
    c = tu_sandbox_client();
    for (i = 0; i < sizeof not_counts / sizeof not_counts[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        char path[256], *enc = tu_percent_encode(not_counts[i].id);
        assert_non_null(enc);
        assert_true((size_t)snprintf(path, sizeof path,
                                     "/api/public/v1/accounts/%s/addresses?per_page=5",
                                     enc) < sizeof path);
        free(enc);
        if (mapi_request(c, "GET", path, NULL, 0, &doc, &err) != 0)
            fail_msg("%s: %s", not_counts[i].id, err.message);
        assert_true(mapi_doc_is_list(doc));
        assert_int_equal(mapi_doc_data_count(doc), 5);
        assert_kept(doc, not_counts[i].member);
        assert_int_equal(meta_count(doc, "per_page"), 5);
        mapi_doc_free(doc);
        assert_int_equal(tu_sandbox_count(not_counts[i].id), 1);
    }
    mapi_client_free(c);
}

static void parsed_documents_keep_meta_as_data(void **state)
{
    static const char body[] = "{\"data\":[{\"type\":\"addresses\",\"id\":\"a1\"}],"
                               "\"meta\":{\"page\":" OFFSET_PAGE ",\"total\":\"x\"}}";
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;

    TU_OK(mapi_doc_parse(body, strlen(body), &doc, &err), err);
    assert_kept(doc, "page");
    assert_kept(doc, "total");
    assert_int_equal(mapi_doc_error(doc, &err), 0); /* no error document, whatever meta holds */
    assert_int_equal(err.kind, MAPI_ERR_NONE);
    mapi_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(value_count_forms),
        cmocka_unit_test_setup(string_meta_reads_as_integers, tu_setup_reset),
        cmocka_unit_test_setup(missing_meta_is_kept_as_it_came, tu_setup_reset),
        cmocka_unit_test_setup(other_forms_are_decode_naming_the_member, tu_setup_reset),
        cmocka_unit_test_setup(pages_with_string_meta, tu_setup_reset),
        cmocka_unit_test_setup(pages_with_empty_meta, tu_setup_reset),
        cmocka_unit_test_setup(pages_refuse_like_one_page, tu_setup_reset),
        cmocka_unit_test_setup(list_calls_refuse_what_is_not_a_count, tu_setup_reset),
        cmocka_unit_test_setup(request_keeps_meta_as_data, tu_setup_reset),
        cmocka_unit_test(parsed_documents_keep_meta_as_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

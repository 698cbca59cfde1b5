/*
 * test_doc.c -- src/doc_*.c, mapi_doc_parse and navigation, no HTTP: exact numbers,
 * JSON validity, the JSON:API envelope, the (type,id) index, stubs and
 * relationship resolution.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "merchantapi.h"

static char *load_fixture(const char *name, size_t *len)
{
    const char *dir = getenv("MERCHANTAPI_FIXTURES");
    char path[1024];
    FILE *f;
    char *buf;
    long n;
    int w = snprintf(path, sizeof path, "%s/%s", dir ? dir : "fixtures", name);
    assert_true(w > 0 && (size_t)w < sizeof path);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* What r's relationship name holds (mapi_rel_data), -1 when r has none of
   that name; *count (may be NULL) gets its number of linkages. */
static int rel_data(const mapi_doc *d, const mapi_resource *r, const char *name, size_t *count)
{
    mapi_relationship rel;

    if (count)
        *count = 0;
    if (!mapi_resource_relationship(d, r, name, strlen(name), &rel))
        return -1;
    if (count)
        *count = rel.count;
    return (int)rel.data;
}

static mapi_doc *parse_ok(const char *json)
{
    mapi_doc *d = NULL;
    mapi_error e = MAPI_ERROR_INIT;
    int rc = mapi_doc_parse(json, strlen(json), &d, &e);
    if (rc != 0)
        fail_msg("parse failed: %s", e.title ? e.title : "?");
    mapi_error_clear(&e);
    return d;
}

/* Returns the error title of a document that must fail as DECODE. */
static void parse_fails(const char *json, size_t len, const char *needle)
{
    mapi_doc *d = (mapi_doc *)1;
    mapi_error e = MAPI_ERROR_INIT;
    assert_int_equal(mapi_doc_parse(json, len, &d, &e), -1);
    assert_null(d);
    assert_int_equal(e.kind, MAPI_ERR_DECODE);
    assert_non_null(e.title);
    if (!strstr(e.title, needle))
        fail_msg("error '%s' does not mention '%s'", e.title, needle);
    mapi_error_clear(&e);
    assert_null(e.title);
}

static const char *attr_text(const mapi_resource *r, const char *name)
{
    return mapi_value_number_text(mapi_resource_attr(r, name));
}

static void test_confirm_fixture(void **state)
{
    size_t len;
    char *body = load_fixture("confirm_payout.201.json", &len);
    mapi_doc *d = NULL;
    mapi_error e = MAPI_ERROR_INIT;
    const mapi_resource *p, *acct, *author;
    (void)state;

    assert_int_equal(mapi_doc_parse(body, len, &d, &e), 0);
    assert_int_equal(mapi_doc_is_list(d), 0);
    assert_int_equal(mapi_doc_data_count(d), 1);
    assert_int_equal(mapi_doc_resource_count(d), 3);
    p = mapi_doc_data(d, 0);
    assert_string_equal(mapi_resource_type(p), "payouts");
    assert_string_equal(mapi_resource_id(p), "6ecebf80-b210-413b-b396-df4760d142c5");
    /* 250.10 keeps its trailing zero */
    assert_int_equal(mapi_value_type(mapi_resource_attr(p, "amount")), MAPI_NUMBER);
    assert_string_equal(attr_text(p, "amount"), "250.10");
    assert_string_equal(mapi_value_string(mapi_resource_attr(p, "payAmount"), NULL), "289.473612");
    /* null attributes read as NULL but are present */
    assert_null(mapi_resource_attr(p, "txid"));
    assert_true(mapi_value_has(mapi_resource_attributes(p), "txid"));
    assert_false(mapi_value_has(mapi_resource_attributes(p), "nope"));
    assert_int_equal(mapi_value_bool(mapi_resource_attr(p, "absorbNetworkFee")), 1);

    assert_int_equal(rel_data(d, p, "accountCharged", NULL), MAPI_REL_TO_ONE);
    acct = mapi_resource_related(d, p, "accountCharged", 0);
    assert_non_null(acct);
    assert_false(mapi_resource_is_stub(acct));
    assert_string_equal(mapi_value_string(mapi_resource_attr(acct, "currencyCode"), NULL), "EUR");
    assert_string_equal(mapi_value_string(mapi_resource_attr(acct, "balance"), NULL), "6194.43");
    assert_ptr_equal(acct, mapi_doc_find(d, "accounts", "13a85b45-8543-41c7-b963-394d4ea128ae"));
    assert_ptr_equal(acct, mapi_doc_resource(d, mapi_resource_index(acct)));
    author = mapi_resource_related(d, p, "author", 0);
    assert_string_equal(mapi_value_string(mapi_resource_attr(author, "name"), NULL), "payouts-bot");
    /* not expanded: only meta.included = false */
    assert_int_equal(rel_data(d, acct, "company", NULL), MAPI_REL_NO_DATA);
    assert_null(mapi_resource_related(d, acct, "company", 0));
    assert_string_equal(mapi_value_string(mapi_value_get(mapi_doc_jsonapi(d), "version"), NULL),
                        "1.0");
    assert_int_equal(mapi_value_len(mapi_doc_meta(d)), 0);
    assert_null(mapi_doc_response(d));
    mapi_doc_free(d);
    free(body);
}

static void test_list_fixture(void **state)
{
    size_t len;
    char *body = load_fixture("list_addresses.generating.200.json", &len);
    mapi_doc *d = NULL;
    mapi_error e = MAPI_ERROR_INIT;
    const mapi_resource *a0, *a1;
    int64_t total = 0;
    (void)state;

    assert_int_equal(mapi_doc_parse(body, len, &d, &e), 0);
    assert_int_equal(mapi_doc_is_list(d), 1);
    assert_int_equal(mapi_doc_data_count(d), 2);
    a0 = mapi_doc_data(d, 0);
    a1 = mapi_doc_data(d, 1);
    assert_null(mapi_doc_data(d, 2));
    assert_null(mapi_resource_attr(a1, "value")); /* still being generated */
    assert_string_equal(mapi_value_string(mapi_resource_attr(a0, "value"), NULL),
                        "0xfff18888872fba23a2bd86ba25a1ec17ff8a7de7");
    /* both addresses name the same network: one resource */
    assert_ptr_equal(mapi_resource_related(d, a0, "network", 0),
                     mapi_resource_related(d, a1, "network", 0));
    assert_string_equal(
        mapi_value_string(mapi_resource_attr(mapi_resource_related(d, a0, "network", 0), "code"),
                          NULL),
        "eth:usdc");
    assert_int_equal(mapi_value_int64(mapi_value_get(mapi_doc_meta(d), "total"), &total), 0);
    assert_int_equal(total, 2);
    mapi_doc_free(d);
    free(body);
}

static void test_exact_numbers(void **state)
{
    mapi_doc *d = parse_ok(
        "{\"data\":{\"type\":\"t\",\"id\":\"1\",\"attributes\":{"
        "\"big\":123456789012345678901234567890,\"neg\":-98765432109876543210,"
        "\"u64max\":18446744073709551616,\"i18\":123456789012345678,"
        "\"i19\":1234567890123456789,\"p53\":9007199254740993,"
        "\"dec18\":0.123456789012345678,\"exp\":1.5e-7,\"E\":2E+10,\"zero\":0,"
        "\"s\":\"12345678901234567890 is text\"}}}");
    const mapi_resource *r = mapi_doc_data(d, 0);
    int64_t v = 0;
    (void)state;
    assert_string_equal(attr_text(r, "big"), "123456789012345678901234567890");
    assert_string_equal(attr_text(r, "neg"), "-98765432109876543210");
    assert_string_equal(attr_text(r, "u64max"), "18446744073709551616");
    assert_string_equal(attr_text(r, "i19"), "1234567890123456789");
    assert_string_equal(attr_text(r, "dec18"), "0.123456789012345678");
    assert_string_equal(attr_text(r, "exp"), "1.5e-7");
    assert_string_equal(attr_text(r, "E"), "2E+10");
    assert_int_equal(mapi_value_int64(mapi_resource_attr(r, "i18"), &v), 0);
    assert_true(v == INT64_C(123456789012345678));
    assert_int_equal(mapi_value_int64(mapi_resource_attr(r, "p53"), &v), 0);
    assert_true(v == INT64_C(9007199254740993));
    assert_int_equal(mapi_value_int64(mapi_resource_attr(r, "big"), &v), -1);
    assert_string_equal(attr_text(r, "zero"), "0"); /* an int: its text too */
    assert_string_equal(mapi_value_string(mapi_resource_attr(r, "s"), NULL),
                        "12345678901234567890 is text");
    mapi_doc_free(d);
}

static void test_invalid_json(void **state)
{
    static const char nul_in_body[] = "{\"meta\":{}}\0x";
    (void)state;
    parse_fails("{\"meta\":{\"a\":1.}}", 17, "number");
    parse_fails("{\"meta\":{\"a\":01}}", 17, "number");
    parse_fails("{\"meta\":{\"a\":NaN}}", 18, "literal");
    parse_fails("{\"meta\":{\"a\":-Infinity}}", 24, "number");
    parse_fails("{\"meta\":{}} trailing", 20, "literal");
    parse_fails("{\"meta\":{}", 10, "end of input");
    parse_fails("", 0, "end of input");
    parse_fails(nul_in_body, sizeof nul_in_body - 1, "JSON");
    parse_fails("{\"meta\":{\"s\":\"\xff\xfe\"}}", 20, "utf-8");
    parse_fails("{\"meta\":{\"a\":1,\"a\":2}}", 23, "duplicate");
    parse_fails("<html>502</html>", 16, "literal");
}

/* {"meta":{},"x": followed by n nested arrays}: n + 1 levels */
static char *nested(size_t n)
{
    char *buf = malloc(n * 2 + 32);
    size_t i, w = 0;
    assert_non_null(buf);
    memcpy(buf, "{\"meta\":{},\"x\":", 15);
    w = 15;
    for (i = 0; i < n; i++)
        buf[w++] = '[';
    for (i = 0; i < n; i++)
        buf[w++] = ']';
    buf[w++] = '}';
    buf[w] = '\0';
    return buf;
}

static void test_depth_cap(void **state)
{
    char *ok = nested(63), *deep = nested(64), *hostile = nested(10000);
    mapi_doc *d;
    (void)state;
    d = parse_ok(ok);
    mapi_doc_free(d);
    parse_fails(deep, strlen(deep), "deeper than 64");
    parse_fails(hostile, strlen(hostile), "deeper than 64");
    free(ok);
    free(deep);
    free(hostile);
}

static void test_envelope(void **state)
{
    mapi_doc *d;
    (void)state;
    parse_fails("[1]", 3, "not an object");
    parse_fails("{\"hello\":\"world\"}", 17, "no data, errors or meta");
    parse_fails("{\"data\":{\"type\":\"t\"}}", 21, "type and id");
    parse_fails("{\"data\":{\"type\":\"t\",\"id\":7}}", 28, "type and id");
    parse_fails("{\"data\":{\"type\":\"t\",\"id\":\"1\",\"relationships\":{\"x\":{\"data\":{\"id\":\"2\"}}}}}",
                72, "linkage");
    d = parse_ok("{\"data\":null}");
    assert_int_equal(mapi_doc_data_count(d), 0);
    assert_null(mapi_doc_data(d, 0));
    mapi_doc_free(d);
    d = parse_ok("{\"errors\":[{\"status\":422,\"code\":\"x\"}]}");
    assert_int_equal(mapi_value_len(mapi_doc_errors(d)), 1);
    mapi_doc_free(d);
}

static void test_resolution(void **state)
{
    /* a cycle (a -> b -> a), a to-many with a stub, a data:null to-one, a
       linkage to a primary resource, and a duplicate primary resource */
    mapi_doc *d = parse_ok(
        "{\"data\":[{\"type\":\"a\",\"id\":\"1\",\"relationships\":{"
        "\"peer\":{\"data\":{\"type\":\"b\",\"id\":\"2\"}},"
        "\"many\":{\"data\":[{\"type\":\"b\",\"id\":\"2\"},{\"type\":\"c\",\"id\":\"9\"},"
        "{\"type\":\"a\",\"id\":\"1\"}]},"
        "\"none\":{\"data\":null},\"empty\":{\"data\":[]},"
        "\"hidden\":{\"meta\":{\"included\":false}}}},"
        "{\"type\":\"a\",\"id\":\"1\"}],"
        "\"included\":[{\"type\":\"b\",\"id\":\"2\",\"attributes\":{\"n\":2},"
        "\"relationships\":{\"back\":{\"data\":{\"type\":\"a\",\"id\":\"1\"}}}}]}");
    const mapi_resource *a = mapi_doc_data(d, 0), *b, *stub;
    size_t count = 99;
    (void)state;

    assert_int_equal(mapi_doc_data_count(d), 2);
    assert_ptr_equal(mapi_doc_data(d, 1), a); /* same (type,id): same resource */
    assert_int_equal(mapi_doc_resource_count(d), 3); /* a, b, stub c */
    b = mapi_resource_related(d, a, "peer", 0);
    assert_string_equal(mapi_resource_id(b), "2");
    assert_ptr_equal(mapi_resource_related(d, b, "back", 0), a);
    assert_int_equal(rel_data(d, a, "many", &count), MAPI_REL_TO_MANY);
    assert_int_equal(count, 3);
    assert_ptr_equal(mapi_resource_related(d, a, "many", 0), b);
    stub = mapi_resource_related(d, a, "many", 1);
    assert_true(mapi_resource_is_stub(stub));
    assert_string_equal(mapi_resource_type(stub), "c");
    assert_string_equal(mapi_resource_id(stub), "9");
    assert_null(mapi_resource_attributes(stub));
    assert_ptr_equal(mapi_resource_related(d, a, "many", 2), a);
    assert_null(mapi_resource_related(d, a, "many", 3));
    assert_int_equal(rel_data(d, a, "none", &count), MAPI_REL_NULL_DATA);
    assert_int_equal(count, 0);
    assert_int_equal(rel_data(d, a, "empty", &count), MAPI_REL_TO_MANY);
    assert_int_equal(count, 0);
    assert_int_equal(rel_data(d, a, "hidden", NULL), MAPI_REL_NO_DATA);
    assert_int_equal(rel_data(d, a, "absent", NULL), -1);
    assert_null(mapi_doc_find(d, "c", "10"));
    mapi_doc_free(d);
}

static void test_members_in_order(void **state)
{
    mapi_doc *d = parse_ok("{\"meta\":{\"z\":1,\"a\":null,\"m\":\"x\"}}");
    mapi_members it;
    const char *k;
    const mapi_value *v;
    const char *want[] = {"z", "a", "m"};
    size_t n = 0;
    (void)state;
    mapi_members_begin(mapi_doc_meta(d), &it);
    while (mapi_members_next(&it, &k, &v)) {
        assert_true(n < 3);
        assert_string_equal(k, want[n]);
        if (n == 1)
            assert_int_equal(mapi_value_type(v), MAPI_NULL);
        n++;
    }
    assert_int_equal(n, 3);
    mapi_doc_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_confirm_fixture), cmocka_unit_test(test_list_fixture),
        cmocka_unit_test(test_exact_numbers),   cmocka_unit_test(test_invalid_json),
        cmocka_unit_test(test_depth_cap),       cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_resolution),      cmocka_unit_test(test_members_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

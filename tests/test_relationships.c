/*
 * test_relationships.c -- mapi_resource_relationship_at: the relationships resolved
 * once while parsing (what the Lua binding reads), against
 * mapi_resource_relationship / mapi_resource_related, which look each one
 * up by name.
 */
#include "testutil.h"

static mapi_doc *parse(const char *text)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;

    if (mapi_doc_parse(text, strlen(text), &doc, &err) != 0)
        fail_msg("parse: %s", err.message ? err.message : "?");
    return doc;
}

/* Every relationship of every resource agrees with the by-name functions. */
static void assert_links_match_names(const mapi_doc *doc)
{
    size_t i, j, k;

    for (i = 0; i < mapi_doc_resource_count(doc); i++) {
        const mapi_resource *r = mapi_doc_resource(doc, i);
        mapi_relationship l, byname;
        for (k = 0; mapi_resource_relationship_at(doc, r, k, &l); k++) {
            assert_int_equal(mapi_resource_relationship(doc, r, l.name, l.name_len, &byname), 1);
            assert_int_equal(byname.data, l.data);
            assert_int_equal(byname.count, l.count);
            assert_ptr_equal(byname.targets, l.targets);
            for (j = 0; j < l.count; j++)
                assert_ptr_equal(mapi_doc_resource(doc, l.targets[j]),
                                 mapi_resource_related(doc, r, l.name, j));
            assert_null(mapi_resource_related(doc, r, l.name, l.count));
        }
        assert_int_equal(k, mapi_resource_relationship_count(r));
        assert_int_equal(mapi_resource_relationship_at(doc, r, k, &l), 0);
    }
}

static void payout_links(void **state)
{
    mapi_doc *doc = tu_fixture_doc("confirm_payout.201.json");
    const mapi_resource *p = mapi_doc_data(doc, 0);
    const mapi_resource *acct;
    mapi_relationship l;
    size_t k;
    (void)state;
    assert_int_equal(mapi_resource_relationship_count(p), 2);
    assert_int_equal(mapi_resource_relationship_at(doc, p, 0, &l), 1);
    assert_string_equal(l.name, "accountCharged");
    assert_int_equal(l.data, MAPI_REL_TO_ONE);
    assert_int_equal(l.count, 1);
    acct = mapi_doc_resource(doc, l.targets[0]);
    assert_string_equal(mapi_resource_type(acct), "accounts");
    assert_int_equal(mapi_resource_relationship_at(doc, p, 1, &l), 1);
    assert_string_equal(l.name, "author");
    assert_string_equal(mapi_resource_type(mapi_doc_resource(doc, l.targets[0])), "apiKeys");
    /* the account's company / networks / serviceBankCredentials are not
       expanded (meta.included = false): no data, no targets */
    assert_true(mapi_resource_relationship_count(acct) > 0);
    for (k = 0; mapi_resource_relationship_at(doc, acct, k, &l); k++) {
        assert_int_equal(l.data, MAPI_REL_NO_DATA);
        assert_int_equal(l.count, 0);
        assert_null(l.targets);
        assert_null(l.linkage);
    }
    assert_links_match_names(doc);
    mapi_doc_free(doc);
}

static void kinds_stubs_and_absences(void **state)
{
    mapi_doc *doc = parse(
        "{\"data\":[{\"type\":\"a\",\"id\":\"1\",\"relationships\":{"
        "\"one\":{\"data\":{\"type\":\"b\",\"id\":\"x\"}},"
        "\"many\":{\"data\":[{\"type\":\"b\",\"id\":\"x\"},{\"type\":\"c\",\"id\":\"gone\"},"
        "{\"type\":\"a\",\"id\":\"1\"}]},"
        "\"empty\":{\"data\":[]},"
        "\"none\":{\"data\":null},"
        "\"hidden\":{\"meta\":{\"included\":false}}}}],"
        "\"included\":[{\"type\":\"b\",\"id\":\"x\",\"attributes\":{\"n\":1}}]}");
    const mapi_resource *a = mapi_doc_data(doc, 0), *stub;
    mapi_relationship l;
    (void)state;
    assert_int_equal(mapi_resource_relationship_count(a), 5);
    assert_int_equal(mapi_resource_relationship_at(doc, a, 0, &l), 1);
    assert_string_equal(l.name, "one");
    assert_int_equal(l.data, MAPI_REL_TO_ONE);
    assert_ptr_equal(mapi_doc_resource(doc, l.targets[0]), mapi_doc_find(doc, "b", "x"));
    assert_int_equal(mapi_resource_relationship_at(doc, a, 1, &l), 1);
    assert_string_equal(l.name, "many");
    assert_int_equal(l.data, MAPI_REL_TO_MANY);
    assert_int_equal(l.count, 3);
    assert_ptr_equal(mapi_doc_resource(doc, l.targets[0]), mapi_doc_find(doc, "b", "x"));
    stub = mapi_doc_resource(doc, l.targets[1]);
    assert_true(mapi_resource_is_stub(stub));
    assert_string_equal(mapi_resource_id(stub), "gone");
    assert_ptr_equal(mapi_doc_resource(doc, l.targets[2]), a); /* a cycle to itself */
    assert_int_equal(mapi_resource_relationship_at(doc, a, 2, &l), 1);
    assert_string_equal(l.name, "empty");
    assert_int_equal(l.data, MAPI_REL_TO_MANY);
    assert_int_equal(l.count, 0);
    assert_null(l.targets);
    assert_int_equal(mapi_resource_relationship_at(doc, a, 3, &l), 1);
    assert_string_equal(l.name, "none");
    assert_int_equal(l.data, MAPI_REL_NULL_DATA);
    assert_int_equal(l.count, 0);
    assert_int_equal(mapi_resource_relationship_at(doc, a, 4, &l), 1);
    assert_string_equal(l.name, "hidden");
    assert_int_equal(l.data, MAPI_REL_NO_DATA);
    assert_non_null(l.meta);
    assert_int_equal(mapi_resource_relationship_at(doc, a, 5, &l), 0);
    assert_int_equal(mapi_resource_relationship_count(stub), 0);
    assert_links_match_names(doc);
    mapi_doc_free(doc);
}

/* More resources than one block of the index (256): indexes and links stay right. */
static void many_resources(void **state)
{
    mapi_buf b;
    char *text;
    mapi_doc *doc;
    int i;
    (void)state;
    mapi_buf_init(&b);
    mapi_buf_puts(&b, "{\"data\":[");
    for (i = 0; i < 1000; i++)
        mapi_buf_printf(&b, "%s{\"type\":\"addresses\",\"id\":\"a%d\",\"relationships\":{"
                            "\"network\":{\"data\":{\"type\":\"network\",\"id\":\"n%d\"}}}}",
                        i ? "," : "", i, i % 3);
    mapi_buf_puts(&b, "],\"included\":[{\"type\":\"network\",\"id\":\"n0\"},"
                      "{\"type\":\"network\",\"id\":\"n1\"}]}");
    text = mapi_buf_take(&b);
    assert_non_null(text);
    doc = parse(text);
    free(text);
    assert_int_equal(mapi_doc_resource_count(doc), 1003); /* n2 is a stub */
    for (i = 0; i < 1000; i++) {
        const mapi_resource *r = mapi_doc_data(doc, (size_t)i);
        char want[16];
        mapi_relationship l;
        snprintf(want, sizeof want, "a%d", i);
        assert_string_equal(mapi_resource_id(r), want);
        assert_int_equal(mapi_resource_index(r), (size_t)i);
        assert_int_equal(mapi_resource_relationship_at(doc, r, 0, &l), 1);
        snprintf(want, sizeof want, "n%d", i % 3);
        assert_string_equal(mapi_resource_id(mapi_doc_resource(doc, l.targets[0])), want);
        assert_int_equal(mapi_resource_is_stub(mapi_doc_resource(doc, l.targets[0])), i % 3 == 2);
    }
    assert_links_match_names(doc);
    mapi_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(payout_links),
        cmocka_unit_test(kinds_stubs_and_absences),
        cmocka_unit_test(many_resources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_doc_fidelity.c -- nothing a document says is lost silently (mapi_doc_parse
 * over the simdjson reader, no HTTP): the accessors with lengths (ids, types
 * and member names are byte strings; a \u0000 is kept and resources that
 * differ only after it stay two), the field rules (an attribute and a
 * relationship of one name, a field named id or type, attributes or
 * relationships that are not objects: decode errors naming the member),
 * two copies of a resource merged or refused, JSON:API 1.1 lid, a
 * relationship without data told apart from data null, links and meta at
 * every level, raw control characters refused, an error object's
 * non-string member kept as JSON text, bodies read in place.
 */
#include "testutil.h"

static mapi_doc *parse_len(const char *text, size_t len)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;

    if (mapi_doc_parse(text, len, &doc, &err) != 0)
        fail_msg("parse: %s", err.message ? err.message : "?");
    return doc;
}

static mapi_doc *parse(const char *text)
{
    return parse_len(text, strlen(text));
}

/* The title of the DECODE error text[0..len) fails with; every needle must be in it. */
static void refused_len(const char *text, size_t len, const char *needle1, const char *needle2)
{
    mapi_doc *doc = (mapi_doc *)1;
    mapi_error err = MAPI_ERROR_INIT;

    if (mapi_doc_parse(text, len, &doc, &err) == 0)
        fail_msg("parsed: %.*s", (int)len, text);
    assert_null(doc);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_non_null(err.title);
    assert_non_null(err.message);
    if (needle1 && !strstr(err.title, needle1))
        fail_msg("'%s' does not mention '%s' (%s)", err.title, needle1, text);
    if (needle2 && !strstr(err.title, needle2))
        fail_msg("'%s' does not mention '%s' (%s)", err.title, needle2, text);
    mapi_error_clear(&err);
}

static void refused(const char *text, const char *needle1, const char *needle2)
{
    refused_len(text, strlen(text), needle1, needle2);
}

static void assert_bytes(const char *got, size_t got_len, const char *want, size_t want_len)
{
    assert_non_null(got);
    assert_int_equal(got_len, want_len);
    assert_memory_equal(got, want, want_len);
    assert_int_equal(got[got_len], '\0'); /* NUL-terminated as well */
}

#define BYTES(s) s, sizeof(s) - 1

/* ---- lengths: ids, types and names with NUL bytes ---- */

static void nul_ids_stay_distinct(void **state)
{
    mapi_doc *doc = parse(
        "{\"data\":[{\"type\":\"acc\\u0000ounts\",\"id\":\"a\\u0000x\","
        "\"attributes\":{\"bal\\u0000ance\":\"1.00\",\"balance\":\"2.00\"}},"
        "{\"type\":\"acc\\u0000ounts\",\"id\":\"a\\u0000y\",\"attributes\":{\"balance\":\"3.00\"},"
        "\"relationships\":{\"peer\\u0000\":{\"data\":{\"type\":\"acc\\u0000ounts\",\"id\":\"a\\u0000x\"}},"
        "\"peer\":{\"data\":null}}}]}");
    const mapi_resource *x = mapi_doc_data(doc, 0), *y = mapi_doc_data(doc, 1);
    const char *s;
    size_t len, n = 0;
    mapi_members it;
    const char *key;
    size_t klen, ids[2];
    const mapi_value *v;
    mapi_relationship rel;
    (void)state;

    assert_int_equal(mapi_doc_resource_count(doc), 2); /* two accounts, not one */
    assert_true(x != y);
    s = mapi_resource_id_n(x, &len);
    assert_bytes(s, len, BYTES("a\0x"));
    s = mapi_resource_id_n(y, &len);
    assert_bytes(s, len, BYTES("a\0y"));
    s = mapi_resource_type_n(x, &len);
    assert_bytes(s, len, BYTES("acc\0ounts"));
    assert_int_equal(mapi_resource_type_id(x), mapi_resource_type_id(y));
    assert_true(mapi_resource_type_id(x) < mapi_doc_name_count(doc));
    assert_ptr_equal(mapi_doc_find_n(doc, BYTES("acc\0ounts"), BYTES("a\0x")), x);
    assert_ptr_equal(mapi_doc_find_n(doc, BYTES("acc\0ounts"), BYTES("a\0y")), y);
    assert_null(mapi_doc_find_n(doc, BYTES("acc\0ounts"), BYTES("a")));
    assert_null(mapi_doc_find(doc, "acc", "a")); /* C strings stop at the NUL */

    /* two member names that differ after a NUL byte are two members */
    s = mapi_value_string(mapi_resource_attr_n(x, BYTES("bal\0ance")), &len);
    assert_bytes(s, len, BYTES("1.00"));
    s = mapi_value_string(mapi_resource_attr(x, "balance"), &len);
    assert_bytes(s, len, BYTES("2.00"));
    assert_true(mapi_value_has_n(mapi_resource_attributes(x), BYTES("bal\0ance")));
    assert_false(mapi_value_has_n(mapi_resource_attributes(x), BYTES("bal\0anc")));
    assert_null(mapi_value_get_n(mapi_resource_attributes(x), BYTES("bal")));
    mapi_members_begin(mapi_resource_attributes(x), &it);
    assert_int_equal(mapi_members_name_id(&it), 0);
    while (mapi_members_next_n(&it, &key, &klen, &v)) {
        assert_true(n < 2);
        assert_int_equal(klen, n == 0 ? 8 : 7);
        ids[n++] = mapi_members_name_id(&it);
    }
    assert_int_equal(n, 2);
    assert_true(ids[0] != ids[1]);
    /* equal names, equal numbers: "balance" of y is the second name of x */
    mapi_members_begin(mapi_resource_attributes(y), &it);
    assert_true(mapi_members_next_n(&it, NULL, NULL, NULL));
    assert_int_equal(mapi_members_name_id(&it), ids[1]);

    /* relationship names with a NUL byte */
    assert_int_equal(mapi_resource_relationship_count(y), 2);
    assert_true(mapi_resource_relationship(doc, y, BYTES("peer\0"), &rel));
    assert_int_equal(rel.data, MAPI_REL_TO_ONE);
    assert_int_equal(rel.name_len, 5);
    assert_ptr_equal(mapi_doc_resource(doc, rel.targets[0]), x);
    assert_true(mapi_resource_relationship(doc, y, BYTES("peer"), &rel));
    assert_int_equal(rel.data, MAPI_REL_NULL_DATA);
    mapi_doc_free(doc);
}

static void numbers_keep_their_text(void **state)
{
    const char *got;
    mapi_doc *doc = parse("{\"meta\":{\"z\":-0,\"i\":42,\"n\":-123456789012345678,"
                          "\"big\":-123456789012345678901234567890,\"f\":1.50,\"e\":1E+2}}");
    const mapi_value *meta = mapi_doc_meta(doc);
    size_t len;
    int64_t v;
    (void)state;
    got = mapi_value_number(mapi_value_get(meta, "z"), &len);
    assert_bytes(got, len, BYTES("-0"));
    assert_int_equal(mapi_value_type(mapi_value_get(meta, "z")), MAPI_INT);
    got = mapi_value_number(mapi_value_get(meta, "i"), &len);
    assert_bytes(got, len, BYTES("42"));
    assert_int_equal(mapi_value_int64(mapi_value_get(meta, "n"), &v), 0);
    assert_true(v == INT64_C(-123456789012345678));
    got = mapi_value_number(mapi_value_get(meta, "big"), &len);
    assert_bytes(got, len, BYTES("-123456789012345678901234567890"));
    assert_string_equal(mapi_value_number_text(mapi_value_get(meta, "big")),
                        "-123456789012345678901234567890");
    got = mapi_value_number(mapi_value_get(meta, "f"), &len);
    assert_bytes(got, len, BYTES("1.50"));
    got = mapi_value_number(mapi_value_get(meta, "e"), &len);
    assert_bytes(got, len, BYTES("1E+2"));
    assert_null(mapi_value_number(meta, &len));
    assert_true(mapi_doc_size(doc) > 0);
    mapi_doc_free(doc);
}

/* ---- the field rules ---- */

#define RES(fields) "{\"data\":{\"type\":\"payouts\",\"id\":\"p1\"," fields "}}"

static void field_rules(void **state)
{
    mapi_doc *doc;
    (void)state;
    /* an attribute and a relationship of one name (a relationship named
       amount once made payout.amount a table) */
    refused(RES("\"attributes\":{\"amount\":\"1.00\"},"
                "\"relationships\":{\"amount\":{\"data\":null}}"),
            "payouts \"p1\" has an attribute and a relationship named \"amount\"", NULL);
    /* id or type as a field */
    refused(RES("\"attributes\":{\"id\":\"fake\"}"), "payouts \"p1\"",
            "has a field named id in attributes");
    refused(RES("\"attributes\":{\"type\":\"fake\"}"), "payouts \"p1\"",
            "has a field named type in attributes");
    refused(RES("\"relationships\":{\"id\":{\"data\":null}}"), "payouts \"p1\"",
            "has a field named id in relationships");
    refused(RES("\"relationships\":{\"type\":{\"meta\":{}}}"), "payouts \"p1\"",
            "has a field named type in relationships");
    /* attributes / relationships that are not objects */
    refused(RES("\"attributes\":[]"), "the attributes member of payouts \"p1\" is not an object",
            NULL);
    refused(RES("\"attributes\":\"x\""), "attributes member", "not an object");
    refused(RES("\"attributes\":7"), "attributes member", "not an object");
    refused(RES("\"attributes\":true"), "attributes member", "not an object");
    refused(RES("\"relationships\":[]"), "the relationships member of payouts \"p1\"",
            "not an object");
    /* links, meta and jsonapi that are not objects (null: absent), at every level */
    refused(RES("\"links\":\"x\""), "the links member of payouts \"p1\" is not an object", NULL);
    refused(RES("\"meta\":[]"), "the meta member of payouts \"p1\" is not an object", NULL);
    refused(RES("\"relationships\":{\"a\":{\"meta\":7}}"),
            "the meta of relationship \"a\" of payouts \"p1\" is not an object", NULL);
    refused("{\"data\":null,\"links\":\"x\"}", "not JSON:API: links is not an object", NULL);
    refused("{\"meta\":[]}", "not JSON:API: meta is not an object", NULL);
    refused("{\"meta\":{},\"jsonapi\":1}", "not JSON:API: jsonapi is not an object", NULL);
    mapi_doc_free(parse("{\"data\":null,\"meta\":{},\"links\":null,\"jsonapi\":null}"));
    refused(RES("\"relationships\":{\"author\":\"k1\"}"),
            "relationship \"author\" of payouts \"p1\" is not an object", NULL);
    refused(RES("\"relationships\":{\"author\":{\"data\":\"k1\"}}"), "relationship \"author\"",
            "not a linkage");
    refused(RES("\"relationships\":{\"author\":{\"data\":[{\"type\":\"apiKeys\"}]}}"),
            "relationship \"author\"", "linkage without string type and id");
    /* a lid beside a field named lid */
    refused("{\"data\":{\"type\":\"t\",\"lid\":\"l1\",\"attributes\":{\"lid\":1}}}",
            "t lid \"l1\" has a field named lid in attributes", NULL);
    /* names in messages are quoted with their control bytes escaped */
    refused("{\"data\":{\"type\":\"t\",\"id\":\"a\\u0000\\n\",\"attributes\":{\"x\\u0000\":1},"
            "\"relationships\":{\"x\\u0000\":{}}}}",
            "t \"a\\u0000\\u000a\" has an attribute and a relationship named \"x\\u0000\"", NULL);
    /* null attributes and relationships are no attributes and no relationships;
       a field merely named lid without a lid is an ordinary attribute */
    doc = parse(RES("\"attributes\":null,\"relationships\":null"));
    assert_null(mapi_resource_attributes(mapi_doc_data(doc, 0)));
    assert_int_equal(mapi_resource_relationship_count(mapi_doc_data(doc, 0)), 0);
    mapi_doc_free(doc);
    doc = parse(RES("\"attributes\":{\"lid\":\"x\"}"));
    assert_string_equal(mapi_value_string(mapi_resource_attr(mapi_doc_data(doc, 0), "lid"), NULL),
                        "x");
    mapi_doc_free(doc);
}

/* ---- the same (type, id) twice ---- */

static void copies_merge_when_they_agree(void **state)
{
    mapi_doc *doc = parse(
        "{\"data\":{\"type\":\"accounts\",\"id\":\"a1\",\"attributes\":{\"label\":\"A\",\"n\":1},"
        "\"relationships\":{\"owner\":{\"data\":{\"type\":\"users\",\"id\":\"u1\"}}},"
        "\"meta\":{\"seen\":1}},"
        "\"included\":[{\"type\":\"accounts\",\"id\":\"a1\",\"attributes\":{\"n\":1,"
        "\"balance\":\"6194.43\"},\"relationships\":{\"owner\":{\"data\":{\"id\":\"u1\","
        "\"type\":\"users\"},\"links\":{\"related\":\"/u/1\"}},\"company\":{\"data\":null}},"
        "\"links\":{\"self\":\"/a/1\"},\"meta\":{\"seen\":1,\"more\":true}},"
        "{\"type\":\"users\",\"id\":\"u1\",\"attributes\":{\"name\":\"x\"}},"
        "{\"type\":\"users\",\"id\":\"u1\",\"attributes\":{\"mail\":\"m\"}}]}");
    const mapi_resource *a = mapi_doc_data(doc, 0), *u;
    mapi_relationship rel;
    (void)state;
    assert_int_equal(mapi_doc_resource_count(doc), 2); /* one account, one user */
    assert_ptr_equal(mapi_doc_find(doc, "accounts", "a1"), a);
    assert_int_equal(mapi_resource_index(a), 0);
    /* the union of what both copies said */
    assert_string_equal(mapi_value_string(mapi_resource_attr(a, "label"), NULL), "A");
    assert_string_equal(mapi_value_string(mapi_resource_attr(a, "balance"), NULL), "6194.43");
    assert_int_equal(mapi_value_len(mapi_resource_attributes(a)), 3);
    assert_int_equal(mapi_resource_relationship_count(a), 2);
    assert_true(mapi_resource_relationship(doc, a, BYTES("owner"), &rel));
    assert_int_equal(rel.data, MAPI_REL_TO_ONE);
    assert_string_equal(mapi_value_string(mapi_value_get(rel.links, "related"), NULL), "/u/1");
    u = mapi_doc_resource(doc, rel.targets[0]);
    assert_false(mapi_resource_is_stub(u));
    assert_string_equal(mapi_value_string(mapi_resource_attr(u, "name"), NULL), "x");
    assert_string_equal(mapi_value_string(mapi_resource_attr(u, "mail"), NULL), "m");
    assert_true(mapi_resource_relationship(doc, a, BYTES("company"), &rel));
    assert_int_equal(rel.data, MAPI_REL_NULL_DATA);
    assert_string_equal(mapi_value_string(mapi_value_get(mapi_resource_links(a), "self"), NULL),
                        "/a/1");
    assert_int_equal(mapi_value_len(mapi_resource_meta(a)), 2);
    assert_true(mapi_value_bool(mapi_value_get(mapi_resource_meta(a), "more")));
    mapi_doc_free(doc);
}

static void copies_that_differ_are_refused(void **state)
{
    (void)state;
    /* data and included */
    refused("{\"data\":{\"type\":\"accounts\",\"id\":\"a1\",\"attributes\":{\"balance\":\"1\"}},"
            "\"included\":[{\"type\":\"accounts\",\"id\":\"a1\",\"attributes\":{\"balance\":\"2\"}}]}",
            "accounts \"a1\" comes twice and the copies differ in attributes member \"balance\"",
            NULL);
    /* twice in included; a number written two ways is two values */
    refused("{\"data\":null,\"included\":[{\"type\":\"t\",\"id\":\"1\",\"attributes\":{\"x\":1}},"
            "{\"type\":\"t\",\"id\":\"1\",\"attributes\":{\"x\":1.0}}]}",
            "t \"1\" comes twice", "attributes member \"x\"");
    /* a relationship's data */
    refused("{\"data\":{\"type\":\"t\",\"id\":\"1\",\"relationships\":{\"r\":{\"data\":"
            "{\"type\":\"u\",\"id\":\"2\"}}}},\"included\":[{\"type\":\"t\",\"id\":\"1\","
            "\"relationships\":{\"r\":{\"data\":{\"type\":\"u\",\"id\":\"3\"}}}}]}",
            "t \"1\" comes twice", "relationships member \"r\" at \"data\"");
    /* meta, links */
    refused("{\"data\":[{\"type\":\"t\",\"id\":\"1\",\"meta\":{\"v\":1}},"
            "{\"type\":\"t\",\"id\":\"1\",\"meta\":{\"v\":2}}]}",
            "t \"1\" comes twice", "meta member \"v\"");
    refused("{\"data\":[{\"type\":\"t\",\"id\":\"1\",\"links\":{\"self\":\"/a\"}},"
            "{\"type\":\"t\",\"id\":\"1\",\"links\":{\"self\":\"/b\"}}]}",
            "t \"1\" comes twice", "links member \"self\"");
    /* merged, an attribute of one copy meets a relationship of the other */
    refused("{\"data\":{\"type\":\"t\",\"id\":\"1\",\"attributes\":{\"a\":1}},"
            "\"included\":[{\"type\":\"t\",\"id\":\"1\",\"relationships\":{\"a\":{\"data\":null}}}]}",
            "t \"1\" has an attribute and a relationship named \"a\"", NULL);
}

/* ---- JSON:API 1.1 lid ---- */

static void lid_identifies_a_resource_without_id(void **state)
{
    mapi_doc *doc = parse(
        "{\"data\":{\"type\":\"orders\",\"id\":\"o1\",\"relationships\":{"
        "\"items\":{\"data\":[{\"type\":\"items\",\"lid\":\"new-1\"},"
        "{\"type\":\"items\",\"lid\":\"new-2\"},{\"type\":\"items\",\"id\":\"i9\"}]}}},"
        "\"included\":[{\"type\":\"items\",\"lid\":\"new-1\",\"attributes\":{\"qty\":2}},"
        "{\"type\":\"items\",\"id\":\"i9\",\"lid\":\"new-9\",\"attributes\":{\"qty\":9}}]}");
    const mapi_resource *o = mapi_doc_data(doc, 0), *n1, *n2, *i9;
    const char *got;
    mapi_relationship rel;
    size_t len;
    (void)state;
    assert_int_equal(mapi_doc_resource_count(doc), 4); /* o1, new-1, i9, stub new-2 */
    assert_true(mapi_resource_relationship(doc, o, BYTES("items"), &rel));
    assert_int_equal(rel.data, MAPI_REL_TO_MANY);
    assert_int_equal(rel.count, 3);
    n1 = mapi_doc_resource(doc, rel.targets[0]);
    n2 = mapi_doc_resource(doc, rel.targets[1]);
    i9 = mapi_doc_resource(doc, rel.targets[2]);
    assert_false(mapi_resource_is_stub(n1));
    assert_null(mapi_resource_id(n1));
    assert_null(mapi_resource_id_n(n1, &len));
    assert_int_equal(len, 0);
    got = mapi_resource_lid(n1, &len);
    assert_bytes(got, len, BYTES("new-1"));
    assert_int_equal(mapi_value_int64(mapi_resource_attr(n1, "qty"), (int64_t[]){0}), 0);
    assert_ptr_equal(mapi_doc_find_lid(doc, BYTES("items"), BYTES("new-1")), n1);
    assert_true(mapi_resource_is_stub(n2));
    got = mapi_resource_lid(n2, &len);
    assert_bytes(got, len, BYTES("new-2"));
    assert_ptr_equal(mapi_doc_find_lid(doc, BYTES("items"), BYTES("new-2")), n2);
    /* a resource with both is found by either */
    assert_ptr_equal(mapi_doc_find(doc, "items", "i9"), i9);
    assert_ptr_equal(mapi_doc_find_lid(doc, BYTES("items"), BYTES("new-9")), i9);
    assert_null(mapi_doc_find_lid(doc, BYTES("items"), BYTES("i9")));
    assert_ptr_equal(mapi_doc_resolve(doc, mapi_relationship_linkage(&rel, 0)), n1);
    mapi_doc_free(doc);

    /* two copies by lid merge; one lid on two resources is refused */
    doc = parse("{\"data\":{\"type\":\"t\",\"lid\":\"x\",\"attributes\":{\"a\":1}},"
                "\"included\":[{\"type\":\"t\",\"lid\":\"x\",\"attributes\":{\"b\":2}}]}");
    assert_int_equal(mapi_doc_resource_count(doc), 1);
    assert_int_equal(mapi_value_len(mapi_resource_attributes(mapi_doc_data(doc, 0))), 2);
    mapi_doc_free(doc);
    refused("{\"data\":[{\"type\":\"t\",\"id\":\"1\",\"lid\":\"x\"},"
            "{\"type\":\"t\",\"id\":\"2\",\"lid\":\"x\"}]}",
            "t lid \"x\" names two resources", NULL);
    refused("{\"data\":{\"type\":\"t\",\"lid\":7}}", "data has no string type and id", NULL);
}

/* ---- relationships: not loaded, null, one, many; links and meta everywhere ---- */

static void relationship_data_states_and_links(void **state)
{
    mapi_doc *doc = parse(
        "{\"links\":{\"self\":\"/p?page=1\",\"next\":\"/p?page=2\"},\"meta\":{\"total\":3},"
        "\"data\":{\"type\":\"payouts\",\"id\":\"p1\",\"links\":{\"self\":\"/payouts/p1\"},"
        "\"meta\":{\"rev\":4},\"relationships\":{"
        "\"company\":{\"meta\":{\"included\":false},\"links\":{\"related\":\"/c\"}},"
        "\"approver\":{\"data\":null},"
        "\"account\":{\"data\":{\"type\":\"accounts\",\"id\":\"a1\",\"meta\":{\"role\":\"payer\"}}},"
        "\"tags\":{\"data\":[],\"meta\":{\"count\":0}},"
        "\"notes\":{\"data\":[{\"type\":\"notes\",\"id\":\"n1\"},"
        "{\"type\":\"notes\",\"id\":\"n2\",\"meta\":{\"pinned\":true}}]}}}}");
    const mapi_resource *p = mapi_doc_data(doc, 0);
    mapi_relationship rel;
    (void)state;

    assert_string_equal(mapi_value_string(mapi_value_get(mapi_doc_links(doc), "next"), NULL),
                        "/p?page=2");
    assert_string_equal(mapi_value_string(mapi_value_get(mapi_resource_links(p), "self"), NULL),
                        "/payouts/p1");
    assert_int_equal(mapi_value_len(mapi_resource_meta(p)), 1);
    assert_int_equal(mapi_resource_relationship_count(p), 5);

    /* not loaded: no data member at all */
    assert_true(mapi_resource_relationship_at(doc, p, 0, &rel));
    assert_string_equal(rel.name, "company");
    assert_int_equal(rel.data, MAPI_REL_NO_DATA);
    assert_int_equal(rel.count, 0);
    assert_null(rel.targets);
    assert_null(rel.linkage);
    assert_false(mapi_value_bool(mapi_value_get(rel.meta, "included")));
    assert_true(mapi_value_has(rel.meta, "included"));
    assert_string_equal(mapi_value_string(mapi_value_get(rel.links, "related"), NULL), "/c");
    /* data: null */
    assert_true(mapi_resource_relationship_at(doc, p, 1, &rel));
    assert_string_equal(rel.name, "approver");
    assert_int_equal(rel.data, MAPI_REL_NULL_DATA);
    assert_null(rel.links);
    assert_null(rel.meta);
    assert_null(mapi_resource_related(doc, p, "company", 0));
    assert_null(mapi_resource_related(doc, p, "approver", 0));
    /* to-one, with the linkage's own meta */
    assert_true(mapi_resource_relationship_at(doc, p, 2, &rel));
    assert_int_equal(rel.data, MAPI_REL_TO_ONE);
    assert_int_equal(rel.count, 1);
    assert_true(mapi_resource_is_stub(mapi_doc_resource(doc, rel.targets[0])));
    assert_string_equal(
        mapi_value_string(mapi_value_get(mapi_value_get(mapi_relationship_linkage(&rel, 0), "meta"),
                                         "role"), NULL),
        "payer");
    assert_null(mapi_relationship_linkage(&rel, 1));
    /* empty to-many, with meta */
    assert_true(mapi_resource_relationship_at(doc, p, 3, &rel));
    assert_int_equal(rel.data, MAPI_REL_TO_MANY);
    assert_int_equal(rel.count, 0);
    assert_null(rel.targets);
    assert_non_null(rel.linkage);
    assert_null(mapi_relationship_linkage(&rel, 0));
    assert_int_equal(mapi_value_len(rel.meta), 1);
    /* to-many, linkage meta per linkage */
    assert_true(mapi_resource_relationship_at(doc, p, 4, &rel));
    assert_int_equal(rel.count, 2);
    assert_null(mapi_value_get(mapi_relationship_linkage(&rel, 0), "meta"));
    assert_true(mapi_value_bool(
        mapi_value_get(mapi_value_get(mapi_relationship_linkage(&rel, 1), "meta"), "pinned")));
    assert_false(mapi_resource_relationship_at(doc, p, 5, &rel));
    assert_false(mapi_resource_relationship(doc, p, BYTES("absent"), &rel));
    assert_true(mapi_resource_relationship(doc, p, BYTES("account"), &rel));
    assert_int_equal(rel.name_len, 7);
    assert_int_equal(rel.data, MAPI_REL_TO_ONE);
    mapi_doc_free(doc);
}

/* ---- JSON the reader refuses ---- */

static void raw_control_characters_are_refused(void **state)
{
    char body[64];
    unsigned c;
    mapi_doc *doc;
    (void)state;
    for (c = 0; c < 0x20; c++) {
        /* in a value, and in a member name */
        int n = snprintf(body, sizeof body, "{\"meta\":{\"a\":\"x%cy\"}}", 'Q');
        assert_true(n > 0);
        body[15] = (char)c;
        refused_len(body, (size_t)n, "control character", NULL);
        n = snprintf(body, sizeof body, "{\"meta\":{\"a%cb\":1}}", 'Q');
        body[11] = (char)c;
        refused_len(body, (size_t)n, "control character", NULL);
    }
    /* escaped, they are data; DEL is no control character for JSON */
    doc = parse("{\"meta\":{\"a\":\"\\t\\n\\u0000\\u001f\x7f\"}}");
    {
        size_t len;
        const char *s = mapi_value_string(mapi_value_get(mapi_doc_meta(doc), "a"), &len);
        assert_bytes(s, len, BYTES("\t\n\0\x1f\x7f"));
    }
    mapi_doc_free(doc);
}

static void invalid_json_is_refused(void **state)
{
    static const char *const bad[] = {
        "{\"meta\":[1,]}", "{\"meta\":{\"a\":1,}}", "{\"meta\":[,1]}", "{,}", "{\"meta\":[1 2]}",
        "{\"meta\":{\"a\":1 \"b\":2}}", "{\"meta\":[}", "{\"meta\":{]}", "{\"meta\":{\"a\"}}",
        "{\"meta\":{\"a\":}}", "{\"meta\":{1:2}}", "{\"meta\":[01]}", "{\"meta\":[1.]}",
        "{\"meta\":[.5]}", "{\"meta\":[+1]}", "{\"meta\":[1e]}", "{\"meta\":[1e+]}",
        "{\"meta\":[-]}", "{\"meta\":[--1]}", "{\"meta\":[0x10]}", "{\"meta\":[1.5e]}",
        "{\"meta\":[tru]}", "{\"meta\":[truee]}", "{\"meta\":[nul]}", "{\"meta\":[nulll]}",
        "{\"meta\":[fals]}", "{\"meta\":[\"\\x\"]}", "{\"meta\":[\"\\u12\"]}",
        "{\"meta\":[\"\\u12G4\"]}", "{\"meta\":[Infinity]}", "{\"meta\":[NaN]}",
        "{\"meta\":['a']}", "{\"meta\":{}} x", "{\"meta\":{}}}", "{\"meta\":{}}]",
        "{\"meta\":{}}{}", "{\"meta\":{}},", "{\"meta\":{}} 1", "{", "{\"meta\"", "{\"meta\":",
        "{\"meta\":\"abc", " ", "1 2", "nul", "{\"meta\":{\"a\":\"\\ud800\"}}",
        "{\"meta\":{\"\\udc00\":1}}",
    };
    static const char *const good[] = {
        "{\"meta\":{\"a\":[1e5,-0,0.0,1E+2,0.5e-3,\"\\/\\b\\f\\n\\r\\t\\\"\\\\\",true,false,null,{},[]]}}",
        " \t\r\n{\"meta\":{}} \t\r\n", "{\"meta\":{\"\\u00e9\\ud83d\\ude00\":\"\\u20ac\"}}",
    };
    static const char trailing_nul[] = "{\"meta\":{}}";
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        refused(bad[i], "invalid JSON", NULL);
    for (i = 0; i < sizeof good / sizeof good[0]; i++)
        mapi_doc_free(parse(good[i]));
    /* nothing may follow the document, a NUL byte neither */
    refused_len(trailing_nul, sizeof trailing_nul, "after the document", NULL);
    refused("{\"meta\":{}} trailing", "literal after the document", NULL);
    refused("{\"meta\":[1.]}", "invalid number", NULL);
    refused("{\"meta\":\"\\ud800\"}", "\\u escape of a lone surrogate", NULL);
    refused("{\"meta\":\"\\q\"}", "invalid escape", NULL);
    refused("{\"meta\":{\"a\":[1,2}}", "invalid JSON", NULL);
    refused("{\"meta\":{\"a\":[1,2]}", "end of input", NULL);
}

static void depth_is_capped_at_1024(void **state)
{
    static const char head[] = "{\"meta\":{},\"x\":"; /* meta is an object */
    size_t n = 1100, i, h = sizeof head - 1;
    char *body = malloc(2 * n + 32);
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    assert_non_null(body);
    memcpy(body, head, h);
    for (i = 0; i < n; i++) {
        body[h + i] = '[';
        body[h + n + i] = ']';
    }
    body[h + 2 * n] = '}';
    assert_int_equal(mapi_doc_parse_ex(body, 2 * n + h + 1, 100000, &doc, &err), -1);
    assert_string_equal(err.title, "invalid JSON: nested deeper than 1024");
    mapi_error_clear(&err);
    /* 1023 arrays in the object: 1024 levels */
    memset(body + h, '[', 1023);
    memset(body + h + 1023, ']', 1023);
    body[h + 2046] = '}';
    assert_int_equal(mapi_doc_parse_ex(body, h + 2047, 2000, &doc, &err), 0);
    mapi_doc_free(doc);
    free(body);
}

/* ---- error documents ---- */

static void error_members_kept_as_json_text(void **state)
{
    mapi_doc *doc = parse(
        "{\"errors\":[{\"status\":\"422\",\"code\":1001,\"title\":\"Invalid\","
        "\"detail\":[{\"field\":\"amount\",\"msg\":\"too \\\"low\\\"\\n\"},2.50],"
        "\"source\":{\"pointer\":{\"at\":\"/data\"}}},"
        "{\"detail\":null,\"title\":{}}]}");
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    assert_int_equal(mapi_doc_error(doc, &err), 1);
    assert_int_equal(err.status, 422);
    assert_string_equal(err.code, "1001");
    assert_string_equal(err.title, "Invalid");
    assert_string_equal(err.detail,
                        "[{\"field\":\"amount\",\"msg\":\"too \\\"low\\\"\\n\"},2.50]");
    assert_string_equal(err.pointer, "{\"at\":\"/data\"}");
    assert_int_equal(err.nerrors, 2);
    assert_null(err.errors[1].detail);
    assert_string_equal(err.errors[1].title, "{}");
    assert_non_null(strstr(err.message, "too \\\"low\\\""));
    mapi_error_clear(&err);
    mapi_doc_free(doc);
}

/* ---- response bodies are read where they were received ---- */

static void bodies_are_read_in_place(void **state)
{
    static const char text[] = "{\"data\":{\"type\":\"t\",\"id\":\"1\",\"attributes\":{\"a\":\"b\"}}}";
    size_t len = sizeof text - 1;
    mapi_response *padded = mapi_response_new(), *tight = mapi_response_new();
    mapi_doc *d1 = NULL, *d2 = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    assert_non_null(padded);
    assert_non_null(tight);
    padded->body = malloc(len + MAPI_JSON_PADDING);
    tight->body = malloc(len + 1);
    assert_non_null(padded->body);
    assert_non_null(tight->body);
    memcpy(padded->body, text, len + 1);
    memcpy(tight->body, text, len + 1);
    memset(padded->body + len + 1, '}', MAPI_JSON_PADDING - 1); /* the reader zeroes it */
    padded->len = tight->len = len;
    padded->cap = len + MAPI_JSON_PADDING;
    tight->cap = len + 1;
    assert_int_equal(mapi_doc_from_response(padded, 64, &d1, &err), 0);
    assert_int_equal(mapi_doc_from_response(tight, 64, &d2, &err), 0);
    /* the same document either way: the padded body read where it is (its
       strings copied), the other copied once (its strings left in the copy) */
    assert_string_equal(mapi_value_string(mapi_resource_attr(mapi_doc_data(d1, 0), "a"), NULL),
                        "b");
    assert_string_equal(mapi_value_string(mapi_resource_attr(mapi_doc_data(d2, 0), "a"), NULL),
                        "b");
    /* either way the document holds the body's bytes once, not twice */
    assert_true(mapi_doc_size(d1) < mapi_doc_size(d2) + len + MAPI_JSON_PADDING);
    assert_true(mapi_doc_size(d2) < mapi_doc_size(d1) + len + MAPI_JSON_PADDING);
    /* the bodies are unchanged: a document never writes into a response's */
    assert_memory_equal(mapi_response_body(mapi_doc_response(d1), NULL), text, len);
    assert_memory_equal(mapi_response_body(mapi_doc_response(d2), NULL), text, len);
    mapi_doc_free(d1);
    mapi_doc_free(d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nul_ids_stay_distinct),
        cmocka_unit_test(numbers_keep_their_text),
        cmocka_unit_test(field_rules),
        cmocka_unit_test(copies_merge_when_they_agree),
        cmocka_unit_test(copies_that_differ_are_refused),
        cmocka_unit_test(lid_identifies_a_resource_without_id),
        cmocka_unit_test(relationship_data_states_and_links),
        cmocka_unit_test(raw_control_characters_are_refused),
        cmocka_unit_test(invalid_json_is_refused),
        cmocka_unit_test(depth_is_capped_at_1024),
        cmocka_unit_test(error_members_kept_as_json_text),
        cmocka_unit_test(bodies_are_read_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_calls.c -- src/calls.c, no network: the endpoint table, found by name,
 * its rows whole, and the decimal fields by type and attribute; the builders
 * fed plain values, no client.
 */
#include "testutil.h"

/* 1 when attribute name of resource type is kept as a decimal string. */
static int decimal_field(const char *type, size_t type_len, const char *name, size_t name_len)
{
    return mapi_field_listed(mapi_decimal_fields(type, type_len), name, name_len);
}

/* Every row whole and found by name; decimal fields matched by bytes and
   lengths (no prefix matches). */
static void endpoint_table(void **state)
{
    static const char *const names[MAPI_EP_COUNT] = {
        [MAPI_EP_CONFIRM_PAYOUT] = "confirm_payout", [MAPI_EP_GET_CHANNEL] = "get_channel",
        [MAPI_EP_LIST_ADDRESSES] = "list_addresses", [MAPI_EP_GET_PAYOUT] = "get_payout"};
    size_t i;
    (void)state;
    for (i = 0; i < MAPI_EP_COUNT; i++) { /* each index names its row */
        const mapi_endpoint *e = &mapi_endpoints[i];
        assert_string_equal(e->name, names[i]);
        assert_ptr_equal(mapi_endpoint_find(e->name), e);
        assert_true(mapi_method_safety(e->method) == !e->moves_money);
        assert_non_null(e->type);
        assert_non_null(e->id_name);
        assert_non_null(e->decimal_fields);
    }
    assert_int_equal(i, 4);
    assert_null(mapi_endpoint_find("payout"));
    assert_null(mapi_endpoint_find(NULL));
    assert_true(mapi_endpoint_find("confirm_payout")->moves_money);
    assert_string_equal(mapi_endpoint_find("list_addresses")->key_for, "list addresses");
    assert_null(mapi_endpoint_find("get_channel")->key_for);
    assert_int_equal(decimal_field("payouts", 7, "amount", 6), 1);
    assert_int_equal(decimal_field("payouts", 7, "amount_x", 6), 1); /* by length */
    assert_int_equal(decimal_field("payouts", 7, "amoun", 5), 0);
    assert_int_equal(decimal_field("payouts\0x", 9, "amount", 6), 0);
    assert_int_equal(decimal_field("payout", 6, "amount", 6), 0);
    assert_int_equal(decimal_field("channels", 8, "amount", 6), 0);
}

/* ASCII case-insensitive comparison (buf.c) and header names (headers.c),
   used by the table's readers: whole names only. */
static void names_without_case(void **state)
{
    (void)state;
    assert_true(mapi_ascii_ieq("Content-TYPE", 12, "content-type", 12));
    assert_false(mapi_ascii_ieq("content", 7, "content-type", 12));
    assert_true(mapi_header_name_equal("X-A", "x-a"));
    assert_false(mapi_header_name_equal("X-A", "x-ab"));
    assert_false(mapi_header_name_equal("X-AB", "x-a"));
}

/* The builders take what they need of a client as plain values
   (mapi_call_base): the URL from base_url, the key rule from has_key, the
   confirm's settle default from settle, each build counted; no client. */
static void builders_take_plain_values(void **state)
{
    mapi_call_base base = {"http://h", 0, 1, 0};
    mapi_call_opts off = MAPI_CALL_OPTS_INIT;
    mapi_error e = MAPI_ERROR_INIT;
    mapi_call k;
    (void)state;

    /* no key: the confirm is refused before anything is sent, and not counted */
    assert_int_equal(mapi_call_build_endpoint(&base, &mapi_endpoints[MAPI_EP_CONFIRM_PAYOUT],
                                              "p 1", NULL, NULL, &k, &e), -1);
    assert_int_equal(e.kind, MAPI_ERR_USAGE);
    assert_int_equal(e.outcome, MAPI_OUTCOME_NOT_SENT);
    assert_int_equal(base.built, 0);
    mapi_error_clear(&e);
    base.has_key = 1;
    assert_int_equal(mapi_call_build_endpoint(&base, &mapi_endpoints[MAPI_EP_CONFIRM_PAYOUT],
                                              "p 1", NULL, NULL, &k, &e), 0);
    assert_string_equal(k.url, "http://h/api/public/v1/payouts/p%201");
    assert_int_equal(k.settle, 1); /* the base's default */
    assert_int_equal(base.built, 1);
    mapi_call_release(&k);
    off.settle = MAPI_SETTLE_OFF; /* the call's own wins */
    assert_int_equal(mapi_call_build_endpoint(&base, &mapi_endpoints[MAPI_EP_CONFIRM_PAYOUT],
                                              "p", NULL, &off, &k, &e), 0);
    assert_int_equal(k.settle, 0);
    mapi_call_release(&k);
    base.settle = 0;
    assert_int_equal(mapi_call_build_endpoint(&base, &mapi_endpoints[MAPI_EP_CONFIRM_PAYOUT],
                                              "p", NULL, NULL, &k, &e), 0);
    assert_int_equal(k.settle, 0);
    mapi_call_release(&k);
    assert_int_equal(mapi_call_build_request(&base, "GET", "/x?a=1", NULL, 0, NULL, &k, &e), 0);
    assert_string_equal(k.url, "http://h/x?a=1");
    mapi_call_release(&k);
    assert_int_equal(base.built, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endpoint_table),
        cmocka_unit_test(names_without_case),
        cmocka_unit_test(builders_take_plain_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

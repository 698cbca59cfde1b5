/*
 * test_calls.c -- src/calls.c, no network: the endpoint table, found by name,
 * its rows whole, and the decimal fields by type and attribute.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endpoint_table),
        cmocka_unit_test(names_without_case),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

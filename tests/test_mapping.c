/*
 * test_mapping.c -- src/mapping.c: which media types are JSON.
 */
#include "testutil.h"

static void media_types(void **state)
{
    (void)state;
    assert_true(mapi_media_type_is_json("application/vnd.api+json"));
    assert_true(mapi_media_type_is_json("application/vnd.api+json; charset=utf-8"));
    assert_true(mapi_media_type_is_json("Application/JSON"));
    assert_true(mapi_media_type_is_json(" application/json ;charset=UTF-8"));
    assert_false(mapi_media_type_is_json("text/plain"));
    assert_false(mapi_media_type_is_json("text/html"));
    assert_false(mapi_media_type_is_json("application/jsonx"));
    assert_false(mapi_media_type_is_json("application/json-patch+json"));
    assert_false(mapi_media_type_is_json(""));
    assert_false(mapi_media_type_is_json(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(media_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_version.c -- the version is written once (MAPI_VERSION in the header)
 * and the library reports the same at run time.
 */
#include <string.h>

#include "testutil.h"

static void library_and_header_agree(void **state)
{
    const char *v = mapi_version();
    size_t i, dots = 0;
    (void)state;
    assert_non_null(v);
    assert_string_equal(v, MAPI_VERSION);
    for (i = 0; v[i]; i++) {
        if (v[i] == '.')
            dots++;
        else
            assert_true(v[i] >= '0' && v[i] <= '9');
    }
    assert_int_equal(dots, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(library_and_header_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_buf.c -- src/buf.c: the growing buffer.
 */
#include "testutil.h"

static void buffers(void **state)
{
    mapi_buf b;
    char *s;
    int i;
    (void)state;
    mapi_buf_init(&b);
    s = mapi_buf_take(&b);
    assert_string_equal(s, "");
    free(s);
    for (i = 0; i < 1000; i++)
        mapi_buf_printf(&b, "%d,", i);
    assert_int_equal(b.oom, 0);
    s = mapi_buf_take(&b);
    assert_true(strncmp(s, "0,1,2,", 6) == 0);
    assert_true(tu_contains(s, ",999,"));
    free(s);
    assert_null(b.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

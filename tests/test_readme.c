/*
 * test_readme.c -- the README's "C quick start", as written, against the
 * sandbox.  mk/test.mk extracts that block from README.md and builds it
 * (readme_quick_start, beside this test's binary) with nothing but
 * <merchantapi.h>; a README block that no longer compiles fails the build
 * of `make test`, one that misbehaves fails here.  It is run on the normal
 * draft (amount 250.10), the integer amount (1200) and the partner_pay
 * draft (amount "1200", a string), then on a payout that is no longer a
 * draft (its error path).
 */
#include <sys/wait.h>

#include "testutil.h"

static char quick_start[1024]; /* the program's path, from argv[0] */

/* Runs the quick start with `id`: its exit status, stdout and stderr
   together in out. */
static int run_quick_start(const char *id, char *out, size_t cap)
{
    char cmd[2048];
    FILE *p;
    size_t n = 0, got;
    int status;

    assert_true(strchr(quick_start, '\'') == NULL && strchr(id, '\'') == NULL);
    assert_true((size_t)snprintf(cmd, sizeof cmd, "'%s' '%s' 2>&1", quick_start, id) <
                sizeof cmd);
    p = popen(cmd, "r");
    assert_non_null(p);
    while (n + 1 < cap && (got = fread(out + n, 1, cap - 1 - n, p)) > 0)
        n += got;
    out[n] = '\0';
    status = pclose(p);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_quick_start_amounts(void **state)
{
    static const struct {
        const char *id, *line;
    } drafts[] = {
        {"6ecebf80-b210-413b-b396-df4760d142c5", "6ecebf80-b210-413b-b396-df4760d142c5 250.10\n"},
        {"draft-integer-amount", "draft-integer-amount 1200\n"},
        {"9a1d2f64-58c3-4b0e-a7d1-3f2c6b8e4a17", "9a1d2f64-58c3-4b0e-a7d1-3f2c6b8e4a17 1200\n"},
    };
    char out[4096];
    size_t i;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    for (i = 0; i < sizeof drafts / sizeof drafts[0]; i++) {
        int rc = run_quick_start(drafts[i].id, out, sizeof out);
        if (rc != 0 || strcmp(out, drafts[i].line) != 0)
            fail_msg("quick start %s: exit %d, output \"%s\"", drafts[i].id, rc, out);
        assert_int_equal(tu_sandbox_count(drafts[i].id), 1); /* confirmed once */
    }
}

static void test_quick_start_error(void **state)
{
    const char *id = "6ecebf80-b210-413b-b396-df4760d142c5";
    char out[4096];
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    assert_int_equal(run_quick_start(id, out, sizeof out), 0);
    /* a second confirm: 422 payout_not_draft, printed as one line, exit 1 */
    assert_int_equal(run_quick_start(id, out, sizeof out), 1);
    assert_true(strncmp(out, "merchantapi: 422 payout_not_draft", 33) == 0);
    assert_non_null(strchr(out, '\n'));
    assert_true(strchr(out, '\n')[1] == '\0');
    assert_int_equal(tu_sandbox_count(id), 2);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quick_start_amounts),
        cmocka_unit_test(test_quick_start_error),
    };
    const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    int n = slash ? snprintf(quick_start, sizeof quick_start, "%.*s/readme_quick_start",
                             (int)(slash - argv[0]), argv[0])
                  : snprintf(quick_start, sizeof quick_start, "./readme_quick_start");

    if (n < 0 || (size_t)n >= sizeof quick_start) {
        fprintf(stderr, "test_readme: path too long\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}

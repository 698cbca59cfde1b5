/*
 * test_doc_hostile.c -- hostile documents through mapi_doc_parse, no HTTP:
 * strict UTF-8 (overlong forms, surrogates, past U+10FFFF, lone surrogate
 * escapes), nesting far past the cap, duplicate member names, and every
 * input kept in tests/fuzz/regressions/ (what the fuzzers once found or
 * what they are seeded with) replayed: each parses or fails as DECODE/API
 * with a message (the utf8-* ones must fail), and under
 * `make test SANITIZE=1` without a sanitizer report.
 */
#include <dirent.h>

#include "testutil.h"

#define REGRESSIONS "tests/fuzz/regressions"

/* {"data":{"type":"t","id":"1","attributes":{"a":"<text>"}}} */
static int parse_attr(const char *text, mapi_doc **doc, mapi_error *err)
{
    char body[256];
    int n = snprintf(body, sizeof body,
                     "{\"data\":{\"type\":\"t\",\"id\":\"1\",\"attributes\":{\"a\":\"%s\"}}}", text);

    assert_true(n > 0 && (size_t)n < sizeof body);
    return mapi_doc_parse(body, (size_t)n, doc, err);
}

static void invalid_utf8_fails_as_decode(void **state)
{
    static const char *const bad[] = {
        "\xff\xfe",         /* never in UTF-8 */
        "abc\x80",          /* a lone continuation byte */
        "\xc0\xaf",         /* overlong '/' */
        "\xe0\x80\x80",     /* overlong NUL */
        "\xf0\x80\x80\x80", /* overlong, 4 bytes */
        "\xed\xa0\x80",     /* U+D800, a surrogate */
        "\xed\xbf\xbf",     /* U+DFFF */
        "\xf4\x90\x80\x80", /* U+110000 */
        "\xe2\x82",         /* cut short */
        "\xe2\x82\x41",     /* a continuation byte missing */
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        if (parse_attr(bad[i], &doc, &err) != -1)
            fail_msg("case %zu parsed", i);
        assert_null(doc);
        assert_int_equal(err.kind, MAPI_ERR_DECODE);
        assert_string_equal(err.title, "invalid JSON: invalid utf-8 string");
        mapi_error_clear(&err);
    }
}

static void lone_surrogate_escapes_fail(void **state)
{
    static const char *const bad[] = {"\\ud800", "\\udfff", "\\ud83dx", "\\ud83d\\u0041",
                                      "\\ud83d\\ud83d", "x\\ude00"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        assert_int_equal(parse_attr(bad[i], &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_DECODE);
        assert_string_equal(err.title, "invalid JSON: \\u escape of a lone surrogate");
        mapi_error_clear(&err);
    }
}

static void valid_text_comes_through(void **state)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    size_t len = 0;
    const char *s;
    (void)state;
    /* 2-, 3- and 4-byte characters, the highest code point, a surrogate pair
       escape, escaped quotes and backslashes next to them */
    if (parse_attr("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf "
                   "\\ud83d\\ude00 \\\"\xc3\xa9\\\\", &doc, &err) != 0)
        fail_msg("%s", err.message);
    s = mapi_value_string(mapi_resource_attr(mapi_doc_data(doc, 0), "a"), &len);
    assert_string_equal(s, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf "
                           "\xf0\x9f\x98\x80 \"\xc3\xa9\\");
    mapi_doc_free(doc);
}

static void deep_nesting_fails_as_decode(void **state)
{
    size_t n = 10000, i;
    char *body = malloc(2 * n + 1);
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    assert_non_null(body);
    for (i = 0; i < n; i++) {
        body[i] = '[';
        body[n + i] = ']';
    }
    body[2 * n] = '\0';
    assert_int_equal(mapi_doc_parse(body, 2 * n, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "invalid JSON: nested deeper than 64");
    mapi_error_clear(&err);
    free(body);
}

static void duplicate_names_fail_as_decode(void **state)
{
    static const char *const bad[] = {
        "{\"data\":null,\"data\":null}",
        "{\"data\":{\"type\":\"t\",\"id\":\"1\",\"attributes\":{\"s\":1,\"s\":2}}}",
        "{\"data\":{\"type\":\"t\",\"id\":\"1\",\"attributes\":{\"s\":{\"x\":1,\"x\":1}}}}",
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        assert_int_equal(mapi_doc_parse(bad[i], strlen(bad[i]), &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_DECODE);
        assert_string_equal(err.title, "invalid JSON: duplicate member name");
        mapi_error_clear(&err);
    }
}

/* Every kept fuzz input: parsed, or refused with a kind and a message. */
static void fuzz_regressions_replay(void **state)
{
    DIR *dir = opendir(REGRESSIONS);
    struct dirent *e;
    int files = 0;
    (void)state;
    if (!dir)
        fail_msg("cannot open %s (run from the repository root)", REGRESSIONS);
    while ((e = readdir(dir)) != NULL) {
        char path[1024];
        size_t len = 0;
        char *body;
        mapi_doc *doc = NULL;
        mapi_error err = MAPI_ERROR_INIT;
        if (e->d_name[0] == '.')
            continue;
        assert_true((size_t)snprintf(path, sizeof path, "%s/%s", REGRESSIONS, e->d_name) <
                    sizeof path);
        body = tu_read_file(path, &len);
        assert_non_null(body);
        if (mapi_doc_parse(body, len, &doc, &err) == 0) {
            size_t i, n = mapi_doc_resource_count(doc);
            /* utf8-*: invalid UTF-8 that json-c once let through; they must fail */
            if (strncmp(e->d_name, "utf8-", 5) == 0)
                fail_msg("%s parsed", path);
            for (i = 0; i < n; i++)
                assert_ptr_equal(mapi_doc_resource(doc, i),
                                 mapi_doc_find(doc, mapi_resource_type(mapi_doc_resource(doc, i)),
                                               mapi_resource_id(mapi_doc_resource(doc, i))));
            mapi_doc_free(doc);
        } else {
            if (err.kind != MAPI_ERR_DECODE && err.kind != MAPI_ERR_API)
                fail_msg("%s: kind %d", path, (int)err.kind);
            assert_non_null(err.message);
            mapi_error_clear(&err);
        }
        free(body);
        files++;
    }
    closedir(dir);
    assert_true(files > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invalid_utf8_fails_as_decode),
        cmocka_unit_test(lone_surrogate_escapes_fail),
        cmocka_unit_test(valid_text_comes_through),
        cmocka_unit_test(deep_nesting_fails_as_decode),
        cmocka_unit_test(duplicate_names_fail_as_decode),
        cmocka_unit_test(fuzz_regressions_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

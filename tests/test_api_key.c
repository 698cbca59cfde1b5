/*
 * test_api_key.c -- the api key on the C side: redacted from every field of
 * a mapi_error even when the server echoes it (an id holding the key comes
 * back in the 404's detail and in the URL), refused with CR/LF by
 * mapi_client_new without being quoted, and absent from the
 * MERCHANTAPI_DEBUG lines (which must be there: none at all fails).
 */
#include <unistd.h>

#include "testutil.h"

/* The sandbox writes the id into its 404 detail: "no channel <id>". */
static void server_echo_is_redacted(void **state)
{
    const char *key = tu_api_key();
    char want_url[512];
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    size_t len = 0;
    const char *body;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, key, 0, 0, NULL);

    assert_int_equal(mapi_get_channel(c, key, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_API);
    assert_int_equal(err.status, 404);
    assert_string_equal(err.detail, "no channel [REDACTED]");
    assert_int_equal(err.nerrors, 1);
    assert_string_equal(err.errors[0].detail, "no channel [REDACTED]");
    snprintf(want_url, sizeof want_url, "%s/api/public/v1/channels/[REDACTED]", tu_base_url());
    assert_string_equal(err.url, want_url);
    assert_true(tu_contains(err.message, "(no channel [REDACTED]) [GET /api/public/v1/channels/"
                                         "[REDACTED]]"));
    tu_assert_no_key(&err, key);
    /* the raw response stays the server's bytes (documented in merchantapi.h) */
    body = mapi_response_body(err.response, &len);
    assert_true(tu_contains(body, key));
    mapi_error_clear(&err);

    assert_int_equal(mapi_confirm_payout(c, key, &doc, &err), -1);
    assert_string_equal(err.detail, "no payout [REDACTED]");
    assert_int_equal(err.outcome, MAPI_OUTCOME_REJECTED);
    tu_assert_no_key(&err, key);
    mapi_error_clear(&err);

    assert_int_equal(mapi_list_addresses(c, key, NULL, &doc, &err), -1);
    assert_string_equal(err.detail, "no account [REDACTED]");
    tu_assert_no_key(&err, key);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void new_refuses_control_bytes_without_quoting(void **state)
{
    static const char *const keys[] = {"sk_live_9f8e7d\r\nX-Injected: 1", "sk_live_9f8e7d\n",
                                       "\rsk_live_9f8e7d", "sk_live_9f8e7d\t",
                                       "sk_live\x01_9f8e7d", "sk_live_9f8e7d\x7f"};
    static const char *const urls[] = {"http://127.0.0.1:9\r\nHost: evil", "http://127.0.0.1:9/\n",
                                       "https://api.example/x\ty", "https://api.example /x"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        mapi_config cfg;
        mapi_error err = MAPI_ERROR_INIT;
        mapi_config_init(&cfg);
        cfg.base_url = "http://127.0.0.1:9";
        cfg.api_key = keys[i];
        assert_null(mapi_client_new(&cfg, &err));
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_false(tu_contains(err.message, "sk_live_9f8e7d"));
        assert_false(tu_contains(err.title, "sk_live_9f8e7d"));
        mapi_error_clear(&err);
    }
    for (i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        mapi_config cfg;
        mapi_error err = MAPI_ERROR_INIT;
        mapi_config_init(&cfg);
        cfg.base_url = urls[i];
        cfg.api_key = "sk_live_9f8e7d";
        assert_null(mapi_client_new(&cfg, &err));
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_false(tu_contains(err.message, "sk_live_9f8e7d"));
        mapi_error_clear(&err);
    }
}

/* Reads a whole stream from the start. */
static char *slurp(FILE *f)
{
    long n;
    char *s;

    fflush(f);
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        return NULL;
    s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    s[fread(s, 1, (size_t)n, f)] = '\0';
    return s;
}

static void debug_lines_hold_no_key(void **state)
{
    const char *key = tu_api_key();
    FILE *capture = tmpfile();
    int saved;
    mapi_client *c, *dead;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    char *text;
    const char *p;
    int lines;
    (void)state;
    TU_NEED_SANDBOX();
    assert_non_null(capture);
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(capture), STDERR_FILENO) >= 0);
    setenv("MERCHANTAPI_DEBUG", "1", 1);
    c = tu_client_ex(NULL, key, 1, 0, NULL);
    dead = tu_client_ex("http://127.0.0.1:9", key, 0, 0, NULL);
    unsetenv("MERCHANTAPI_DEBUG");
    mapi_get_channel(c, "60e05bc0-4690-4985-a08a-8acf00e48294", &doc, &err);
    mapi_doc_free(doc);
    doc = NULL;
    mapi_get_channel(c, key, &doc, &err);
    mapi_error_clear(&err);
    mapi_confirm_payout(c, key, &doc, &err);
    mapi_error_clear(&err);
    mapi_list_addresses(c, "fault-503", NULL, &doc, &err);
    mapi_error_clear(&err);
    mapi_confirm_payout(dead, "x", &doc, &err);
    mapi_error_clear(&err);
    mapi_client_free(c);
    mapi_client_free(dead);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    text = slurp(capture);
    fclose(capture);
    assert_non_null(text);
    /* no line at all would pass the checks below: one line per attempt
     * (a success, two 404s, two 503s, a refused connection) must be there */
    lines = 0;
    for (p = text; (p = strstr(p, "merchantapi: ")) != NULL; p++)
        if (p == text || p[-1] == '\n')
            lines++;
    if (lines < 5)
        fail_msg("MERCHANTAPI_DEBUG=1 wrote %d lines:\n%s", lines, text);
    if (tu_contains(text, key) || tu_contains(text, "Bearer") ||
        tu_contains(text, "uthorization"))
        fail_msg("debug output holds the key or a header:\n%s", text);
    assert_true(tu_contains(text, "[REDACTED]"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(server_echo_is_redacted, tu_setup_reset),
        cmocka_unit_test(new_refuses_control_bytes_without_quoting),
        cmocka_unit_test_setup(debug_lines_hold_no_key, tu_setup_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

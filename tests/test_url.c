/*
 * test_url.c -- src/url.c, no network: percent-encoding, base_url rules, loopback
 * hosts, proxies.
 */
#include "testutil.h"

static void encodes_ids_as_one_segment(void **state)
{
    static const struct { const char *in, *out; } cases[] = {
        {"6ecebf80-b210-413b-b396-df4760d142c5", "6ecebf80-b210-413b-b396-df4760d142c5"},
        {"AZaz09-._~", "AZaz09-._~"},
        {"echo-a/b?c d", "echo-a%2Fb%3Fc%20d"},
        {"%", "%25"},
        {"a+b&c=d#e", "a%2Bb%26c%3Dd%23e"},
        {"\xc3\xbc", "%C3%BC"},          /* "ü" in UTF-8, upper-case hex */
        {"\r\n\x7f\xff", "%0D%0A%7F%FF"},
        {"", ""},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = tu_percent_encode(cases[i].in);
        assert_non_null(got);
        assert_string_equal(got, cases[i].out);
        free(got);
    }
}

static void base_url_rules(void **state)
{
    static const struct { const char *in, *out; } ok[] = {
        {"https://api.example", "https://api.example"},
        {"https://api.example/", "https://api.example"},
        {"https://api.example:8443/prefix//", "https://api.example:8443/prefix"},
        {"HTTPS://API.EXAMPLE", "HTTPS://API.EXAMPLE"},
        {"http://localhost:8089", "http://localhost:8089"},
        {"http://LocalHost/", "http://LocalHost"},
        {"http://127.0.0.1:18089", "http://127.0.0.1:18089"},
        {"http://127.200.3.4", "http://127.200.3.4"},
        {"http://[::1]:8089/", "http://[::1]:8089"},
        {"https://[2001:db8::1]", "https://[2001:db8::1]"},
    };
    static const char *const bad[] = {
        "",
        "api.example",                       /* no scheme */
        "ftp://api.example",
        "http://api.example",                /* http only to loopback */
        "http://10.0.0.1:8089",
        "http://128.0.0.1",
        "http://127.1",                      /* not the dotted-quad form */
        "http://localhost.example.com",
        "http://[::2]",
        "https://user:pw@api.example",       /* credentials */
        "https://user@api.example",
        "https://api.example/?x=1",          /* query */
        "https://api.example#frag",
        "https://api.example\r\nX-Evil: 1",  /* CR/LF */
        "https://api .example",
        "https://",
        "https://:443",
        "https://api.example:0",
        "https://api.example:65536",
        "https://api.example:8a",
        "https://[zz::1]",
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        mapi_error err = MAPI_ERROR_INIT;
        char *out = NULL;
        if (mapi_base_url_check(ok[i].in, &out, &err) != 0)
            fail_msg("%s refused: %s", ok[i].in, err.message);
        assert_string_equal(out, ok[i].out);
        free(out);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mapi_error err = MAPI_ERROR_INIT;
        char *out = NULL;
        if (mapi_base_url_check(bad[i], &out, &err) == 0)
            fail_msg("%s accepted", bad[i]);
        assert_null(out);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_true(strncmp(err.message, "merchantapi: usage: ", 20) == 0);
        mapi_error_clear(&err);
    }
}

static void loopback_hosts(void **state)
{
    (void)state;
    assert_true(mapi_host_is_loopback("localhost", 9));
    assert_true(mapi_host_is_loopback("LOCALHOST", 9));
    assert_true(mapi_host_is_loopback("127.0.0.1", 9));
    assert_true(mapi_host_is_loopback("127.255.255.254", 15));
    assert_true(mapi_host_is_loopback("[::1]", 5));
    assert_true(mapi_host_is_loopback("[0:0:0:0:0:0:0:1]", 17));
    assert_false(mapi_host_is_loopback("126.0.0.1", 9));
    assert_false(mapi_host_is_loopback("localhostx", 10));
    assert_false(mapi_host_is_loopback("[::2]", 5));
    assert_false(mapi_host_is_loopback("::1", 3));
}

/* The proxy option's rules (mapi_proxy_resolve): none by default, the
   environment only for "env", the key never in clear past loopback. */

static void proxy_rules(void **state)
{
    static const struct {
        const char *option, *base, *want; /* want: the proxy used, "" none, NULL refused */
    } cases[] = {
        {NULL, "http://127.0.0.1:1", ""},
        {"", "https://api.example", ""},
        {"http://127.0.0.1:3128", "http://127.0.0.1:1", "http://127.0.0.1:3128"},
        {"http://LOCALHOST:3128/", "http://[::1]:1", "http://LOCALHOST:3128/"},
        {"http://u:p@proxy.corp:3128", "https://api.example", "http://u:p@proxy.corp:3128"},
        {"HTTP://[fd00::1]:8080", "https://api.example", "HTTP://[fd00::1]:8080"},
        {"http://proxy.corp:3128", "http://127.0.0.1:1", NULL},  /* the key in clear */
        {"http://192.0.2.1:3128", "http://localhost:1", NULL},
        {"https://127.0.0.1:3128", "https://api.example", NULL}, /* http:// only */
        {"socks5h://127.0.0.1:1080", "https://api.example", NULL},
        {"127.0.0.1:3128", "https://api.example", NULL},        /* a scheme for the option */
        {"http://127.0.0.1:3128/x", "https://api.example", NULL},
        {"http://127.0.0.1:3128?q", "https://api.example", NULL},
        {"http://127.0.0.1:0", "https://api.example", NULL},
        {"http://:3128", "https://api.example", NULL},
        {"http://a b:3128", "https://api.example", NULL},
        {"http://a\r\n:3128", "https://api.example", NULL},
    };
    size_t i;
    (void)state;
    unsetenv("http_proxy");
    unsetenv("https_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_error err = MAPI_ERROR_INIT;
        char *out = (char *)"unset";
        int rc = mapi_proxy_resolve(cases[i].option, cases[i].base, &out, &err);
        if (!cases[i].want) {
            assert_int_equal(rc, -1);
            assert_int_equal(err.kind, MAPI_ERR_USAGE);
            assert_null(out);
            assert_true(strncmp(err.title, "proxy ", 6) == 0);
            if (cases[i].option && strstr(cases[i].option, "proxy.corp"))
                assert_null(strstr(err.title, "proxy.corp")); /* never the value */
        } else {
            assert_int_equal(rc, 0);
            if (*cases[i].want)
                assert_string_equal(out, cases[i].want);
            else
                assert_null(out);
        }
        free(out);
        mapi_error_clear(&err);
    }
}

/* proxy = "env": the variables libcurl reads, no_proxy, the same refusals. */
static void proxy_from_environment(void **state)
{
    static const struct {
        const char *var, *value, *no_proxy, *base, *want; /* as in proxy_rules */
    } cases[] = {
        {NULL, NULL, NULL, "https://api.example", ""},
        {"http_proxy", "127.0.0.1:3128", NULL, "http://127.0.0.1:1", "http://127.0.0.1:3128"},
        {"HTTP_PROXY", "http://127.0.0.1:3128", NULL, "http://127.0.0.1:1", ""}, /* never read */
        {"http_proxy", "http://127.0.0.1:3128", NULL, "https://api.example", ""},
        {"https_proxy", "http://proxy.corp:3128", NULL, "https://api.example",
         "http://proxy.corp:3128"},
        {"HTTPS_PROXY", "proxy.corp:3128", NULL, "https://api.example", "http://proxy.corp:3128"},
        {"ALL_PROXY", "http://proxy.corp:1", NULL, "https://api.example", "http://proxy.corp:1"},
        {"all_proxy", "http://proxy.corp:1", NULL, "http://127.0.0.1:1", NULL},
        {"http_proxy", "http://proxy.corp:1", NULL, "http://127.0.0.1:1", NULL},
        {"http_proxy", "http://proxy.corp:1", "127.0.0.1", "http://127.0.0.1:1", ""},
        {"http_proxy", "http://proxy.corp:1", "127.0.0.0/8", "http://127.0.0.1:1", ""},
        {"http_proxy", "http://proxy.corp:1", "10.0.0.0/8, 127.0.0.2", "http://127.0.0.1:1", NULL},
        {"http_proxy", "http://proxy.corp:1", "*", "http://localhost:1", ""},
        {"http_proxy", "http://proxy.corp:1", "::1", "http://[::1]:1", ""},
        {"https_proxy", "http://p:1", ".example", "https://api.example", ""},
        {"https_proxy", "http://p:1", "example", "https://api.example", ""},
        {"https_proxy", "http://p:1", "EXAMPLE", "https://API.example", ""},
        {"https_proxy", "http://p:1", "i.example", "https://api.example", "http://p:1"},
        {"https_proxy", "http://p:1", "api.example.org", "https://api.example", "http://p:1"},
        {"https_proxy", "socks5://p:1", NULL, "https://api.example", NULL},
    };
    static const char *const vars[] = {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY",
                                       "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"};
    size_t i, v;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_error err = MAPI_ERROR_INIT;
        char *out = NULL;
        int rc;
        for (v = 0; v < sizeof vars / sizeof vars[0]; v++)
            unsetenv(vars[v]);
        if (cases[i].var)
            setenv(cases[i].var, cases[i].value, 1);
        if (cases[i].no_proxy)
            setenv("NO_PROXY", cases[i].no_proxy, 1);
        rc = mapi_proxy_resolve("env", cases[i].base, &out, &err);
        if (!cases[i].want) {
            assert_int_equal(rc, -1);
            assert_int_equal(err.kind, MAPI_ERR_USAGE);
            assert_true(strncmp(err.title, cases[i].var, strlen(cases[i].var)) == 0);
        } else {
            if (rc != 0)
                fail_msg("case %zu: %s", i, err.title);
            if (*cases[i].want)
                assert_string_equal(out, cases[i].want);
            else if (out)
                fail_msg("case %zu: a proxy where none was wanted", i);
        }
        free(out);
        mapi_error_clear(&err);
        /* without "env" the variables are never read */
        out = NULL;
        assert_int_equal(mapi_proxy_resolve(NULL, cases[i].base, &out, &err), 0);
        assert_null(out);
    }
    for (v = 0; v < sizeof vars / sizeof vars[0]; v++)
        unsetenv(vars[v]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encodes_ids_as_one_segment),
        cmocka_unit_test(base_url_rules),
        cmocka_unit_test(loopback_hosts),
        cmocka_unit_test(proxy_rules),
        cmocka_unit_test(proxy_from_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

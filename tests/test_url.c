/*
 * test_url.c -- the pure parts of the client, no network: percent-encoding,
 * base_url rules, Retry-After, backoff, limit details, media types, error
 * documents and messages, keeping the api key out, the endpoint table.
 */
#include <time.h>

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
        char *got = mapi_percent_encode(cases[i].in);
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

static void retry_after_values(void **state)
{
    time_t now = time(NULL);
    char date[64];
    time_t in10 = now + 10;
    (void)state;
    assert_true(mapi_retry_after_parse("1", now) == 1.0);
    assert_true(mapi_retry_after_parse(" 5 ", now) == 5.0);
    assert_true(mapi_retry_after_parse("0", now) == 0.0);
    assert_true(mapi_retry_after_parse("120", now) == 60.0);              /* capped */
    assert_true(mapi_retry_after_parse("99999999999999999999999", now) == 60.0);
    assert_true(mapi_retry_after_parse(NULL, now) == -1.0);
    assert_true(mapi_retry_after_parse("", now) == -1.0);
    assert_true(mapi_retry_after_parse("-1", now) == -1.0);
    assert_true(mapi_retry_after_parse("1.5", now) == -1.0);
    assert_true(mapi_retry_after_parse("soon", now) == -1.0);
    /* an HTTP date: the difference to now */
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&in10));
    assert_true(mapi_retry_after_parse(date, now) == 10.0);
    assert_true(mapi_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", now) == 0.0);
    assert_true(mapi_retry_after_parse("Fri, 31 Dec 2100 23:59:59 GMT", now) == 60.0);
}

static void backoff_bounds(void **state)
{
    uint64_t rng = mapi_rng_seed((uintptr_t)&rng);
    double lo = 1, hi = 0;
    int i;
    (void)state;
    /* caps: 0.5, 1, 2, 4, 8, 8, ... seconds; full jitter from 0 */
    assert_true(mapi_backoff_delay(0, 0.0) == 0.0);
    assert_true(mapi_backoff_delay(0, 0.5) == 0.25);
    assert_true(mapi_backoff_delay(1, 0.5) == 0.5);
    assert_true(mapi_backoff_delay(2, 0.5) == 1.0);
    assert_true(mapi_backoff_delay(3, 0.5) == 2.0);
    assert_true(mapi_backoff_delay(4, 0.5) == 4.0);
    assert_true(mapi_backoff_delay(5, 0.5) == 4.0);
    assert_true(mapi_backoff_delay(1000, 0.5) == 4.0);
    assert_true(mapi_backoff_delay(0, 0.9999) < 0.5);
    assert_true(mapi_backoff_delay(30, 0.9999) < 8.0);
    assert_true(mapi_backoff_delay(30, 0.9999) > 7.99);
    /* the default random source: [0, 1), spread out */
    for (i = 0; i < 100000; i++) {
        double u = mapi_random_default(&rng);
        assert_true(u >= 0.0 && u < 1.0);
        if (u < lo) lo = u;
        if (u > hi) hi = u;
    }
    assert_true(lo < 0.001 && hi > 0.999);
    assert_true(mapi_rng_seed(1) != mapi_rng_seed(2));
}

static void retryable_statuses(void **state)
{
    (void)state;
    assert_true(mapi_status_retryable(429));
    assert_true(mapi_status_retryable(502));
    assert_true(mapi_status_retryable(503));
    assert_true(mapi_status_retryable(504));
    assert_false(mapi_status_retryable(500));
    assert_false(mapi_status_retryable(422));
    assert_false(mapi_status_retryable(302));
}

static void limit_details(void **state)
{
    char *a, *mn, *mx;
    (void)state;
    assert_int_equal(mapi_limit_detail_parse("amount: 5.5, minimum: 10.0", &a, &mn, &mx), 0);
    assert_string_equal(a, "5.5");
    assert_string_equal(mn, "10.0");
    assert_null(mx);
    free(a); free(mn);
    assert_int_equal(mapi_limit_detail_parse("amount: 250000.0, maximum: 100000.0", &a, &mn, &mx), 0);
    assert_string_equal(a, "250000.0");
    assert_null(mn);
    assert_string_equal(mx, "100000.0");
    free(a); free(mx);
    /* exact text however long; any order; trailing words ignored */
    assert_int_equal(mapi_limit_detail_parse("minimum: 0.000000000000000001 USDT,amount:1e-19",
                                             &a, &mn, &mx), 0);
    assert_string_equal(a, "1e-19");
    assert_string_equal(mn, "0.000000000000000001");
    assert_null(mx);
    free(a); free(mn);
    assert_int_equal(mapi_limit_detail_parse("amount: 123456789012345678901234567890.10, maximum: -3",
                                             &a, NULL, &mx), 0);
    assert_string_equal(a, "123456789012345678901234567890.10");
    assert_string_equal(mx, "-3");
    free(a); free(mx);
    /* no numbers: nothing */
    assert_int_equal(mapi_limit_detail_parse("amount is too small", &a, &mn, &mx), 0);
    assert_null(a); assert_null(mn); assert_null(mx);
    assert_int_equal(mapi_limit_detail_parse("amount: abc, minimum: .5", &a, &mn, &mx), 0);
    assert_null(a); assert_null(mn); assert_null(mx);
    assert_int_equal(mapi_limit_detail_parse("", &a, &mn, &mx), 0);
    assert_null(a);
}

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

static void names(void **state)
{
    (void)state;
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_API), "api");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_HTTP), "http");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_TRANSPORT), "transport");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_DECODE), "decode");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_USAGE), "usage");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_TIMEOUT), "timeout");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_MEMORY), "memory");
    assert_string_equal(mapi_error_kind_name(MAPI_ERR_NONE), "");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_NOT_SENT), "not_sent");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_UNKNOWN), "unknown");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_REJECTED), "rejected");
    assert_string_equal(mapi_outcome_name(MAPI_OUTCOME_NONE), "");
}

/* Every 422 fixture read as an error document: the fields the client reports. */
static void error_documents_from_fixtures(void **state)
{
    static const struct {
        const char *file, *code, *title, *detail, *pointer, *amount, *minimum, *maximum;
    } cases[] = {
        {"confirm_payout.422.amount_below_minimum.json", "amount_below_minimum",
         "amount is below minimum", "amount: 5.5, minimum: 10.0", NULL, "5.5", "10.0", NULL},
        {"confirm_payout.422.amount_above_maximum.json", "amount_above_maximum",
         "amount is above maximum", "amount: 250000.0, maximum: 100000.0", NULL, "250000.0",
         NULL, "100000.0"},
        {"confirm_payout.422.invalid_address.json", "invalid_address", "Invalid address", NULL,
         NULL, NULL, NULL, NULL},
        {"confirm_payout.422.payout_invalid.json", "payout_invalid", "Invalid attribute",
         "Reference has already been taken", "/data/attributes/externalId", NULL, NULL, NULL},
        {"confirm_payout.422.account_has_insufficient_balance.json",
         "account_has_insufficient_balance", "account has insufficient balance", NULL, NULL,
         NULL, NULL, NULL},
        {"confirm_payout.422.address_has_high_risk_score.json", "address_has_high_risk_score",
         "Funds cannot be sent to this address. Please try another address.", NULL, NULL, NULL,
         NULL, NULL},
    };
    size_t i;
    (void)state;
#define EQ_OR_NULL(got, want) \
    do { if (want) assert_string_equal(got, want); else assert_null(got); } while (0)
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_doc *doc = tu_fixture_doc(cases[i].file);
        mapi_error e = MAPI_ERROR_INIT;
        assert_int_equal(mapi_error_from_errors(&e, mapi_doc_errors(doc)), 0);
        mapi_doc_free(doc);
        assert_int_equal(e.kind, MAPI_ERR_API);
        assert_int_equal(e.nerrors, 1);
        assert_int_equal(e.errors[0].status, 422);
        assert_string_equal(e.code, cases[i].code);
        assert_string_equal(e.errors[0].code, cases[i].code);
        assert_string_equal(e.title, cases[i].title);
        EQ_OR_NULL(e.detail, cases[i].detail);
        EQ_OR_NULL(e.pointer, cases[i].pointer);
        EQ_OR_NULL(e.errors[0].pointer, cases[i].pointer);
        EQ_OR_NULL(e.amount, cases[i].amount);
        EQ_OR_NULL(e.minimum, cases[i].minimum);
        EQ_OR_NULL(e.maximum, cases[i].maximum);
        mapi_error_clear(&e);
    }
#undef EQ_OR_NULL
}

/* errors[].status as a string; every entry kept; limits from a later entry. */
static void error_document_shapes(void **state)
{
    static const char body[] =
        "{\"errors\":["
        "{\"status\":\"409\",\"code\":\"first\",\"title\":\"First\"},"
        "{\"status\":\"x\",\"code\":\"amount_below_minimum\",\"detail\":\"amount: 1, minimum: 2.50\"},"
        "7,"
        "{\"status\":422,\"code\":\"amount_above_maximum\",\"detail\":\"amount: 9, maximum: 8\"}"
        "]}";
    mapi_doc *doc = NULL;
    mapi_error e = MAPI_ERROR_INIT;
    (void)state;
    assert_int_equal(mapi_doc_parse(body, sizeof body - 1, &doc, &e), 0);
    assert_int_equal(mapi_error_from_errors(&e, mapi_doc_errors(doc)), 0);
    mapi_doc_free(doc);
    assert_int_equal(e.nerrors, 4);
    assert_int_equal(e.errors[0].status, 409);
    assert_int_equal(e.errors[1].status, 0);
    assert_null(e.errors[2].code); /* not an object: an empty entry */
    assert_int_equal(e.errors[3].status, 422);
    assert_string_equal(e.code, "first");
    assert_string_equal(e.title, "First");
    assert_null(e.detail);
    assert_string_equal(e.amount, "1");     /* the first limit entry wins */
    assert_string_equal(e.minimum, "2.50");
    assert_null(e.maximum);
    mapi_error_clear(&e);
}

static void messages(void **state)
{
    mapi_error e = MAPI_ERROR_INIT;
    char long_detail[2000];
    (void)state;

    e.kind = MAPI_ERR_API;
    e.status = 422;
    e.code = mapi_strdup("amount_below_minimum");
    e.title = mapi_strdup("amount is below minimum");
    e.detail = mapi_strdup("amount: 5.5, minimum: 10.0");
    e.method = mapi_strdup("PUT");
    e.url = mapi_strdup("https://api.example/api/public/v1/payouts/6ecebf80-b210");
    assert_int_equal(mapi_error_message(&e), 0);
    assert_string_equal(e.message,
                        "merchantapi: 422 amount_below_minimum: amount is below minimum "
                        "(amount: 5.5, minimum: 10.0) [PUT /api/public/v1/payouts/6ecebf80-b210]");
    mapi_error_clear(&e);

    mapi_error_set(&e, MAPI_ERR_TRANSPORT, "%s", "Couldn't connect to server");
    e.detail = mapi_strdup("Failed to connect to 127.0.0.1 port 9 after 0 ms");
    e.method = mapi_strdup("GET");
    e.url = mapi_strdup("http://127.0.0.1:9/api/public/v1/channels/x?a=b");
    assert_int_equal(mapi_error_message(&e), 0);
    assert_string_equal(e.message,
                        "merchantapi: transport: Couldn't connect to server (Failed to connect "
                        "to 127.0.0.1 port 9 after 0 ms) [GET /api/public/v1/channels/x?a=b]");
    mapi_error_clear(&e);

    mapi_error_set(&e, MAPI_ERR_HTTP, "HTTP %d", 502);
    e.status = 502;
    e.method = mapi_strdup("GET");
    e.url = mapi_strdup("https://h/p");
    mapi_error_message(&e);
    assert_string_equal(e.message, "merchantapi: HTTP 502 [GET /p]");
    mapi_error_clear(&e);

    /* no code, no title */
    e.kind = MAPI_ERR_API;
    e.status = 500;
    mapi_error_message(&e);
    assert_string_equal(e.message, "merchantapi: 500 error");
    mapi_error_clear(&e);

    /* one line: control bytes become spaces; long server text is cut */
    memset(long_detail, 'x', sizeof long_detail - 1);
    long_detail[sizeof long_detail - 1] = '\0';
    e.kind = MAPI_ERR_API;
    e.code = mapi_strdup("c");
    e.title = mapi_strdup("line1\nline2\r\x1b[31m");
    e.detail = mapi_strdup(long_detail);
    mapi_error_message(&e);
    assert_null(strchr(e.message, '\n'));
    assert_null(strchr(e.message, '\r'));
    assert_null(strchr(e.message, '\x1b'));
    assert_true(tu_contains(e.message, "line1 line2"));
    assert_true(tu_contains(e.message, "...)"));
    assert_true(strlen(e.message) < 600);
    mapi_error_clear(&e);

    assert_int_equal(mapi_error_set(&e, MAPI_ERR_USAGE, "%s is empty", "payout_id"), -1);
    assert_string_equal(e.message, "merchantapi: usage: payout_id is empty");
    mapi_error_clear(&e);
}

static void clear_leaves_init_state(void **state)
{
    mapi_error e = MAPI_ERROR_INIT;
    (void)state;
    mapi_error_set(&e, MAPI_ERR_DECODE, "x");
    e.response = mapi_response_new();
    e.retry_after = 3;
    mapi_error_clear(&e);
    assert_int_equal(e.kind, MAPI_ERR_NONE);
    assert_null(e.title);
    assert_null(e.message);
    assert_null(e.response);
    assert_true(e.retry_after == -1.0);
    mapi_error_clear(&e);  /* twice is fine */
    mapi_error_clear(NULL);
}

static void redaction(void **state)
{
    const char *key = "sk_test_sandbox_4f9a2c";
    mapi_error e = MAPI_ERROR_INIT;
    (void)state;
    e.kind = MAPI_ERR_API;
    e.status = 401;
    e.title = mapi_strdup("bad key sk_test_sandbox_4f9a2c");
    e.detail = mapi_strdup("Bearer sk_test_sandbox_4f9a2csk_test_sandbox_4f9a2c!");
    e.errors = calloc(1, sizeof *e.errors);
    assert_non_null(e.errors);
    e.nerrors = 1;
    e.errors[0].detail = mapi_strdup("sk_test_sandbox_4f9a2c");
    mapi_error_redact(&e, key);
    tu_assert_no_key(&e, key);
    assert_string_equal(e.title, "bad key [REDACTED]");
    assert_string_equal(e.detail, "Bearer [REDACTED][REDACTED]!");
    assert_string_equal(e.errors[0].detail, "[REDACTED]");
    mapi_error_clear(&e);
}

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

/* The endpoint table: every row whole, found by name, and the decimal
   fields by type and attribute (bytes and lengths: no prefix matches). */
static void endpoint_table(void **state)
{
    const mapi_endpoint *e;
    size_t i;
    (void)state;
    for (i = 0; (e = mapi_endpoint_at(i)) != NULL; i++) {
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
    assert_int_equal(mapi_decimal_field("payouts", 7, "amount", 6), 1);
    assert_int_equal(mapi_decimal_field("payouts", 7, "amount_x", 6), 1); /* by length */
    assert_int_equal(mapi_decimal_field("payouts", 7, "amoun", 5), 0);
    assert_int_equal(mapi_decimal_field("payouts\0x", 9, "amount", 6), 0);
    assert_int_equal(mapi_decimal_field("payout", 6, "amount", 6), 0);
    assert_int_equal(mapi_decimal_field("channels", 8, "amount", 6), 0);
    assert_true(mapi_ascii_ieq("Content-TYPE", 12, "content-type", 12));
    assert_false(mapi_ascii_ieq("content", 7, "content-type", 12));
    assert_true(mapi_header_name_equal("X-A", "x-a"));
    assert_false(mapi_header_name_equal("X-A", "x-ab"));
    assert_false(mapi_header_name_equal("X-AB", "x-a"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encodes_ids_as_one_segment),
        cmocka_unit_test(base_url_rules),
        cmocka_unit_test(loopback_hosts),
        cmocka_unit_test(proxy_rules),
        cmocka_unit_test(proxy_from_environment),
        cmocka_unit_test(retry_after_values),
        cmocka_unit_test(backoff_bounds),
        cmocka_unit_test(retryable_statuses),
        cmocka_unit_test(limit_details),
        cmocka_unit_test(media_types),
        cmocka_unit_test(names),
        cmocka_unit_test(error_documents_from_fixtures),
        cmocka_unit_test(error_document_shapes),
        cmocka_unit_test(messages),
        cmocka_unit_test(clear_leaves_init_state),
        cmocka_unit_test(redaction),
        cmocka_unit_test(buffers),
        cmocka_unit_test(endpoint_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

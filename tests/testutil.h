/*
 * testutil.h -- helpers shared by the C tests (cmocka).
 *
 * Environment (set by scripts/test):
 *   MERCHANTAPI_BASE_URL   the sandbox, e.g. http://127.0.0.1:18089
 *   MERCHANTAPI_API_KEY    its key (sk_test_sandbox_4f9a2c)
 *   MERCHANTAPI_FIXTURES   the fixture documents (default fixtures/, the C tests run from the repository root)
 *
 * Everything here is static inline so each test file uses what it needs;
 * the assertion blocks (TU_OK, TU_ASSERT_ERROR, TU_ASSERT_STR_OR_NULL) are
 * macros, so that a failure names the test's own line.
 */
#ifndef MAPI_TESTUTIL_H
#define MAPI_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "merchantapi.h"
#include "drivers.h"

#define TU_DEFAULT_KEY "sk_test_sandbox_4f9a2c"

/* The fixtures' ids the sandbox answers for: the draft payout of
   confirm_payout.201.json, the partner_pay draft, the channel of
   get_channel.200.json. */
#define TU_PAYOUT_ID "6ecebf80-b210-413b-b396-df4760d142c5"
#define TU_PARTNER_ID "9a1d2f64-58c3-4b0e-a7d1-3f2c6b8e4a17"
#define TU_CHANNEL_ID "60e05bc0-4690-4985-a08a-8acf00e48294"

/* An environment variable, or dflt when unset or empty. */
static inline const char *tu_env(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

static inline const char *tu_base_url(void)
{
    return tu_env("MERCHANTAPI_BASE_URL", NULL);
}

static inline const char *tu_api_key(void)
{
    return tu_env("MERCHANTAPI_API_KEY", TU_DEFAULT_KEY);
}

/* Skips the current test when no sandbox is configured. */
#define TU_NEED_SANDBOX()                                                   \
    do {                                                                    \
        if (!tu_base_url()) {                                               \
            fprintf(stderr, "MERCHANTAPI_BASE_URL unset: no sandbox\n");    \
            skip();                                                         \
        }                                                                   \
    } while (0)

/* A whole file: the bytes (NUL-terminated, caller frees) and their count. */
static inline char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;

    if (!f)
        return NULL;
    do {
        if (cap - n < 4096) {
            char *p = realloc(buf, cap + 65536);
            if (!p) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
            cap += 65536;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* A fixture file by name ("confirm_payout.201.json"); fails the test when
   it cannot be read. */
static inline char *tu_fixture(const char *name, size_t *len)
{
    char path[1024];
    char *text;
    int n = snprintf(path, sizeof path, "%s/%s",
                     tu_env("MERCHANTAPI_FIXTURES", "fixtures"), name);

    assert_true(n > 0 && (size_t)n < sizeof path);
    text = tu_read_file(path, len);
    if (!text)
        fail_msg("cannot read fixture %s", path);
    return text;
}

/* A fixture parsed as a document (caller frees). */
static inline mapi_doc *tu_fixture_doc(const char *name)
{
    size_t len = 0;
    char *text = tu_fixture(name, &len);
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    int rc = mapi_doc_parse(text, len, &doc, &err);

    free(text);
    if (rc != 0)
        fail_msg("fixture %s: %s", name, err.message ? err.message : "?");
    return doc;
}

/* ---- sandbox control (plain libcurl, outside the library) ---- */

typedef struct tu_body {
    char buf[4096];
    size_t len;
} tu_body;

static inline size_t tu_collect(char *data, size_t size, size_t nmemb, void *userdata)
{
    tu_body *b = userdata;
    size_t n = size * nmemb;
    size_t room = sizeof b->buf - 1 - b->len;

    if (n > room)
        n = room;
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return size * nmemb;
}

/* method + path on the sandbox; returns the HTTP status, body in *out. */
static inline long tu_sandbox(const char *method, const char *path, tu_body *out)
{
    char url[1024];
    CURL *easy = curl_easy_init();
    long status = 0;
    CURLcode rc;

    assert_non_null(easy);
    assert_true((size_t)snprintf(url, sizeof url, "%s%s", tu_base_url(), path) < sizeof url);
    out->len = 0;
    out->buf[0] = '\0';
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "POST") == 0)
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, tu_collect);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT, 10L);
    rc = curl_easy_perform(easy);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(easy);
    if (rc != CURLE_OK)
        fail_msg("sandbox %s %s: %s", method, path, curl_easy_strerror(rc));
    return status;
}

/* POST /__sandbox/reset: every draft back to draft, counters to zero. */
static inline void tu_sandbox_reset(void)
{
    tu_body b;
    assert_int_equal(tu_sandbox("POST", "/__sandbox/reset", &b), 200);
}

/* A test's setup (cmocka_unit_test_setup): the sandbox reset, when there is one. */
static inline int tu_setup_reset(void **state)
{
    (void)state;
    if (tu_base_url())
        tu_sandbox_reset();
    return 0;
}

/* s percent-encoded by the core's rule (mapi_url_encode) into a new string
   (caller frees), NULL when out of memory. */
static inline char *tu_percent_encode(const char *s)
{
    mapi_buf b;

    mapi_buf_init(&b);
    mapi_url_encode(&b, s);
    return mapi_buf_take(&b);
}

/* GET /__sandbox/count?id=<id>: requests the sandbox saw for that id. */
static inline long tu_sandbox_count(const char *id)
{
    tu_body b;
    char path[512];
    char *enc = tu_percent_encode(id);
    const char *p;

    assert_non_null(enc);
    assert_true((size_t)snprintf(path, sizeof path, "/__sandbox/count?id=%s", enc) <
                sizeof path);
    free(enc);
    assert_int_equal(tu_sandbox("GET", path, &b), 200);
    p = strstr(b.buf, "\"count\":");
    assert_non_null(p);
    return strtol(p + 8, NULL, 10);
}

/* ---- clients ---- */

/* Records the waits the retry loop asks for, without waiting. */
typedef struct tu_sleeps {
    int calls;
    double waits[32];
} tu_sleeps;

static inline int tu_record_sleep(void *ctx, double seconds)
{
    tu_sleeps *s = ctx;
    if (s->calls < 32)
        s->waits[s->calls] = seconds;
    s->calls++;
    return 0;
}

/* A client on the sandbox: key NULL for none, base NULL for the sandbox's.
   When sleeps is given, retries wait through it (not for real). */
static inline mapi_client *tu_client_ex(const char *base, const char *key, int max_retries,
                                        double timeout, tu_sleeps *sleeps)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;

    mapi_config_init(&cfg);
    cfg.base_url = base ? base : tu_base_url();
    cfg.api_key = key;
    cfg.max_retries = max_retries;
    if (timeout > 0)
        cfg.timeout = timeout;
    c = mapi_client_new(&cfg, &err);
    if (!c)
        fail_msg("mapi_client_new: %s", err.message ? err.message : "?");
    if (sleeps) {
        memset(sleeps, 0, sizeof *sleeps);
        mapi_client_set_sleep(c, tu_record_sleep, sleeps);
    }
    return c;
}

static inline mapi_client *tu_client(void)
{
    return tu_client_ex(NULL, tu_api_key(), 2, 0, NULL);
}

/* tu_client() on the sandbox; skips the test when there is none. */
static inline mapi_client *tu_sandbox_client(void)
{
    TU_NEED_SANDBOX();
    return tu_client();
}

/* Call options with settling off: a confirm's own answer, without the read
   that settles an unknown outcome (tests/test_settle.c), so what is counted
   is the confirm's requests. */
static inline const mapi_call_opts *tu_no_settle(void)
{
    static const mapi_call_opts no_settle = {NULL, 0, 0.0, MAPI_SETTLE_OFF, NULL, NULL};
    return &no_settle;
}

/* ---- calls and their errors ---- */

/* A call that must succeed (returns 0); fails the test with the message of
   the mapi_error e (not a pointer) otherwise. */
#define TU_OK(call, e)                                                      \
    do {                                                                    \
        if ((call) != 0)                                                    \
            fail_msg("%s", (e).message ? (e).message : "?");                \
    } while (0)

/* The fields that say what a failed call was (e: a mapi_error, not a
   pointer): its kind, HTTP status (0: none), outcome, retryable, attempts. */
#define TU_ASSERT_ERROR(e, kind_, status_, outcome_, retryable_, attempts_) \
    do {                                                                    \
        assert_int_equal((e).kind, (kind_));                                \
        assert_int_equal((e).status, (status_));                            \
        assert_int_equal((e).outcome, (outcome_));                          \
        assert_int_equal((e).retryable, (retryable_));                      \
        assert_int_equal((e).attempts, (attempts_));                        \
    } while (0)

/* A string field as expected: equal to want, or NULL when want is. */
#define TU_ASSERT_STR_OR_NULL(got, want)                                    \
    do {                                                                    \
        if (want)                                                           \
            assert_string_equal((got), (want));                             \
        else                                                                \
            assert_null(got);                                               \
    } while (0)

/* ---- documents ---- */

/* A response as a transport hands it to the exchange (which takes it):
   status, the body (copied), and Content-Type ct, Retry-After retry_after
   and X-Request-Id request_id, each left out when NULL. */
static inline mapi_response *tu_response(int status, const char *ct, const char *retry_after,
                                         const char *request_id, const char *body)
{
    mapi_response *r = mapi_response_new();
    size_t n = strlen(body);

    assert_non_null(r);
    r->status = status;
    if (ct)
        assert_int_equal(mapi_response_add_header(r, "Content-Type", 12, ct, strlen(ct)), 0);
    if (retry_after)
        assert_int_equal(mapi_response_add_header(r, "Retry-After", 11, retry_after,
                                                  strlen(retry_after)), 0);
    if (request_id)
        assert_int_equal(mapi_response_add_header(r, "X-Request-Id", 12, request_id,
                                                  strlen(request_id)), 0);
    r->body = malloc(n + 1);
    assert_non_null(r->body);
    memcpy(r->body, body, n + 1);
    r->len = n;
    r->cap = n + 1;
    return r;
}

/* A string attribute of a resource ("" when not a string, so asserts read well). */
static inline const char *tu_attr_str(const mapi_resource *r, const char *name)
{
    const char *s = mapi_value_string(mapi_resource_attr(r, name), NULL);
    return s ? s : "";
}

/* The exact text of a non-integer number attribute ("" otherwise). */
static inline const char *tu_attr_num(const mapi_resource *r, const char *name)
{
    const char *s = mapi_value_number_text(mapi_resource_attr(r, name));
    return s ? s : "";
}

/* An integer member of an object value; fails the test when it is not one. */
static inline int64_t tu_int(const mapi_value *obj, const char *key)
{
    int64_t v = 0;
    if (mapi_value_int64(mapi_value_get(obj, key), &v) != 0)
        fail_msg("%s is not an integer", key);
    return v;
}

/* 1 when needle occurs in s (NULL s: 0). */
static inline int tu_contains(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

/* Fails when the key shows in any string field of err. */
static inline void tu_assert_no_key(const mapi_error *e, const char *key)
{
    size_t i;
    const char *fields[] = {e->code, e->title, e->detail, e->pointer, e->amount,
                            e->minimum, e->maximum, e->method, e->url, e->request_id,
                            e->message};
    for (i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (tu_contains(fields[i], key))
            fail_msg("api key in error field %zu: %s", i, fields[i]);
    for (i = 0; i < e->nerrors; i++) {
        assert_false(tu_contains(e->errors[i].code, key));
        assert_false(tu_contains(e->errors[i].title, key));
        assert_false(tu_contains(e->errors[i].detail, key));
        assert_false(tu_contains(e->errors[i].pointer, key));
    }
}

#endif /* MAPI_TESTUTIL_H */

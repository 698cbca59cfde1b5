/*
 * test_oom.c -- out of memory anywhere, never a crash: the Nth allocation
 * fails (N = 1, 2, 3, ... until a call makes fewer than N), through client
 * creation and each endpoint against the sandbox, and again while mapping
 * error documents.  Every run must end in success or a clean failure (kind
 * MEMORY, or what libcurl makes of its own failed allocations),
 * with err and the client freed.  TU_OOM_TRACE=1 prints every run.  For
 * leaks, run it under valgrind with --soname-synonyms=somalloc=nouserintercepts
 * (otherwise valgrind replaces the malloc below and nothing is injected).
 *
 * malloc, calloc and realloc are replaced here (glibc's __libc_* do the
 * work).  The allocations made by our code (linked into this binary, the
 * JSON reader src/json_parse.cpp included), by libcurl and by the C++
 * runtime's operator new (simdjson's parser buffers: it asks for them with
 * new (std::nothrow) and reports MEMALLOC) are failed; libc's own are not.
 * Under a sanitizer, which owns malloc, the test is skipped.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>

#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define TU_NO_INTERPOSE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_NO_INTERPOSE 1
#endif
#endif

#if !defined(TU_NO_INTERPOSE) && defined(__GLIBC__)

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

/* Test-only state: the allocation to fail (0: none) and the count so far. */
static volatile long fail_at, seen;

/* Built with -fvisibility=hidden like the library: these must be exported
   so that libcurl and the C++ runtime allocate through them too. */
#define TU_EXPORT __attribute__((visibility("default")))

/* Load bases of this binary, of libcurl and of the C++ runtime (operator
   new), found once before injecting. */
static void *base_self, *base_curl, *base_cxx;

static void *base_of(const void *addr)
{
    Dl_info info;
    return dladdr(addr, &info) ? info.dli_fbase : NULL;
}

/* 1 when this allocation (from caller) is the one to fail. */
static int fail_now(const void *caller)
{
    void *base;

    if (fail_at <= 0)
        return 0;
    base = base_of(caller);
    if (base != base_self && base != base_curl && base != base_cxx)
        return 0; /* libc internals: not counted, never failed */
    return ++seen == fail_at;
}

TU_EXPORT void *malloc(size_t n)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

TU_EXPORT void *calloc(size_t n, size_t size)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

TU_EXPORT void *realloc(void *p, size_t n)
{
    return fail_now(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

typedef int (*call_fn)(mapi_client *c, mapi_doc **out, mapi_error *err);

/* A header of the call's own, with the client's (run_once): merged and
   sent by libcurl and by the multi handle. */
static const mapi_header_field call_header[] = {{"Idempotency-Key", "oom-1"}};
static const mapi_call_opts call_opts = {call_header, 1, 0.0, MAPI_SETTLE_DEFAULT, NULL, NULL};

static int call_confirm(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_confirm_payout_ex(c, "6ecebf80-b210-413b-b396-df4760d142c5", &call_opts, out,
                                  err);
}

static int call_confirm_422(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_confirm_payout(c, "draft-amount-below-minimum", out, err);
}

/* A confirm answered 502, settled by a read that shows it "expired" (the
   error keeps the payout, its status in the message) / still a draft. */
static int call_confirm_read_expired(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_confirm_payout(c, "fault-read-expired", out, err);
}

static int call_confirm_read_draft(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_confirm_payout(c, "fault-read-draft", out, err);
}

static int call_channel(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_get_channel(c, "60e05bc0-4690-4985-a08a-8acf00e48294", out, err);
}

static int call_html_502(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_get_channel(c, "fault-html-502", out, err);
}

static int call_wrong_type(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_get_channel(c, "fault-wrong-type", out, err);
}

static int call_list(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    mapi_page_params p = {"created_at", "desc", 2, 5};
    return mapi_list_addresses(c, "acct-22", &p, out, err);
}

static int call_request_post(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    static const char body[] = "{\"data\":{\"type\":\"x\",\"attributes\":{\"amount\":\"250.10\"}}}";
    return mapi_request(c, "POST", "/api/public/v1/echo/a%2Fb?q=1", body, sizeof body - 1, out,
                        err);
}

static int call_request_no_content(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_request(c, "DELETE", "/api/public/v1/echo/no-content", NULL, 0, out, err);
}

static int call_get_payout(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    return mapi_get_payout(c, "6ecebf80-b210-413b-b396-df4760d142c5", out, err);
}

/* Three pages at once on their event loop (pages.c): page 1 is the
   result, the others are freed; the first failed page's error is the call's. */
static int call_pages(mapi_client *c, mapi_doc **out, mapi_error *err)
{
    mapi_page_params p = {NULL, NULL, 0, 4};
    mapi_doc *docs[3];
    mapi_error errs[3] = {MAPI_ERROR_INIT, MAPI_ERROR_INIT, MAPI_ERROR_INIT};
    int rc = mapi_list_addresses_pages_ex(c, "acct-22", &p, 1, 3, 3, &call_opts, docs, errs);
    size_t i;

    *out = NULL;
    for (i = 0; i < 3; i++) {
        if (rc == 0 && i == 0)
            *out = docs[0];
        else
            mapi_doc_free(docs[i]);
        if (errs[i].kind != MAPI_ERR_NONE && err->kind == MAPI_ERR_NONE) {
            *err = errs[i]; /* moved */
            errs[i] = (mapi_error)MAPI_ERROR_INIT;
        }
        mapi_error_clear(&errs[i]);
    }
    if (rc != 0 && docs[0] && !*out)
        assert_true(err->kind != MAPI_ERR_NONE);
    return rc;
}

/* An observer that reads every string of the record it is handed: what
   the exchange lends it must still live, whatever allocation failed. */
static void touch_record(void *ctx, mapi_attempt_event ev, const mapi_attempt_info *in)
{
    size_t *n = ctx;
    const char *s[] = {in->method, in->url, in->request_id, in->outcome, in->code, in->title,
                       in->error_type, in->settled_by};
    size_t i;

    (void)ev;
    for (i = 0; i < sizeof s / sizeof s[0]; i++)
        *n += s[i] ? strlen(s[i]) : 0;
}

static int no_sleep(void *ctx, double seconds)
{
    (void)ctx;
    (void)seconds;
    return 0;
}

/* Runs client_new + call + frees with allocation n failing; returns the
   number of allocations the run made (so the caller knows when to stop). */
static long run_once(call_fn call, long n, int *failures)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;
    mapi_doc *doc = NULL;
    long made;
    size_t read = 0;

    static const mapi_header_field client_header[] = {{"X-Trace", "oom"}};

    mapi_config_init(&cfg);
    cfg.base_url = tu_base_url();
    cfg.api_key = tu_api_key();
    cfg.max_retries = 1;
    cfg.headers = client_header;
    cfg.nheaders = 1;
    seen = 0;
    fail_at = n;
    c = mapi_client_new(&cfg, &err);
    if (c) {
        mapi_client_set_sleep(c, no_sleep, NULL);
        mapi_client_set_observer(c, touch_record, &read);
        if (call(c, &doc, &err) == 0) {
            assert_non_null(doc);
            assert_int_equal(err.kind, MAPI_ERR_NONE);
        } else {
            assert_null(doc);
            assert_true(err.kind != MAPI_ERR_NONE);
            if (err.kind != MAPI_ERR_MEMORY)
                assert_non_null(err.message);
            (*failures)++;
        }
        mapi_doc_free(doc);
        mapi_client_free(c);
    } else {
        assert_true(err.kind == MAPI_ERR_MEMORY || err.kind == MAPI_ERR_TRANSPORT);
        (*failures)++;
    }
    made = seen;
    fail_at = 0;
    mapi_error_clear(&err);
    return made;
}

static void every_allocation_may_fail(void **state)
{
    static const struct { const char *name; call_fn fn; } calls[] = {
        {"confirm", call_confirm},
        {"confirm 422", call_confirm_422},
        {"confirm, read expired", call_confirm_read_expired},
        {"confirm, read draft", call_confirm_read_draft},
        {"get_channel", call_channel},
        {"html 502 (retried)", call_html_502},
        {"wrong type", call_wrong_type},
        {"list_addresses", call_list},
        {"request POST", call_request_post},
        {"request 204", call_request_no_content},
        {"get_payout", call_get_payout},
        {"list_addresses_pages", call_pages},
    };
    size_t i;
    (void)state;
    TU_NEED_SANDBOX();
    base_self = base_of((const void *)&base_self);
    base_curl = base_of(curl_version()); /* a string in libcurl's data */
    /* operator new(size_t, const std::nothrow_t &): what simdjson allocates with */
    base_cxx = base_of(dlsym(RTLD_DEFAULT, "_ZnwmRKSt9nothrow_t"));
    assert_non_null(base_self);
    assert_non_null(base_curl);
    assert_non_null(base_cxx);
    for (i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        long n, made = 0;
        int failures = 0;
        for (n = 1; n < 100000; n++) {
            tu_sandbox_reset();
            made = run_once(calls[i].fn, n, &failures);
            if (getenv("TU_OOM_TRACE"))
                fprintf(stderr, "  n=%ld made=%ld failures=%d\n", n, made, failures);
            if (made < n)
                break; /* the run made fewer allocations than n: all covered */
        }
        if (n == 1) {
            /* malloc is not ours (valgrind replaced it): nothing was injected */
            fprintf(stderr, "%s: allocation failures not injected\n", calls[i].name);
            continue;
        }
        fprintf(stderr, "%s: %ld allocations, each failed once; %d runs failed cleanly\n",
                calls[i].name, n - 1, failures);
        assert_true(failures > 0);
    }
}

#else

static void every_allocation_may_fail(void **state)
{
    (void)state;
    skip(); /* a sanitizer owns malloc here */
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_allocation_may_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

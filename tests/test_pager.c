/*
 * test_pager.c -- src/pager.c, the C pager (mapi_pager_new / _next / _free)
 * against the sandbox: every address of acct-25000 once, in order, as many
 * as meta.total, with the requests the walk plans (page 1 alone, then
 * `concurrency` at once); the stop rules (a short page, page * per_page >=
 * total, max_pages) and the checks of src/page_walk.c (an id twice, a
 * short page before the last); a page failing for good mid-walk ends it
 * with that page's error, never with a silently short list.
 */
#include "testutil.h"

/* The id of address i of account number acct (22, 25000). */
static const char *address_id(char *buf, int acct, long i)
{
    snprintf(buf, 64, "%08d-0000-4000-8000-%012ld", acct, i);
    return buf;
}

/* Walks id with per_page and concurrency to its end: asserts each page's
   addresses are the account's next ones, in order (so each once); returns
   what mapi_pager_next returned last, the pages in *pages, the walk's
   counts in *counts, the error in *err. */
static int walk(mapi_client *c, const char *id, int acct, long per_page, size_t concurrency,
                long max_pages, long *pages, mapi_pager_counts *counts, mapi_error *err)
{
    mapi_pager_opts o = MAPI_PAGER_OPTS_INIT;
    mapi_pager *pg;
    mapi_doc *page;
    long seen = 0;
    char want[64];
    int r;

    o.params.per_page = per_page;
    o.concurrency = concurrency;
    o.max_pages = max_pages;
    pg = mapi_pager_new(c, id, &o, err);
    assert_non_null(pg);
    *pages = 0;
    while ((r = mapi_pager_next(pg, &page, err)) == 1) {
        size_t i, n = mapi_doc_data_count(page);
        assert_non_null(page);
        (*pages)++;
        assert_int_equal(tu_int(mapi_doc_meta(page), "page"), *pages);
        for (i = 0; i < n; i++) {
            const char *got = mapi_resource_id(mapi_doc_data(page, i));
            if (++seen > 1 || acct != 22) /* acct-22's first is the fixture's */
                assert_string_equal(got, address_id(want, acct, seen));
        }
        mapi_doc_free(page);
    }
    assert_null(page);
    mapi_pager_get_counts(pg, counts);
    assert_int_equal(counts->received, seen);
    assert_int_equal(counts->pages, *pages);
    if (r < 0) { /* sticky: never a 0 that would read as the end */
        mapi_error again = MAPI_ERROR_INIT;
        assert_int_equal(mapi_pager_next(pg, &page, &again), -1);
        assert_null(page);
        assert_int_equal(again.kind, MAPI_ERR_USAGE);
        mapi_error_clear(&again);
    }
    mapi_pager_free(pg);
    return r;
}

/* acct-25000 at 1,000 a page, 8 at once: 25 pages, 25,000 addresses once
   each, as many as meta.total, in 25 requests (page 1 alone, then three
   batches of 8) and no request for a page past the last. */
static void every_address_once(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_pager_counts counts;
    mapi_client *c;
    long pages;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(walk(c, "acct-25000", 25000, 1000, 8, 0, &pages, &counts, &err), 0);
    assert_int_equal(err.kind, MAPI_ERR_NONE);
    assert_int_equal(pages, 25);
    assert_int_equal(counts.received, 25000);
    assert_int_equal(counts.announced, 25000);
    assert_false(counts.total_changed);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("acct-25000"), 25);
}

/* The stop rules, one page at a time: a short last page (22 at 5 a page: 5
   requests), page * per_page >= total (22 at 11: 2 requests, no empty page
   asked for), max_pages. */
static void stop_rules(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_pager_counts counts;
    mapi_client *c;
    long pages;
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(walk(c, "acct-22", 22, 5, 1, 0, &pages, &counts, &err), 0);
    assert_int_equal(pages, 5);
    assert_int_equal(counts.received, 22);
    assert_int_equal(tu_sandbox_count("acct-22"), 5);
    assert_int_equal(walk(c, "acct-22", 22, 11, 4, 0, &pages, &counts, &err), 0);
    assert_int_equal(pages, 2);
    assert_int_equal(tu_sandbox_count("acct-22"), 5 + 2);
    assert_int_equal(walk(c, "acct-22", 22, 5, 4, 3, &pages, &counts, &err), 0);
    assert_int_equal(pages, 3);
    assert_int_equal(counts.received, 15);
    assert_int_equal(counts.announced, 22); /* fewer came than were announced: max_pages */
    assert_int_equal(tu_sandbox_count("acct-22"), 5 + 2 + 3);
    assert_int_equal(walk(c, "acct-empty", 0, 5, 4, 0, &pages, &counts, &err), 0);
    assert_int_equal(pages, 0); /* an empty page is not handed out */
    assert_int_equal(counts.announced, 0);
    mapi_client_free(c);
}

/* Page 7 of 25 answers 500 for good: pages 1-6 handed out, then its error
   (every field of the list call's), then -1 again: 6,000 of 25,000, never a
   walk that looks whole. */
static void page_failing_mid_walk(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_pager_counts counts;
    mapi_client *c;
    long pages;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 0, 0, NULL);
    assert_int_equal(walk(c, "fault-page-7-500", 25000, 1000, 4, 0, &pages, &counts, &err), -1);
    assert_int_equal(pages, 6);
    assert_int_equal(counts.received, 6000);
    assert_int_equal(counts.announced, 25000);
    assert_int_equal(err.kind, MAPI_ERR_API);
    assert_int_equal(err.status, 500);
    assert_string_equal(err.code, "sandbox_page_fault");
    assert_string_equal(err.method, "GET");
    assert_true(tu_contains(err.url, "page=7&per_page=1000"));
    assert_int_equal(err.attempts, 1);
    assert_non_null(err.message);
    tu_assert_no_key(&err, tu_api_key());
    mapi_error_clear(&err);
    mapi_client_free(c);
    /* page 1, pages 2-5, pages 6-9 (8 and 9 dropped once 7 failed): nothing after */
    assert_true(tu_sandbox_count("fault-page-7-500") <= 9);
}

/* The same page failing after retries: its error is the retried call's. */
static void page_retried_then_failing(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_pager_counts counts;
    mapi_client *c;
    tu_sleeps sleeps;
    long pages;
    (void)state;
    TU_NEED_SANDBOX();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sleeps);
    assert_int_equal(walk(c, "fault-page-3-503", 25000, 1000, 2, 0, &pages, &counts, &err), -1);
    assert_int_equal(pages, 2);
    assert_int_equal(err.kind, MAPI_ERR_API);
    assert_int_equal(err.status, 503);
    assert_int_equal(err.attempts, 3);
    assert_int_equal(sleeps.calls, 2);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

/* The checks of the walk: a server that ignores `page` (page 3 repeats
   page 1's ids) and a short page before the last end with DECODE naming
   the page, after the pages before it. */
static void pages_that_lie(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_pager_counts counts;
    mapi_client *c;
    long pages;
    char want[128], id[64];
    (void)state;
    c = tu_sandbox_client();
    assert_int_equal(walk(c, "fault-pages-alternate", 25000, 10, 4, 0, &pages, &counts, &err),
                     -1);
    assert_int_equal(pages, 2);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    snprintf(want, sizeof want, "page 3: id %s again, already yielded on page 1",
             address_id(id, 25000, 1));
    assert_string_equal(err.title, want);
    mapi_error_clear(&err);
    assert_int_equal(walk(c, "fault-pages-short", 22, 5, 1, 0, &pages, &counts, &err), -1);
    assert_int_equal(pages, 1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "page 2: 2 items, but meta.total 22 and 5 per page "
                                   "announce 5: a short page before the last");
    mapi_error_clear(&err);
    mapi_client_free(c);
}

static void usage_errors(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_pager_opts o = MAPI_PAGER_OPTS_INIT;
    mapi_client *c;
    mapi_doc *page = (mapi_doc *)&err;
    (void)state;
    c = tu_sandbox_client();
    assert_null(mapi_pager_new(NULL, "acct-22", NULL, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_null(mapi_pager_new(c, "", NULL, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    o.max_pages = -1;
    assert_null(mapi_pager_new(c, "acct-22", &o, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    o = (mapi_pager_opts)MAPI_PAGER_OPTS_INIT;
    o.params.order_type = "sideways";
    assert_null(mapi_pager_new(c, "acct-22", &o, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(mapi_pager_next(NULL, &page, &err), -1);
    assert_null(page);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    mapi_pager_free(NULL);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("acct-22"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(every_address_once, tu_setup_reset),
        cmocka_unit_test_setup(stop_rules, tu_setup_reset),
        cmocka_unit_test_setup(page_failing_mid_walk, tu_setup_reset),
        cmocka_unit_test_setup(page_retried_then_failing, tu_setup_reset),
        cmocka_unit_test_setup(pages_that_lie, tu_setup_reset),
        cmocka_unit_test_setup(usage_errors, tu_setup_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

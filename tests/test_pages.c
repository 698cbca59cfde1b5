/*
 * test_pages.c -- src/pages.c, mapi_list_addresses_pages against the sandbox: several
 * pages at once on the batch's event loop, in page order, each page exactly what
 * mapi_list_addresses gives; the first failed page k keeps pages 1..k-1 and
 * its error (retried by the GET rules), nothing after it; usage errors; a
 * retry round waits until the soonest retry, so each page waits its own wait.
 */
#include <time.h>

#include "testutil.h"

#define NPAGES 12

/* The id of acct-25000's address i, written into buf (64 bytes). */
static const char *address_id(char *buf, int i)
{
    snprintf(buf, 64, "00025000-0000-4000-8000-%012d", i);
    return buf;
}

static void pages_in_order(void **state)
{
    mapi_client *c;
    mapi_doc *docs[NPAGES];
    mapi_error errs[NPAGES];
    mapi_page_params p = {NULL, "asc", 7 /* ignored */, 50};
    char id[64];
    size_t i, j;
    (void)state;
    TU_NEED_SANDBOX();
    memset(errs, 0, sizeof errs);
    c = tu_client();
    assert_int_equal(mapi_list_addresses_pages(c, "acct-25000", &p, 3, NPAGES, 5, docs, errs), 0);
    for (i = 0; i < NPAGES; i++) {
        const mapi_value *meta = mapi_doc_meta(docs[i]);
        assert_non_null(docs[i]);
        assert_int_equal(errs[i].kind, MAPI_ERR_NONE);
        assert_int_equal(tu_int(meta, "page"), (int64_t)(3 + i));
        assert_int_equal(tu_int(meta, "per_page"), 50);
        assert_int_equal(mapi_doc_data_count(docs[i]), 50);
        for (j = 0; j < 50; j++) {
            const mapi_resource *r = mapi_doc_data(docs[i], j);
            const mapi_resource *net = mapi_resource_related(docs[i], r, "network", 0);
            assert_string_equal(mapi_resource_id(r), address_id(id, (int)(100 + i * 50 + j + 1)));
            assert_non_null(net);
            assert_false(mapi_resource_is_stub(net));
        }
        mapi_doc_free(docs[i]);
    }
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("acct-25000"), NPAGES);
}

static void first_failed_page_stops(void **state)
{
    mapi_client *c;
    mapi_doc *docs[NPAGES];
    mapi_error errs[NPAGES];
    mapi_page_params p = {NULL, NULL, 0, 10};
    char id[64];
    size_t i;
    (void)state;
    TU_NEED_SANDBOX();
    memset(errs, 0, sizeof errs);
    c = tu_client_ex(NULL, tu_api_key(), 0, 0, NULL);
    assert_int_equal(
        mapi_list_addresses_pages(c, "fault-page-5-500", &p, 1, NPAGES, 4, docs, errs), -1);
    for (i = 0; i < 4; i++) {
        assert_non_null(docs[i]);
        assert_int_equal(errs[i].kind, MAPI_ERR_NONE);
        assert_string_equal(mapi_resource_id(mapi_doc_data(docs[i], 0)),
                            address_id(id, (int)(i * 10 + 1)));
        mapi_doc_free(docs[i]);
    }
    assert_null(docs[4]);
    assert_int_equal(errs[4].kind, MAPI_ERR_API);
    assert_int_equal(errs[4].status, 500);
    assert_string_equal(errs[4].code, "sandbox_page_fault");
    assert_string_equal(errs[4].method, "GET");
    assert_true(tu_contains(errs[4].url, "page=5&per_page=10"));
    assert_int_equal(errs[4].attempts, 1);
    assert_non_null(errs[4].message);
    tu_assert_no_key(&errs[4], tu_api_key());
    for (i = 5; i < NPAGES; i++) {
        assert_null(docs[i]);
        assert_int_equal(errs[i].kind, MAPI_ERR_NONE);
    }
    for (i = 0; i < NPAGES; i++)
        mapi_error_clear(&errs[i]);
    mapi_client_free(c);
    /* pages 1-4 and 5 in flight with 6-8 at most; nothing after the failure
       was started once it was known */
    assert_true(tu_sandbox_count("fault-page-5-500") <= 8);
}

static void failed_page_is_retried(void **state)
{
    mapi_client *c;
    mapi_doc *docs[4];
    mapi_error errs[4];
    mapi_page_params p = {NULL, NULL, 0, 10};
    tu_sleeps sleeps;
    (void)state;
    TU_NEED_SANDBOX();
    memset(errs, 0, sizeof errs);
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sleeps);
    assert_int_equal(
        mapi_list_addresses_pages(c, "fault-page-2-503", &p, 1, 4, 4, docs, errs), -1);
    assert_non_null(docs[0]);
    mapi_doc_free(docs[0]);
    assert_null(docs[1]);
    assert_int_equal(errs[1].kind, MAPI_ERR_API);
    assert_int_equal(errs[1].status, 503);
    assert_true(errs[1].retryable);
    assert_int_equal(errs[1].attempts, 3); /* 1 + max_retries */
    assert_int_equal(sleeps.calls, 2);     /* one wait per retry round */
    assert_true(sleeps.waits[0] >= 0 && sleeps.waits[0] <= 0.5);
    assert_true(sleeps.waits[1] >= 0 && sleeps.waits[1] <= 1.0);
    assert_null(docs[2]);
    assert_null(docs[3]);
    mapi_error_clear(&errs[1]);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("fault-page-2-503"), 4 + 2);
}

/* ---- each page waits its own wait ---- */

#define PHASES 8

/* A walk's log: the sleep hook's waits, and the pages each attempt asked
   for by phase (the sleeps before it). */
typedef struct walk_log {
    int sleeps;
    double waits[PHASES];
    int sent[PHASES][5]; /* [phase][page]: requests for pages 1..4 */
    int other;           /* requests for no page 1..4 or beyond PHASES */
} walk_log;

/* The sleep hook: records the wait, then sleeps it for real (the deadline
   runs on the monotonic clock). */
static int log_sleep(void *ctx, double seconds)
{
    walk_log *w = ctx;
    struct timespec ts;

    if (w->sleeps < PHASES)
        w->waits[w->sleeps] = seconds;
    w->sleeps++;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0)
        ;
    return 0;
}

/* The observer: each request counted under its page and phase. */
static void log_attempt(void *ctx, mapi_attempt_event event, const mapi_attempt_info *info)
{
    walk_log *w = ctx;
    const char *q = strstr(info->url, "?page=");
    long page = q ? strtol(q + 6, NULL, 10) : 0;

    if (event != MAPI_ATTEMPT_REQUEST)
        return;
    if (page >= 1 && page <= 4 && w->sleeps < PHASES)
        w->sent[w->sleeps][page]++;
    else
        w->other++;
}

/* The pages sent in phase k, in page order and once per request ("1234"),
   written into buf (16 bytes). */
static const char *phase_pages(const walk_log *w, int k, char *buf)
{
    size_t n = 0;
    int p, i;

    for (p = 1; p <= 4; p++)
        for (i = 0; i < w->sent[k][p] && n < 15; i++)
            buf[n++] = (char)('0' + p);
    buf[n] = '\0';
    return buf;
}

/* Pages 1-4 of per_page 5 of `id` (a fault-pages-retry id) at once, logged
   into *w; asserts every page came back, acct-22's, without an error. */
static void walk_logged(const char *id, double deadline, walk_log *w)
{
    mapi_client *c;
    mapi_doc *docs[4];
    mapi_error errs[4];
    mapi_page_params p = {NULL, NULL, 0, 5};
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    char want[64];
    size_t i;

    memset(errs, 0, sizeof errs);
    memset(w, 0, sizeof *w);
    opts.deadline = deadline;
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, NULL);
    mapi_client_set_sleep(c, log_sleep, w);
    mapi_client_set_observer(c, log_attempt, w);
    assert_int_equal(mapi_list_addresses_pages_ex(c, id, &p, 1, 4, 4, &opts, docs, errs), 0);
    for (i = 0; i < 4; i++) {
        assert_int_equal(errs[i].kind, MAPI_ERR_NONE);
        assert_non_null(docs[i]);
        assert_int_equal(tu_int(mapi_doc_meta(docs[i]), "page"), (int64_t)(i + 1));
        assert_int_equal(mapi_doc_data_count(docs[i]), 5);
        snprintf(want, sizeof want, "00000022-0000-4000-8000-%012d", (int)(i * 5 + 5));
        assert_string_equal(mapi_resource_id(mapi_doc_data(docs[i], 4)), want);
        mapi_doc_free(docs[i]);
    }
    mapi_client_free(c);
    assert_int_equal(w->other, 0);
}

/* Requests the sandbox counted for page k of id. */
static long page_count(const char *id, int k)
{
    char counter[128];

    snprintf(counter, sizeof counter, "%s/page%d", id, k);
    return tu_sandbox_count(counter);
}

/* Page 2 asks for 1 s, page 3 for 3 s: the round sleeps 1 s and sends page
   2 alone, then the 2 s left of page 3's wait and sends page 3 (not 3 s
   once, then both). */
static void each_page_waits_its_own_wait(void **state)
{
    const char *id = "fault-pages-retry-2.1-3.3";
    walk_log w;
    char buf[16];
    (void)state;
    TU_NEED_SANDBOX();
    walk_logged(id, 0, &w);
    assert_string_equal(phase_pages(&w, 0, buf), "1234");
    assert_string_equal(phase_pages(&w, 1, buf), "2");
    assert_string_equal(phase_pages(&w, 2, buf), "3");
    assert_int_equal(w.sleeps, 2);
    assert_true(w.waits[0] > 0.5 && w.waits[0] <= 1.0);  /* page 2's */
    assert_true(w.waits[1] > 1.5 && w.waits[1] <= 2.1);  /* the rest of page 3's */
    assert_int_equal(page_count(id, 1), 1);
    assert_int_equal(page_count(id, 2), 2);
    assert_int_equal(page_count(id, 3), 2);
    assert_int_equal(page_count(id, 4), 1);
}

/* Under a 3.8 s deadline, page 2 asks for 1 s twice and page 3 for 3 s:
   each page's own waits end before it (page 2 at 2 s, page 3 at 3 s), so
   every page comes back.  The longest wait first (3 s, then page 2's 1 s
   from 3 s on) would outlast page 2's deadline and fail it. */
static void longest_wait_would_outlast_a_deadline(void **state)
{
    const char *id = "fault-pages-retry-2.1-2.1-3.3";
    walk_log w;
    char buf[16];
    int k;
    (void)state;
    TU_NEED_SANDBOX();
    walk_logged(id, 3.8, &w);
    assert_string_equal(phase_pages(&w, 0, buf), "1234");
    assert_string_equal(phase_pages(&w, 1, buf), "2");
    assert_string_equal(phase_pages(&w, 2, buf), "2");
    assert_string_equal(phase_pages(&w, 3, buf), "3");
    assert_int_equal(w.sleeps, 3);
    for (k = 0; k < 3; k++) /* page 2's 1 s, again, then the rest of page 3's */
        assert_true(w.waits[k] > 0.5 && w.waits[k] <= 1.1);
    assert_int_equal(page_count(id, 2), 3);
    assert_int_equal(page_count(id, 3), 2);
}

static void usage_errors(void **state)
{
    mapi_client *c;
    mapi_doc *docs[2];
    mapi_error errs[2];
    (void)state;
    TU_NEED_SANDBOX();
    memset(errs, 0, sizeof errs);
    c = tu_client();
    assert_int_equal(mapi_list_addresses_pages(c, "acct-22", NULL, 1, 0, 4, docs, errs), 0);
    assert_int_equal(mapi_list_addresses_pages(c, "acct-22", NULL, 0, 2, 4, docs, errs), -1);
    assert_int_equal(errs[0].kind, MAPI_ERR_USAGE);
    assert_null(docs[0]);
    assert_int_equal(mapi_list_addresses_pages(c, "", NULL, 1, 2, 4, docs, errs), -1);
    assert_int_equal(errs[0].kind, MAPI_ERR_USAGE);
    assert_int_equal(mapi_list_addresses_pages(NULL, "acct-22", NULL, 1, 2, 4, docs, errs), -1);
    assert_int_equal(errs[0].kind, MAPI_ERR_USAGE);
    mapi_error_clear(&errs[0]);
    mapi_client_free(c);
    c = tu_client_ex(NULL, NULL, 0, 0, NULL); /* no api key */
    assert_int_equal(mapi_list_addresses_pages(c, "acct-22", NULL, 1, 2, 4, docs, errs), -1);
    assert_int_equal(errs[0].kind, MAPI_ERR_USAGE);
    mapi_error_clear(&errs[0]);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("acct-22"), 0);
}

static void single_calls_still_work_after(void **state)
{
    mapi_client *c;
    mapi_doc *docs[3], *doc = NULL;
    mapi_error errs[3], err = MAPI_ERROR_INIT;
    mapi_page_params p = {NULL, NULL, 2, 5};
    size_t i;
    (void)state;
    TU_NEED_SANDBOX();
    memset(errs, 0, sizeof errs);
    c = tu_client();
    /* the easy handle and the loop's transfers share connections: both work in turn */
    assert_int_equal(mapi_list_addresses(c, "acct-22", &p, &doc, &err), 0);
    mapi_doc_free(doc);
    assert_int_equal(mapi_list_addresses_pages(c, "acct-22", &p, 1, 3, 3, docs, errs), 0);
    for (i = 0; i < 3; i++)
        mapi_doc_free(docs[i]);
    assert_int_equal(mapi_list_addresses(c, "acct-22", &p, &doc, &err), 0);
    assert_int_equal(tu_int(mapi_doc_meta(doc), "page"), 2);
    mapi_doc_free(doc);
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count("acct-22"), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(pages_in_order, tu_setup_reset),
        cmocka_unit_test_setup(first_failed_page_stops, tu_setup_reset),
        cmocka_unit_test_setup(failed_page_is_retried, tu_setup_reset),
        cmocka_unit_test_setup(each_page_waits_its_own_wait, tu_setup_reset),
        cmocka_unit_test_setup(longest_wait_would_outlast_a_deadline, tu_setup_reset),
        cmocka_unit_test_setup(usage_errors, tu_setup_reset),
        cmocka_unit_test_setup(single_calls_still_work_after, tu_setup_reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

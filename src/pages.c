/*
 * pages.c -- several pages of a list at once (contract, "Lists and pages":
 * the pager's `concurrency`): which page starts when, the retry rounds, and
 * which pages are kept.  No libcurl here: the transfers run on the client's
 * multi (http.c).
 *
 * Each page is one transfer of the call mapi_list_addresses builds, so it
 * sends exactly what that sends, sharing the client's connections, DNS cache
 * and TLS sessions; over HTTP/2 the transfers multiplex on one
 * connection.  Every answer is mapped by mapping.c like a single call's, and
 * retried by the same rules (GET: transport errors, 429, 502-504, up to
 * max_retries, backoff or Retry-After, each page within its deadline).
 * Retries run in rounds: once the transfers of a round are done, the
 * client's sleep hook waits the longest wait any page asked for, then the
 * pages to retry run again; a page whose deadline that wait would outlast
 * fails at once instead (exchange.c's rule, mapi_exchange_fits).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* The longest the multi waits for activity before looking again (seconds). */
#define POLL_SECONDS 1.0

typedef enum job_state {
    JOB_WAITING = 0, /* not started in this round */
    JOB_RUNNING,
    JOB_DONE,        /* docs[i] set */
    JOB_RETRY,       /* failed, may be retried after wait */
    JOB_FAILED,      /* failed for good: errs[i] set */
    JOB_SKIPPED      /* after a failed page: never fetched, or dropped */
} job_state;

typedef struct job {
    size_t i;                 /* page first_page + i */
    job_state state;
    double wait;              /* JOB_RETRY: seconds before the next attempt */
    mapi_exchange *x;         /* the call across its attempts (exchange.c) */
    mapi_http_transfer *t;    /* JOB_RUNNING */
    mapi_error e;             /* the last attempt's error */
} job;

typedef struct batch {
    mapi_client *client;
    mapi_client_parts parts;
    mapi_http_multi *multi;
    job *jobs;
    size_t count;
    size_t stop;              /* index of the first page failed for good, or count */
    size_t concurrency;
    mapi_doc **docs;
    mapi_error *errs;
} batch;

/* The page failed for good with j->e (already finished as the call's
   error): it goes to errs[i], and no page after it is started. */
static void fail_job(batch *b, job *j)
{
    mapi_error_clear(&b->errs[j->i]);
    b->errs[j->i] = j->e;
    j->e = (mapi_error)MAPI_ERROR_INIT;
    j->state = JOB_FAILED;
    if (j->i < b->stop)
        b->stop = j->i;
}

/* The attempt begun last ended: res (taken), or NULL with j->e filled the
   way mapi_http_perform fills it.  The exchange decides, as for one call. */
static void attempt_done(batch *b, job *j, mapi_response *res)
{
    mapi_doc *doc = NULL;
    double wait = 0;
    mapi_step step = mapi_exchange_end(j->x, res, &j->e, &doc, &wait);

    mapi_client_observe(b->client, MAPI_ATTEMPT_RESPONSE, mapi_exchange_info(j->x));
    switch (step) {
    case MAPI_STEP_DONE:
        mapi_error_clear(&j->e);
        b->docs[j->i] = doc;
        j->state = JOB_DONE;
        break;
    case MAPI_STEP_RETRY:
        j->wait = wait;
        j->state = JOB_RETRY;
        break;
    case MAPI_STEP_FAILED:
    default:
        fail_job(b, j);
        break;
    }
}

/* Starts j's next attempt on the multi handle. */
static void start_job(batch *b, job *j)
{
    mapi_http_request req;
    int http1 = mapi_http_resend_refused(&j->e); /* the last attempt's error, if any */

    mapi_error_clear(&j->e);
    mapi_client_observe(b->client, MAPI_ATTEMPT_REQUEST, mapi_exchange_begin(j->x));
    mapi_exchange_http_request(j->x, http1, &req);
    j->t = mapi_http_transfer_new(b->parts.http, &req, j, &j->e);
    if (j->t && mapi_http_multi_add(b->multi, j->t, &j->e) < 0) {
        mapi_http_transfer_free(j->t);
        j->t = NULL;
    }
    if (!j->t) {
        /* MEMORY, an option libcurl refused, or the multi failed */
        attempt_done(b, j, NULL);
        return;
    }
    j->state = JOB_RUNNING;
}

/* Stops j's transfer if it still runs, and frees it. */
static void detach_job(job *j)
{
    mapi_http_transfer_free(j->t);
    j->t = NULL;
}

/* Takes every finished transfer off the multi; returns how many. */
static size_t collect(batch *b)
{
    mapi_http_transfer *t;
    size_t n = 0;

    while ((t = mapi_http_multi_done(b->multi)) != NULL) {
        job *j = mapi_http_transfer_data(t);
        mapi_response *res = NULL;

        if (j->state != JOB_RUNNING || j->t != t) { /* never expected */
            mapi_http_transfer_free(t);
            continue;
        }
        if (mapi_http_transfer_result(t, &res, &j->e) < 0)
            res = NULL;
        detach_job(j);
        attempt_done(b, j, res);
        n++;
    }
    return n;
}

/* The multi itself failed: every running page fails with that. */
static void abort_running(batch *b, size_t *running)
{
    size_t i;

    for (i = 0; i < b->count; i++) {
        job *j = &b->jobs[i];
        if (j->state != JOB_RUNNING)
            continue;
        detach_job(j);
        mapi_http_multi_failed(b->multi, &j->e);
        attempt_done(b, j, NULL);
        if (j->state == JOB_RETRY) {
            mapi_exchange_fail(j->x, &j->e); /* the multi failed: no retry */
            fail_job(b, j);
        }
    }
    *running = 0;
}

/* Once a page has failed for good, the pages after it that are still in
   flight will be dropped anyway: stop them now instead of waiting. */
static void drop_after_stop(batch *b, size_t *running)
{
    size_t i;

    for (i = b->stop + 1; i < b->count; i++) {
        job *j = &b->jobs[i];
        if (j->state != JOB_RUNNING)
            continue;
        detach_job(j);
        j->state = JOB_SKIPPED;
        (*running)--;
    }
}

/* Runs every JOB_WAITING page (in page order, at most concurrency at once)
   until each is DONE, RETRY, FAILED or SKIPPED. */
static void run_round(batch *b)
{
    size_t next = 0, running = 0;

    for (;;) {
        while (running < b->concurrency && next < b->count) {
            job *j = &b->jobs[next++];
            if (j->state != JOB_WAITING)
                continue;
            if (j->i > b->stop) {
                j->state = JOB_SKIPPED;
                continue;
            }
            start_job(b, j);
            if (j->state == JOB_RUNNING)
                running++;
        }
        if (running == 0 && next >= b->count)
            return;
        if (running == 0)
            continue;
        if (mapi_http_multi_perform(b->multi) < 0) {
            abort_running(b, &running);
            continue;
        }
        running -= collect(b);
        if (b->stop < b->count)
            drop_after_stop(b, &running);
        if (running > 0 && mapi_http_multi_wait(b->multi, POLL_SECONDS) < 0)
            abort_running(b, &running);
    }
}

/* After a round: 1 when pages wait for a retry (sleeping first), else 0. */
static int prepare_retries(batch *b)
{
    size_t i, n = 0;
    double wait = 0;

    for (i = 0; i < b->count; i++) {
        job *j = &b->jobs[i];
        if (j->state != JOB_RETRY)
            continue;
        if (j->i > b->stop) {
            j->state = JOB_SKIPPED;
            continue;
        }
        if (j->wait > wait)
            wait = j->wait;
        n++;
    }
    if (n == 0)
        return 0;
    /* A page whose deadline ends before the round's wait does is not retried;
       then the round is looked at again (a shorter wait, pages after it dropped). */
    for (i = 0, n = 0; i < b->count; i++) {
        job *j = &b->jobs[i];
        if (j->state == JOB_RETRY && !mapi_exchange_fits(j->x, wait)) {
            mapi_exchange_expire(j->x, &j->e);
            fail_job(b, j);
            n++;
        }
    }
    if (n > 0)
        return prepare_retries(b);
    if (b->parts.sleep(b->parts.sleep_ctx, wait) != 0) {
        /* the hook said stop: each page fails with its last attempt's error */
        for (i = 0; i < b->count; i++)
            if (b->jobs[i].state == JOB_RETRY) {
                mapi_exchange_fail(b->jobs[i].x, &b->jobs[i].e);
                fail_job(b, &b->jobs[i]);
            }
        return 0;
    }
    for (i = 0; i < b->count; i++)
        if (b->jobs[i].state == JOB_RETRY)
            b->jobs[i].state = JOB_WAITING;
    return 1;
}

int mapi_list_addresses_pages(mapi_client *client, const char *account_id,
                              const mapi_page_params *base, long first_page, size_t count,
                              size_t concurrency, mapi_doc **docs, mapi_error *errs)
{
    return mapi_list_addresses_pages_ex(client, account_id, base, first_page, count,
                                        concurrency, NULL, docs, errs);
}

int mapi_list_addresses_pages_ex(mapi_client *client, const char *account_id,
                                 const mapi_page_params *base, long first_page, size_t count,
                                 size_t concurrency, const mapi_call_opts *opts,
                                 mapi_doc **docs, mapi_error *errs)
{
    batch b;
    mapi_page_params p;
    size_t i;
    int rc = 0;

    if (!docs || !errs || count == 0)
        return count == 0 ? 0 : (errs ? mapi_error_set(errs, MAPI_ERR_USAGE,
                                                       "docs and errs are required") : -1);
    for (i = 0; i < count; i++) {
        docs[i] = NULL;
        mapi_error_clear(&errs[i]);
    }
    if (!client)
        return mapi_error_set(&errs[0], MAPI_ERR_USAGE, "client is NULL");
    if (first_page < 1 || count > (size_t)(LONG_MAX - first_page))
        return mapi_error_set(&errs[0], MAPI_ERR_USAGE,
                              "first_page must be >= 1 and the pages must stay in range");
    memset(&p, 0, sizeof p);
    if (base)
        p = *base;
    p.page = first_page;
    /* the argument checks of a single call, once for all pages */
    {
        mapi_call k;
        if (mapi_call_list_addresses(client, account_id, &p, opts, &k, &errs[0]) < 0)
            return -1;
        mapi_call_release(&k);
    }

    memset(&b, 0, sizeof b);
    b.client = client;
    mapi_client_parts_get(client, &b.parts);
    b.count = count;
    b.stop = count;
    b.concurrency = mapi_pages_concurrency(concurrency);
    b.docs = docs;
    b.errs = errs;
    b.multi = mapi_http_multi_of(b.parts.http, &errs[0]);
    if (!b.multi)
        return -1;
    b.jobs = calloc(count, sizeof *b.jobs);
    if (!b.jobs)
        return mapi_error_oom(&errs[0]);
    for (i = 0; i < count; i++) {
        b.jobs[i].i = i;
        b.jobs[i].e = (mapi_error)MAPI_ERROR_INIT;
        b.jobs[i].state = JOB_SKIPPED; /* until its call is built */
    }
    for (i = 0; i < count; i++) {
        job *j = &b.jobs[i];
        mapi_call k;
        p.page = first_page + (long)i;
        if (mapi_call_list_addresses(client, account_id, &p, opts, &k, &j->e) == 0) {
            j->x = mapi_client_prepare(client, &k, &j->e); /* copies the call */
            mapi_call_release(&k);
        }
        if (!j->x) {
            fail_job(&b, j); /* out of memory: this page fails, later ones are not sent */
            break;
        }
        j->state = JOB_WAITING;
    }

    do
        run_round(&b);
    while (prepare_retries(&b));

    /* Only the pages before the first failed one are kept. */
    for (i = 0; i < count; i++) {
        job *j = &b.jobs[i];
        if (i > b.stop) {
            mapi_doc_free(docs[i]);
            docs[i] = NULL;
            mapi_error_clear(&errs[i]);
        }
        mapi_error_clear(&j->e);
        mapi_exchange_free(j->x);
    }
    if (b.stop < count)
        rc = -1;
    free(b.jobs);
    return rc;
}

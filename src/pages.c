/*
 * pages.c -- several pages of a list at once (contract, "Lists and pages":
 * the pager's `concurrency`): which page starts when, the retry rounds, and
 * which pages are kept.  No libcurl here: each attempt of a page is a call
 * of an event loop (loop.c, mapi_loop_attempt) private to the batch, stepped
 * here until the round's pages are over -- the one machinery that runs
 * calls at once.  The batch's loop runs on the client's own multi
 * (mapi_http_pool): the connections of its blocking calls, kept from one
 * batch to the next; the loop itself lives as long as the batch.
 *
 * Each page is one attempt at a time of the call mapi_list_addresses builds,
 * so it sends exactly what that sends; over HTTP/2 the transfers multiplex on
 * one connection.  Every answer is decided by the page's exchange like a
 * single call's (the loop hands back its decision), and retried by the same
 * rules (GET: transport errors, 429, 502-504, up to
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

/* The longest a step of the loop waits for activity (seconds). */
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
    mapi_loop_op *op;         /* JOB_RUNNING: its attempt on the batch's loop */
    mapi_error e;             /* the last attempt's error */
    struct batch *b;
} job;

typedef struct batch {
    mapi_client *client;
    mapi_client_parts parts;
    mapi_loop *loop;          /* the batch's own (loop.c) */
    job *jobs;
    size_t count;
    size_t running;           /* jobs JOB_RUNNING */
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

/* The loop's report of j's attempt (mapi_loop_attempt_fn): the exchange
   has decided, as for one call. */
static void attempt_done(void *ctx, mapi_step step, mapi_doc *doc, double wait, mapi_error *e)
{
    job *j = ctx;
    batch *b = j->b;

    j->op = NULL;
    b->running--;
    mapi_error_clear(&j->e);
    j->e = *e; /* moved */
    *e = (mapi_error)MAPI_ERROR_INIT;
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
        mapi_doc_free(doc); /* never given with a failure */
        fail_job(b, j);
        break;
    }
}

/* Starts j's next attempt on the batch's loop (it begins at the next step). */
static void start_job(batch *b, job *j)
{
    int http1 = mapi_http_resend_refused(&j->e); /* the last attempt's error, if any */

    mapi_error_clear(&j->e);
    if (mapi_loop_attempt(b->loop, b->client, j->x, http1, attempt_done, j, &j->op, &j->e) < 0) {
        /* MEMORY: no attempt began */
        mapi_exchange_fail(j->x, &j->e);
        fail_job(b, j);
        return;
    }
    j->state = JOB_RUNNING;
    b->running++;
}

/* Once a page has failed for good, the pages after it that are still in
   flight will be dropped anyway: stop them now instead of waiting. */
static void drop_after_stop(batch *b)
{
    size_t i;

    for (i = b->stop + 1; i < b->count; i++) {
        job *j = &b->jobs[i];
        if (j->state != JOB_RUNNING)
            continue;
        mapi_loop_cancel(b->loop, j->op);
        j->op = NULL;
        j->state = JOB_SKIPPED;
        b->running--;
    }
}

/* Runs every JOB_WAITING page (in page order, at most concurrency at once)
   until each is DONE, RETRY, FAILED or SKIPPED. */
static void run_round(batch *b)
{
    size_t next = 0;

    for (;;) {
        while (b->running < b->concurrency && next < b->count) {
            job *j = &b->jobs[next++];
            if (j->state != JOB_WAITING)
                continue;
            if (j->i > b->stop) {
                j->state = JOB_SKIPPED;
                continue;
            }
            start_job(b, j);
        }
        if (b->running == 0 && next >= b->count)
            return;
        if (b->running == 0)
            continue;
        /* begins the new attempts, moves every transfer on, reports the
           attempts that ended (attempt_done) */
        (void)mapi_loop_step(b->loop, POLL_SECONDS);
        if (b->stop < b->count)
            drop_after_stop(b);
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
    const mapi_endpoint *list = &mapi_endpoints[MAPI_EP_LIST_ADDRESSES];
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
    if (first_page < 1 || count > (size_t)(LONG_MAX - first_page)) { /* C and Lua alike */
        mapi_error_set(&errs[0], MAPI_ERR_USAGE,
                       "first_page must be >= 1 and the pages must stay in range");
        return mapi_call_not_sent(list->method, &errs[0]);
    }
    memset(&p, 0, sizeof p);
    if (base)
        p = *base;
    p.page = first_page;
    /* the argument checks of a single call, once for all pages */
    {
        mapi_call k;
        if (mapi_call_endpoint(client, list, account_id, &p, opts, &k, &errs[0]) < 0)
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
    {
        /* on the client's own multi: the connections of its blocking calls */
        mapi_http_loop *pool = mapi_http_pool(b.parts.http, &errs[0]);
        b.loop = pool ? mapi_loop_over(pool, &errs[0]) : NULL;
    }
    if (!b.loop)
        return -1;
    b.jobs = calloc(count, sizeof *b.jobs);
    if (!b.jobs) {
        mapi_loop_free(b.loop);
        return mapi_error_oom(&errs[0]);
    }
    for (i = 0; i < count; i++) {
        b.jobs[i].b = &b;
        b.jobs[i].i = i;
        b.jobs[i].e = (mapi_error)MAPI_ERROR_INIT;
        b.jobs[i].state = JOB_SKIPPED; /* until its call is built */
    }
    for (i = 0; i < count; i++) {
        job *j = &b.jobs[i];
        mapi_call k;
        p.page = first_page + (long)i;
        if (mapi_call_endpoint(client, list, account_id, &p, opts, &k, &j->e) == 0) {
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
    mapi_loop_free(b.loop); /* no call left on it */
    free(b.jobs);
    return rc;
}

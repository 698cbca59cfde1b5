/*
 * pages.c -- several pages of a list at once (contract, "Lists and pages":
 * the pager's `concurrency`).
 *
 * The page batch is the one policy of every driver (this file's libcurl
 * driver; through src/lua_pages.c a loop task, light threads, a custom
 * transport): the checks once for all pages, each page's call built once
 * (calls.c) as an exchange, page order within the window, no page started
 * after one failed for good, the pages in flight after it dropped, the
 * pages before it kept, its error returned.  A page ends as its exchange
 * decides, as one call would, so the answer is the same on every driver.
 *
 * The libcurl driver runs each attempt as a call of an event loop of its
 * own (loop.c, mapi_loop_attempt) on the client's own loop
 * (mapi_http_client_loop: the client's connections for its pages; HTTP/2
 * multiplexes them).  Its retries
 * run in rounds: once a round's transfers are done, the client's sleep hook
 * waits until the soonest retry a page asked for, then the pages whose wait
 * is over run again.  Each page so waits its own wait (its backoff or
 * Retry-After, within its deadline: exchange.c's rules), as on the other
 * drivers, which wait for each page apart: only when the waits end differs.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drivers.h"
#include "http.h"

/* The longest a step of the loop waits for activity (seconds). */
#define POLL_SECONDS 1.0

typedef enum page_state {
    PAGE_WAITING = 0, /* to start (again, when handed[i]: a retry round) */
    PAGE_FLIGHT,
    PAGE_RESTING,     /* the libcurl driver: waits for the next round */
    PAGE_DONE,        /* docs[i] set */
    PAGE_FAILED,      /* failed for good: errs[i] set */
    PAGE_DROPPED      /* after a failed page: its end is not kept */
} page_state;

struct mapi_page_batch {
    mapi_client *client;
    size_t count;
    size_t window;         /* pages in flight at most */
    size_t running;        /* pages PAGE_FLIGHT */
    size_t stop;           /* index of the first page failed for good, or count */
    size_t from;           /* no page PAGE_WAITING before it */
    page_state *state;
    unsigned char *handed; /* 1: the driver owns x[i] */
    mapi_exchange **x;     /* page first_page + i's exchange */
    mapi_doc **docs;
    mapi_error *errs;
};

/* ------------------------------------------------------------------------ */
/* The page batch                                                           */
/* ------------------------------------------------------------------------ */

/* Page i failed for good with *e (moved): no page after it starts. */
static void page_failed(mapi_page_batch *b, size_t i, mapi_error *e)
{
    mapi_error_clear(&b->errs[i]);
    b->errs[i] = *e;
    *e = (mapi_error)MAPI_ERROR_INIT;
    b->state[i] = PAGE_FAILED;
    if (i < b->stop)
        b->stop = i;
}

mapi_page_batch *mapi_page_batch_new(mapi_client *client, const char *account_id,
                                     const mapi_page_params *base, long first_page,
                                     size_t count, size_t concurrency,
                                     const mapi_call_opts *opts, mapi_error *err)
{
    const mapi_endpoint *list = &mapi_endpoints[MAPI_EP_LIST_ADDRESSES];
    mapi_page_params p;
    mapi_page_batch *b;
    mapi_call k;
    size_t i, per = sizeof *b->errs + sizeof *b->docs + sizeof *b->x + sizeof *b->state +
                    sizeof *b->handed;

    if (!client) {
        mapi_error_set(err, MAPI_ERR_USAGE, "client is NULL");
        return NULL;
    }
    if (count == 0 || first_page < 1 || count > (size_t)(LONG_MAX - first_page)) {
        mapi_error_set(err, MAPI_ERR_USAGE,
                       "first_page must be >= 1 and the pages must stay in range");
        mapi_error_tag_not_sent(list->method, err);
        return NULL;
    }
    memset(&p, 0, sizeof p);
    if (base)
        p = *base;
    p.page = first_page;
    /* the argument checks of a single call, once for all pages */
    if (mapi_call_endpoint(client, list, account_id, &p, opts, &k, err) < 0)
        return NULL;
    mapi_call_release(&k);

    /* one block: the errors first (the widest alignment), then the pointers */
    b = count > (SIZE_MAX - sizeof *b) / per ? NULL : calloc(1, sizeof *b + count * per);
    if (!b) {
        mapi_error_oom(err);
        return NULL;
    }
    b->errs = (mapi_error *)(void *)(b + 1);
    b->docs = (mapi_doc **)(void *)(b->errs + count);
    b->x = (mapi_exchange **)(void *)(b->docs + count);
    b->state = (page_state *)(void *)(b->x + count);
    b->handed = (unsigned char *)(void *)(b->state + count);
    b->client = client;
    b->count = b->stop = count;
    b->window = mapi_pages_concurrency(concurrency);
    for (i = 0; i < count; i++)
        b->errs[i] = (mapi_error)MAPI_ERROR_INIT;
    for (i = 0; i < count; i++) {
        mapi_error e = MAPI_ERROR_INIT;
        p.page = first_page + (long)i;
        if (mapi_call_endpoint(client, list, account_id, &p, opts, &k, &e) == 0) {
            b->x[i] = mapi_client_prepare(client, &k, &e); /* copies the call */
            mapi_call_release(&k);
        }
        if (!b->x[i]) {
            page_failed(b, i, &e); /* out of memory: this page fails, later ones never start */
            break;
        }
    }
    return b;
}

void mapi_page_batch_free(mapi_page_batch *b)
{
    size_t i;

    if (!b)
        return;
    for (i = 0; i < b->count; i++) {
        if (!b->handed[i])
            mapi_exchange_free(b->x[i]);
        mapi_doc_free(b->docs[i]);
        mapi_error_clear(&b->errs[i]);
    }
    free(b);
}

long mapi_page_batch_next(mapi_page_batch *b, mapi_exchange **x)
{
    size_t i;

    *x = NULL;
    for (i = b->from; b->running < b->window && i < b->stop; i++) {
        if (b->state[i] != PAGE_WAITING)
            continue;
        if (!b->handed[i])
            *x = b->x[i];
        b->handed[i] = 1;
        b->state[i] = PAGE_FLIGHT;
        b->running++;
        b->from = i + 1;
        return (long)i;
    }
    return -1;
}

long mapi_page_batch_find(const mapi_page_batch *b, const mapi_exchange *x)
{
    size_t i;

    for (i = 0; x && i < b->count; i++)
        if (b->x[i] == x && b->state[i] == PAGE_FLIGHT)
            return (long)i;
    return -1;
}

void mapi_page_batch_ended(mapi_page_batch *b, size_t i, mapi_doc *doc, mapi_error *e)
{
    if (b->state[i] == PAGE_FLIGHT)
        b->running--;
    if (b->handed[i])
        b->x[i] = NULL; /* the driver's, and over: never found again */
    if (i > b->stop) { /* after a failed page: not kept */
        mapi_doc_free(doc);
        if (e)
            mapi_error_clear(e);
        b->state[i] = PAGE_DROPPED;
    } else if (doc) {
        b->docs[i] = doc;
        b->state[i] = PAGE_DONE;
    } else {
        page_failed(b, i, e);
    }
}

/* A page in flight whose end would not be kept (after a failed one), now
   dropped: the driver stops it; -1 when none.  (Other drivers let such a
   page end: mapi_page_batch_ended drops it then.) */
static long page_drop(mapi_page_batch *b)
{
    size_t i;

    for (i = b->stop + 1; i < b->count; i++)
        if (b->state[i] == PAGE_FLIGHT) {
            b->state[i] = PAGE_DROPPED;
            b->running--;
            return (long)i;
        }
    return -1;
}

size_t mapi_page_batch_kept(const mapi_page_batch *b, mapi_error **err)
{
    size_t k = 0;

    while (k < b->count && b->state[k] == PAGE_DONE)
        k++;
    *err = k < b->count && b->state[k] == PAGE_FAILED ? &b->errs[k] : NULL;
    return k;
}

mapi_doc **mapi_page_batch_doc(mapi_page_batch *b, size_t k)
{
    return &b->docs[k];
}

/* ------------------------------------------------------------------------ */
/* The libcurl driver: attempts on an event loop of its own, retry rounds   */
/* ------------------------------------------------------------------------ */

typedef struct job {
    size_t i;            /* page first_page + i */
    double ready;        /* PAGE_RESTING: when its next attempt may begin (monotonic s) */
    double wait;         /* seconds until then, as the last round saw it */
    mapi_exchange *x;    /* the page's exchange, the driver's once started */
    mapi_loop_op *op;    /* PAGE_FLIGHT: its attempt on the driver's loop */
    mapi_error e;        /* the last attempt's error */
    struct driver *d;
} job;

typedef struct driver {
    mapi_page_batch *b;
    mapi_client_parts parts;
    mapi_loop *loop;
    job *jobs;
} driver;

/* The loop's report of j's attempt (mapi_loop_attempt_fn): the exchange
   has decided, as for one call. */
static void attempt_done(void *ctx, mapi_step step, mapi_doc *doc, double wait, mapi_error *e)
{
    job *j = ctx;
    mapi_page_batch *b = j->d->b;

    j->op = NULL;
    mapi_error_clear(&j->e);
    j->e = *e; /* moved */
    *e = (mapi_error)MAPI_ERROR_INIT;
    if (step == MAPI_STEP_RETRY) {
        j->ready = mapi_monotonic_seconds() + wait; /* out of the window until then */
        b->running--;
        b->state[j->i] = j->i > b->stop ? PAGE_DROPPED : PAGE_RESTING;
        return;
    }
    if (step == MAPI_STEP_DONE)
        mapi_error_clear(&j->e);
    else
        mapi_doc_free(doc); /* never given with a failure */
    mapi_page_batch_ended(b, j->i, step == MAPI_STEP_DONE ? doc : NULL, &j->e);
}

/* Starts page i's next attempt on the loop (it begins at the next step). */
static void start_job(driver *d, job *j)
{
    mapi_error_clear(&j->e); /* the last attempt's, if any */
    if (mapi_loop_attempt(d->loop, d->b->client, j->x, attempt_done, j, &j->op, &j->e) < 0) {
        /* MEMORY: no attempt began */
        mapi_exchange_fail(j->x, &j->e);
        mapi_page_batch_ended(d->b, j->i, NULL, &j->e);
    }
}

/* Runs the pages the batch starts until none is in flight. */
static void run_round(driver *d)
{
    mapi_exchange *x;
    long i;

    for (;;) {
        while ((i = mapi_page_batch_next(d->b, &x)) >= 0) {
            if (x)
                d->jobs[i].x = x;
            start_job(d, &d->jobs[i]);
        }
        if (d->b->running == 0)
            return;
        /* begins the new attempts, moves every transfer on, reports the
           attempts that ended (attempt_done) */
        (void)mapi_loop_step(d->loop, POLL_SECONDS);
        while ((i = page_drop(d->b)) >= 0) { /* their end would not be kept */
            mapi_loop_cancel(d->loop, d->jobs[i].op);
            d->jobs[i].op = NULL;
        }
    }
}

/* After a round: 1 when pages wait for a retry (sleeping first), else 0.
   The sleep lasts until the soonest retry; the pages whose wait is then
   over start again, the others wait on: each page waits its own wait, as
   on every other driver.  A page whose retry no longer begins before its
   deadline (the round's transfers took the time) fails. */
static int prepare_retries(driver *d)
{
    mapi_page_batch *b = d->b;
    double now = mapi_monotonic_seconds(), wait = -1;
    size_t i;
    int stop;

    for (i = 0; i < b->count; i++) {
        job *j = &d->jobs[i];
        if (b->state[i] != PAGE_RESTING)
            continue;
        j->wait = j->ready > now ? j->ready - now : 0;
        if (i > b->stop) {
            b->state[i] = PAGE_DROPPED;
        } else if (!mapi_exchange_fits(j->x, j->wait)) {
            mapi_exchange_expire(j->x, &j->e);
            mapi_page_batch_ended(b, i, NULL, &j->e);
        } else if (wait < 0 || j->wait < wait) {
            wait = j->wait;
        }
    }
    if (wait < 0)
        return 0;
    stop = d->parts.sleep(d->parts.sleep_ctx, wait) != 0; /* 1: the hook said stop */
    for (i = 0; i < b->count; i++) {
        job *j = &d->jobs[i];
        if (b->state[i] != PAGE_RESTING)
            continue;
        if (stop) { /* each page fails with its last attempt's error */
            mapi_exchange_fail(j->x, &j->e);
            mapi_page_batch_ended(b, i, NULL, &j->e);
        } else if (j->wait <= wait) {
            b->state[i] = PAGE_WAITING;
            b->from = 0;
        }
    }
    return !stop;
}

int mapi_page_batch_run(mapi_page_batch *b, mapi_error *err)
{
    driver d;
    size_t i;

    memset(&d, 0, sizeof d);
    d.b = b;
    mapi_client_parts_get(b->client, &d.parts);
    {
        /* on the client's own multi: the connections of its blocking calls */
        mapi_http_loop *pool = mapi_http_client_loop(d.parts.http, err);
        d.loop = pool ? mapi_loop_over(pool, err) : NULL;
    }
    if (!d.loop)
        return -1;
    d.jobs = calloc(b->count, sizeof *d.jobs);
    if (!d.jobs) {
        mapi_loop_free(d.loop);
        return mapi_error_oom(err);
    }
    for (i = 0; i < b->count; i++) {
        d.jobs[i].d = &d;
        d.jobs[i].i = i;
        d.jobs[i].e = (mapi_error)MAPI_ERROR_INIT;
    }
    do
        run_round(&d);
    while (prepare_retries(&d));
    mapi_loop_free(d.loop); /* no call left on it */
    for (i = 0; i < b->count; i++) {
        mapi_error_clear(&d.jobs[i].e);
        mapi_exchange_free(d.jobs[i].x);
    }
    free(d.jobs);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The C API                                                                */
/* ------------------------------------------------------------------------ */

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
    mapi_page_batch *b;
    mapi_error *e;
    size_t i, k;

    if (!docs || !errs || count == 0)
        return count == 0 ? 0 : (errs ? mapi_error_set(errs, MAPI_ERR_USAGE,
                                                       "docs and errs are required") : -1);
    for (i = 0; i < count; i++) {
        docs[i] = NULL;
        mapi_error_clear(&errs[i]);
    }
    b = mapi_page_batch_new(client, account_id, base, first_page, count, concurrency, opts,
                            &errs[0]);
    if (!b || mapi_page_batch_run(b, &errs[0]) < 0) {
        mapi_page_batch_free(b);
        return -1;
    }
    k = mapi_page_batch_kept(b, &e);
    for (i = 0; i < k; i++) {
        docs[i] = *mapi_page_batch_doc(b, i);
        *mapi_page_batch_doc(b, i) = NULL;
    }
    if (e) {
        errs[k] = *e; /* moved */
        *e = (mapi_error)MAPI_ERROR_INIT;
    }
    mapi_page_batch_free(b);
    return k == count ? 0 : -1;
}

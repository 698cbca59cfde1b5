/*
 * loop.c -- calls that never block: the driver of exchanges for a host's
 * event loop (merchantapi.h, mapi_loop).  Every call on a loop is one
 * exchange (exchange.c), built once (calls.c); this file only moves it on:
 * an attempt is begun as a transfer of the loop's HTTP side (http_loop.c),
 * its end is handed back to the exchange, and a wait the exchange asks for
 * becomes a timer of the loop -- so a call decides exactly what the
 * blocking driver (client.c) decides; only the waiting differs.  No
 * libcurl here.
 *
 * Callbacks run from mapi_loop_step only, once the step has finished with
 * libcurl: a finished call is first taken off the list, then reported, so
 * a callback may start new calls.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drivers.h"
#include "http.h"

typedef enum op_state {
    OP_DUE = 0, /* its next attempt begins at wake_at */
    OP_SENDING, /* an attempt is a transfer of the loop */
    OP_DONE     /* over: doc or e is the call's result, reported by the next step */
} op_state;

typedef struct mapi_loop_op {
    struct mapi_loop_op *prev, *next;
    mapi_client *client;
    mapi_http *http;          /* the client's HTTP layer (borrowed) */
    mapi_exchange *x;
    int owns;                 /* 1: x is freed with the op */
    op_state state;
    double wake_at;           /* OP_DUE: monotonic seconds */
    mapi_http_transfer *t;    /* OP_SENDING */
    mapi_doc *doc;            /* OP_DONE, success */
    mapi_error e;             /* the last attempt's error; the call's once failed */
    mapi_observer_fn observer;
    void *observer_ctx;
    mapi_loop_done_fn done;
    mapi_loop_attempt_fn attempt; /* one attempt at a time (mapi_loop_attempt), or NULL */
    mapi_step step;           /* attempt, OP_DONE: the exchange's decision */
    double wait;              /* attempt, step RETRY: seconds before the next attempt */
    void *ctx;
} op;

struct mapi_loop {
    mapi_http_loop *io;
    int owns_io;              /* 0: a client's own multi (mapi_loop_over), not freed here */
    op *head, *tail;          /* every call not yet reported, in start order */
    size_t count;
    int stepping;             /* 1 inside mapi_loop_step (callbacks included) */
    int stopping;             /* 1: mapi_loop_stop was called, the loop is to be freed */
    int freeing;
};

/* ---- the list ---- */

static void link_op(mapi_loop *l, op *o)
{
    o->prev = l->tail;
    o->next = NULL;
    if (l->tail)
        l->tail->next = o;
    else
        l->head = o;
    l->tail = o;
    l->count++;
}

static void unlink_op(mapi_loop *l, op *o)
{
    if (o->prev)
        o->prev->next = o->next;
    else
        l->head = o->next;
    if (o->next)
        o->next->prev = o->prev;
    else
        l->tail = o->prev;
    o->prev = o->next = NULL;
    l->count--;
}

static void free_op(op *o)
{
    if (o->owns)
        mapi_exchange_free(o->x);
    mapi_doc_free(o->doc);
    mapi_error_clear(&o->e);
    free(o);
}

static void observe(const op *o, mapi_attempt_event ev, const mapi_attempt_info *info)
{
    if (o->observer)
        o->observer(o->observer_ctx, ev, info);
    else
        mapi_client_observe(o->client, ev, info);
}

/* ---- attempts ---- */

/* The attempt begun last ended: rc 0 with res (taken), or -1 with o->e
   filled as mapi_http_perform fills it.  The exchange decides what comes
   next (what the next attempt sends too). */
static void attempt_end(op *o, int rc, mapi_response *res)
{
    double wait = 0;
    mapi_step step = mapi_exchange_end_attempt(o->x, mapi_client_http_ended(rc, &o->e),
                                               rc == 0 ? res : NULL, &o->e, &o->doc, &wait);

    observe(o, MAPI_ATTEMPT_RESPONSE, mapi_exchange_info(o->x));
    o->step = step;
    switch (step) {
    case MAPI_STEP_RETRY:
        if (o->attempt) { /* the caller waits: reported with this attempt's error */
            o->wait = wait;
            o->state = OP_DONE;
            break;
        }
        /* e stays until the next attempt begins: the call's error, should
           the loop be freed during the wait */
        o->wake_at = mapi_monotonic_seconds() + (wait > 0 ? wait : 0);
        o->state = OP_DUE;
        break;
    case MAPI_STEP_SETTLE: /* the read of the confirm's payout, at once */
        o->wake_at = 0;
        o->state = OP_DUE;
        break;
    default: /* DONE (e is empty then), FAILED */
        o->state = OP_DONE;
        break;
    }
}

/* Begins o's next attempt as a transfer of the loop. */
static void attempt_begin(mapi_loop *l, op *o)
{
    mapi_attempt_request req;

    mapi_error_clear(&o->e);
    observe(o, MAPI_ATTEMPT_REQUEST, mapi_exchange_begin_attempt(o->x));
    if (l->stopping)
        return; /* stopped by the hook: nothing sent, the call ends when the loop is freed */
    mapi_exchange_request(o->x, &req);
    if (mapi_http_loop_add(l->io, o->http, &req, o, &o->t, &o->e) < 0) {
        o->t = NULL;
        attempt_end(o, -1, NULL); /* MEMORY, or an option libcurl refused: nothing sent */
        return;
    }
    o->state = OP_SENDING;
}

/* http.c's report of a finished transfer (priv: its op). */
static void transfer_done(void *ctx, void *priv)
{
    mapi_loop *l = ctx;
    op *o = priv;
    mapi_response *res = NULL;
    int rc;

    if (o->state != OP_SENDING || !o->t)
        return;
    /* the result first: it reads the transfer's handle and code */
    rc = mapi_http_transfer_result(o->t, &res, &o->e);
    mapi_http_loop_remove(l->io, o->t);
    o->t = NULL;
    attempt_end(o, rc, res);
}

/* Begins every attempt that is due; returns how many began. */
static size_t begin_due(mapi_loop *l)
{
    double now = mapi_monotonic_seconds();
    size_t n = 0;
    op *o;

    for (o = l->head; o && !l->stopping; o = o->next)
        if (o->state == OP_DUE && o->wake_at <= now) {
            if (!o->x) { /* a timer (mapi_loop_timer): over */
                o->state = OP_DONE;
                continue;
            }
            attempt_begin(l, o);
            n++;
        }
    return n;
}

/* Seconds until the loop needs a step: 0 when a call is over or an attempt
   is due, else the sooner of the next wait's end and libcurl's timer; -1
   when nothing is running. */
static double next_timeout(const mapi_loop *l)
{
    double t = -1.0, now, io;
    const op *o;

    if (l->count == 0)
        return -1.0;
    now = mapi_monotonic_seconds();
    for (o = l->head; o; o = o->next) {
        double left;
        if (o->state == OP_DONE)
            return 0.0;
        if (o->state != OP_DUE)
            continue;
        left = o->wake_at - now;
        if (left <= 0)
            return 0.0;
        if (t < 0 || left < t)
            t = left;
    }
    io = mapi_http_loop_timeout(l->io);
    if (io >= 0 && (t < 0 || io < t))
        t = io;
    return t;
}

/* Takes the finished calls off the list -- every one, or as many as b
   allows, in start order -- then calls back each one. */
static void report_done(mapi_loop *l, mapi_budget *b)
{
    op *done = NULL, *last = NULL, *o, *next;

    for (o = l->head; o; o = next) {
        next = o->next;
        if (o->state != OP_DONE)
            continue;
        if (!mapi_budget_take(b, b && o->x ? &b->reported : NULL)) /* a timer: no call */
            break; /* reported by the next step */
        unlink_op(l, o);
        if (last)
            last->next = o;
        else
            done = o;
        last = o;
    }
    for (o = done; o; o = next) {
        mapi_doc *doc = o->doc;
        next = o->next;
        o->doc = NULL;
        if (doc)
            mapi_error_clear(&o->e);
        if (o->attempt)
            o->attempt(o->ctx, o->step, doc, o->wait, &o->e);
        else
            o->done(o->ctx, doc, &o->e);
        free_op(o);
    }
}

/* ---- the loop ---- */

mapi_loop *mapi_loop_over(mapi_http_loop *io, mapi_error *err)
{
    mapi_loop *l = calloc(1, sizeof *l);

    if (!l)
        return mapi_error_oom(err), NULL;
    l->io = io;
    return l;
}

mapi_loop *mapi_loop_new(mapi_error *err)
{
    mapi_http_loop *io = mapi_global_init(err) < 0 ? NULL : mapi_http_loop_new(err);
    mapi_loop *l = io ? mapi_loop_over(io, err) : NULL;

    if (l)
        l->owns_io = 1;
    else
        mapi_http_loop_free(io);
    return l;
}

void mapi_loop_free(mapi_loop *l)
{
    op *o;

    if (!l || l->stepping || l->freeing)
        return;
    l->freeing = 1;
    for (o = l->head; o; o = o->next) {
        if (o->state == OP_DONE)
            continue;
        if (o->state == OP_SENDING) {
            mapi_http_loop_remove(l->io, o->t);
            o->t = NULL;
            mapi_error_set(&o->e, MAPI_ERR_TRANSPORT,
                           "the loop was freed while the request was under way");
            o->e.outcome = MAPI_OUTCOME_UNKNOWN;
        } else if (!o->x) {
            o->state = OP_DONE; /* a timer: reported as over */
            continue;
        } else if (o->e.kind == MAPI_ERR_NONE) {
            /* no attempt yet, or the read settling a confirm not begun */
            mapi_error_set(&o->e, MAPI_ERR_TRANSPORT,
                           "the loop was freed before the request was sent");
            o->e.outcome = MAPI_OUTCOME_NOT_SENT;
        } /* else between attempts: the last attempt's error */
        mapi_exchange_fail(o->x, &o->e);
        o->step = MAPI_STEP_FAILED;
        o->state = OP_DONE;
    }
    l->stepping = 1; /* callbacks may not step, free, or start calls now */
    report_done(l, NULL);
    if (l->owns_io)
        mapi_http_loop_free(l->io);
    free(l);
}

/* A new op for x on client c, its first attempt due at the next step, on
   the list; NULL with err (USAGE while the loop is being freed, MEMORY). */
static op *add_op(mapi_loop *l, mapi_client *c, mapi_exchange *x, void *ctx, mapi_error *err)
{
    mapi_client_parts parts;
    op *o;

    if (l->freeing || l->stopping)
        return mapi_error_set(err, MAPI_ERR_USAGE, "the loop is being freed"), NULL;
    o = calloc(1, sizeof *o);
    if (!o)
        return mapi_error_oom(err), NULL;
    if (c) { /* NULL: a timer */
        mapi_client_parts_get(c, &parts);
        o->client = c;
        o->http = parts.http;
    }
    o->x = x;
    o->state = OP_DUE;
    o->wake_at = 0;
    o->e = (mapi_error)MAPI_ERROR_INIT;
    o->ctx = ctx;
    link_op(l, o);
    return o;
}

int mapi_loop_run_exchange(mapi_loop *l, mapi_client *c, mapi_exchange *x, int owns,
                           mapi_observer_fn observer, void *observer_ctx,
                           mapi_loop_done_fn done, void *ctx, mapi_error *err)
{
    op *o = add_op(l, c, x, ctx, err);

    if (!o) {
        if (owns)
            mapi_exchange_free(x);
        return -1;
    }
    o->owns = owns;
    o->observer = observer;
    o->observer_ctx = observer ? observer_ctx : NULL;
    o->done = done;
    return 0;
}

int mapi_loop_attempt(mapi_loop *l, mapi_client *c, mapi_exchange *x, mapi_loop_attempt_fn attempt,
                      void *ctx, mapi_loop_op **out, mapi_error *err)
{
    op *o = add_op(l, c, x, ctx, err);

    *out = o;
    if (!o)
        return -1;
    o->attempt = attempt;
    return 0;
}

int mapi_loop_timer(mapi_loop *l, double seconds, mapi_loop_done_fn done, void *ctx,
                    mapi_error *err)
{
    op *o = add_op(l, NULL, NULL, ctx, err);

    if (!o)
        return -1;
    o->wake_at = mapi_monotonic_seconds() + (seconds > 0 ? seconds : 0);
    o->done = done;
    return 0;
}

void mapi_loop_cancel(mapi_loop *l, mapi_loop_op *o)
{
    if (!l || !o)
        return;
    if (o->state == OP_SENDING)
        mapi_http_loop_remove(l->io, o->t);
    o->t = NULL;
    unlink_op(l, o);
    free_op(o);
}

/* Starts the built call k (released here) with the client's settings. */
static int start(mapi_loop *l, mapi_client *c, mapi_call *k, mapi_loop_done_fn done,
                 void *ctx, mapi_error *err)
{
    const char *method = k->method; /* a static string of the builder */
    mapi_exchange *x = mapi_client_prepare(c, k, err);

    mapi_call_release(k);
    if (!x)
        return mapi_error_tag_not_sent(method, err); /* out of memory: nothing sent */
    if (mapi_loop_run_exchange(l, c, x, 1, NULL, NULL, done, ctx, err) < 0)
        return mapi_error_tag_not_sent(method, err);
    return 0;
}

/* The checks every start makes before building its call. */
static int check_start(mapi_loop *l, mapi_client *c, mapi_loop_done_fn done,
                       const char *method, mapi_error *err)
{
    if (!l || !c || !done)
        mapi_error_set(err, MAPI_ERR_USAGE, "mapi_loop: loop, client and done are required");
    else if (l->freeing || l->stopping)
        mapi_error_set(err, MAPI_ERR_USAGE, "mapi_loop: the loop is being freed");
    else
        return 0;
    return mapi_error_tag_not_sent(method, err);
}

/* Starts the call of the endpoint table's row r (calls.c). */
static int start_endpoint(mapi_loop *l, mapi_client *c, mapi_endpoint_row r, const char *id,
                          const mapi_page_params *p, const mapi_call_opts *opts,
                          mapi_loop_done_fn done, void *ctx, mapi_error *err)
{
    const mapi_endpoint *e = &mapi_endpoints[r];
    mapi_call k;

    if (check_start(l, c, done, e->method, err) < 0 ||
        mapi_call_endpoint(c, e, id, p, opts, &k, err) < 0)
        return -1;
    return start(l, c, &k, done, ctx, err);
}

int mapi_loop_confirm_payout(mapi_loop *l, mapi_client *c, const char *payout_id,
                             const mapi_call_opts *opts, mapi_loop_done_fn done, void *ctx,
                             mapi_error *err)
{
    return start_endpoint(l, c, MAPI_EP_CONFIRM_PAYOUT, payout_id, NULL, opts, done, ctx, err);
}

int mapi_loop_get_channel(mapi_loop *l, mapi_client *c, const char *channel_id,
                          const mapi_call_opts *opts, mapi_loop_done_fn done, void *ctx,
                          mapi_error *err)
{
    return start_endpoint(l, c, MAPI_EP_GET_CHANNEL, channel_id, NULL, opts, done, ctx, err);
}

int mapi_loop_list_addresses(mapi_loop *l, mapi_client *c, const char *account_id,
                             const mapi_page_params *p, const mapi_call_opts *opts,
                             mapi_loop_done_fn done, void *ctx, mapi_error *err)
{
    return start_endpoint(l, c, MAPI_EP_LIST_ADDRESSES, account_id, p, opts, done, ctx, err);
}

int mapi_loop_get_payout(mapi_loop *l, mapi_client *c, const char *payout_id,
                         const mapi_call_opts *opts, mapi_loop_done_fn done, void *ctx,
                         mapi_error *err)
{
    return start_endpoint(l, c, MAPI_EP_GET_PAYOUT, payout_id, NULL, opts, done, ctx, err);
}

int mapi_loop_request(mapi_loop *l, mapi_client *c, const char *method,
                      const char *path_and_query, const char *body, size_t body_len,
                      const mapi_request_opts *opts, mapi_loop_done_fn done, void *ctx,
                      mapi_error *err)
{
    mapi_call k;

    if (!method || !path_and_query)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "mapi_loop_request: method and path are required");
    if (check_start(l, c, done, method, err) < 0 ||
        mapi_call_request(c, method, path_and_query, body, body_len, opts, &k, err) < 0)
        return -1;
    return start(l, c, &k, done, ctx, err);
}

void mapi_loop_stop(mapi_loop *l)
{
    if (l && l->stepping)
        l->stopping = 1;
}

int mapi_loop_step(mapi_loop *l, double timeout)
{
    return mapi_loop_step_budget(l, timeout, 0, 0);
}

int mapi_loop_step_in(mapi_loop *l, double timeout, mapi_budget *b)
{
    if (!l || l->stepping)
        return -1;
    if (b && b->wait && timeout != 0) {
        /* waits for ready work within the time left, never longer */
        double left = mapi_budget_left(b);
        if (left >= 0 && (timeout < 0 || left < timeout))
            timeout = left;
    }
    l->stepping = 1;
    /* the calls an earlier step's budget left unreported: the oldest work */
    report_done(l, b);
    /* a step that may wait sends what began at once, so that the answers
       can come within it; a step that may not (a host's tick) leaves that
       to libcurl's timer, at the next step, spreading the work -- but for
       the last pass of a step whose budget may wait (timeout 0): what began
       goes out whatever the budget has left, so that its answers come
       before the next step (nothing is read then) */
    if (begin_due(l) > 0 && !l->stopping) {
        if (timeout != 0)
            mapi_http_loop_wait(l->io, NAN, b, transfer_done, l);
        else if (b && b->wait)
            mapi_http_loop_wait(l->io, NAN, NULL, transfer_done, l);
    }
    if (l->count > 0 && !l->stopping) {
        double wait = next_timeout(l);
        /* the caller's bound; negative: whatever the next event needs */
        if (timeout >= 0 && (wait < 0 || timeout < wait))
            wait = timeout;
        mapi_http_loop_wait(l->io, wait, b, transfer_done, l);
        if (begin_due(l) > 0 && !l->stopping) /* a wait ended: its attempt on its way now */
            mapi_http_loop_wait(l->io, NAN, b, transfer_done, l);
    }
    report_done(l, b);
    l->stepping = 0;
    return (int)l->count;
}

int mapi_loop_step_budget(mapi_loop *l, double timeout, double max_seconds, int max_calls)
{
    mapi_budget b;

    mapi_budget_start(&b, max_seconds, max_calls > 0 ? (size_t)max_calls : 0);
    return mapi_loop_step_in(l, timeout, &b);
}

int mapi_loop_step_within(mapi_loop *l, double max_seconds, int max_calls)
{
    mapi_budget b;
    int n;

    if (!l || !(max_seconds > 0))
        return -1;
    mapi_budget_start(&b, max_seconds, max_calls > 0 ? (size_t)max_calls : 0);
    b.wait = 1;
    /* a callback that starts a call: its attempt begins in the next pass */
    do
        n = mapi_loop_step_in(l, -1.0, &b);
    while (n > 0 && mapi_budget_left(&b) > 0);
    /* what the last pass's callbacks began goes out before the step returns
       (the last pass of a step: nothing more is read) */
    if (n > 0)
        n = mapi_loop_step_in(l, 0.0, &b);
    return n;
}

int mapi_loop_fd(const mapi_loop *l)
{
    return l ? mapi_http_loop_fd(l->io) : -1;
}

double mapi_loop_timeout(const mapi_loop *l)
{
    return l ? next_timeout(l) : -1.0;
}

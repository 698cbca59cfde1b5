/*
 * test_loop.c -- calls on an event loop (merchantapi.h, mapi_loop) against
 * the sandbox: the same results as the blocking calls (values, error
 * fields, outcomes, what reached the sandbox and how many times), retries
 * whose waits are timers of the loop, the deadline, the settling of a
 * confirm, connections shared with the client's blocking calls, a loop
 * driven by poll() on its descriptor and timeout, and freeing a loop with
 * calls under way.
 */
#include <poll.h>

#include "testutil.h"


/* What one call on the loop reported. */
typedef struct result {
    int calls;         /* times the callback ran */
    mapi_doc *doc;
    mapi_error err;
} result;

static void on_done(void *ctx, mapi_doc *doc, mapi_error *err)
{
    result *r = ctx;

    r->calls++;
    r->doc = doc;
    r->err = *err; /* kept: the loop's copy is reset */
    *err = (mapi_error)MAPI_ERROR_INIT;
}

static void result_clear(result *r)
{
    mapi_doc_free(r->doc);
    mapi_error_clear(&r->err);
    memset(r, 0, sizeof *r);
    r->err = (mapi_error)MAPI_ERROR_INIT;
}

/* Steps until no call is running (each step waits at most 1 s). */
static void run(mapi_loop *loop)
{
    int n;

    while ((n = mapi_loop_step(loop, 1.0)) > 0)
        ;
    assert_int_equal(n, 0);
}

static mapi_loop *new_loop(void)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_loop *loop = mapi_loop_new(&err);

    if (!loop)
        fail_msg("mapi_loop_new: %s", err.message ? err.message : "?");
    return loop;
}

/* A test's start: skips without a sandbox, resets its counters when reset
   is set; a client with max_retries retries, a loop, and the n results
   empty. */
static mapi_loop *begin(int reset, int max_retries, mapi_client **c, result *r, size_t n)
{
    TU_NEED_SANDBOX();
    if (reset)
        tu_sandbox_reset();
    *c = tu_client_ex(NULL, tu_api_key(), max_retries, 0, NULL);
    memset(r, 0, n * sizeof *r);
    return new_loop();
}

/* opts ask the sandbox to answer after ms milliseconds (the header kept in *h). */
static void delay(mapi_call_opts *opts, mapi_header_field *h, const char *ms)
{
    h->name = "X-Sandbox-Delay-Ms";
    h->value = ms;
    opts->headers = h;
    opts->nheaders = 1;
}

/* Fails with the call's error unless it gave a document. */
static void assert_doc(const result *r)
{
    if (!r->doc)
        fail_msg("%s", r->err.message ? r->err.message : "?");
}

static const char *body_of(const mapi_doc *doc, size_t *len)
{
    return mapi_response_body(mapi_doc_response(doc), len);
}

static void assert_same_body(const mapi_doc *a, const mapi_doc *b)
{
    size_t la = 0, lb = 0;
    const char *ba = body_of(a, &la), *bb = body_of(b, &lb);

    assert_int_equal(la, lb);
    assert_memory_equal(ba, bb, la);
}

/* Every field a user reads of an error, the same in a and b. */
static void assert_same_error(const mapi_error *a, const mapi_error *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->outcome, b->outcome);
    assert_int_equal(a->attempts, b->attempts);
    assert_int_equal(a->retryable, b->retryable);
    assert_int_equal(a->deadline_exceeded, b->deadline_exceeded);
    assert_true(a->retry_after == b->retry_after);
    assert_string_equal(a->code ? a->code : "", b->code ? b->code : "");
    assert_string_equal(a->title ? a->title : "", b->title ? b->title : "");
    assert_string_equal(a->method ? a->method : "", b->method ? b->method : "");
    assert_string_equal(a->url ? a->url : "", b->url ? b->url : "");
    assert_int_equal(a->payout != NULL, b->payout != NULL);
    assert_int_equal(a->settle_error != NULL, b->settle_error != NULL);
}

/* ---- the same results as blocking ---- */

static void results_equal_blocking(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    mapi_page_params p = {NULL, NULL, 2, 5};
    result r[5];
    size_t i, len;
    char *fixture;

    (void)state;
    loop = begin(1, 2, &c, r, 5);

    /* five calls at once, one of each kind */
    assert_int_equal(mapi_loop_confirm_payout(loop, c, TU_PAYOUT_ID, NULL, on_done, &r[0], &err), 0);
    assert_int_equal(mapi_loop_get_channel(loop, c, TU_CHANNEL_ID, NULL, on_done, &r[1], &err), 0);
    assert_int_equal(mapi_loop_list_addresses(loop, c, "acct-22", &p, NULL, on_done, &r[2],
                                              &err), 0);
    assert_int_equal(mapi_loop_get_payout(loop, c, "draft-track-never", NULL, on_done, &r[3],
                                          &err), 0);
    assert_int_equal(mapi_loop_request(loop, c, "POST", "/api/public/v1/echo/x?y=1",
                                       "{\"amount\": 250.10}", 18, NULL, on_done, &r[4],
                                       &err), 0);
    assert_int_equal(mapi_loop_timeout(loop) == 0.0, 1); /* their first attempts are due */
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 0);       /* nothing before a step */
    run(loop);
    for (i = 0; i < 5; i++) {
        assert_int_equal(r[i].calls, 1);
        if (!r[i].doc)
            fail_msg("call %zu: %s", i, r[i].err.message ? r[i].err.message : "?");
    }
    /* the confirm: the fixture byte for byte, sent once */
    fixture = tu_fixture("confirm_payout.201.json", &len);
    {
        size_t blen = 0;
        const char *b = body_of(r[0].doc, &blen);
        assert_int_equal(blen, len);
        assert_memory_equal(b, fixture, len);
        assert_string_equal(tu_attr_num(mapi_doc_data(r[0].doc, 0), "amount"), "250.10");
    }
    free(fixture);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 1);

    /* each read equals the blocking call's */
    assert_int_equal(mapi_get_channel(c, TU_CHANNEL_ID, &doc, &err), 0);
    assert_same_body(doc, r[1].doc);
    mapi_doc_free(doc);
    assert_int_equal(mapi_list_addresses(c, "acct-22", &p, &doc, &err), 0);
    assert_same_body(doc, r[2].doc);
    assert_int_equal(mapi_doc_data_count(r[2].doc), 5);
    assert_int_equal(tu_int(mapi_doc_meta(r[2].doc), "page"), 2);
    mapi_doc_free(doc);
    assert_int_equal(mapi_get_payout(c, "draft-track-never", &doc, &err), 0);
    assert_same_body(doc, r[3].doc);
    mapi_doc_free(doc);
    /* the generic call: what crossed the wire */
    {
        const mapi_resource *e = mapi_doc_data(r[4].doc, 0);
        assert_string_equal(tu_attr_str(e, "method"), "POST");
        assert_string_equal(tu_attr_str(e, "path"), "/api/public/v1/echo/x");
        assert_string_equal(tu_attr_str(e, "body"), "{\"amount\": 250.10}");
        assert_int_equal(mapi_response_status(mapi_doc_response(r[4].doc)), 201);
    }

    /* a second confirm: refused, the same error either way */
    for (i = 0; i < 5; i++)
        result_clear(&r[i]);
    assert_int_equal(mapi_confirm_payout(c, TU_PAYOUT_ID, &doc, &err), -1);
    assert_int_equal(mapi_loop_confirm_payout(loop, c, TU_PAYOUT_ID, NULL, on_done, &r[0], &err), 0);
    run(loop);
    assert_null(r[0].doc);
    assert_same_error(&err, &r[0].err);
    assert_int_equal(r[0].err.kind, MAPI_ERR_API);
    assert_int_equal(r[0].err.status, 422);
    assert_string_equal(r[0].err.code, "payout_not_draft");
    assert_int_equal(r[0].err.outcome, MAPI_OUTCOME_REJECTED);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 3);
    mapi_error_clear(&err);
    result_clear(&r[0]);

    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* ---- usage errors: nothing started, no callback ---- */

static void usage_errors_start_nothing(void **state)
{
    mapi_client *c = tu_client();
    mapi_loop *loop = new_loop();
    mapi_error err = MAPI_ERROR_INIT;
    result r;

    (void)state;
    memset(&r, 0, sizeof r);
    assert_int_equal(mapi_loop_confirm_payout(loop, c, "", NULL, on_done, &r, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    mapi_error_clear(&err);
    assert_int_equal(mapi_loop_confirm_payout(loop, c, TU_PAYOUT_ID, NULL, NULL, &r, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    mapi_error_clear(&err);
    assert_int_equal(mapi_loop_get_channel(NULL, c, TU_CHANNEL_ID, NULL, on_done, &r, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_loop_request(loop, c, "GET", "//evil", NULL, 0, NULL, on_done, &r,
                                       &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    assert_int_equal(mapi_loop_step(loop, 0), 0);
    assert_true(mapi_loop_timeout(loop) == -1.0);
    assert_int_equal(mapi_loop_step(NULL, 0), -1);
    assert_int_equal(r.calls, 0);
    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* ---- retries: the exchange's decisions, waits as timers ---- */

typedef struct watch {
    mapi_loop *loop;
    int requests, responses;
    double retry_in[8];
    double timeout_after[8]; /* mapi_loop_timeout right after each response (-2: not read) */
} watch;

static void on_attempt(void *ctx, mapi_attempt_event ev, const mapi_attempt_info *info)
{
    watch *w = ctx;

    if (ev == MAPI_ATTEMPT_REQUEST) {
        w->requests++;
        return;
    }
    if (w->responses < 8)
        w->retry_in[w->responses] = info->retry_in;
    w->responses++;
}

static void retry_after_is_a_timer(void **state)
{
    mapi_client *c, *cb;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    watch w;
    result r;
    int n, waited = 0;

    (void)state;
    loop = begin(1, 1, &c, &r, 1);
    memset(&w, 0, sizeof w);
    mapi_client_set_observer(c, on_attempt, &w);
    /* 429 with Retry-After: 1, then again: two attempts, the wait the server asked for */
    assert_int_equal(mapi_loop_get_channel(loop, c, "fault-429", NULL, on_done, &r, &err), 0);
    while ((n = mapi_loop_step(loop, 0.05)) > 0) {
        if (w.responses == 1 && w.requests == 1 && !waited) {
            /* between the attempts: the loop's timer holds the wait */
            double t = mapi_loop_timeout(loop);
            assert_true(t > 0.5 && t <= 1.0);
            waited = 1;
        }
    }
    assert_int_equal(waited, 1);
    assert_int_equal(r.calls, 1);
    assert_int_equal(w.requests, 2);
    assert_true(w.retry_in[0] == 1.0);
    assert_true(w.retry_in[1] == -1.0);
    assert_int_equal(tu_sandbox_count("fault-429"), 2);
    /* the blocking call's error, field for field */
    cb = tu_client_ex(NULL, tu_api_key(), 1, 0, NULL);
    assert_int_equal(mapi_get_channel(cb, "fault-429", &doc, &err), -1);
    assert_same_error(&err, &r.err);
    assert_int_equal(r.err.kind, MAPI_ERR_API);
    assert_int_equal(r.err.status, 429);
    assert_int_equal(r.err.attempts, 2);
    assert_true(r.err.retry_after == 1.0);
    assert_int_equal(tu_sandbox_count("fault-429"), 4);
    mapi_error_clear(&err);
    result_clear(&r);

    /* 503 twice, then the channel: backoff timers, three requests, success */
    mapi_client_set_observer(c, NULL, NULL);
    mapi_client_free(c);
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, NULL);
    assert_int_equal(mapi_loop_get_channel(loop, c, "fault-flaky-2-503", NULL, on_done, &r,
                                           &err), 0);
    run(loop);
    assert_doc(&r);
    assert_string_equal(mapi_resource_id(mapi_doc_data(r.doc, 0)), "fault-flaky-2-503");
    assert_int_equal(tu_sandbox_count("fault-flaky-2-503"), 3);
    result_clear(&r);

    mapi_loop_free(loop);
    mapi_client_free(c);
    mapi_client_free(cb);
}

/* ---- the deadline ---- */

static void deadline_as_blocking(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    result r;

    (void)state;
    loop = begin(1, 2, &c, &r, 1);
    opts.deadline = 1;
    /* Retry-After 60 outlasts the deadline: the call ends at once */
    assert_int_equal(mapi_loop_confirm_payout(loop, c, "fault-429-after-60", &opts, on_done,
                                              &r, &err), 0);
    run(loop);
    assert_int_equal(r.calls, 1);
    assert_null(r.doc);
    assert_int_equal(r.err.deadline_exceeded, 1);
    assert_int_equal(r.err.attempts, 1);
    assert_int_equal(r.err.status, 429);
    assert_int_equal(r.err.outcome, MAPI_OUTCOME_REJECTED);
    assert_true(r.err.retry_after == 60.0);
    assert_int_equal(tu_sandbox_count("fault-429-after-60"), 1);
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-429-after-60", &opts, &doc, &err), -1);
    assert_same_error(&err, &r.err);
    assert_int_equal(tu_sandbox_count("fault-429-after-60"), 2);
    mapi_error_clear(&err);
    result_clear(&r);

    /* an answer slower than the deadline: the attempt's timeout is what is left */
    {
        mapi_header_field slow;
        delay(&opts, &slow, "3000");
        opts.deadline = 0.3;
        assert_int_equal(mapi_loop_get_channel(loop, c, TU_CHANNEL_ID, &opts, on_done, &r, &err), 0);
        run(loop);
        assert_null(r.doc);
        assert_int_equal(r.err.kind, MAPI_ERR_TRANSPORT);
        assert_int_equal(r.err.deadline_exceeded, 1);
        assert_int_equal(r.err.attempts, 1);
        result_clear(&r);
    }
    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* ---- the confirm's outcome and its settling ---- */

static void confirm_outcomes_as_blocking(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    result r;

    (void)state;
    loop = begin(1, 2, &c, &r, 1);

    /* carried out, answered 502: unknown, settled by the read */
    assert_int_equal(mapi_loop_confirm_payout(loop, c, "fault-applied-502", NULL, on_done, &r,
                                              &err), 0);
    run(loop);
    assert_doc(&r);
    assert_string_equal(mapi_doc_settled_by(r.doc), "read");
    assert_string_equal(tu_attr_str(mapi_doc_data(r.doc, 0), "status"), "processing");
    assert_int_equal(tu_sandbox_count("fault-applied-502"), 2); /* the PUT once, one GET */
    result_clear(&r);

    /* answered 502 and not carried out: the read finds a draft */
    assert_int_equal(mapi_loop_confirm_payout(loop, c, "fault-flaky-1-502", NULL, on_done, &r,
                                              &err), 0);
    run(loop);
    assert_null(r.doc);
    assert_int_equal(r.err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(r.err.status, 502);
    assert_int_equal(r.err.attempts, 1);
    assert_non_null(r.err.payout);
    assert_string_equal(tu_attr_str(mapi_doc_data(r.err.payout, 0), "status"), "draft");
    assert_int_equal(tu_sandbox_count("fault-flaky-1-502"), 2);
    result_clear(&r);

    /* no answer at all after being carried out: unknown, never resent, settled */
    assert_int_equal(mapi_loop_confirm_payout(loop, c, "fault-applied-no-response", NULL,
                                              on_done, &r, &err), 0);
    run(loop);
    assert_doc(&r);
    assert_string_equal(mapi_doc_settled_by(r.doc), "read");
    assert_int_equal(tu_sandbox_count("fault-applied-no-response"), 2);
    result_clear(&r);

    /* a 503 to a confirm is not retried: the same error as blocking */
    {
        mapi_call_opts off = MAPI_CALL_OPTS_INIT;
        off.settle = MAPI_SETTLE_OFF;
        assert_int_equal(mapi_loop_confirm_payout(loop, c, "fault-503", &off, on_done, &r,
                                                  &err), 0);
        run(loop);
        assert_int_equal(mapi_confirm_payout_ex(c, "fault-503", &off, &doc, &err), -1);
        assert_same_error(&err, &r.err);
        assert_int_equal(r.err.outcome, MAPI_OUTCOME_UNKNOWN);
        assert_int_equal(tu_sandbox_count("fault-503"), 2);
        mapi_error_clear(&err);
        result_clear(&r);
    }
    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* ---- one pool of connections ---- */

static long echo_connection(const mapi_doc *doc)
{
    return (long)tu_int(mapi_doc_meta(doc), "connection");
}

/* A host's loop keeps connections of its own: libcurl cannot hand one
   connection between two multis safely (http.c, new_share).  The client's
   blocking calls keep theirs alive across the loop's calls, and the loop
   keeps its own alive across its calls. */
static void connections_of_their_own(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    result r;
    long blocking, looped;

    (void)state;
    loop = begin(0, 2, &c, &r, 1);
    assert_int_equal(mapi_request(c, "GET", "/api/public/v1/echo", NULL, 0, &doc, &err), 0);
    blocking = echo_connection(doc);
    mapi_doc_free(doc);
    assert_int_equal(mapi_loop_request(loop, c, "GET", "/api/public/v1/echo", NULL, 0, NULL,
                                       on_done, &r, &err), 0);
    run(loop);
    assert_non_null(r.doc);
    looped = echo_connection(r.doc);
    assert_true(looped != blocking); /* the loop's own connection */
    result_clear(&r);
    assert_int_equal(mapi_request(c, "GET", "/api/public/v1/echo", NULL, 0, &doc, &err), 0);
    assert_int_equal(echo_connection(doc), blocking); /* kept alive meanwhile */
    mapi_doc_free(doc);
    assert_int_equal(mapi_loop_request(loop, c, "GET", "/api/public/v1/echo", NULL, 0, NULL,
                                       on_done, &r, &err), 0);
    run(loop);
    assert_non_null(r.doc);
    assert_int_equal(echo_connection(r.doc), looped);
    result_clear(&r);
    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* ---- a host's poll() drives the loop ---- */

static void driven_by_poll(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_header_field slow;
    result r[3];
    int i, n, readable = 0, polls = 0;
    struct pollfd pfd;

    (void)state;
    loop = begin(0, 2, &c, r, 3);
    delay(&opts, &slow, "200");
    for (i = 0; i < 3; i++)
        assert_int_equal(mapi_loop_get_channel(loop, c, TU_CHANNEL_ID, &opts, on_done, &r[i], &err),
                         0);
    pfd.fd = mapi_loop_fd(loop);
    assert_true(pfd.fd >= 0);
    n = 3;
    while (n > 0) {
        double t = mapi_loop_timeout(loop);
        int ms = t < 0 ? 1000 : (int)(t * 1000.0 + 0.999);
        int got;
        pfd.events = POLLIN;
        pfd.revents = 0;
        got = poll(&pfd, 1, ms);
        assert_true(got >= 0);
        polls++;
        if (got > 0 && (pfd.revents & POLLIN))
            readable++;
        n = mapi_loop_step(loop, 0); /* never waits: poll() did */
        assert_true(n >= 0 && polls < 10000);
    }
    assert_true(readable >= 1); /* the answers came through the descriptor */
    for (i = 0; i < 3; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_non_null(r[i].doc);
        assert_string_equal(mapi_resource_id(mapi_doc_data(r[i].doc, 0)), TU_CHANNEL_ID);
        result_clear(&r[i]);
    }
    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* ---- calls in flight together ---- */

static void calls_run_at_once(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_header_field slow;
    static const char *const ids[] = {"echo-loop-a", "echo-loop-b", "echo-loop-c",
                                      "echo-loop-d", "echo-loop-e"};
    result r[5];
    int i, arrived = 0, tries;

    (void)state;
    loop = begin(1, 2, &c, r, 5);
    delay(&opts, &slow, "1500");
    for (i = 0; i < 5; i++)
        assert_int_equal(mapi_loop_get_channel(loop, c, ids[i], &opts, on_done, &r[i], &err),
                         0);
    /* every request reaches the sandbox while none is answered yet */
    for (tries = 0; tries < 200 && arrived < 5; tries++) {
        assert_int_equal(mapi_loop_step(loop, 0.005), 5);
        for (i = 0, arrived = 0; i < 5; i++)
            arrived += tu_sandbox_count(ids[i]) == 1;
    }
    assert_int_equal(arrived, 5);
    for (i = 0; i < 5; i++)
        assert_int_equal(r[i].calls, 0);
    run(loop);
    for (i = 0; i < 5; i++) {
        assert_non_null(r[i].doc);
        assert_string_equal(mapi_resource_id(mapi_doc_data(r[i].doc, 0)), ids[i]);
        assert_int_equal(tu_sandbox_count(ids[i]), 1);
        result_clear(&r[i]);
    }
    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* ---- a budget per step ---- */

/* Five answers that come together, stepped with a budget of one call: never
   more than one callback per step, the rest left for the next steps (the
   timeout 0 meanwhile), every call ending once with its own value. */
static void budget_one_call_per_step(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_header_field slow;
    static const char *const ids[] = {"echo-budget-a", "echo-budget-b", "echo-budget-c",
                                      "echo-budget-d", "echo-budget-e"};
    result r[5];
    int i, n = 5, steps = 0, left_over = 0;

    (void)state;
    loop = begin(1, 0, &c, r, 5);
    delay(&opts, &slow, "300"); /* sent at once, answered together */
    for (i = 0; i < 5; i++)
        assert_int_equal(mapi_loop_get_channel(loop, c, ids[i], &opts, on_done, &r[i], &err),
                         0);
    while (n > 0 && steps < 1000) {
        int before = 0, after = 0;
        for (i = 0; i < 5; i++)
            before += r[i].calls;
        n = mapi_loop_step_budget(loop, 1.0, 0, 1);
        steps++;
        for (i = 0; i < 5; i++)
            after += r[i].calls;
        assert_true(after - before <= 1);
        assert_int_equal(n, 5 - after);
        if (n > 0 && mapi_loop_timeout(loop) == 0.0)
            left_over++; /* an answer read, or a call ended, waits for the next step */
    }
    assert_int_equal(n, 0);
    assert_true(steps >= 5);
    assert_true(left_over >= 1);
    for (i = 0; i < 5; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_doc(&r[i]);
        assert_string_equal(mapi_resource_id(mapi_doc_data(r[i].doc, 0)), ids[i]);
        assert_int_equal(tu_sandbox_count(ids[i]), 1);
        result_clear(&r[i]);
    }
    mapi_loop_free(loop);
    mapi_client_free(c);
}

/* A chain of calls: each callback starts the next call, until none is left. */
typedef struct chain {
    mapi_loop *loop;
    mapi_client *c;
    int left;          /* calls still to start */
    int ended;
} chain;

static void on_chain(void *ctx, mapi_doc *doc, mapi_error *err)
{
    chain *ch = ctx;
    mapi_error e = MAPI_ERROR_INIT;

    assert_non_null(doc);
    (void)err;
    mapi_doc_free(doc);
    ch->ended++;
    if (ch->left-- > 0)
        assert_int_equal(mapi_loop_get_channel(ch->loop, ch->c, TU_CHANNEL_ID, NULL, on_chain, ch, &e),
                         0);
}

/* mapi_loop_step_within: a call a callback starts is sent and ended in the
   same step; with nothing ready the step waits out its budget, no longer. */
static void step_within_spends_its_budget(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_header_field slow;
    result r[1];
    chain ch;
    double t0, wall;

    (void)state;
    loop = begin(1, 0, &c, r, 1);
    assert_int_equal(mapi_loop_step_within(loop, 0, 0), -1);
    memset(&ch, 0, sizeof ch);
    ch.loop = loop;
    ch.c = c;
    ch.left = 4;
    assert_int_equal(mapi_loop_get_channel(loop, c, TU_CHANNEL_ID, NULL, on_chain, &ch, &err), 0);
    /* five calls one after another, in one step of at most 10 s */
    assert_int_equal(mapi_loop_step_within(loop, 10.0, 0), 0);
    assert_int_equal(ch.ended, 5);
    /* nothing ready: a step of 0.1 s waits it out (the answer comes in 2 s) */
    delay(&opts, &slow, "2000");
    assert_int_equal(mapi_loop_get_channel(loop, c, TU_CHANNEL_ID, &opts, on_done, &r[0], &err), 0);
    t0 = mapi_monotonic_seconds();
    assert_int_equal(mapi_loop_step_within(loop, 0.1, 0), 1);
    wall = mapi_monotonic_seconds() - t0;
    assert_true(wall >= 0.099);
    assert_true(wall < 1.5); /* far from the answer's 2 s, on a loaded machine too */
    assert_int_equal(r[0].calls, 0);
    mapi_loop_free(loop);
    assert_int_equal(r[0].calls, 1);
    result_clear(&r[0]);
    mapi_client_free(c);
}

/* ---- freeing a loop with calls under way ---- */

static void free_ends_every_call(void **state)
{
    mapi_client *c;
    mapi_loop *loop;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_header_field slow;
    result r[3];
    int i;

    (void)state;
    loop = begin(1, 1, &c, r, 3);
    delay(&opts, &slow, "2000");
    /* under way, waiting for a retry, never begun */
    assert_int_equal(mapi_loop_get_channel(loop, c, TU_CHANNEL_ID, &opts, on_done, &r[0], &err), 0);
    assert_int_equal(mapi_loop_get_channel(loop, c, "fault-429", NULL, on_done, &r[1], &err),
                     0);
    for (i = 0; i < 100 && tu_sandbox_count("fault-429") < 1; i++)
        assert_int_equal(mapi_loop_step(loop, 0.02), 2);
    for (i = 0; i < 20; i++)
        assert_int_equal(mapi_loop_step(loop, 0.01), 2);
    assert_int_equal(mapi_loop_confirm_payout(loop, c, TU_PAYOUT_ID, NULL, on_done, &r[2], &err), 0);
    mapi_loop_free(loop);
    for (i = 0; i < 3; i++) {
        assert_int_equal(r[i].calls, 1);
        assert_null(r[i].doc);
    }
    assert_int_equal(r[0].err.kind, MAPI_ERR_TRANSPORT);
    assert_true(tu_contains(r[0].err.message, "loop was freed"));
    assert_int_equal(r[1].err.kind, MAPI_ERR_API); /* the last attempt's 429 */
    assert_int_equal(r[1].err.status, 429);
    assert_int_equal(r[2].err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(r[2].err.outcome, MAPI_OUTCOME_NOT_SENT);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 0);
    for (i = 0; i < 3; i++)
        result_clear(&r[i]);
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(results_equal_blocking),
        cmocka_unit_test(usage_errors_start_nothing),
        cmocka_unit_test(retry_after_is_a_timer),
        cmocka_unit_test(deadline_as_blocking),
        cmocka_unit_test(confirm_outcomes_as_blocking),
        cmocka_unit_test(connections_of_their_own),
        cmocka_unit_test(driven_by_poll),
        cmocka_unit_test(calls_run_at_once),
        cmocka_unit_test(budget_one_call_per_step),
        cmocka_unit_test(step_within_spends_its_budget),
        cmocka_unit_test(free_ends_every_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

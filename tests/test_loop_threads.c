/*
 * test_loop_threads.c -- a loop and its client are used by one thread at a
 * time, not by one thread for ever (merchantapi.h, "Threading rules"): a
 * host with a pool of worker threads (skynet) runs each step of a loop, and
 * each call of its client, on whichever thread is free.  Here every step
 * and every call start runs on a thread of its own, joined before the next
 * begins, against the sandbox: every call ends once, with its own document,
 * and each request reached the sandbox once.
 */
#include <pthread.h>

#include "testutil.h"

#define N_CALLS 4

typedef struct result {
    int calls;
    mapi_doc *doc;
    mapi_error err;
} result;

static void on_done(void *ctx, mapi_doc *doc, mapi_error *err)
{
    result *r = ctx;

    r->calls++;
    r->doc = doc;
    r->err = *err;
    *err = (mapi_error)MAPI_ERROR_INIT;
}

/* What one worker thread does: start a call, or step the loop once. */
typedef struct job {
    mapi_loop *loop;
    mapi_client *client;
    const char *id;     /* start a get_channel of id; NULL: step */
    mapi_call_opts *opts;
    result *r;
    int rc;             /* the call's start (0/-1) or the step's count */
    pthread_t self;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    mapi_error err = MAPI_ERROR_INIT;

    j->self = pthread_self();
    if (j->id)
        j->rc = mapi_loop_get_channel(j->loop, j->client, j->id, j->opts, on_done, j->r, &err);
    else
        j->rc = mapi_loop_step(j->loop, 0.05);
    mapi_error_clear(&err);
    return NULL;
}

/* Runs j on a new thread and waits for it (the hand-over between threads). */
static void on_another_thread(job *j)
{
    pthread_t t;

    assert_int_equal(pthread_create(&t, NULL, worker, j), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static void loop_moves_between_threads(void **state)
{
    static const char *const ids[N_CALLS] = {"echo-thread-a", "echo-thread-b", "echo-thread-c",
                                             "echo-thread-d"};
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_header_field slow = {"X-Sandbox-Delay-Ms", "200"};
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;
    mapi_loop *loop;
    result r[N_CALLS];
    job j;
    int i, steps = 0, started = 0;

    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, NULL);
    loop = mapi_loop_new(&err);
    if (!loop)
        fail_msg("mapi_loop_new: %s", err.message ? err.message : "?");
    memset(r, 0, sizeof r);
    opts.headers = &slow;
    opts.nheaders = 1;
    do {
        /* a call started on one thread, between steps run on others */
        if (started < N_CALLS) {
            memset(&j, 0, sizeof j);
            j.loop = loop, j.client = c, j.id = ids[started], j.opts = &opts;
            j.r = &r[started++];
            on_another_thread(&j);
            assert_int_equal(j.rc, 0);
        }
        memset(&j, 0, sizeof j);
        j.loop = loop, j.client = c;
        on_another_thread(&j);
        assert_true(!pthread_equal(j.self, pthread_self()));
        steps++;
    } while (j.rc > 0 || started < N_CALLS);
    assert_int_equal(j.rc, 0);
    assert_true(steps > N_CALLS); /* the calls spanned steps on several threads */
    for (i = 0; i < N_CALLS; i++) {
        assert_int_equal(r[i].calls, 1);
        if (!r[i].doc)
            fail_msg("%s: %s", ids[i], r[i].err.message ? r[i].err.message : "?");
        assert_string_equal(mapi_resource_id(mapi_doc_data(r[i].doc, 0)), ids[i]);
        assert_int_equal(tu_sandbox_count(ids[i]), 1);
        mapi_doc_free(r[i].doc);
        mapi_error_clear(&r[i].err);
    }
    mapi_loop_free(loop);
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_moves_between_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

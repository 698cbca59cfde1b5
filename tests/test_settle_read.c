/*
 * test_settle_read.c -- what the read settling a confirm may show, and what
 * `retryable` then tells the caller (merchantapi.h, mapi_confirm_payout
 * "Settling" and mapi_error.retryable): a txid, whatever the status, or
 * status "processing" settles it; "draft" leaves it unknown and safe to
 * confirm again; any other status leaves it unknown, the payout kept and
 * its status in the message.  A confirm's retryable is true only when
 * nothing was sent, a 429 refused it, or the read showed a draft; a GET's
 * is unchanged.  First the exchange fed by hand (as a Lua transport feeds
 * it), then over libcurl and a mapi_loop against the sandbox's
 * fault-read-<status>[-txid] ids.  (tests/test_settle.c holds the rest of
 * settling and the deadline.)
 */
#include "testutil.h"

#define PUT_URL "http://h/api/public/v1/payouts/p"
#define JSONAPI "application/vnd.api+json"

/* ---- the exchange, by hand ---- */

/* A call of payout "p": the confirm (PUT, moves money, settled when settle)
   or, moves_money 0, its read (GET). */
static mapi_exchange *exchange(const char *method, int moves_money, int settle, int max_retries)
{
    mapi_call k;
    mapi_exchange_settings s;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_exchange *x;

    memset(&k, 0, sizeof k);
    k.method = method;
    k.url = PUT_URL;
    k.moves_money = moves_money;
    k.type = "payouts";
    k.id = "p";
    k.settle = settle;
    memset(&s, 0, sizeof s);
    s.api_key = "sk_test_settle_read";
    s.user_agent = "merchantapi/test";
    s.max_retries = max_retries;
    x = mapi_exchange_new(&k, &s, &err);
    if (!x)
        fail_msg("mapi_exchange_new: %s", err.message ? err.message : "?");
    return x;
}

static mapi_response *answer(int status, const char *body)
{
    return tu_response(status, JSONAPI, NULL, NULL, body);
}

static const char ERROR_502[] = "{\"errors\":[{\"status\":\"502\",\"code\":\"bad_gateway\"}]}";

/* The payout "p" whose attributes are attrs (JSON members). */
static char *payout(const char *attrs)
{
    static char doc[512];
    snprintf(doc, sizeof doc,
             "{\"data\":{\"type\":\"payouts\",\"id\":\"p\",\"attributes\":{%s}}}", attrs);
    return doc;
}

/* The confirm answered `status` (settled: the read begins), then the read
   answered the payout with attrs: the step that ends the call. */
static mapi_step confirm_then_read(mapi_exchange *x, int status, const char *attrs,
                                   mapi_error *e, mapi_doc **doc)
{
    double wait;

    mapi_exchange_begin_attempt(x);
    assert_int_equal(
        mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, answer(status, ERROR_502), e, doc, &wait),
        MAPI_STEP_SETTLE);
    assert_string_equal(mapi_exchange_begin_attempt(x)->method, "GET");
    return mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, answer(200, payout(attrs)), e, doc,
                                     &wait);
}

static void a_txid_or_processing_settles_it(void **state)
{
    /* a txid whatever the status (also a draft's, or none), or processing */
    static const char *const reads[][2] = {
        {"\"status\":\"expired\",\"txid\":\"ab12\"", "expired"},
        {"\"status\":\"draft\",\"txid\":\"ab12\"", "draft"},
        {"\"status\":\"failed\",\"txid\":\"ab12\"", "failed"},
        {"\"txid\":\"ab12\"", ""},
        {"\"status\":\"processing\",\"txid\":null", "processing"},
        {"\"status\":\"processing\"", "processing"},
    };
    size_t i;
    (void)state;

    for (i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        mapi_exchange *x = exchange("PUT", 1, 1, 2);
        mapi_error e = MAPI_ERROR_INIT;
        mapi_doc *doc = NULL;

        if (confirm_then_read(x, 502, reads[i][0], &e, &doc) != MAPI_STEP_DONE)
            fail_msg("%s: %s", reads[i][0], e.message ? e.message : "?");
        assert_string_equal(mapi_doc_settled_by(doc), "read");
        assert_string_equal(mapi_exchange_info(x)->settled_by, "read");
        assert_string_equal(tu_attr_str(mapi_doc_data(doc, 0), "status"), reads[i][1]);
        mapi_doc_free(doc);
        mapi_exchange_free(x);
    }
}

static void another_status_is_unknown_with_the_payout(void **state)
{
    /* states the interface does not show, a near miss of "processing", a
       txid that is no txid (not a string, or empty) */
    static const char *const reads[][2] = {
        {"\"status\":\"expired\",\"txid\":null", "expired"},
        {"\"status\":\"failed\"", "failed"},
        {"\"status\":\"cancelled\"", "cancelled"},
        {"\"status\":\"completed\"", "completed"},
        {"\"status\":\"Processing\"", "Processing"},
        {"\"status\":\"processing \"", "processing "},
        {"\"status\":\"expired\",\"txid\":\"\"", "expired"},
        {"\"status\":\"expired\",\"txid\":12", "expired"},
    };
    size_t i;
    (void)state;

    for (i = 0; i < sizeof reads / sizeof reads[0]; i++) {
        mapi_exchange *x = exchange("PUT", 1, 1, 2);
        mapi_error e = MAPI_ERROR_INIT;
        mapi_doc *doc = NULL;
        char want[64];

        assert_int_equal(confirm_then_read(x, 502, reads[i][0], &e, &doc), MAPI_STEP_FAILED);
        assert_null(doc);
        /* the confirm's error, nothing that reads as a success ... */
        assert_int_equal(e.kind, MAPI_ERR_API);
        assert_int_equal(e.status, 502);
        assert_string_equal(e.code, "bad_gateway");
        assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
        assert_int_equal(e.attempts, 1);
        assert_string_equal(e.method, "PUT");
        assert_int_equal(e.retryable, 0);
        assert_null(e.settle_error);
        assert_null(mapi_exchange_info(x)->settled_by);
        /* ... with the payout read, its status named */
        assert_non_null(e.payout);
        assert_null(mapi_doc_settled_by(e.payout));
        assert_string_equal(tu_attr_str(mapi_doc_data(e.payout, 0), "status"), reads[i][1]);
        snprintf(want, sizeof want, "; the payout read after it shows status \"%s\"",
                 reads[i][1]);
        if (!tu_contains(e.message, want))
            fail_msg("%s: message %s", reads[i][0], e.message);
        tu_assert_no_key(&e, "sk_test_settle_read");
        mapi_error_clear(&e);
        mapi_exchange_free(x);
    }
}

static void a_draft_is_unknown_and_safe_to_confirm_again(void **state)
{
    static const int statuses[] = {502, 500, 504};
    size_t i;
    (void)state;

    for (i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        mapi_exchange *x = exchange("PUT", 1, 1, 2);
        mapi_error e = MAPI_ERROR_INIT;
        mapi_doc *doc = NULL;

        assert_int_equal(confirm_then_read(x, statuses[i], "\"status\":\"draft\",\"txid\":null",
                                           &e, &doc),
                         MAPI_STEP_FAILED);
        assert_int_equal(e.status, statuses[i]);
        assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
        assert_non_null(e.payout);
        assert_string_equal(tu_attr_str(mapi_doc_data(e.payout, 0), "status"), "draft");
        /* retryable: calling again is safe, and may succeed -- a 500 too */
        assert_int_equal(e.retryable, 1);
        assert_true(tu_contains(e.message, "; the payout read after it shows status \"draft\""));
        mapi_error_clear(&e);
        mapi_exchange_free(x);
    }
}

/* A transport failure as a transport reports it (retryable, as for the
   exchange's own retries): outcome NOT_SENT or UNKNOWN. */
static void transport_failure(mapi_error *e, mapi_outcome outcome)
{
    mapi_error_set(e, MAPI_ERR_TRANSPORT, "connection refused");
    e->retryable = 1;
    e->outcome = outcome;
}

/* The call's last attempt ends with `status` (0: a transport failure of
   `outcome`), no retry left: its error. */
static void last_attempt(mapi_exchange *x, int status, mapi_outcome outcome, mapi_error *e)
{
    mapi_doc *doc = NULL;
    double wait;

    mapi_exchange_begin_attempt(x);
    if (status) {
        assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, answer(status, ERROR_502),
                                                   e, &doc, &wait),
                         MAPI_STEP_FAILED);
    } else {
        transport_failure(e, outcome);
        assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, e, &doc, &wait),
                         MAPI_STEP_FAILED);
    }
    assert_null(doc);
}

static void retryable_of_a_confirm(void **state)
{
    mapi_exchange *x;
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    int i;
    (void)state;

    /* unknown, not settled: never retryable, whatever the status said */
    x = exchange("PUT", 1, 0, 2);
    last_attempt(x, 502, MAPI_OUTCOME_NONE, &e);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(e.retryable, 0);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
    x = exchange("PUT", 1, 0, 0);
    last_attempt(x, 0, MAPI_OUTCOME_UNKNOWN, &e);
    assert_int_equal(e.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(e.retryable, 0);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
    /* the same for the generic call of a method that may move money */
    x = exchange("POST", 1, 0, 2);
    last_attempt(x, 503, MAPI_OUTCOME_NONE, &e);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(e.retryable, 0);
    mapi_error_clear(&e);
    mapi_exchange_free(x);

    /* nothing sent, or refused by a 429: retryable */
    x = exchange("PUT", 1, 1, 0);
    last_attempt(x, 0, MAPI_OUTCOME_NOT_SENT, &e);
    assert_int_equal(e.outcome, MAPI_OUTCOME_NOT_SENT);
    assert_int_equal(e.retryable, 1);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
    x = exchange("PUT", 1, 1, 0);
    last_attempt(x, 429, MAPI_OUTCOME_NONE, &e);
    assert_int_equal(e.outcome, MAPI_OUTCOME_REJECTED);
    assert_int_equal(e.retryable, 1);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
    /* refused otherwise (a 4xx): the same call fails the same way */
    x = exchange("PUT", 1, 1, 2);
    last_attempt(x, 422, MAPI_OUTCOME_NONE, &e);
    assert_int_equal(e.outcome, MAPI_OUTCOME_REJECTED);
    assert_int_equal(e.retryable, 0);
    mapi_error_clear(&e);
    mapi_exchange_free(x);

    /* the PUT answered 502, the read 503 three times (max_retries 2):
       unknown, not retryable; the read's own error is a GET's, retryable */
    x = exchange("PUT", 1, 1, 2);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(
        mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, answer(502, ERROR_502), &e, &doc, &wait),
        MAPI_STEP_SETTLE);
    for (i = 0; i < 3; i++) {
        mapi_exchange_begin_attempt(x);
        assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, answer(503, ERROR_502), &e,
                                                   &doc, &wait),
                         i < 2 ? MAPI_STEP_RETRY : MAPI_STEP_FAILED);
        if (i < 2)
            mapi_error_clear(&e);
    }
    assert_int_equal(e.status, 502);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(e.retryable, 0);
    assert_null(e.payout);
    assert_non_null(e.settle_error);
    assert_int_equal(e.settle_error->status, 503);
    assert_int_equal(e.settle_error->attempts, 3);
    assert_int_equal(e.settle_error->retryable, 1);
    mapi_error_clear(&e);
    mapi_exchange_free(x);

    /* the read stopped between its attempts (a sleep that failed, a loop
       freed): the same */
    x = exchange("PUT", 1, 1, 2);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(
        mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, answer(502, ERROR_502), &e, &doc, &wait),
        MAPI_STEP_SETTLE);
    mapi_exchange_begin_attempt(x);
    transport_failure(&e, MAPI_OUTCOME_NONE);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    mapi_exchange_fail(x, &e);
    assert_int_equal(e.status, 502);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(e.retryable, 0);
    assert_non_null(e.settle_error);
    assert_int_equal(e.settle_error->retryable, 1);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void retryable_of_a_get_is_unchanged(void **state)
{
    static const struct {
        int status;
        int retryable;
    } cases[] = {{503, 1}, {502, 1}, {504, 1}, {429, 1}, {500, 0}, {404, 0}, {422, 0}};
    mapi_exchange *x;
    mapi_error e = MAPI_ERROR_INIT;
    size_t i;
    (void)state;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        x = exchange("GET", 0, 0, 0);
        last_attempt(x, cases[i].status, MAPI_OUTCOME_NONE, &e);
        assert_int_equal(e.outcome, MAPI_OUTCOME_NONE);
        assert_int_equal(e.retryable, cases[i].retryable);
        mapi_error_clear(&e);
        mapi_exchange_free(x);
    }
    x = exchange("GET", 0, 0, 0);
    last_attempt(x, 0, MAPI_OUTCOME_UNKNOWN, &e);
    assert_int_equal(e.retryable, 1);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

/* ---- over libcurl and a mapi_loop, against the sandbox ---- */

typedef struct result {
    mapi_doc *doc;
    mapi_error err;
} result;

static void on_done(void *ctx, mapi_doc *doc, mapi_error *err)
{
    result *r = ctx;

    r->doc = doc;
    r->err = *err;
    *err = (mapi_error)MAPI_ERROR_INIT;
}

/* Confirms `id` (the sandbox's fault ids take a "~tag") blocking (tag "b")
   and on a loop (tag "l"): both results, each of its own payout. */
static void confirm_both_ways(mapi_client *c, const char *id, result r[2])
{
    char tagged[2][64];
    mapi_error err = MAPI_ERROR_INIT;
    mapi_loop *loop = mapi_loop_new(&err);
    int n;

    if (!loop)
        fail_msg("mapi_loop_new: %s", err.message ? err.message : "?");
    snprintf(tagged[0], sizeof tagged[0], "%s~b", id);
    snprintf(tagged[1], sizeof tagged[1], "%s~l", id);
    memset(r, 0, 2 * sizeof *r);
    r[0].err = r[1].err = (mapi_error)MAPI_ERROR_INIT;
    if (mapi_confirm_payout(c, tagged[0], &r[0].doc, &r[0].err) == 0)
        assert_non_null(r[0].doc);
    assert_int_equal(mapi_loop_confirm_payout(loop, c, tagged[1], NULL, on_done, &r[1], &err),
                     0);
    while ((n = mapi_loop_step(loop, 1.0)) > 0)
        ;
    assert_int_equal(n, 0);
    mapi_loop_free(loop);
    /* one PUT and one GET each: nothing sent twice */
    assert_int_equal(tu_sandbox_count(tagged[0]), 2);
    assert_int_equal(tu_sandbox_count(tagged[1]), 2);
}

static void results_clear(result r[2])
{
    int i;

    for (i = 0; i < 2; i++) {
        mapi_doc_free(r[i].doc);
        mapi_error_clear(&r[i].err);
    }
}

static void what_the_read_shows_over_libcurl_and_a_loop(void **state)
{
    static const char *const unknown[] = {"fault-read-expired", "fault-read-failed",
                                          "fault-read-cancelled", "fault-read-on_hold"};
    static const char *const settled[][2] = {{"fault-read-draft-txid", "draft"},
                                             {"fault-read-expired-txid", "expired"},
                                             {"fault-read-processing", "processing"}};
    mapi_client *c;
    result r[2];
    size_t i;
    int w;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client();
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *status = unknown[i] + strlen("fault-read-");
        char want[64];

        snprintf(want, sizeof want, "; the payout read after it shows status \"%s\"", status);
        confirm_both_ways(c, unknown[i], r);
        for (w = 0; w < 2; w++) {
            const mapi_error *e = &r[w].err;
            if (r[w].doc)
                fail_msg("%s: a success", unknown[i]);
            assert_int_equal(e->kind, MAPI_ERR_API);
            assert_int_equal(e->status, 502);
            assert_int_equal(e->outcome, MAPI_OUTCOME_UNKNOWN);
            assert_int_equal(e->attempts, 1);
            assert_int_equal(e->retryable, 0);
            assert_non_null(e->payout);
            assert_string_equal(tu_attr_str(mapi_doc_data(e->payout, 0), "status"), status);
            assert_true(tu_contains(e->message, want));
            assert_null(e->settle_error);
        }
        results_clear(r);
    }
    for (i = 0; i < sizeof settled / sizeof settled[0]; i++) {
        confirm_both_ways(c, settled[i][0], r);
        for (w = 0; w < 2; w++) {
            if (!r[w].doc)
                fail_msg("%s: %s", settled[i][0], r[w].err.message);
            assert_string_equal(mapi_doc_settled_by(r[w].doc), "read");
            assert_string_equal(tu_attr_str(mapi_doc_data(r[w].doc, 0), "status"), settled[i][1]);
        }
        results_clear(r);
    }
    /* still a draft: unknown, and calling again is safe */
    confirm_both_ways(c, "fault-read-draft", r);
    for (w = 0; w < 2; w++) {
        assert_null(r[w].doc);
        assert_int_equal(r[w].err.outcome, MAPI_OUTCOME_UNKNOWN);
        assert_int_equal(r[w].err.retryable, 1);
        assert_non_null(r[w].err.payout);
    }
    results_clear(r);
    mapi_client_free(c);
}

static void no_answer_then_a_failed_read_is_not_retryable(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client_ex(NULL, tu_api_key(), 1, 5, NULL);
    /* no answer to the PUT, none to the read's two GETs */
    assert_int_equal(mapi_confirm_payout(c, "fault-no-response", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(err.retryable, 0);
    assert_non_null(err.settle_error);
    assert_int_equal(err.settle_error->retryable, 1); /* a GET's: unchanged */
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-no-response"), 3);
    /* the PUT answered 503, the read 503 twice: the same */
    assert_int_equal(mapi_confirm_payout(c, "fault-503", &doc, &err), -1);
    assert_int_equal(err.status, 503);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(err.retryable, 0);
    assert_int_equal(err.settle_error->status, 503);
    assert_int_equal(err.settle_error->retryable, 1);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-503"), 3);
    /* a GET of the same faults: retryable, as before */
    assert_int_equal(mapi_get_payout(c, "fault-503", &doc, &err), -1);
    assert_int_equal(err.retryable, 1);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_txid_or_processing_settles_it),
        cmocka_unit_test(another_status_is_unknown_with_the_payout),
        cmocka_unit_test(a_draft_is_unknown_and_safe_to_confirm_again),
        cmocka_unit_test(retryable_of_a_confirm),
        cmocka_unit_test(retryable_of_a_get_is_unchanged),
        cmocka_unit_test(what_the_read_shows_over_libcurl_and_a_loop),
        cmocka_unit_test(no_answer_then_a_failed_read_is_not_retryable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_settle.c -- a confirm whose outcome is unknown settled by reading the
 * payout (merchantapi.h, mapi_confirm_payout "Settling"), the id of the
 * answer checked against the id asked for, and the whole-call deadline
 * ("Deadline"): first the exchange's decisions fed by hand (src/exchange.c,
 * as a Lua transport feeds them), then the same over libcurl against the
 * sandbox's fault ids, counting what reached it.
 */
#include "testutil.h"

#define PUT_URL "http://h/api/public/v1/payouts/p"
#define OTHER_ID "00000000-0000-4000-8000-000000000000"

static const char PAYOUT_PROCESSING[] =
    "{\"data\":{\"type\":\"payouts\",\"id\":\"p\",\"attributes\":{\"status\":\"processing\","
    "\"amount\":250.10}},\"meta\":{},\"jsonapi\":{\"version\":\"1.0\"}}";
static const char PAYOUT_DRAFT[] =
    "{\"data\":{\"type\":\"payouts\",\"id\":\"p\",\"attributes\":{\"status\":\"draft\"}}}";
static const char PAYOUT_NO_STATUS[] =
    "{\"data\":{\"type\":\"payouts\",\"id\":\"p\",\"attributes\":{\"amount\":1}}}";
static const char JSONAPI[] = "application/vnd.api+json";

/* ---- the exchange, by hand ---- */

/* The confirm of payout "p" (settle: read it after an unknown outcome). */
static mapi_exchange *confirm_exchange(int settle, int max_retries, double deadline)
{
    mapi_call k;
    mapi_exchange_settings s;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_exchange *x;

    memset(&k, 0, sizeof k);
    k.method = "PUT";
    k.url = PUT_URL;
    k.moves_money = 1;
    k.type = "payouts";
    k.id = "p";
    k.settle = settle;
    memset(&s, 0, sizeof s);
    s.api_key = "sk_test_settle";
    s.user_agent = "merchantapi/test";
    s.max_retries = max_retries;
    s.deadline = deadline;
    x = mapi_exchange_new(&k, &s, &err);
    if (!x)
        fail_msg("mapi_exchange_new: %s", err.message ? err.message : "?");
    return x;
}

static mapi_response *response(int status, const char *ct, const char *retry_after,
                               const char *body)
{
    return tu_response(status, ct, retry_after, NULL, body);
}

/* Runs the confirm's one attempt to a 502 (outcome unknown) and checks the
   exchange turns to the read: GET of the same URL, not a confirm. */
static void confirm_502_then_read(mapi_exchange *x, mapi_error *e)
{
    mapi_doc *doc = NULL;
    double wait = -1;
    const mapi_attempt_info *in;
    const mapi_call *r;

    in = mapi_exchange_begin_attempt(x);
    assert_string_equal(in->method, "PUT");
    assert_true(mapi_exchange_attempt_call(x)->moves_money);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               response(502, NULL, NULL, "<html>"), e, &doc, &wait),
                     MAPI_STEP_SETTLE);
    assert_null(doc);
    assert_int_equal(e->kind, MAPI_ERR_NONE); /* kept inside the exchange */
    assert_int_equal(mapi_exchange_info(x)->status, 502);
    assert_true(mapi_exchange_info(x)->retry_in < 0); /* the last PUT */
    in = mapi_exchange_begin_attempt(x);
    assert_string_equal(in->method, "GET");
    assert_int_equal(in->attempt, 1);
    r = mapi_exchange_attempt_call(x);
    assert_string_equal(r->method, "GET");
    assert_string_equal(r->url, PUT_URL);
    assert_false(r->moves_money);
    assert_string_equal(mapi_exchange_call(x)->method, "PUT"); /* the call as built */
}

static void settle_read_processing_is_confirmed(void **state)
{
    mapi_exchange *x = confirm_exchange(1, 2, 0);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    (void)state;

    confirm_502_then_read(x, &e);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               response(200, JSONAPI, NULL, PAYOUT_PROCESSING), &e,
                                               &doc, &wait),
                     MAPI_STEP_DONE);
    assert_non_null(doc);
    assert_string_equal(mapi_doc_settled_by(doc), "read");
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 200);
    assert_string_equal(tu_attr_str(mapi_doc_data(doc, 0), "status"), "processing");
    mapi_doc_free(doc);
    mapi_exchange_free(x);
}

static void settle_read_draft_keeps_unknown_with_the_payout(void **state)
{
    mapi_exchange *x = confirm_exchange(1, 2, 0);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    (void)state;

    confirm_502_then_read(x, &e);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               response(200, JSONAPI, NULL, PAYOUT_DRAFT), &e, &doc,
                                               &wait),
                     MAPI_STEP_FAILED);
    assert_null(doc);
    /* the confirm's own error ... */
    assert_int_equal(e.kind, MAPI_ERR_HTTP);
    assert_int_equal(e.status, 502);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(e.attempts, 1);
    assert_string_equal(e.method, "PUT");
    /* ... with the payout read */
    assert_non_null(e.payout);
    assert_string_equal(tu_attr_str(mapi_doc_data(e.payout, 0), "status"), "draft");
    assert_string_equal(e.payout_status, "draft"); /* copied: what the message names */
    assert_null(e.settle_error);
    assert_null(mapi_doc_settled_by(e.payout));
    mapi_error_clear(&e);
    assert_null(e.payout);
    assert_null(e.payout_status);
    mapi_exchange_free(x);
}

static void settle_read_failure_is_the_settle_error(void **state)
{
    mapi_exchange *x = confirm_exchange(1, 2, 0);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    (void)state;

    /* a 404 is not retried: the read fails at once */
    confirm_502_then_read(x, &e);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               response(404, JSONAPI, NULL,
                                                        "{\"errors\":[{\"status\":\"404\","
                                                        "\"code\":\"not_found\"}]}"),
                                               &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_int_equal(e.status, 502);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_string_equal(e.method, "PUT");
    assert_null(e.payout);
    assert_non_null(e.settle_error);
    assert_int_equal(e.settle_error->kind, MAPI_ERR_API);
    assert_int_equal(e.settle_error->status, 404);
    assert_string_equal(e.settle_error->code, "not_found");
    assert_string_equal(e.settle_error->method, "GET");
    assert_int_equal(e.settle_error->outcome, MAPI_OUTCOME_NONE);
    assert_int_equal(e.settle_error->attempts, 1);
    mapi_error_clear(&e);
    mapi_exchange_free(x);

    /* a payout read without a status settles nothing */
    x = confirm_exchange(1, 2, 0);
    confirm_502_then_read(x, &e);
    {
        mapi_response *r = response(200, JSONAPI, NULL, PAYOUT_NO_STATUS);
        assert_int_equal(mapi_response_add_header(r, "X-Request-Id", 12, "rid-read", 8), 0);
        assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, r, &e, &doc, &wait),
                         MAPI_STEP_FAILED);
    }
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_non_null(e.settle_error);
    assert_int_equal(e.settle_error->kind, MAPI_ERR_DECODE);
    assert_string_equal(e.settle_error->title, "the payout read has no status");
    assert_string_equal(e.settle_error->request_id, "rid-read");
    assert_non_null(e.settle_error->response);
    /* what an observer is handed next still lives (the document is gone) */
    assert_int_equal(mapi_exchange_info(x)->error, MAPI_ERR_DECODE);
    assert_string_equal(mapi_exchange_info(x)->request_id, "rid-read");
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void settle_is_only_for_an_unknown_outcome(void **state)
{
    mapi_exchange *x;
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    (void)state;

    /* rejected (4xx): the answer is known, no read */
    x = confirm_exchange(1, 2, 0);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(
        mapi_exchange_end_attempt(
            x, MAPI_ENDED_ANSWER,
            response(422, JSONAPI, NULL, "{\"errors\":[{\"code\":\"payout_invalid\"}]}"), &e, &doc,
            &wait),
        MAPI_STEP_FAILED);
    assert_int_equal(e.outcome, MAPI_OUTCOME_REJECTED);
    assert_null(e.settle_error);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
    /* settling off: the unknown outcome is the result */
    x = confirm_exchange(0, 2, 0);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, response(502, NULL, NULL, ""),
                                               &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_int_equal(e.outcome, MAPI_OUTCOME_UNKNOWN);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void deadline_rules_of_the_exchange(void **state)
{
    mapi_exchange *x = confirm_exchange(1, 5, 0.5);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait = -1, timeout, connect_timeout;
    size_t max_body;
    (void)state;

    mapi_exchange_begin_attempt(x);
    /* each attempt's timeout is what is left of the deadline, when less */
    mapi_exchange_limits(x, &timeout, &connect_timeout, &max_body);
    assert_true(timeout > 0 && timeout <= 0.5);
    assert_true(connect_timeout <= timeout);
    assert_int_equal(mapi_exchange_fits(x, 0), 1);
    assert_int_equal(mapi_exchange_fits(x, 60), 0);
    /* a 429 asking for more than is left ends the call at once */
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, response(429, NULL, "60", ""),
                                               &e, &doc, &wait),
                     MAPI_STEP_FAILED);
    assert_true(wait < 0);
    assert_int_equal(e.status, 429);
    assert_true(e.retry_after == 60.0);
    assert_int_equal(e.deadline_exceeded, 1);
    assert_int_equal(e.attempts, 1);
    assert_int_equal(e.outcome, MAPI_OUTCOME_REJECTED);
    assert_true(mapi_exchange_info(x)->retry_in < 0);
    mapi_error_clear(&e);
    mapi_exchange_free(x);

    /* a Retry-After that fits is waited for, as before */
    x = confirm_exchange(1, 5, 30);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER, response(429, NULL, "2", ""),
                                               &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    assert_true(wait == 2.0);
    assert_int_equal(e.deadline_exceeded, 0);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void default_deadline(void **state)
{
    (void)state;
    /* (max_retries + 1) x timeout plus the backoff caps 0.5, 1, 2, 4, 8, 8 ... */
    assert_true(mapi_default_deadline(30, 2) == 91.5);
    assert_true(mapi_default_deadline(2, 2) == 7.5);
    assert_true(mapi_default_deadline(1, 0) == 1.0);
    assert_true(mapi_default_deadline(1, 6) == 7.0 + 0.5 + 1 + 2 + 4 + 8 + 8);
}

static void id_is_byte_for_byte(void **state)
{
    static const char doc_nul[] =
        "{\"data\":{\"type\":\"payouts\",\"id\":\"abc\\u0000x\",\"attributes\":{}}}";
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;

    assert_int_equal(mapi_doc_parse(doc_nul, sizeof doc_nul - 1, &doc, &err), 0);
    assert_int_equal(mapi_resource_id_is(mapi_doc_data(doc, 0), "abc"), 0);
    assert_int_equal(mapi_resource_id_is(mapi_doc_data(doc, 0), "abc\\u0000x"), 0);
    mapi_doc_free(doc);
    assert_int_equal(mapi_doc_parse(PAYOUT_DRAFT, sizeof PAYOUT_DRAFT - 1, &doc, &err), 0);
    assert_int_equal(mapi_resource_id_is(mapi_doc_data(doc, 0), "p"), 1);
    assert_int_equal(mapi_resource_id_is(mapi_doc_data(doc, 0), "pp"), 0);
    assert_int_equal(mapi_resource_id_is(mapi_doc_data(doc, 0), ""), 0);
    mapi_doc_free(doc);
}

/* ---- over libcurl, against the sandbox ---- */

typedef struct seen {
    int n;
    char methods[16][8];
    int statuses[16];
} seen;

static void record(void *ctx, mapi_attempt_event ev, const mapi_attempt_info *in)
{
    seen *s = ctx;
    if (ev != MAPI_ATTEMPT_RESPONSE || s->n >= 16)
        return;
    snprintf(s->methods[s->n], sizeof s->methods[0], "%s", in->method);
    s->statuses[s->n] = in->status;
    s->n++;
}

static const mapi_call_opts settle_on = {NULL, 0, 0.0, MAPI_SETTLE_ON, NULL, NULL};

static void settled_when_the_confirm_was_applied(void **state)
{
    static const char *const ids[] = {"fault-applied-502", "fault-applied-no-response"};
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    seen s;
    size_t i;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    for (i = 0; i < 2; i++) {
        memset(&s, 0, sizeof s);
        mapi_client_set_observer(c, record, &s);
        if (mapi_confirm_payout(c, ids[i], &doc, &err) != 0)
            fail_msg("%s: %s", ids[i], err.message);
        assert_string_equal(mapi_doc_settled_by(doc), "read");
        assert_string_equal(mapi_resource_id(mapi_doc_data(doc, 0)), ids[i]);
        assert_string_equal(tu_attr_str(mapi_doc_data(doc, 0), "status"), "processing");
        assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 200);
        mapi_doc_free(doc);
        /* one PUT, one GET: nothing sent twice */
        assert_int_equal(tu_sandbox_count(ids[i]), 2);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.methods[0], "PUT");
        assert_int_equal(s.statuses[0], i == 0 ? 502 : 0);
        assert_string_equal(s.methods[1], "GET");
        assert_int_equal(s.statuses[1], 200);
    }
    assert_int_equal(sl.calls, 0); /* the read follows at once */
    mapi_client_free(c);
}

static void still_a_draft_then_confirmed_by_the_second_try(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client();
    /* the first request answers 502 without confirming */
    assert_int_equal(mapi_confirm_payout(c, "fault-flaky-1-502", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_API);
    assert_int_equal(err.status, 502);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(err.attempts, 1);
    assert_string_equal(err.method, "PUT");
    assert_non_null(err.payout);
    assert_string_equal(mapi_resource_id(mapi_doc_data(err.payout, 0)), "fault-flaky-1-502");
    assert_string_equal(tu_attr_str(mapi_doc_data(err.payout, 0), "status"), "draft");
    assert_null(err.settle_error);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-flaky-1-502"), 2);
    /* still a draft: confirming again is safe, and is the first 201 */
    if (mapi_confirm_payout(c, "fault-flaky-1-502", &doc, &err) != 0)
        fail_msg("%s", err.message);
    assert_null(mapi_doc_settled_by(doc));
    assert_int_equal(mapi_response_status(mapi_doc_response(doc)), 201);
    mapi_doc_free(doc);
    assert_int_equal(tu_sandbox_count("fault-flaky-1-502"), 3);
    mapi_client_free(c);
}

static void read_failing_keeps_the_confirm_error(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    assert_int_equal(mapi_confirm_payout(c, "fault-502-json", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_API);
    assert_int_equal(err.status, 502);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_int_equal(err.attempts, 1);
    assert_string_equal(err.method, "PUT");
    assert_null(err.payout);
    assert_non_null(err.settle_error);
    assert_int_equal(err.settle_error->status, 502);
    assert_string_equal(err.settle_error->method, "GET");
    assert_int_equal(err.settle_error->attempts, 3); /* retried as GETs are */
    assert_int_equal(err.settle_error->retryable, 1);
    assert_true(tu_contains(err.settle_error->message, "[GET /api/public/v1/payouts/"));
    tu_assert_no_key(err.settle_error, tu_api_key());
    mapi_error_clear(&err);
    assert_int_equal(sl.calls, 2);
    assert_int_equal(tu_sandbox_count("fault-502-json"), 4); /* 1 PUT + 3 GET */
    mapi_client_free(c);
}

static void settling_turned_off(void **state)
{
    mapi_config cfg;
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    mapi_config_init(&cfg);
    cfg.base_url = tu_base_url();
    cfg.api_key = tu_api_key();
    cfg.settle = MAPI_SETTLE_OFF;
    c = mapi_client_new(&cfg, &err);
    assert_non_null(c);
    /* the client's setting: no read */
    assert_int_equal(mapi_confirm_payout(c, "fault-applied-502", &doc, &err), -1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_null(err.payout);
    assert_null(err.settle_error);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-applied-502"), 1);
    /* a call may turn it on */
    if (mapi_confirm_payout_ex(c, "fault-applied-no-response", &settle_on, &doc, &err) != 0)
        fail_msg("%s", err.message);
    assert_string_equal(mapi_doc_settled_by(doc), "read");
    mapi_doc_free(doc);
    assert_int_equal(tu_sandbox_count("fault-applied-no-response"), 2);
    mapi_client_free(c);
    /* and off, on a client that settles */
    c = tu_client();
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-503", tu_no_settle(), &doc, &err), -1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-503"), 1);
    mapi_client_free(c);
}

static void another_id_is_decode(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_request_opts ro = MAPI_REQUEST_OPTS_INIT;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client();
    assert_int_equal(mapi_get_channel(c, "fault-other-id", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_int_equal(err.status, 200);
    assert_string_equal(err.title, "expected channels fault-other-id, got channels " OTHER_ID);
    assert_int_equal(err.retryable, 0);
    assert_int_equal(err.attempts, 1);
    assert_non_null(err.response);
    mapi_error_clear(&err);
    assert_int_equal(mapi_get_payout(c, "fault-other-id", &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "expected payouts fault-other-id, got payouts " OTHER_ID);
    mapi_error_clear(&err);
    /* the confirm: a 201 for another payout is not this one's confirmation */
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-other-id", tu_no_settle(), &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_int_equal(err.status, 201);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_string_equal(err.title, "expected payouts fault-other-id, got payouts " OTHER_ID);
    mapi_error_clear(&err);
    /* settled: the read answers for another payout too, so nothing is settled */
    assert_int_equal(mapi_confirm_payout(c, "fault-other-id", &doc, &err), -1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_non_null(err.settle_error);
    assert_int_equal(err.settle_error->kind, MAPI_ERR_DECODE);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-other-id"), 5);
    /* the generic call with a type and an id */
    ro.type = "channels";
    ro.id = "fault-other-id";
    assert_int_equal(mapi_request_ex(c, "GET", "/api/public/v1/channels/fault-other-id", NULL, 0,
                                     &ro, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    mapi_error_clear(&err);
    ro.type = NULL; /* an id needs a type */
    assert_int_equal(mapi_request_ex(c, "GET", "/api/public/v1/channels/x", NULL, 0, &ro, &doc,
                                     &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    /* the right id passes */
    if (mapi_get_channel(c, "fault-flaky-0-500", &doc, &err) != 0)
        fail_msg("%s", err.message);
    mapi_doc_free(doc);
    mapi_client_free(c);
}

static double since(double t0)
{
    return mapi_monotonic_seconds() - t0;
}

static void deadline_ends_a_long_retry_after_at_once(void **state)
{
    mapi_config cfg;
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_doc *docs[3] = {NULL, NULL, NULL};
    mapi_error errs[3] = {MAPI_ERROR_INIT, MAPI_ERROR_INIT, MAPI_ERROR_INIT};
    tu_sleeps sl;
    double t0;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);
    opts.deadline = 1;
    t0 = mapi_monotonic_seconds();
    assert_int_equal(mapi_confirm_payout_ex(c, "fault-429-after-60", &opts, &doc, &err), -1);
    assert_true(since(t0) < 3);
    assert_int_equal(err.kind, MAPI_ERR_API);
    assert_int_equal(err.status, 429);
    assert_true(err.retry_after == 60.0);
    assert_int_equal(err.deadline_exceeded, 1);
    assert_int_equal(err.attempts, 1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_REJECTED); /* a 429 was not taken */
    assert_null(err.settle_error);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-429-after-60"), 1);
    assert_int_equal(sl.calls, 0); /* never slept */
    mapi_client_free(c);

    /* the client's deadline, for a GET and for pages fetched at once */
    mapi_config_init(&cfg);
    cfg.base_url = tu_base_url();
    cfg.api_key = tu_api_key();
    cfg.deadline = 1;
    c = mapi_client_new(&cfg, &err);
    assert_non_null(c);
    t0 = mapi_monotonic_seconds();
    assert_int_equal(mapi_get_channel(c, "fault-429-after-60", &doc, &err), -1);
    assert_int_equal(err.deadline_exceeded, 1);
    assert_int_equal(err.attempts, 1);
    mapi_error_clear(&err);
    /* (one page in flight: the first one fails, the others are never sent) */
    assert_int_equal(mapi_list_addresses_pages(c, "fault-429-after-60", NULL, 1, 3, 1, docs,
                                               errs), -1);
    assert_true(since(t0) < 3);
    assert_int_equal(errs[0].status, 429);
    assert_int_equal(errs[0].deadline_exceeded, 1);
    assert_int_equal(errs[0].attempts, 1);
    assert_null(docs[0]);
    mapi_error_clear(&errs[0]);
    mapi_error_clear(&errs[1]);
    mapi_error_clear(&errs[2]);
    assert_null(docs[1]);
    assert_int_equal(errs[1].kind, MAPI_ERR_NONE);
    assert_int_equal(tu_sandbox_count("fault-429-after-60"), 3);
    mapi_client_free(c);
}

static double half(void *ctx)
{
    (void)ctx;
    return 0.5;
}

static void deadline_cuts_the_attempts(void **state)
{
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    tu_sleeps sl;
    double t0;
    (void)state;
    TU_NEED_SANDBOX();
    tu_sandbox_reset();
    /* timeout 10 s, deadline 1 s: the 3 s first byte is cut at 1 s */
    c = tu_client_ex(NULL, tu_api_key(), 2, 10.0, &sl);
    opts.deadline = 1;
    t0 = mapi_monotonic_seconds();
    assert_int_equal(mapi_get_channel_ex(c, "fault-slow-first-byte", &opts, &doc, &err), -1);
    assert_true(since(t0) < 2.5);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.curl_code, CURLE_OPERATION_TIMEDOUT);
    assert_int_equal(err.deadline_exceeded, 1);
    assert_int_equal(err.attempts, 1);
    mapi_error_clear(&err);
    assert_int_equal(tu_sandbox_count("fault-slow-first-byte"), 1);
    mapi_client_free(c);

    /* timeout 1 s, max_retries 2, deadline 1.5 s: the second attempt gets what is left
       after the first one and its backoff (0.25 s here), and there is no third */
    tu_sandbox_reset();
    c = tu_client_ex(NULL, tu_api_key(), 2, 1.0, &sl);
    mapi_client_set_random(c, half, NULL);
    opts.deadline = 1.5;
    t0 = mapi_monotonic_seconds();
    assert_int_equal(mapi_get_channel_ex(c, "fault-slow-first-byte", &opts, &doc, &err), -1);
    assert_true(since(t0) < 2.5);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(err.deadline_exceeded, 1);
    assert_int_equal(err.attempts, 2);
    mapi_error_clear(&err);
    assert_int_equal(sl.calls, 1);
    assert_true(sl.waits[0] == 0.25);
    assert_int_equal(tu_sandbox_count("fault-slow-first-byte"), 2);
    mapi_client_free(c);
}

static void deadline_usage(void **state)
{
    mapi_config cfg;
    mapi_client *c;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    mapi_request_opts ro = MAPI_REQUEST_OPTS_INIT;
    (void)state;
    mapi_config_init(&cfg);
    cfg.base_url = "http://127.0.0.1:9";
    cfg.api_key = TU_DEFAULT_KEY;
    cfg.deadline = -1;
    assert_null(mapi_client_new(&cfg, &err));
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    cfg.deadline = 0;
    c = mapi_client_new(&cfg, &err);
    assert_non_null(c);
    opts.deadline = -1;
    assert_int_equal(mapi_confirm_payout_ex(c, "p", &opts, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    mapi_error_clear(&err);
    opts.deadline = 0;
    opts.settle = (mapi_settle)7;
    assert_int_equal(mapi_confirm_payout_ex(c, "p", &opts, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    mapi_error_clear(&err);
    ro.deadline = -0.5;
    assert_int_equal(mapi_request_ex(c, "POST", "/x", NULL, 0, &ro, &doc, &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_USAGE);
    assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
    mapi_error_clear(&err);
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(settle_read_processing_is_confirmed),
        cmocka_unit_test(settle_read_draft_keeps_unknown_with_the_payout),
        cmocka_unit_test(settle_read_failure_is_the_settle_error),
        cmocka_unit_test(settle_is_only_for_an_unknown_outcome),
        cmocka_unit_test(deadline_rules_of_the_exchange),
        cmocka_unit_test(default_deadline),
        cmocka_unit_test(id_is_byte_for_byte),
        cmocka_unit_test(settled_when_the_confirm_was_applied),
        cmocka_unit_test(still_a_draft_then_confirmed_by_the_second_try),
        cmocka_unit_test(read_failing_keeps_the_confirm_error),
        cmocka_unit_test(settling_turned_off),
        cmocka_unit_test(another_id_is_decode),
        cmocka_unit_test(deadline_ends_a_long_retry_after_at_once),
        cmocka_unit_test(deadline_cuts_the_attempts),
        cmocka_unit_test(deadline_usage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

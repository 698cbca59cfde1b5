/*
 * test_attempt.c -- the record of each attempt (mapi_attempt_info by
 * OpenTelemetry's names, src/attempt.c and exchange.c): filled by hand
 * through an exchange (a retry, a failure of the confirm, the read that
 * settles it), the one MERCHANTAPI_DEBUG formatter, the server of a URL,
 * the endpoint of a generic call, W3C trace context (the check of a
 * caller's traceparent, a span per attempt in the header), and the same
 * record from the blocking driver and a loop against the sandbox.
 */
#include "testutil.h"

static const char JSONAPI[] = "application/vnd.api+json";
static const char CHANNEL_DOC[] =
    "{\"data\":{\"type\":\"channels\",\"id\":\"c1\",\"attributes\":{\"status\":\"enabled\"}}}";
static const char PAYOUT_PROCESSING[] =
    "{\"data\":{\"type\":\"payouts\",\"id\":\"p\",\"attributes\":{\"status\":\"processing\"}}}";

static mapi_exchange *exchange(const char *method, const char *url, const char *endpoint,
                               int moves_money, int max_retries)
{
    mapi_call k;
    mapi_exchange_settings s;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_exchange *x;

    memset(&k, 0, sizeof k);
    k.method = method;
    k.url = url;
    k.endpoint = endpoint;
    k.moves_money = moves_money;
    k.settle = moves_money;
    k.type = moves_money ? "payouts" : "channels";
    memset(&s, 0, sizeof s);
    s.api_key = "sk_attempt_key";
    s.user_agent = "merchantapi/test";
    s.max_retries = max_retries;
    x = mapi_exchange_new(&k, &s, &err);
    if (!x)
        fail_msg("mapi_exchange_new: %s", err.message ? err.message : "?");
    return x;
}

static void retry_then_ok(void **state)
{
    mapi_exchange *x = exchange("GET", "http://h:8080/api/public/v1/channels/c1?x=1",
                                "get_channel", 0, 2);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    const mapi_attempt_info *in;
    double wait, now = (double)time(NULL);
    (void)state;

    in = mapi_exchange_begin_attempt(x);
    assert_string_equal(in->method, "GET");
    assert_string_equal(in->url, "http://h:8080/api/public/v1/channels/c1?x=1"); /* query kept */
    assert_string_equal(in->server_address, "h");
    assert_int_equal(in->server_port, 8080);
    assert_string_equal(in->endpoint, "get_channel");
    assert_int_equal(in->resend_count, 0);
    assert_int_equal(in->max_attempts, 3);
    assert_true(in->start_time > now - 5 && in->start_time < now + 5);
    assert_null(in->outcome);
    assert_null(in->trace_id);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               tu_response(503, NULL, NULL, "r1", "<html>"), &e,
                                               &doc, &wait),
                     MAPI_STEP_RETRY);
    in = mapi_exchange_info(x);
    assert_int_equal(in->status, 503);
    assert_string_equal(in->error_type, "503"); /* OTel: the status code of an HTTP error */
    assert_string_equal(in->outcome, "retry");
    assert_string_equal(in->request_id, "r1");
    mapi_error_clear(&e);

    in = mapi_exchange_begin_attempt(x);
    assert_int_equal(in->resend_count, 1);
    assert_null(in->error_type);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               tu_response(200, JSONAPI, NULL, "r2", CHANNEL_DOC),
                                               &e, &doc, &wait),
                     MAPI_STEP_DONE);
    in = mapi_exchange_info(x);
    assert_string_equal(in->outcome, "ok");
    assert_null(in->error_type);
    assert_null(in->settled_by);
    assert_int_equal(in->attempt, 2);
    mapi_doc_free(doc);
    mapi_exchange_free(x);
}

static void transport_failure(mapi_error *e, mapi_outcome outcome)
{
    mapi_error_set(e, MAPI_ERR_TRANSPORT, "connection reset");
    e->retryable = 1;
    e->outcome = outcome;
}

static void confirm_unknown_then_settled(void **state)
{
    mapi_exchange *x = exchange("PUT", "https://[::1]/api/public/v1/payouts/p", "confirm_payout",
                                1, 2);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    const mapi_attempt_info *in;
    double wait;
    (void)state;

    in = mapi_exchange_begin_attempt(x);
    assert_string_equal(in->server_address, "::1");
    assert_int_equal(in->server_port, 443);
    transport_failure(&e, MAPI_OUTCOME_NOT_SENT); /* retried: provably not sent */
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_RETRY);
    assert_string_equal(mapi_exchange_info(x)->outcome, "retry");
    assert_string_equal(mapi_exchange_info(x)->error_type, "transport");
    mapi_error_clear(&e);

    mapi_exchange_begin_attempt(x);
    transport_failure(&e, MAPI_OUTCOME_UNKNOWN); /* may have arrived: settled by a read */
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_FAILED, NULL, &e, &doc, &wait),
                     MAPI_STEP_SETTLE);
    in = mapi_exchange_info(x);
    assert_string_equal(in->outcome, "unknown");
    assert_int_equal(in->status, 0);
    assert_string_equal(in->error_type, "transport");
    assert_int_equal(in->resend_count, 1);

    in = mapi_exchange_begin_attempt(x);
    assert_string_equal(in->method, "GET");
    assert_string_equal(in->endpoint, "get_payout");
    assert_int_equal(in->attempt, 1);
    assert_int_equal(in->resend_count, 0);
    assert_int_equal(mapi_exchange_end_attempt(
                         x, MAPI_ENDED_ANSWER,
                         tu_response(200, JSONAPI, NULL, "r3", PAYOUT_PROCESSING), &e, &doc, &wait),
                     MAPI_STEP_DONE);
    in = mapi_exchange_info(x);
    assert_string_equal(in->outcome, "ok");
    assert_string_equal(in->settled_by, "read");
    mapi_doc_free(doc);
    mapi_exchange_free(x);
}

static void rejected_confirm_is_its_status(void **state)
{
    mapi_exchange *x = exchange("PUT", "http://127.0.0.1/api/public/v1/payouts/p",
                                "confirm_payout", 1, 2);
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *doc = NULL;
    double wait;
    (void)state;

    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               tu_response(404, NULL, NULL, NULL, ""), &e, &doc,
                                               &wait),
                     MAPI_STEP_FAILED);
    assert_string_equal(mapi_exchange_info(x)->outcome, "rejected");
    assert_string_equal(mapi_exchange_info(x)->error_type, "404");
    assert_int_equal(mapi_exchange_info(x)->server_port, 80);
    mapi_error_clear(&e);
    mapi_exchange_free(x);
}

static void one_formatter(void **state)
{
    mapi_attempt_info in;
    char buf[256], small[12];
    int n;
    (void)state;

    memset(&in, 0, sizeof in);
    in.method = "GET";
    in.url = "http://h/x";
    in.attempt = 1;
    in.max_attempts = 3;
    in.status = 503;
    in.error = MAPI_ERR_API;
    in.code = "service_unavailable";
    in.title = "Service Unavailable";
    in.elapsed = 0.0041;
    in.request_id = "rid";
    in.retry_in = 0.21;
    n = mapi_attempt_format(&in, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    assert_string_equal(buf, "merchantapi: GET http://h/x attempt 1/3: 503 (api "
                             "service_unavailable) in 0.004 s, request id rid, retry in 0.210 s");
    in.status = 0;
    in.error = MAPI_ERR_TRANSPORT;
    in.code = NULL;
    in.title = "connection\nreset";
    in.request_id = NULL;
    in.retry_in = -1;
    mapi_attempt_format(&in, buf, sizeof buf);
    assert_string_equal(buf, "merchantapi: GET http://h/x attempt 1/3: no response (transport: "
                             "connection reset) in 0.004 s");
    /* as snprintf: truncated, NUL-terminated, the whole length returned */
    assert_int_equal(mapi_attempt_format(&in, small, sizeof small), (int)strlen(buf));
    assert_string_equal(small, "merchantapi");
    assert_int_equal(mapi_attempt_format(&in, NULL, 0), (int)strlen(buf));
    assert_int_equal(mapi_attempt_format(NULL, buf, sizeof buf), -1);
}

static void endpoint_of_a_generic_call(void **state)
{
    (void)state;
    assert_string_equal(mapi_endpoint_match("PUT", "/api/public/v1/payouts/p1"), "confirm_payout");
    assert_string_equal(mapi_endpoint_match("GET", "/api/public/v1/payouts/p1?a=1"), "get_payout");
    assert_string_equal(mapi_endpoint_match("GET", "/api/public/v1/accounts/a/addresses?page=2"),
                        "list_addresses");
    assert_null(mapi_endpoint_match("GET", "/api/public/v1/accounts/a"));
    assert_null(mapi_endpoint_match("POST", "/api/public/v1/payouts/p1"));
    assert_null(mapi_endpoint_match("GET", "/api/public/v1/channels/"));
    assert_null(mapi_endpoint_match("GET", "/api/public/v1/channels/c/x"));
    assert_null(mapi_endpoint_match("GET", "/other"));
}

/* The value of the exchange's request header name, or NULL. */
static const char *header(const mapi_exchange *x, const char *name)
{
    const char *n, *v;
    size_t i;

    for (i = 0; mapi_exchange_header_at(x, i, &n, &v); i++)
        if (mapi_header_name_equal(n, name))
            return v;
    return NULL;
}

/* The ids drawn for a trace: the generator's bytes, low byte first, as
   lowercase hex; an id of zeros (the rule of trace_context.c) drawn again. */
static void trace_ids(void **state)
{
    static const char hex[] = "0123456789abcdef";
    uint64_t st = 12345, ref = 12345, r = 0;
    char id[33], want[33];
    size_t i;
    (void)state;

    mapi_trace_id(&st, id, 16);
    for (i = 0; i < 16; i++) {
        if (i % 8 == 0)
            r = mapi_trace_next(&ref);
        want[2 * i] = hex[(r >> 4) & 0xf];
        want[2 * i + 1] = hex[r & 0xf];
        r >>= 8;
    }
    want[32] = '\0';
    assert_string_equal(id, want);
    assert_int_equal(st, ref); /* two draws for 16 bytes, no more */
    assert_true(mapi_trace_hex(id, 32, 1));

    /* splitmix64 gives 0 for the state just before 0: that id is drawn again */
    st = 0 - 0x9E3779B97F4A7C15ULL;
    ref = st;
    assert_int_equal(mapi_trace_next(&ref), 0);
    mapi_trace_id(&st, id, 8);
    assert_int_equal(strlen(id), 16);
    assert_false(mapi_trace_id_zero(id, 16));
    assert_true(mapi_trace_hex(id, 16, 1));

    assert_true(mapi_trace_id_zero("0000000000000000", 16));
    assert_false(mapi_trace_id_zero("0000000000000001", 16));
    assert_false(mapi_trace_id_zero("00000000000000000000000000000000f", 33));
    assert_false(mapi_trace_hex("00000000000000000000000000000000", 32, 1));
    assert_true(mapi_trace_hex("00", 2, 0));
}

static void trace_context(void **state)
{
    static const char *const bad[] = {
        "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-",
        "00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    };
    const char *tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    mapi_error e = MAPI_ERROR_INIT;
    mapi_exchange_settings s;
    mapi_exchange *x;
    mapi_call k;
    const mapi_attempt_info *in;
    char first[64];
    size_t i;
    (void)state;

    assert_int_equal(mapi_trace_check(tp, "congo=t61rcWkgMzE", &e), 0);
    assert_int_equal(mapi_trace_check(NULL, NULL, &e), 0);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(mapi_trace_check(bad[i], NULL, &e), -1);
        assert_int_equal(e.kind, MAPI_ERR_USAGE);
        mapi_error_clear(&e);
    }
    assert_int_equal(mapi_trace_check(NULL, "a=b", &e), -1); /* no traceparent */
    mapi_error_clear(&e);
    assert_int_equal(mapi_trace_check(tp, "a=\nb", &e), -1);
    mapi_error_clear(&e);

    /* the caller's trace: a span per attempt in the header's parent-id field */
    memset(&k, 0, sizeof k);
    k.method = "GET";
    k.url = "http://h/api/public/v1/channels/c1";
    k.traceparent = tp;
    k.tracestate = "congo=t61rcWkgMzE";
    memset(&s, 0, sizeof s);
    s.user_agent = "merchantapi/test";
    s.trace_seed = mapi_trace_seed();
    x = mapi_exchange_new(&k, &s, &e);
    assert_non_null(x);
    in = mapi_exchange_begin_attempt(x);
    assert_string_equal(in->trace_id, "0af7651916cd43dd8448eb211c80319c");
    assert_string_equal(in->parent_span_id, "b7ad6b7169203331");
    assert_int_equal(strlen(in->span_id), 16);
    snprintf(first, sizeof first, "00-0af7651916cd43dd8448eb211c80319c-%s-01", in->span_id);
    assert_string_equal(header(x, "traceparent"), first);
    assert_string_equal(header(x, "tracestate"), "congo=t61rcWkgMzE");
    in = mapi_exchange_begin_attempt(x);
    assert_string_not_equal(header(x, "traceparent"), first); /* a new span */
    assert_memory_equal(header(x, "traceparent") + 36, in->span_id, 16);
    mapi_exchange_free(x);

    /* a new trace (mapi_config.trace): random ids, no parent, sampled */
    k.traceparent = k.tracestate = NULL;
    s.trace = 1;
    x = mapi_exchange_new(&k, &s, &e);
    assert_non_null(x);
    in = mapi_exchange_begin_attempt(x);
    assert_int_equal(strlen(in->trace_id), 32);
    assert_null(in->parent_span_id);
    assert_int_equal(strlen(header(x, "traceparent")), 55);
    assert_memory_equal(header(x, "traceparent") + 3, in->trace_id, 32);
    assert_string_equal(header(x, "traceparent") + 53, "01");
    assert_null(header(x, "tracestate"));
    mapi_exchange_free(x);

    /* untraced: no header, no ids */
    s.trace = 0;
    x = mapi_exchange_new(&k, &s, &e);
    assert_non_null(x);
    in = mapi_exchange_begin_attempt(x);
    assert_null(in->trace_id);
    assert_null(header(x, "traceparent"));
    mapi_exchange_free(x);
}

/* ---- against the sandbox: the blocking driver and a loop alike ---- */

typedef struct seen {
    int n;
    char lines[8][512];
} seen;

/* What a RESPONSE record holds, as one comparable line (times aside). */
static void record(void *ctx, mapi_attempt_event ev, const mapi_attempt_info *in)
{
    seen *s = ctx;

    if (ev != MAPI_ATTEMPT_RESPONSE || s->n >= 8)
        return;
    assert_true(in->elapsed >= 0 && in->start_time > 0);
    snprintf(s->lines[s->n++], sizeof s->lines[0], "%s %s %s:%d %d %s %d %s %s %d",
             in->method, strstr(in->url, "/api/"), in->server_address, in->server_port,
             in->status, in->error_type ? in->error_type : "-", in->resend_count, in->outcome,
             in->endpoint ? in->endpoint : "-", in->attempt);
}

static void done(void *ctx, mapi_doc *doc, mapi_error *err)
{
    (void)ctx;
    assert_int_equal(err->kind, MAPI_ERR_NONE);
    mapi_doc_free(doc);
}

static void same_record_from_every_driver(void **state)
{
    seen blocking, looped;
    mapi_client *c;
    mapi_loop *l;
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    tu_sleeps sl;
    char want[128];
    int i;
    (void)state;
    TU_NEED_SANDBOX();
    memset(&blocking, 0, sizeof blocking);
    memset(&looped, 0, sizeof looped);
    c = tu_client_ex(NULL, tu_api_key(), 2, 0, &sl);

    tu_sandbox_reset();
    mapi_client_set_observer(c, record, &blocking);
    assert_int_equal(mapi_get_channel(c, "fault-flaky-1-503", &doc, &err), 0);
    mapi_doc_free(doc);

    tu_sandbox_reset();
    mapi_client_set_observer(c, record, &looped);
    l = mapi_loop_new(&err);
    assert_non_null(l);
    assert_int_equal(mapi_loop_get_channel(l, c, "fault-flaky-1-503", NULL, done, NULL, &err), 0);
    while (mapi_loop_step(l, 0.05) > 0)
        ;
    mapi_loop_free(l);

    assert_int_equal(blocking.n, 2);
    assert_int_equal(looped.n, 2);
    for (i = 0; i < 2; i++)
        assert_string_equal(blocking.lines[i], looped.lines[i]);
    snprintf(want, sizeof want, "GET /api/public/v1/channels/fault-flaky-1-503 ");
    assert_memory_equal(blocking.lines[0], want, strlen(want));
    assert_non_null(strstr(blocking.lines[0], " 503 503 0 retry get_channel 1"));
    assert_non_null(strstr(blocking.lines[1], " 200 - 1 ok get_channel 2"));
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_then_ok),
        cmocka_unit_test(confirm_unknown_then_settled),
        cmocka_unit_test(rejected_confirm_is_its_status),
        cmocka_unit_test(one_formatter),
        cmocka_unit_test(endpoint_of_a_generic_call),
        cmocka_unit_test(trace_ids),
        cmocka_unit_test(trace_context),
        cmocka_unit_test(same_record_from_every_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_metrics.c -- a client's metrics cells (src/metrics.c): an attempt
 * counted in the cell of its attribute set, the bucket by OpenTelemetry's
 * boundaries (le: inclusive), the counters each record adds to, the bound
 * of 128 cells and the overflow cell, a take (a flush to a shared dict),
 * the exchange counting every attempt where it ends, and a client's cells
 * at 0 for each endpoint from the start.
 */
#include "testutil.h"

static const char JSONAPI[] = "application/vnd.api+json";
static const char CHANNEL_DOC[] =
    "{\"data\":{\"type\":\"channels\",\"id\":\"c1\",\"attributes\":{\"status\":\"enabled\"}}}";

static mapi_attempt_info record(int status, const char *error_type, double elapsed)
{
    mapi_attempt_info in;

    memset(&in, 0, sizeof in);
    in.method = "GET";
    in.server_address = "h";
    in.server_port = 8080;
    in.endpoint = "list_addresses";
    in.status = status;
    in.error_type = error_type;
    in.elapsed = elapsed;
    return in;
}

static void one_cell_per_attribute_set(void **state)
{
    mapi_metrics *m = mapi_metrics_new();
    mapi_attempt_info in = record(200, NULL, 0.005);
    char method[] = "GET"; /* the same text at another address: the same cell */
    const mapi_metrics_cell *c;
    (void)state;

    assert_non_null(m);
    mapi_metrics_record(m, &in); /* le 0.005: the first bucket */
    in.elapsed = 0.0050001;
    in.method = method;
    in.resend_count = 1;
    mapi_metrics_record(m, &in); /* the second */
    in.elapsed = 11;
    in.resend_count = 0;
    mapi_metrics_record(m, &in); /* above 10 s: the last */
    assert_int_equal(mapi_metrics_cells(m), 1);
    c = mapi_metrics_cell_at(m, 0);
    assert_int_equal(c->buckets[0], 1);
    assert_int_equal(c->buckets[1], 1);
    assert_int_equal(c->buckets[MAPI_METRICS_BUCKETS - 1], 1);
    assert_true(c->sum > 11.01 && c->sum < 11.011);
    assert_int_equal(c->retries, 1);
    assert_int_equal(c->pages, 3); /* successes of an endpoint that lists */
    assert_string_equal(c->method, "GET");
    assert_int_equal(c->status, 200);
    assert_null(c->error_type);

    in = record(503, "503", 0.2);
    in.outcome = "unknown";
    mapi_metrics_record(m, &in);
    in = record(0, "transport", 0.2);
    in.settled_by = "read";
    mapi_metrics_record(m, &in);
    assert_int_equal(mapi_metrics_cells(m), 3);
    c = mapi_metrics_cell_at(m, 1);
    assert_string_equal(c->error_type, "503");
    assert_int_equal(c->unknown_outcomes, 1);
    assert_int_equal(c->pages, 0); /* a failure is no page */
    assert_int_equal(mapi_metrics_cell_at(m, 2)->settled_confirms, 1);
    assert_null(mapi_metrics_cell_at(m, 3));
    mapi_metrics_release(m);
}

static void bounded_with_an_overflow_cell(void **state)
{
    mapi_metrics *m = mapi_metrics_new();
    char type[8];
    int status;
    size_t i;
    uint64_t total = 0;
    const mapi_metrics_cell *over;
    (void)state;

    for (status = 400; status < 600; status++) { /* 200 attribute sets */
        mapi_attempt_info in;
        snprintf(type, sizeof type, "%d", status);
        in = record(status, type, 0.01);
        mapi_metrics_record(m, &in);
    }
    assert_int_equal(mapi_metrics_cells(m), MAPI_METRICS_CELLS + 1);
    for (i = 0; i < mapi_metrics_cells(m); i++) {
        const mapi_metrics_cell *c = mapi_metrics_cell_at(m, i);
        int b;
        for (b = 0; b < MAPI_METRICS_BUCKETS; b++)
            total += c->buckets[b];
    }
    assert_int_equal(total, 200); /* none lost */
    over = mapi_metrics_cell_at(m, MAPI_METRICS_CELLS);
    assert_int_equal(over->overflow, 1);
    assert_null(over->method);
    assert_int_equal(over->status, 0);
    assert_int_equal(over->buckets[1], 200 - MAPI_METRICS_CELLS);
    mapi_metrics_release(m);
}

static void a_take_gives_what_is_new(void **state)
{
    mapi_metrics *m = mapi_metrics_new();
    mapi_attempt_info in = record(200, NULL, 0.3);
    mapi_metrics_cell c;
    (void)state;

    assert_int_equal(mapi_metrics_seed(m, &in), 0); /* at 0, not taken yet */
    assert_int_equal(mapi_metrics_take_cell(m, 0, &c), 1);
    assert_int_equal(c.untaken, 1);
    assert_int_equal(c.buckets[7], 0);
    assert_int_equal(mapi_metrics_take_cell(m, 0, &c), 0); /* nothing new */
    mapi_metrics_record(m, &in);
    mapi_metrics_record(m, &in);
    assert_int_equal(mapi_metrics_take_cell(m, 0, &c), 1);
    assert_int_equal(c.untaken, 0);
    assert_int_equal(c.buckets[7], 2); /* 0.3: le 0.5 */
    assert_int_equal(c.pages, 2);
    assert_int_equal(mapi_metrics_cell_at(m, 0)->buckets[7], 0); /* taken: 0 again */
    assert_int_equal(mapi_metrics_take_cell(m, 0, &c), 0);
    assert_int_equal(mapi_metrics_take_cell(m, 1, &c), 0); /* no such cell */
    mapi_metrics_release(m);
}

static void the_exchange_counts_each_attempt(void **state)
{
    mapi_metrics *m = mapi_metrics_new();
    mapi_call k;
    mapi_exchange_settings s;
    mapi_error e = MAPI_ERROR_INIT;
    mapi_exchange *x;
    mapi_doc *doc = NULL;
    double wait;
    const mapi_metrics_cell *c;
    (void)state;

    memset(&k, 0, sizeof k);
    k.method = "GET";
    k.url = "http://h:8080/api/public/v1/channels/c1";
    k.endpoint = "get_channel";
    k.type = "channels";
    memset(&s, 0, sizeof s);
    s.user_agent = "merchantapi/test";
    s.max_retries = 2;
    s.metrics = m;
    x = mapi_exchange_new(&k, &s, &e);
    assert_non_null(x);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               tu_response(503, NULL, NULL, "r1", "<html>"), &e,
                                               &doc, &wait),
                     MAPI_STEP_RETRY);
    mapi_error_clear(&e);
    mapi_exchange_begin_attempt(x);
    assert_int_equal(mapi_exchange_end_attempt(x, MAPI_ENDED_ANSWER,
                                               tu_response(200, JSONAPI, NULL, "r2", CHANNEL_DOC),
                                               &e, &doc, &wait),
                     MAPI_STEP_DONE);
    mapi_doc_free(doc);
    mapi_exchange_free(x);
    assert_int_equal(mapi_metrics_cells(m), 2);
    c = mapi_metrics_cell_at(m, 0);
    assert_int_equal(c->status, 503);
    assert_string_equal(c->error_type, "503");
    assert_string_equal(c->server_address, "h");
    assert_int_equal(c->server_port, 8080);
    assert_string_equal(c->endpoint, "get_channel");
    c = mapi_metrics_cell_at(m, 1);
    assert_int_equal(c->status, 200);
    assert_int_equal(c->retries, 1); /* the second attempt resent the request */
    assert_int_equal(c->pages, 0);   /* get_channel lists nothing */
    mapi_metrics_release(m);
}

static void a_client_has_each_endpoint_at_0(void **state)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *client;
    mapi_metrics *m;
    size_t r;
    (void)state;

    mapi_config_init(&cfg);
    cfg.base_url = "http://127.0.0.1:9";
    client = mapi_client_new(&cfg, &err);
    assert_non_null(client);
    m = mapi_client_metrics(client);
    assert_non_null(m);
    assert_ptr_equal(mapi_client_metrics(client), m); /* made once */
    assert_int_equal(mapi_metrics_cells(m), MAPI_EP_COUNT);
    for (r = 0; r < MAPI_EP_COUNT; r++) {
        const mapi_metrics_cell *c = mapi_metrics_cell_at(m, r);
        assert_string_equal(c->endpoint, mapi_endpoints[r].name);
        assert_string_equal(c->method, mapi_endpoints[r].method);
        assert_string_equal(c->server_address, "127.0.0.1");
        assert_int_equal(c->server_port, 9);
        assert_int_equal(c->status, 0);
        assert_int_equal(c->buckets[0] + c->retries + c->pages, 0);
    }
    mapi_metrics_retain(m); /* kept past the client */
    mapi_client_free(client);
    assert_int_equal(mapi_metrics_cells(m), MAPI_EP_COUNT);
    mapi_metrics_release(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_cell_per_attribute_set),
        cmocka_unit_test(bounded_with_an_overflow_cell),
        cmocka_unit_test(a_take_gives_what_is_new),
        cmocka_unit_test(the_exchange_counts_each_attempt),
        cmocka_unit_test(a_client_has_each_endpoint_at_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_limits.c -- the option limits of src/limits.c, the one home of every
 * option value's check: the C API refuses what the Lua module refuses, with
 * the same USAGE titles (spec/calls/limits_spec.lua asserts the same strings
 * from Lua), before anything is sent: the sandbox sees no request, and a
 * confirm so refused is outcome NOT_SENT.
 */
#include <math.h>

#include "testutil.h"

#define T_SECONDS(name) name " must be a number of seconds > 0 (at most 1e9)"
#define T_RETRIES "max_retries must be an integer from 0 to 100"
#define T_BODY "max_body must be a number of bytes >= 1"
#define T_PAGE "page must be an integer >= 1"
#define T_PER_PAGE "per_page must be an integer >= 1"
#define T_ORDER "order must be \"created_at\""
#define T_ORDER_TYPE "order_type must be \"asc\" or \"desc\""

#define ACCOUNT "acct-22"

static void each_limit(void **state)
{
    (void)state;
    assert_null(mapi_limit_deadline(0.001));
    assert_null(mapi_limit_deadline(1e9));
    assert_string_equal(mapi_limit_deadline(0), T_SECONDS("deadline"));
    assert_string_equal(mapi_limit_deadline(-1), T_SECONDS("deadline"));
    assert_string_equal(mapi_limit_deadline(NAN), T_SECONDS("deadline"));
    assert_string_equal(mapi_limit_deadline(INFINITY), T_SECONDS("deadline"));
    assert_string_equal(mapi_limit_deadline(1e9 + 1), T_SECONDS("deadline"));
    assert_string_equal(mapi_limit_timeout(-0.5), T_SECONDS("timeout"));
    assert_string_equal(mapi_limit_connect_timeout(NAN), T_SECONDS("connect_timeout"));
    assert_null(mapi_limit_timeout(30));

    assert_null(mapi_limit_max_retries(0));
    assert_null(mapi_limit_max_retries(MAPI_MAX_RETRIES));
    assert_string_equal(mapi_limit_max_retries(MAPI_MAX_RETRIES + 1), T_RETRIES);
    assert_string_equal(mapi_limit_max_retries(-1), T_RETRIES);

    assert_null(mapi_limit_max_body(1));
    assert_string_equal(mapi_limit_max_body(0), T_BODY);

    assert_null(mapi_limit_page(1));
    assert_string_equal(mapi_limit_page(0), T_PAGE);
    assert_string_equal(mapi_limit_per_page(-5), T_PER_PAGE);
    assert_null(mapi_limit_order("created_at"));
    assert_string_equal(mapi_limit_order("label"), T_ORDER);
    assert_string_equal(mapi_limit_order(""), T_ORDER);
    assert_null(mapi_limit_order_type("asc"));
    assert_null(mapi_limit_order_type("desc"));
    assert_string_equal(mapi_limit_order_type("foo"), T_ORDER_TYPE);
    assert_string_equal(mapi_limit_order_type("ASC"), T_ORDER_TYPE);
}

/* mapi_client_new: the titles Lua's merchantapi.new gives; 0 is the default. */
static void client_options(void **state)
{
    static const struct {
        double timeout, connect_timeout, deadline;
        int max_retries;
        const char *title;
    } cases[] = {
        {-1, 10, 0, 2, T_SECONDS("timeout")},
        {NAN, 10, 0, 2, T_SECONDS("timeout")},
        {30, -1, 0, 2, T_SECONDS("connect_timeout")},
        {30, 10, -1, 2, T_SECONDS("deadline")},
        {30, 10, NAN, 2, T_SECONDS("deadline")},
        {30, 10, INFINITY, 2, T_SECONDS("deadline")},
        {30, 10, 0, -1, T_RETRIES},
        {30, 10, 0, 101, T_RETRIES},
        {30, 10, 0, 1000000, T_RETRIES}, /* before: no upper bound in C */
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_config cfg;
        mapi_error err = MAPI_ERROR_INIT;
        mapi_client *c;
        mapi_config_init(&cfg);
        cfg.base_url = "http://127.0.0.1:1";
        cfg.timeout = cases[i].timeout;
        cfg.connect_timeout = cases[i].connect_timeout;
        cfg.deadline = cases[i].deadline;
        cfg.max_retries = cases[i].max_retries;
        c = mapi_client_new(&cfg, &err);
        if (c)
            fail_msg("case %zu: a client was made", i);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_string_equal(err.title, cases[i].title);
        mapi_error_clear(&err);
    }
    {
        /* zeros: the defaults */
        mapi_config cfg;
        mapi_error err = MAPI_ERROR_INIT;
        mapi_client *c;
        memset(&cfg, 0, sizeof cfg);
        cfg.base_url = "http://127.0.0.1:1";
        c = mapi_client_new(&cfg, &err);
        assert_non_null(c);
        mapi_client_free(c);
    }
}

/* A list's parameters and a call's deadline: USAGE, nothing sent. */
static void call_options_send_nothing(void **state)
{
    static const struct {
        const char *order, *order_type;
        long page, per_page;
        const char *title;
    } cases[] = {
        {NULL, "foo", 0, 0, T_ORDER_TYPE}, /* before: sent as order_type=foo */
        {"label", NULL, 0, 0, T_ORDER},
        {"", NULL, 0, 0, T_ORDER},
        {NULL, NULL, -1, 0, T_PAGE},
        {NULL, NULL, 0, -5, T_PER_PAGE},
    };
    mapi_client *c;
    mapi_doc *doc = NULL;
    size_t i;

    (void)state;
    if (!tu_base_url())
        skip();
    tu_sandbox_reset();
    c = tu_client();
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mapi_page_params p;
        mapi_error err = MAPI_ERROR_INIT;
        memset(&p, 0, sizeof p);
        p.order = cases[i].order;
        p.order_type = cases[i].order_type;
        p.page = cases[i].page;
        p.per_page = cases[i].per_page;
        assert_int_equal(mapi_list_addresses(c, ACCOUNT, &p, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_string_equal(err.title, cases[i].title);
        mapi_error_clear(&err);
    }
    {
        mapi_call_opts o = MAPI_CALL_OPTS_INIT;
        mapi_request_opts r = MAPI_REQUEST_OPTS_INIT;
        mapi_error err = MAPI_ERROR_INIT;

        o.deadline = -1;
        o.settle = MAPI_SETTLE_OFF;
        assert_int_equal(mapi_confirm_payout_ex(c, TU_PAYOUT_ID, &o, &doc, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_string_equal(err.title, T_SECONDS("deadline"));
        assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
        mapi_error_clear(&err);

        o.deadline = NAN;
        assert_int_equal(mapi_list_addresses_ex(c, ACCOUNT, NULL, &o, &doc, &err), -1);
        assert_string_equal(err.title, T_SECONDS("deadline"));
        mapi_error_clear(&err);

        r.max_retries = 101;
        assert_int_equal(mapi_request_ex(c, "PUT", "/api/public/v1/payouts/" TU_PAYOUT_ID, NULL, 0,
                                         &r, &doc, &err),
                         -1);
        assert_int_equal(err.kind, MAPI_ERR_USAGE);
        assert_string_equal(err.title, T_RETRIES);
        assert_int_equal(err.outcome, MAPI_OUTCOME_NOT_SENT);
        mapi_error_clear(&err);
    }
    mapi_client_free(c);
    assert_int_equal(tu_sandbox_count(ACCOUNT), 0);
    assert_int_equal(tu_sandbox_count(TU_PAYOUT_ID), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_limit),
        cmocka_unit_test(client_options),
        cmocka_unit_test(call_options_send_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

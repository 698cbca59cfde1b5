/*
 * test_retry.c -- src/retry.c: Retry-After values, the backoff and its random
 * source, the statuses worth another attempt.
 */
#include <time.h>

#include "testutil.h"

static void retry_after_values(void **state)
{
    time_t now = time(NULL);
    char date[64];
    time_t in10 = now + 10;
    (void)state;
    assert_true(mapi_retry_after_parse("1", now) == 1.0);
    assert_true(mapi_retry_after_parse(" 5 ", now) == 5.0);
    assert_true(mapi_retry_after_parse("0", now) == 0.0);
    assert_true(mapi_retry_after_parse("120", now) == 60.0);              /* capped */
    assert_true(mapi_retry_after_parse("99999999999999999999999", now) == 60.0);
    assert_true(mapi_retry_after_parse(NULL, now) == -1.0);
    assert_true(mapi_retry_after_parse("", now) == -1.0);
    assert_true(mapi_retry_after_parse("-1", now) == -1.0);
    assert_true(mapi_retry_after_parse("1.5", now) == -1.0);
    assert_true(mapi_retry_after_parse("soon", now) == -1.0);
    /* an HTTP date: the difference to now */
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime(&in10));
    assert_true(mapi_retry_after_parse(date, now) == 10.0);
    assert_true(mapi_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", now) == 0.0);
    assert_true(mapi_retry_after_parse("Fri, 31 Dec 2100 23:59:59 GMT", now) == 60.0);
}

static int jitter_calls;
static double half(void *ctx)
{
    (void)ctx;
    jitter_calls++;
    return 0.5;
}

/* "Retry-After first, else backoff": the exchange's and wait_for_txid's one rule */
static void retry_wait_order(void **state)
{
    (void)state;
    jitter_calls = 0;
    assert_true(mapi_retry_wait(7.0, 3, 0, 0, half, NULL) == 7.0); /* the server's word */
    assert_true(mapi_retry_wait(0.0, 3, 0, 0, half, NULL) == 0.0); /* "Retry-After: 0" too */
    assert_int_equal(jitter_calls, 0); /* no random draw when none is needed */
    assert_true(mapi_retry_wait(-1, 2, 0, 0, half, NULL) == 1.0); /* the client's backoff */
    assert_int_equal(jitter_calls, 1);
    assert_true(mapi_retry_wait(-1, 30, 0, 0, NULL, NULL) == 8.0);
    /* wait_for_txid's: interval 2, cap 30, no jitter */
    assert_true(mapi_retry_wait(-1, 1, 2, 30, NULL, NULL) == 4.0);
    assert_true(mapi_retry_wait(-1, 10, 2, 30, NULL, NULL) == 30.0);
    assert_true(mapi_retry_wait(45, 10, 2, 30, NULL, NULL) == 45.0);
}

static void backoff_bounds(void **state)
{
    uint64_t rng = mapi_rng_seed((uintptr_t)&rng);
    double lo = 1, hi = 0;
    int i;
    (void)state;
    /* caps: 0.5, 1, 2, 4, 8, 8, ... seconds; full jitter from 0 */
    assert_true(mapi_backoff_delay(0, 0.0) == 0.0);
    assert_true(mapi_backoff_delay(0, 0.5) == 0.25);
    assert_true(mapi_backoff_delay(1, 0.5) == 0.5);
    assert_true(mapi_backoff_delay(2, 0.5) == 1.0);
    assert_true(mapi_backoff_delay(3, 0.5) == 2.0);
    assert_true(mapi_backoff_delay(4, 0.5) == 4.0);
    assert_true(mapi_backoff_delay(5, 0.5) == 4.0);
    assert_true(mapi_backoff_delay(1000, 0.5) == 4.0);
    assert_true(mapi_backoff_delay(0, 0.9999) < 0.5);
    assert_true(mapi_backoff_delay(30, 0.9999) < 8.0);
    assert_true(mapi_backoff_delay(30, 0.9999) > 7.99);
    /* the default random source: [0, 1), spread out */
    for (i = 0; i < 100000; i++) {
        double u = mapi_random_default(&rng);
        assert_true(u >= 0.0 && u < 1.0);
        if (u < lo) lo = u;
        if (u > hi) hi = u;
    }
    assert_true(lo < 0.001 && hi > 0.999);
    assert_true(mapi_rng_seed(1) != mapi_rng_seed(2));
}

static void retryable_statuses(void **state)
{
    (void)state;
    assert_true(mapi_status_retryable(429));
    assert_true(mapi_status_retryable(502));
    assert_true(mapi_status_retryable(503));
    assert_true(mapi_status_retryable(504));
    assert_false(mapi_status_retryable(500));
    assert_false(mapi_status_retryable(422));
    assert_false(mapi_status_retryable(302));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retry_after_values),
        cmocka_unit_test(backoff_bounds),
        cmocka_unit_test(retry_wait_order),
        cmocka_unit_test(retryable_statuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

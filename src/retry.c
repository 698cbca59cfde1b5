/*
 * retry.c -- when to retry and how long to wait: Retry-After, exponential
 * backoff with full jitter (the decision to retry is the exchange's; the
 * sleep and the random numbers are clock.c's and random.c's).
 */
#include <curl/curl.h>
#include <time.h>

#include "exchange.h"

#define BACKOFF_BASE 0.5  /* seconds before the first retry, at most */
#define BACKOFF_CAP 8.0   /* seconds, at most, before any retry */
#define RETRY_AFTER_CAP 60.0

int mapi_status_retryable(int status)
{
    return status == 429 || status == 502 || status == 503 || status == 504;
}

/* The backoff's growth: base * 2^retry, at most cap. */
static double backoff_cap(int retry, double base, double cap)
{
    double d = base;
    int i;

    for (i = 0; i < retry && d < cap; i++)
        d *= 2;
    return d > cap ? cap : d;
}

double mapi_backoff_delay(int retry, double u)
{
    if (!(u >= 0.0)) /* also NaN */
        u = 0.0;
    if (u >= 1.0)
        u = 1.0;
    return u * backoff_cap(retry, BACKOFF_BASE, BACKOFF_CAP);
}

double mapi_retry_wait(double retry_after, int retry, double base, double cap,
                       mapi_random_fn jitter, void *ctx)
{
    if (retry_after >= 0) /* the server's word first */
        return retry_after;
    if (base <= 0)
        return mapi_backoff_delay(retry, jitter ? jitter(ctx) : 1.0);
    return (jitter ? jitter(ctx) : 1.0) * backoff_cap(retry, base, cap);
}

double mapi_default_deadline(double timeout, int max_retries)
{
    double d = timeout * (max_retries + 1.0);
    int i;

    for (i = 0; i < max_retries; i++)
        d += mapi_backoff_delay(i, 1.0);
    return d;
}

double mapi_retry_after_parse(const char *value, time_t now)
{
    const char *p = value;
    double secs = 0;

    if (!value)
        return -1.0;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p >= '0' && *p <= '9') {
        /* delta-seconds: digits only (trailing blanks allowed) */
        while (*p >= '0' && *p <= '9') {
            if (secs <= RETRY_AFTER_CAP)
                secs = secs * 10 + (*p - '0');
            p++;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p)
            return -1.0;
    } else {
        time_t when;
        if (!*p)
            return -1.0;
        when = curl_getdate(p, NULL);
        if (when == (time_t)-1)
            return -1.0;
        secs = when > now ? difftime(when, now) : 0.0;
    }
    return secs > RETRY_AFTER_CAP ? RETRY_AFTER_CAP : secs;
}

double mapi_response_retry_after(const mapi_response *res)
{
    return mapi_retry_after_parse(res ? mapi_response_header(res, "retry-after") : NULL,
                                  time(NULL));
}

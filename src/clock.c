/*
 * clock.c -- the process's clocks and its one blocking sleep: monotonic
 * seconds (deadlines, waits, a step's budget, an attempt's elapsed time),
 * Unix seconds on the wall clock (an attempt's start_time), and the sleep
 * between a blocking call's attempts (nanosleep, resumed after signals).
 */
#include <errno.h>
#include <time.h>

#include "base.h"

double mapi_monotonic_seconds(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double mapi_wall_seconds(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int mapi_sleep_default(void *ctx, double seconds)
{
    (void)ctx;
    return mapi_sleep_seconds(seconds, 3600);
}

int mapi_sleep_seconds(double seconds, double cap)
{
    struct timespec ts, rem;

    if (!(seconds > 0))
        return 0;
    if (seconds > cap)
        seconds = cap;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec > 999999999L)
        ts.tv_nsec = 999999999L;
    while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
        ts = rem;
    return 0;
}

/*
 * clock.h -- internal: the process's clocks and its one blocking sleep
 * (clock.c), its randomness (random.c).  Of the base layer: base.h
 * includes it.
 */
#ifndef MAPI_CLOCK_H
#define MAPI_CLOCK_H

#include <stdint.h>

/* ---- the clocks and the one blocking sleep (clock.c) ---- */

/* Seconds on a monotonic clock. */
double mapi_monotonic_seconds(void);
/* Unix seconds on the wall clock (an attempt's start_time). */
double mapi_wall_seconds(void);
/* Waits `seconds` before a retry.  Returns 0 to go on, non-zero to stop
   retrying (the call then fails with the last attempt's error). */
typedef int (*mapi_sleep_fn)(void *ctx, double seconds);
/* The default: mapi_sleep_seconds, at most an hour. */
int mapi_sleep_default(void *ctx, double seconds);
/* Blocks the calling thread for seconds, at most cap (nanosleep, resumed
   after signals; NaN and seconds <= 0: no wait).  Returns 0. */
int mapi_sleep_seconds(double seconds, double cap);

/* ---- the process's randomness (random.c) ---- */

/* A uniformly distributed number in [0, 1). */
typedef double (*mapi_random_fn)(void *ctx);
/* The default: a xorshift64* generator whose state is the uint64_t that ctx
   points to (seeded by mapi_rng_seed). */
double mapi_random_default(void *ctx);
/* A non-zero seed from the clock and `salt` (e.g. an object's address). */
uint64_t mapi_rng_seed(uintptr_t salt);

#endif /* MAPI_CLOCK_H */

/*
 * random.c -- the process's randomness: a seed from the clock and a salt,
 * and the default generator (xorshift64*) a call's backoff jitter and its
 * trace and span ids draw from.  Not for secrets.
 */
#include <time.h>

#include "base.h"

uint64_t mapi_rng_seed(uintptr_t salt)
{
    struct timespec ts;
    uint64_t x;

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        ts.tv_sec = 0, ts.tv_nsec = 0;
    x = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)salt << 17) ^
        (uint64_t)salt;
    /* splitmix64 finaliser: spreads the bits of similar seeds apart */
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x ? x : 0x2545F4914F6CDD1DULL;
}

double mapi_random_default(void *ctx)
{
    uint64_t *s = ctx;
    uint64_t x = *s;

    /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

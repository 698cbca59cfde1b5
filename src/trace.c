/*
 * trace.c -- W3C Trace Context (https://www.w3.org/TR/trace-context/): the
 * check of a caller's traceparent and tracestate, and the random ids of
 * traces and spans: /dev/urandom once per client, then each call's
 * generator seeded from the client's (never libc's rand()).
 *
 * fork(): a child inherits its parent's generators, and would draw the
 * same ids.  A handler registered with pthread_atfork counts the forks in
 * the child; a client whose seed was drawn before the count it reads now
 * draws a new one (client.c) -- no system call per call.  (glibc drops the
 * handler when the library is unloaded; were it not registered, the count
 * is the process id, a getpid() per traced call.)
 */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* 1 when s[0..n) is lowercase hex, not all zeros (when nonzero is set). */
static int lower_hex(const char *s, size_t n, int nonzero)
{
    size_t i;
    int any = 0;

    for (i = 0; i < n; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
        any |= s[i] != '0';
    }
    return any || !nonzero;
}

int mapi_trace_check(const char *traceparent, const char *tracestate, mapi_error *err)
{
    const char *t = traceparent;
    size_t i, n;

    if (tracestate) {
        n = strlen(tracestate);
        if (!t)
            return mapi_error_set(err, MAPI_ERR_USAGE, "tracestate needs a traceparent");
        if (n > MAPI_TRACESTATE_MAX)
            return mapi_error_set(err, MAPI_ERR_USAGE, "tracestate is over %d bytes",
                                  MAPI_TRACESTATE_MAX);
        for (i = 0; i < n; i++)
            if (tracestate[i] < 0x20 || tracestate[i] > 0x7e)
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "tracestate holds a byte that is not printable ASCII");
    }
    if (!t)
        return 0;
    if (strlen(t) != MAPI_TRACEPARENT_LEN || strncmp(t, "00-", 3) != 0 || t[35] != '-' ||
        t[52] != '-' || !lower_hex(t + 3, 32, 1) || !lower_hex(t + 36, 16, 1) ||
        !lower_hex(t + 53, 2, 0))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "traceparent must be \"00-<32 hex trace id>-<16 hex parent id>-"
                              "<2 hex flags>\" (lowercase, ids not all zeros)");
    return 0;
}

static unsigned long forks;   /* written only in a child, before it has other threads */
static int watched;           /* 1: count_fork is registered */
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;

static void count_fork(void)
{
    forks++;
}

static void watch(void)
{
    watched = pthread_atfork(NULL, NULL, count_fork) == 0;
}

unsigned long mapi_trace_forks(void)
{
    if (pthread_once(&watch_once, watch) != 0 || !watched)
        return (unsigned long)getpid();
    return forks;
}

uint64_t mapi_trace_seed(void)
{
    uint64_t seed = 0;
    int fd = open("/dev/urandom", O_RDONLY);

    if (fd >= 0) {
        if (read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed)
            seed = 0;
        close(fd);
    }
    return seed ? seed : mapi_rng_seed((uintptr_t)&seed); /* no urandom: the clock */
}

uint64_t mapi_trace_next(uint64_t *state)
{
    /* splitmix64: every state, zero included, gives a well-spread output */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void mapi_trace_id(uint64_t *state, char *out, size_t bytes)
{
    static const char hex[] = "0123456789abcdef";
    size_t i;

    uint64_t any;

    do {
        uint64_t r = 0;
        any = 0;
        for (i = 0; i < bytes; i++) {
            if (i % 8 == 0)
                r = mapi_trace_next(state);
            any |= r & 0xff;
            out[2 * i] = hex[(r >> 4) & 0xf];
            out[2 * i + 1] = hex[r & 0xf];
            r >>= 8;
        }
        out[2 * bytes] = '\0';
    } while (!any); /* an id of zeros is invalid: drawn again */
}

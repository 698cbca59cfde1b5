/*
 * trace.c -- W3C Trace Context (https://www.w3.org/TR/trace-context/): the
 * random ids of traces and spans: /dev/urandom once per client, then each
 * call's generator seeded from the client's (never libc's rand()).  (The
 * format's rules, the check of a caller's traceparent and tracestate:
 * trace_context.c, at the builder's floor.)
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

#include "exchange.h"

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

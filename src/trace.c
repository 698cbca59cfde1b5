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
    /* each byte's two digits at once: one load and one store a byte (this
       runs for every traced call and each of its attempts) */
    static const char pairs[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
                                "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
                                "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
                                "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
                                "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
                                "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
                                "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
                                "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    size_t i;

    do {
        uint64_t r = 0;
        for (i = 0; i < bytes; i++) {
            if (i % 8 == 0)
                r = mapi_trace_next(state);
            memcpy(out + 2 * i, pairs + 2 * (r & 0xff), 2);
            r >>= 8;
        }
        out[2 * bytes] = '\0';
    } while (mapi_trace_id_zero(out, 2 * bytes)); /* invalid (trace_context.c): drawn again */
}

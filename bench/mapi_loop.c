/*
 * mapi_loop.c -- for `make bench`: client:get_channel's loop without Lua.
 * mapi_get_channel in a loop on one client (its connection kept alive, the
 * same requests), each document freed: libmerchantapi's own cost per call
 * (request, response headers, JSON:API document, mapping) between the
 * plain libcurl loop (bench/curl_loop.c) and the Lua client.
 *
 *   mapi_loop BASE_URL SECONDS [CAFILE]
 *
 * Prints "calls N seconds S" like curl_loop (after one warm-up call).
 * Exits 1 on a failed call.  The api key comes from MERCHANTAPI_API_KEY.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "merchantapi.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one_call(mapi_client *c)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;

    if (mapi_get_channel(c, "60e05bc0-4690-4985-a08a-8acf00e48294", &doc, &err) != 0) {
        fprintf(stderr, "mapi_loop: %s\n", err.message ? err.message : "failed");
        mapi_error_clear(&err);
        return -1;
    }
    mapi_doc_free(doc);
    return 0;
}

int main(int argc, char **argv)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;
    double seconds, t0, t = 0;
    long calls = 0;
    int rc = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: mapi_loop BASE_URL SECONDS [CAFILE]\n");
        return 2;
    }
    seconds = atof(argv[2]);
    mapi_config_init(&cfg);
    cfg.base_url = argv[1];
    cfg.api_key = getenv("MERCHANTAPI_API_KEY");
    if (argc > 3 && *argv[3])
        cfg.cafile = argv[3];
    c = mapi_client_new(&cfg, &err);
    if (!c) {
        fprintf(stderr, "mapi_loop: %s\n", err.message ? err.message : "no client");
        mapi_error_clear(&err);
        return 1;
    }
    if (one_call(c) < 0) {
        rc = 1;
    } else {
        t0 = now();
        do {
            if (one_call(c) < 0) {
                rc = 1;
                break;
            }
            calls++;
            t = now() - t0;
        } while (t < seconds);
        if (rc == 0)
            printf("calls %ld seconds %.6f\n", calls, t);
    }
    mapi_client_free(c);
    return rc;
}

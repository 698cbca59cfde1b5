/*
 * curl_loop.c -- the limit for `make bench`: a plain C program doing the GET
 * that client:get_channel does, in a loop, on one reused libcurl easy handle
 * (its connection kept alive; HTTP/2 over TLS when offered, libcurl's
 * default), with the same request headers.  The body is collected into a
 * growing buffer and dropped: no JSON parsing, no error mapping.
 *
 *   curl_loop URL SECONDS [CAFILE]
 *
 * Prints "calls N seconds S": N complete 200 responses in S seconds of
 * looping (after one warm-up call that opens the connection).  Exits 1 on a
 * failed call.  The api key comes from MERCHANTAPI_API_KEY.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct body {
    char *data;
    size_t len, cap;
    int oom;
} body;

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    body *b = userdata;
    size_t n = size * nmemb;

    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 16384;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->data, cap);
        if (!p) {
            b->oom = 1;
            return 0;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one_call(CURL *easy, body *b)
{
    long status = 0;
    CURLcode rc;

    b->len = 0;
    rc = curl_easy_perform(easy);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200 || b->oom) {
        fprintf(stderr, "curl_loop: %s, status %ld\n", curl_easy_strerror(rc), status);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *key = getenv("MERCHANTAPI_API_KEY");
    struct curl_slist *headers = NULL, *l;
    char auth[512];
    body b = {NULL, 0, 0, 0};
    CURL *easy;
    double seconds, t0, t;
    long calls = 0;
    int rc = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: curl_loop URL SECONDS [CAFILE]\n");
        return 2;
    }
    seconds = atof(argv[2]);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    easy = curl_easy_init();
    if (!easy)
        return 1;
    l = curl_slist_append(headers, "Content-Type: application/vnd.api+json");
    if (l)
        l = curl_slist_append(headers = l, "Accept: application/vnd.api+json");
    if (l && key && *key && snprintf(auth, sizeof auth, "Authorization: Bearer %s", key) <
                                (int)sizeof auth)
        l = curl_slist_append(headers = l, auth);
    if (!l) {
        curl_slist_free_all(headers);
        curl_easy_cleanup(easy);
        return 1;
    }
    headers = l;
    curl_easy_setopt(easy, CURLOPT_URL, argv[1]);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "curl_loop");
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    if (argc > 3 && *argv[3])
        curl_easy_setopt(easy, CURLOPT_CAINFO, argv[3]);

    if (one_call(easy, &b) < 0) {
        rc = 1;
    } else {
        t0 = now();
        do {
            if (one_call(easy, &b) < 0) {
                rc = 1;
                break;
            }
            calls++;
            t = now() - t0;
        } while (t < seconds);
        if (rc == 0)
            printf("calls %ld seconds %.6f\n", calls, t);
    }
    free(b.data);
    curl_slist_free_all(headers);
    curl_easy_cleanup(easy);
    curl_global_cleanup();
    return rc;
}

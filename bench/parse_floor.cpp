/*
 * parse_floor.cpp -- what bounds merchantapi.decode from below, for `make
 * bench`: the CPU time of simdjson's own DOM parse of a document (the
 * library's fastest complete parse: every value read and validated into its
 * tape; the parser's buffers reused, as a program parsing page after page
 * does), next to mapi_doc_parse + mapi_doc_free (the On-Demand walk into the
 * compact document, our number, literal and duplicate checks, the (type, id)
 * index and the resolved relationships, and the copy of the caller's bytes
 * mapi_doc_parse makes).  A bench tool in C++ because simdjson's DOM API is
 * C++; the library's only C++ is src/json_parse.cpp.
 *
 *   parse_floor FILE ROUNDS ITERATIONS
 *
 * Prints `simdjson-dom <median s> <min s>`, `mapi_doc_parse <median s> <min s>`,
 * `mapi_doc_size <bytes>` (what one document of FILE says it holds) and
 * `mapi_doc_allocs <calls> <bytes> <first calls> <first bytes>`: what the C
 * heap was asked for by one mapi_doc_parse of FILE, counted by this
 * program's own malloc, calloc, realloc and aligned allocation functions
 * (which every library of the process calls, simdjson's operator new
 * included) -- for a parse once the thread's reader buffers exist, and for
 * the first parse of the process, which makes them.
 */
#include <simdjson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merchantapi.h"

/* Counting allocator: glibc's functions under their __libc_ names, counted
   while `counting` is set.  One thread only. */
extern "C" {
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);
}
static int counting;
static size_t count_calls, count_bytes;

static void count(size_t n)
{
    if (counting) {
        count_calls++;
        count_bytes += n;
    }
}

extern "C" {
void *malloc(size_t n)
{
    count(n);
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    count(n * size);
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    count(n);
    return __libc_realloc(p, n);
}
void free(void *p)
{
    __libc_free(p);
}
void *aligned_alloc(size_t align, size_t n)
{
    count(n);
    return __libc_memalign(align, n);
}
void *memalign(size_t align, size_t n)
{
    count(n);
    return __libc_memalign(align, n);
}
int posix_memalign(void **out, size_t align, size_t n)
{
    void *p;
    count(n);
    p = __libc_memalign(align, n);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static simdjson::dom::parser dom;

static int dom_once(const simdjson::padded_string &body)
{
    simdjson::dom::element root;
    return dom.parse(body).get(root) == simdjson::SUCCESS ? 0 : -1;
}

static int mapi_once(const char *body, size_t len, size_t *size)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;

    if (mapi_doc_parse(body, len, &doc, &err) != 0) {
        fprintf(stderr, "parse_floor: %s\n", err.message ? err.message : "error");
        mapi_error_clear(&err);
        return -1;
    }
    if (size)
        *size = mapi_doc_size(doc);
    mapi_doc_free(doc);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const names[2] = {"simdjson-dom", "mapi_doc_parse"};
    int rounds, iters;
    size_t doc_size = 0;

    if (argc < 4) {
        fprintf(stderr, "usage: parse_floor FILE ROUNDS ITERATIONS\n");
        return 2;
    }
    rounds = atoi(argv[2]);
    iters = atoi(argv[3]);
    if (rounds < 1 || iters < 1)
        return 2;
    simdjson::padded_string body;
    if (simdjson::padded_string::load(argv[1]).get(body) != simdjson::SUCCESS)
        return 1;
    double *t[2] = {(double *)malloc(sizeof(double) * (size_t)rounds),
                    (double *)malloc(sizeof(double) * (size_t)rounds)};
    size_t first_calls, first_bytes;
    counting = 1; /* the first parse of the process: the reader's buffers are made */
    if (!t[0] || !t[1] || mapi_once(body.data(), body.size(), &doc_size) != 0)
        return 1;
    counting = 0;
    first_calls = count_calls;
    first_bytes = count_bytes;
    count_calls = count_bytes = 0;
    counting = 1; /* a parse once they exist */
    if (mapi_once(body.data(), body.size(), NULL) != 0)
        return 1;
    counting = 0;
    if (dom_once(body) != 0)
        return 1;
    for (int r = 0; r < rounds; r++) {
        for (int w = 0; w < 2; w++) {
            double t0 = cpu_now();
            for (int i = 0; i < iters; i++)
                if ((w == 0 ? dom_once(body) : mapi_once(body.data(), body.size(), NULL)) != 0)
                    return 1;
            t[w][r] = (cpu_now() - t0) / iters;
        }
    }
    for (int w = 0; w < 2; w++) {
        qsort(t[w], (size_t)rounds, sizeof(double), cmp_double);
        printf("%s %.9f %.9f\n", names[w], t[w][(rounds - 1) / 2], t[w][0]);
    }
    printf("mapi_doc_size %zu\n", doc_size);
    printf("mapi_doc_allocs %zu %zu %zu %zu\n", count_calls, count_bytes, first_calls, first_bytes);
    free(t[0]);
    free(t[1]);
    return 0;
}

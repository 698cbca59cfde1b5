/*
 * parse_floor.c -- what bounds merchantapi.decode from below, for `make bench`:
 * the CPU time of json-c parsing and freeing a document on its own (the
 * library's tokener, strict, no validation of our own), next to
 * mapi_doc_parse + mapi_doc_free (our number, UTF-8 and duplicate checks,
 * the (type, id) index and the resolved links on top of json-c).
 *
 *   parse_floor FILE ROUNDS ITERATIONS
 *
 * Prints `json-c <median s> <min s>` and `mapi_doc_parse <median s> <min s>`
 * per document.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merchantapi.h"

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

static int jsonc_once(const char *body, size_t len)
{
    struct json_tokener *tok = json_tokener_new_ex(64);
    struct json_object *root;

    if (!tok)
        return -1;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, body, (int)len);
    json_tokener_free(tok);
    if (!root)
        return -1;
    json_object_put(root);
    return 0;
}

static int mapi_once(const char *body, size_t len)
{
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;

    if (mapi_doc_parse(body, len, &doc, &err) != 0) {
        fprintf(stderr, "parse_floor: %s\n", err.message ? err.message : "error");
        mapi_error_clear(&err);
        return -1;
    }
    mapi_doc_free(doc);
    return 0;
}

int main(int argc, char **argv)
{
    FILE *f;
    char *body;
    long size;
    int rounds, iters, r, i, w;
    double *t[2];
    static const char *const names[2] = {"json-c", "mapi_doc_parse"};

    if (argc < 4) {
        fprintf(stderr, "usage: parse_floor FILE ROUNDS ITERATIONS\n");
        return 2;
    }
    rounds = atoi(argv[2]);
    iters = atoi(argv[3]);
    if (rounds < 1 || iters < 1)
        return 2;
    f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        return 1;
    body = malloc((size_t)size + 1);
    t[0] = malloc(sizeof(double) * (size_t)rounds);
    t[1] = malloc(sizeof(double) * (size_t)rounds);
    if (!body || !t[0] || !t[1] || fread(body, 1, (size_t)size, f) != (size_t)size)
        return 1;
    fclose(f);
    body[size] = '\0';
    for (r = 0; r < rounds; r++) {
        for (w = 0; w < 2; w++) {
            double t0 = cpu_now();
            for (i = 0; i < iters; i++)
                if ((w == 0 ? jsonc_once : mapi_once)(body, (size_t)size) != 0)
                    return 1;
            t[w][r] = (cpu_now() - t0) / iters;
        }
    }
    for (w = 0; w < 2; w++) {
        qsort(t[w], (size_t)rounds, sizeof(double), cmp_double);
        printf("%s %.9f %.9f\n", names[w], t[w][(rounds - 1) / 2], t[w][0]);
    }
    free(body);
    free(t[0]);
    free(t[1]);
    return 0;
}

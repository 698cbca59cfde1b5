/*
 * test_memory.c -- src/memory.c seen through documents: the large blocks a
 * thread keeps for its next document are freed when the thread ends (the
 * sanitizer's leak check fails the run otherwise: a thread's kept blocks
 * are reachable from nowhere once it is gone), and a document made on one
 * thread is freed on another after that thread ended.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "merchantapi.h"

#define THREADS 4
#define ITEMS 2000 /* ~100 KB a body: arena chunks and copies from the kept blocks */

static char *big_list(size_t *len)
{
    size_t cap = 64 + (size_t)ITEMS * 80, n = 0, i;
    char *s = malloc(cap);

    assert_non_null(s);
    n += (size_t)snprintf(s + n, cap - n, "{\"data\":[");
    for (i = 0; i < ITEMS; i++)
        n += (size_t)snprintf(s + n, cap - n,
                              "%s{\"type\":\"addresses\",\"id\":\"a%zu\",\"attributes\":"
                              "{\"amount\":\"%zu.10\"}}",
                              i ? "," : "", i, i);
    n += (size_t)snprintf(s + n, cap - n, "]}");
    assert_true(n < cap);
    *len = n;
    return s;
}

typedef struct job {
    const char *body;
    size_t len;
    mapi_doc *kept; /* parsed here, freed by the main thread after this one ended */
} job;

static void *parse_and_end(void *arg)
{
    job *j = arg;
    mapi_error e = MAPI_ERROR_INIT;
    mapi_doc *d = NULL;
    int i;

    if (mapi_doc_parse(j->body, j->len, &j->kept, &e) != 0)
        j->kept = NULL;
    for (i = 0; i < 3; i++) { /* freed here: the thread ends keeping their blocks */
        if (mapi_doc_parse(j->body, j->len, &d, &e) != 0)
            return NULL;
        mapi_doc_free(d);
    }
    return NULL;
}

static void blocks_kept_per_thread_are_freed_when_it_ends(void **state)
{
    pthread_t t[THREADS];
    job jobs[THREADS];
    size_t len, vlen;
    char *body = big_list(&len);
    int i;
    (void)state;

    for (i = 0; i < THREADS; i++) {
        jobs[i].body = body;
        jobs[i].len = len;
        jobs[i].kept = NULL;
        assert_int_equal(pthread_create(&t[i], NULL, parse_and_end, &jobs[i]), 0);
    }
    for (i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (i = 0; i < THREADS; i++) { /* their threads have ended: freed here */
        const mapi_resource *r;
        assert_non_null(jobs[i].kept);
        assert_int_equal(mapi_doc_data_count(jobs[i].kept), ITEMS);
        r = mapi_doc_data(jobs[i].kept, ITEMS - 1);
        assert_string_equal(mapi_value_string(mapi_resource_attr(r, "amount"), &vlen),
                            "1999.10");
        mapi_doc_free(jobs[i].kept);
    }
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blocks_kept_per_thread_are_freed_when_it_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

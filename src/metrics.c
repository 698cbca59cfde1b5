/*
 * metrics.c -- a client's metrics (metrics.h): the cells of the duration
 * histogram and the counters, one per attribute set, found by a hash of the
 * attributes and a comparison of each, so an attempt that ends adds to a
 * cell that exists without making a string.  What each metric counts is
 * decided here alone, for every driver and for Lua's recorder:record.
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "metrics.h"

const double mapi_metrics_bounds[MAPI_METRICS_BOUNDS] = {
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10};

struct mapi_metrics {
    int refs;
    size_t n, cap;            /* cells[0..n) made, room for cap (at most MAPI_METRICS_CELLS) */
    mapi_metrics_cell *cells;
    mapi_metrics_cell overflow;
    int overflowed;           /* 1: the overflow cell counted once */
};

mapi_metrics *mapi_metrics_new(void)
{
    mapi_metrics *m = calloc(1, sizeof *m);

    if (!m)
        return NULL;
    m->refs = 1;
    m->overflow.overflow = 1;
    m->overflow.untaken = 1;
    return m;
}

mapi_metrics *mapi_metrics_retain(mapi_metrics *m)
{
    m->refs++;
    return m;
}

void mapi_metrics_release(mapi_metrics *m)
{
    size_t i;

    if (!m || --m->refs > 0)
        return;
    for (i = 0; i < m->n; i++) {
        mapi_metrics_cell *c = &m->cells[i];
        free(c->method);
        free(c->server_address);
        free(c->error_type);
        free(c->endpoint);
    }
    free(m->cells);
    free(m);
}

/* FNV-1a over s and its NUL (NULL: one byte of its own). */
static uint32_t hash_str(uint32_t h, const char *s)
{
    if (!s)
        return (h ^ 0xffu) * 16777619u;
    do
        h = (h ^ (unsigned char)*s) * 16777619u;
    while (*s++);
    return h;
}

static uint32_t hash_int(uint32_t h, int v)
{
    return (h ^ (uint32_t)v) * 16777619u;
}

static uint32_t hash_attrs(const mapi_attempt_info *in)
{
    uint32_t h = 2166136261u;

    h = hash_str(h, in->method);
    h = hash_str(h, in->endpoint);
    h = hash_str(h, in->server_address);
    h = hash_str(h, in->error_type);
    h = hash_int(h, in->server_port);
    return hash_int(h, in->status);
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* 1 when the endpoint named `name` lists pages (calls.c's table). */
static int endpoint_lists(const char *name)
{
    size_t r;

    for (r = 0; name && r < MAPI_EP_COUNT; r++)
        if (strcmp(mapi_endpoints[r].name, name) == 0)
            return mapi_endpoints[r].lists;
    return 0;
}

/* A copy of s, or NULL for NULL; *bad set when out of memory. */
static char *copy(const char *s, int *bad)
{
    char *c = s ? mapi_strdup(s) : NULL;

    if (s && !c)
        *bad = 1;
    return c;
}

/* The cell of in's attributes, made when there is room; NULL when there is
   none (or out of memory). */
static mapi_metrics_cell *find(mapi_metrics *m, const mapi_attempt_info *in)
{
    uint32_t h = hash_attrs(in);
    mapi_metrics_cell *c;
    size_t i;
    int bad = 0;

    for (i = 0; i < m->n; i++) {
        c = &m->cells[i];
        if (c->hash == h && c->status == in->status && c->server_port == in->server_port &&
            same_str(c->method, in->method) && same_str(c->endpoint, in->endpoint) &&
            same_str(c->error_type, in->error_type) &&
            same_str(c->server_address, in->server_address))
            return c;
    }
    if (m->n == m->cap) { /* room for more, 8 at first, up to the bound */
        size_t cap = m->cap ? m->cap * 2 : 8;
        if (cap > MAPI_METRICS_CELLS)
            cap = MAPI_METRICS_CELLS;
        if (m->n == cap)
            return NULL;
        c = realloc(m->cells, cap * sizeof *c);
        if (!c)
            return NULL;
        m->cells = c;
        m->cap = cap;
    }
    c = &m->cells[m->n];
    memset(c, 0, sizeof *c);
    c->method = copy(in->method, &bad);
    c->server_address = copy(in->server_address, &bad);
    c->error_type = copy(in->error_type, &bad);
    c->endpoint = copy(in->endpoint, &bad);
    if (bad) {
        free(c->method);
        free(c->server_address);
        free(c->error_type);
        free(c->endpoint);
        return NULL;
    }
    c->hash = h;
    c->server_port = in->server_port;
    c->status = in->status;
    c->lists = endpoint_lists(in->endpoint);
    c->untaken = 1;
    m->n++;
    return c;
}

void mapi_metrics_record_duration(mapi_metrics *m, const mapi_attempt_info *in, double duration)
{
    mapi_metrics_cell *c = find(m, in);
    int i = 0;

    if (!c) {
        c = &m->overflow;
        m->overflowed = 1;
    }
    if (duration == duration) { /* not NaN */
        while (i < MAPI_METRICS_BOUNDS && duration > mapi_metrics_bounds[i])
            i++;
        c->buckets[i]++;
        c->sum += duration;
    }
    if (in->resend_count >= 1)
        c->retries++;
    if (in->outcome && strcmp(in->outcome, "unknown") == 0)
        c->unknown_outcomes++;
    if (in->settled_by && strcmp(in->settled_by, "read") == 0)
        c->settled_confirms++;
    if (!in->error_type && (c->overflow ? endpoint_lists(in->endpoint) : c->lists))
        c->pages++;
}

void mapi_metrics_record(mapi_metrics *m, const mapi_attempt_info *in)
{
    mapi_metrics_record_duration(m, in, in->elapsed);
}

int mapi_metrics_seed(mapi_metrics *m, const mapi_attempt_info *in)
{
    return find(m, in) ? 0 : -1;
}

size_t mapi_metrics_cells(const mapi_metrics *m)
{
    return m->n + (m->overflowed ? 1 : 0);
}

const mapi_metrics_cell *mapi_metrics_cell_at(const mapi_metrics *m, size_t i)
{
    if (i < m->n)
        return &m->cells[i];
    return i == m->n && m->overflowed ? &m->overflow : NULL;
}

int mapi_metrics_take_cell(mapi_metrics *m, size_t i, mapi_metrics_cell *out)
{
    mapi_metrics_cell *c = (mapi_metrics_cell *)mapi_metrics_cell_at(m, i);
    int any, b;

    if (!c)
        return 0;
    *out = *c;
    any = c->untaken || c->retries || c->unknown_outcomes || c->settled_confirms || c->pages;
    for (b = 0; b < MAPI_METRICS_BUCKETS; b++)
        any = any || c->buckets[b];
    memset(c->buckets, 0, sizeof c->buckets);
    c->sum = 0;
    c->retries = c->unknown_outcomes = c->settled_confirms = c->pages = 0;
    c->untaken = 0;
    return any;
}

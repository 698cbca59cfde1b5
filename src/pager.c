/*
 * pager.c -- the C pager (merchantapi.h, "Every page of a list"): every
 * page of an account's addresses, fetched by the page batch
 * (mapi_list_addresses_pages_ex, src/pages.c: its retries, concurrency and
 * errors) and judged by the walk (src/page_walk.c: the stop rules and page
 * checks the Lua pager uses too).  Page 1 (or the first asked for) alone,
 * then, once a page told meta.total, as many pages at once as the walk
 * plans with the pager's concurrency; each handed out in page order.
 */
#include <stdlib.h>
#include <string.h>

#include "drivers.h"
#include "page_walk.h"

struct mapi_pager {
    mapi_client *client;
    const char *account_id;  /* borrowed (mapi_pager_new's doc) */
    mapi_page_params params; /* its page unused */
    const mapi_call_opts *call;
    size_t concurrency;
    long page;               /* the number of the next page handed to the walk */
    mapi_walk walk;
    mapi_doc **docs;         /* the last batch's pages: docs[pos .. have) not yet handed out */
    mapi_error *errs;        /* the last batch's errors (count of them) */
    size_t cap, have, pos;
    mapi_error failed;       /* the page after docs[have - 1] failed with it (kind NONE: none) */
    int over;                /* -1: ended with an error; the walk's done says the rest */
    long handed;             /* pages handed out */
};

mapi_pager *mapi_pager_new(mapi_client *client, const char *account_id,
                           const mapi_pager_opts *opts, mapi_error *err)
{
    mapi_pager_opts o = MAPI_PAGER_OPTS_INIT;
    mapi_page_params p;
    mapi_pager *pg;
    mapi_call k;

    if (opts)
        o = *opts;
    if (!client)
        return mapi_error_set(err, MAPI_ERR_USAGE, "client is NULL"), NULL;
    if (o.params.page < 0 || o.max_pages < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "the first page and max_pages must be >= 0 (0: the default)"),
               NULL;
    p = o.params;
    p.page = o.params.page > 0 ? o.params.page : 1;
    /* the argument checks of a page's call, once, before anything is sent */
    if (mapi_call_endpoint(client, &mapi_endpoints[MAPI_EP_LIST_ADDRESSES], account_id, &p,
                           o.call, &k, err) < 0)
        return NULL;
    mapi_call_release(&k);
    pg = calloc(1, sizeof *pg);
    if (!pg)
        return mapi_error_oom(err), NULL;
    pg->client = client;
    pg->account_id = account_id;
    pg->params = p;
    pg->call = o.call;
    pg->concurrency = o.concurrency > 0 ? o.concurrency : 1;
    pg->page = p.page;
    pg->failed = (mapi_error)MAPI_ERROR_INIT;
    mapi_walk_init(&pg->walk, p.per_page, o.max_pages, 0);
    return pg;
}

/* Frees the pages fetched ahead and the error after them. */
static void drop_ahead(mapi_pager *pg)
{
    while (pg->pos < pg->have) {
        mapi_doc_free(pg->docs[pg->pos]);
        pg->docs[pg->pos++] = NULL;
    }
    mapi_error_clear(&pg->failed);
}

void mapi_pager_free(mapi_pager *pg)
{
    if (!pg)
        return;
    drop_ahead(pg);
    free(pg->docs);
    free(pg->errs);
    mapi_walk_clear(&pg->walk);
    free(pg);
}

/* Fetches the next `count` pages (mapi_walk_batch) into docs; 0, or -1
   with err when not one came. */
static int fetch_batch(mapi_pager *pg, size_t count, mapi_error *err)
{
    size_t i;

    if (count > pg->cap) {
        mapi_doc **docs = realloc(pg->docs, count * sizeof *docs);
        mapi_error *errs;
        if (!docs)
            return mapi_error_oom(err);
        pg->docs = docs;
        errs = realloc(pg->errs, count * sizeof *errs);
        if (!errs)
            return mapi_error_oom(err);
        pg->errs = errs;
        for (i = pg->cap; i < count; i++)
            pg->errs[i] = (mapi_error)MAPI_ERROR_INIT;
        pg->cap = count;
    }
    pg->have = pg->pos = 0;
    (void)mapi_list_addresses_pages_ex(pg->client, pg->account_id, &pg->params, pg->page,
                                       count, pg->concurrency, pg->call, pg->docs, pg->errs);
    while (pg->have < count && pg->docs[pg->have])
        pg->have++;
    if (pg->have < count && pg->errs[pg->have].kind != MAPI_ERR_NONE) {
        pg->failed = pg->errs[pg->have]; /* moved */
        pg->errs[pg->have] = (mapi_error)MAPI_ERROR_INIT;
    }
    if (pg->have == 0) {
        mapi_error_clear(err);
        *err = pg->failed; /* moved */
        pg->failed = (mapi_error)MAPI_ERROR_INIT;
        if (err->kind == MAPI_ERR_NONE) /* cannot happen: a page or its error */
            return mapi_error_set(err, MAPI_ERR_DECODE, "page %ld did not come", pg->page);
        return -1;
    }
    return 0;
}

/* The walk's checks of doc, page pg->page: 0, or -1 with err DECODE. */
static int check_page(mapi_pager *pg, const mapi_doc *doc, mapi_walk_step *step, mapi_error *err)
{
    const mapi_value *meta = mapi_doc_meta(doc);
    int64_t per_page = 0, total = 0;
    size_t i, n = mapi_doc_data_count(doc);
    int has_total = mapi_value_count(mapi_value_get(meta, "total"), &total) == 0;

    if (mapi_value_count(mapi_value_get(meta, "per_page"), &per_page) < 0)
        per_page = 0;
    if (mapi_walk_begin(&pg->walk, pg->page, (int64_t)n, per_page, has_total, total, err) < 0)
        return -1;
    for (i = 0; i < n; i++) {
        const mapi_resource *r = mapi_doc_data(doc, i);
        size_t type_len = 0, id_len = 0;
        const char *type = mapi_resource_type_n(r, &type_len);
        const char *id = mapi_resource_id_n(r, &id_len);
        if (id && mapi_walk_item(&pg->walk, type, type_len, id, id_len, err) < 0)
            return -1;
    }
    *step = mapi_walk_end(&pg->walk);
    return 0;
}

int mapi_pager_next(mapi_pager *pg, mapi_doc **page, mapi_error *err)
{
    mapi_walk_step step;
    mapi_doc *doc;

    if (!page)
        return mapi_error_set(err, MAPI_ERR_USAGE, "page is NULL");
    *page = NULL;
    if (!pg)
        return mapi_error_set(err, MAPI_ERR_USAGE, "pager is NULL");
    if (pg->over < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "the pager's walk already ended with an error");
    if (pg->pos == pg->have) {
        size_t count;
        if (pg->failed.kind != MAPI_ERR_NONE) { /* the page after those handed out */
            mapi_error_clear(err);
            *err = pg->failed; /* moved */
            pg->failed = (mapi_error)MAPI_ERROR_INIT;
            pg->over = -1;
            return -1;
        }
        count = mapi_walk_batch(&pg->walk, pg->concurrency);
        if (count == 0)
            return 0; /* the walk is over */
        if (fetch_batch(pg, count, err) < 0) {
            pg->over = -1;
            return -1;
        }
    }
    doc = pg->docs[pg->pos];
    pg->docs[pg->pos++] = NULL;
    if (check_page(pg, doc, &step, err) < 0) {
        mapi_doc_free(doc);
        drop_ahead(pg);
        pg->over = -1;
        return -1;
    }
    pg->page++;
    if (step != MAPI_WALK_MORE)
        drop_ahead(pg); /* nothing after the last page is handed out */
    if (step == MAPI_WALK_EMPTY) {
        mapi_doc_free(doc);
        return 0;
    }
    *page = doc;
    pg->handed++;
    return 1;
}

void mapi_pager_get_counts(const mapi_pager *pg, mapi_pager_counts *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    out->announced = -1;
    if (!pg)
        return;
    out->pages = pg->handed;
    out->received = pg->walk.received;
    out->announced = pg->walk.has_announced ? pg->walk.announced : -1;
    out->total_changed = pg->walk.total_changed;
}

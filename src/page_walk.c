/*
 * page_walk.c -- the pager's stop rules and page checks, once for C and Lua
 * (contract, "Lists and pages"; docs/service-interface.md, "Endpoints 3.
 * List account addresses": meta.page, per_page, total).
 *
 * A walk ends after a page that is empty or short (fewer items than the
 * page size the server reported in meta.per_page, else the one asked for),
 * once page * size >= meta.total, after max_pages pages, or (a walk by
 * links) after a page without links.next or whose next link was already
 * requested.  Pages never lie silently: a page that repeats an item (type
 * and id) the walk already accepted, or that contradicts meta.total (a
 * negative total, more items than it leaves for the page, fewer: a short
 * page before the last, a total that shrank between pages), ends the walk
 * with a DECODE error naming the page.  A total that grows is no error:
 * total_changed says it.  Without a total only the id rule and the short
 * and empty page rules apply.
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "documents.h"
#include "page_walk.h"

struct mapi_key_slot {
    uint64_t hash;
    size_t off;          /* the key's bytes in set->bytes: type, then id */
    size_t type_len, id_len;
    long page;           /* 0: an empty slot */
};

/* ------------------------------------------------------------------------ */
/* The key set                                                              */
/* ------------------------------------------------------------------------ */

static uint64_t key_hash(const char *a, size_t alen, const char *b, size_t blen)
{
    return mapi_hash_bytes(mapi_hash_bytes(UINT64_C(0x9E3779B97F4A7C15), a, alen), b, blen);
}

static void set_clear(mapi_key_set *s)
{
    free(s->bytes);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* The slot of (a, b): the one holding it, or the empty one it would take. */
static struct mapi_key_slot *set_slot(const mapi_key_set *s, uint64_t h, const char *a,
                                      size_t alen, const char *b, size_t blen)
{
    size_t mask = s->nslots - 1, i = (size_t)h & mask;

    for (;; i = (i + 1) & mask) {
        struct mapi_key_slot *k = &s->slots[i];
        if (k->page == 0)
            return k;
        if (k->hash == h && k->type_len == alen && k->id_len == blen &&
            (alen == 0 || memcmp(s->bytes + k->off, a, alen) == 0) &&
            (blen == 0 || memcmp(s->bytes + k->off + alen, b, blen) == 0))
            return k;
    }
}

/* Doubles the slots (at least 64); 0, or -1 when out of memory. */
static int set_grow(mapi_key_set *s)
{
    size_t n = s->nslots ? s->nslots * 2 : 64, i;
    struct mapi_key_slot *old = s->slots, *slots;

    if (n > SIZE_MAX / sizeof *slots)
        return -1;
    slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    s->slots = slots;
    s->nslots = n;
    for (i = 0; old && i < n / 2; i++) {
        if (old[i].page != 0) {
            size_t j = (size_t)old[i].hash & (n - 1);
            while (slots[j].page != 0)
                j = (j + 1) & (n - 1);
            slots[j] = old[i];
        }
    }
    free(old);
    return 0;
}

/* Adds (a, b) with page unless there: 1 added, 0 there (*first: its page),
   -1 out of memory. */
static int set_add(mapi_key_set *s, const char *a, size_t alen, const char *b, size_t blen,
                   long page, long *first)
{
    uint64_t h = key_hash(a, alen, b, blen);
    struct mapi_key_slot *k;
    size_t need;

    if ((s->count + 1) * 4 > s->nslots * 3 && set_grow(s) < 0)
        return -1;
    k = set_slot(s, h, a, alen, b, blen);
    if (k->page != 0) {
        *first = k->page;
        return 0;
    }
    if (alen > SIZE_MAX - blen || s->used > SIZE_MAX - alen - blen)
        return -1;
    need = s->used + alen + blen;
    if (need > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        char *bytes;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        bytes = realloc(s->bytes, cap);
        if (!bytes)
            return -1;
        s->bytes = bytes;
        s->cap = cap;
    }
    if (alen)
        memcpy(s->bytes + s->used, a, alen);
    if (blen)
        memcpy(s->bytes + s->used + alen, b, blen);
    k->hash = h;
    k->off = s->used;
    k->type_len = alen;
    k->id_len = blen;
    k->page = page;
    s->used = need;
    s->count++;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The walk                                                                 */
/* ------------------------------------------------------------------------ */

void mapi_walk_init(mapi_walk *w, int64_t per_page, long max_pages, int follow)
{
    memset(w, 0, sizeof *w);
    w->per_page = per_page > 0 ? per_page : 0;
    w->max_pages = max_pages > 0 ? max_pages : 0;
    w->follow = follow != 0;
}

void mapi_walk_clear(mapi_walk *w)
{
    set_clear(&w->ids);
    set_clear(&w->links);
    mapi_walk_init(w, 0, 0, 0);
}

/* Whether page * size >= total, without overflow (size >= 0). */
static int reaches(long page, int64_t size, int64_t total)
{
    if (total <= 0)
        return 1;
    if (size <= 0 || page <= 0)
        return 0;
    return page > (total - 1) / size; /* page * size > total - 1 */
}

int mapi_walk_is_last(long page, int64_t n, int64_t per_page, int has_total, int64_t total,
                      int64_t size)
{
    if (size <= 0)
        size = per_page > 0 ? per_page : n;
    return n == 0 || (per_page > 0 && n < per_page) || (has_total && reaches(page, size, total));
}

/* The walk's end on page `page`: a DECODE error naming it.  Returns -1. */
#define PAGE_ERROR(w, err, ...) (w->done = 1, mapi_error_set(err, MAPI_ERR_DECODE, __VA_ARGS__))

int mapi_walk_begin(mapi_walk *w, long page, int64_t n, int64_t meta_per_page, int has_total,
                    int64_t total, mapi_error *err)
{
    int64_t per_page = meta_per_page > 0 ? meta_per_page : w->per_page, size, due;

    if (w->follow) { /* no page size, no total: only the id and link rules */
        per_page = 0;
        has_total = 0;
    }
    /* without a known page size, the size of the first page stands in for it */
    size = per_page > 0 ? per_page : w->first_size > 0 ? w->first_size : n;
    if (w->first_size == 0 && size > 0)
        w->first_size = size;
    w->page = page;
    w->n = n;
    w->size = size;
    w->page_per_page = per_page;
    w->has_total = has_total;
    w->total = total;
    if (!has_total)
        return 0;
    if (total < 0)
        return PAGE_ERROR(w, err, "page %ld: meta.total is %lld", page, (long long)total);
    if (w->has_announced && total < w->announced)
        return PAGE_ERROR(w, err,
                          "page %ld: meta.total went from %lld to %lld: an item deleted "
                          "between two pages moves the later ones back, and one of them was "
                          "skipped",
                          page, (long long)w->announced, (long long)total);
    /* what the total leaves for this page: min(size, total - (page - 1) * size), >= 0 */
    if (size <= 0 || page < 1 || reaches(page - 1, size, total))
        due = 0;
    else
        due = total - (int64_t)(page - 1) * size < size ? total - (int64_t)(page - 1) * size
                                                         : size;
    if (n > due)
        return PAGE_ERROR(w, err,
                          "page %ld: %lld items, but meta.total %lld and %lld per page leave "
                          "%lld for it",
                          page, (long long)n, (long long)total, (long long)size,
                          (long long)due);
    if (n < due)
        return PAGE_ERROR(w, err,
                          "page %ld: %lld items, but meta.total %lld and %lld per page "
                          "announce %lld: a short page before the last",
                          page, (long long)n, (long long)total, (long long)size,
                          (long long)due);
    return 0;
}

int mapi_walk_item(mapi_walk *w, const char *type, size_t type_len, const char *id,
                   size_t id_len, mapi_error *err)
{
    long first = 0;
    int r = set_add(&w->ids, type ? type : "", type ? type_len : 0, id, id_len, w->page,
                    &first);

    if (r < 0) {
        w->done = 1;
        return mapi_error_oom(err);
    }
    if (r == 0)
        return PAGE_ERROR(w, err, "page %ld: id %.*s again, already yielded on page %ld",
                          w->page, (int)(id_len > 256 ? 256 : id_len), id, first);
    return 0;
}

mapi_walk_step mapi_walk_end(mapi_walk *w)
{
    if (w->has_total) {
        if (w->has_announced && w->total != w->announced)
            w->total_changed = 1;
        w->has_announced = 1;
        w->announced = w->total;
    }
    w->received += w->n;
    w->pages++;
    w->next_page = w->page + 1;
    /* the first page p with p * size >= total */
    if (w->has_total && w->size > 0)
        w->last_page = (long)(w->total / w->size + (w->total % w->size != 0));
    else
        w->last_page = 0;
    if (w->n == 0) {
        w->done = 1;
        return MAPI_WALK_EMPTY;
    }
    if (mapi_walk_is_last(w->page, w->n, w->page_per_page, w->has_total, w->total, w->size) ||
        (w->max_pages && w->pages >= w->max_pages)) {
        w->done = 1;
        return MAPI_WALK_LAST;
    }
    return MAPI_WALK_MORE;
}

int mapi_walk_link(mapi_walk *w, const char *link, size_t len, mapi_error *err)
{
    long first = 0;
    int r;

    if (!link)
        return 0;
    r = set_add(&w->links, NULL, 0, link, len, w->pages + 1, &first);
    if (r < 0)
        return mapi_error_oom(err);
    return r;
}

size_t mapi_walk_batch(const mapi_walk *w, size_t concurrency)
{
    long left;
    size_t count = concurrency < 1 ? 1 : concurrency;

    if (w->done || (w->max_pages && w->pages >= w->max_pages))
        return 0;
    if (w->last_page == 0 || w->next_page == 0)
        return 1;
    left = w->last_page - w->next_page + 1;
    if (w->max_pages && w->max_pages - w->pages < left)
        left = w->max_pages - w->pages;
    if (left < 1)
        return 1;
    if (count > (size_t)left)
        count = (size_t)left;
    return count > MAPI_PAGES_MAX ? MAPI_PAGES_MAX : count;
}

/*
 * page_walk.h -- the pager's stop rules and page checks, written once
 * (src/page_walk.c): the C pager (src/pager.c, mapi_pager_next) and the Lua
 * pager (lua/merchantapi/pager.lua, through src/lua_walk.c) hand each page
 * to a walk, which says whether it is accepted, whether it is the last, and
 * how many pages to fetch next at once.  No I/O, no Lua: plain values in.
 */
#ifndef MAPI_PAGE_WALK_H
#define MAPI_PAGE_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "merchantapi.h"

/* A set of byte-string keys (an item's type and id, a followed link), each
   with the page that brought it.  Keys are copied. */
typedef struct mapi_key_set {
    char *bytes;          /* every key's bytes, one after the other */
    size_t used, cap;
    struct mapi_key_slot *slots; /* open addressing; nslots a power of two */
    size_t nslots, count;
} mapi_key_set;

/* What a page ends as (mapi_walk_end). */
typedef enum mapi_walk_step {
    MAPI_WALK_MORE = 0, /* handed out; another page may follow */
    MAPI_WALK_LAST,     /* handed out; no page follows (short, the total reached, max_pages) */
    MAPI_WALK_EMPTY     /* an empty page: nothing handed out, the walk is over */
} mapi_walk_step;

/* A walk over a list's pages, page after page (start from mapi_walk_init;
   release with mapi_walk_clear).  The fields are read-only to callers. */
typedef struct mapi_walk {
    /* set once */
    int64_t per_page;   /* the page size asked for, 0 when none */
    long max_pages;     /* 0: no limit */
    int follow;         /* the pages say by links.next whether another follows: no
                           page size, no total (only the id and link rules) */
    /* the walk so far */
    long pages;         /* pages accepted */
    long next_page;     /* the number of the page after the last accepted, 0 before */
    int64_t received;   /* items accepted */
    int has_announced;  /* a page told meta.total */
    int64_t announced;  /* the last meta.total told */
    int total_changed;  /* meta.total grew between two pages */
    long last_page;     /* the last page by meta.total, 0 when not known */
    int done;           /* no page follows */
    int64_t first_size; /* the page size once known (meta.per_page, per_page, page 1's) */
    /* the page being checked (mapi_walk_begin .. mapi_walk_end) */
    long page;
    int64_t n, size, page_per_page; /* page_per_page: 0 when not known */
    int has_total;
    int64_t total;
    mapi_key_set ids, links;
} mapi_walk;

/* A new walk: per_page the size asked for (0: none), max_pages (0: no
   limit), follow 1 for a walk by links.next. */
void mapi_walk_init(mapi_walk *w, int64_t per_page, long max_pages, int follow);
/* Frees what the walk holds; it is then as after mapi_walk_init(w, 0, 0, 0). */
void mapi_walk_clear(mapi_walk *w);

/*
 * The stop rule: whether page `page` with n items is the last of its list.
 * It is when it is empty, or short (fewer items than per_page), or when
 * page * size >= total.  per_page 0: not known; has_total 0: no total; size
 * the page size the total is divided by (0: per_page, else n).
 */
int mapi_walk_is_last(long page, int64_t n, int64_t per_page, int has_total, int64_t total,
                      int64_t size);

/*
 * Page `page` (its number; the pages of one walk come in order) arrives
 * with n items, meta.per_page (< 1: absent) and meta.total (has_total 0:
 * absent): checks it against the total (a negative total, a total that
 * shrank, more or fewer items than the total leaves for the page).  0, or
 * -1 with err DECODE "page <k>: ..." (the walk is then over).
 */
int mapi_walk_begin(mapi_walk *w, long page, int64_t n, int64_t meta_per_page, int has_total,
                    int64_t total, mapi_error *err);

/* One item of the page begun, by its type and id (bytes; type may be
   NULL for none): the id rule, no (type, id) twice in one walk.  An item
   without id is not passed.  0, or -1 with err DECODE ("page <k>: id <id>
   again, already yielded on page <j>") or MEMORY. */
int mapi_walk_item(mapi_walk *w, const char *type, size_t type_len, const char *id,
                   size_t id_len, mapi_error *err);

/* The page begun is accepted: the counts move on; says whether another
   page may follow (mapi_walk_step). */
mapi_walk_step mapi_walk_end(mapi_walk *w);

/*
 * The links.next rule of a walk by links: the link the page accepted last
 * gave (NULL: none), or the first request's path.  1 when it is to be
 * requested (it is recorded), 0 when the walk ends there (no link, or one
 * already requested: a server that ignores the page parameter), -1 with
 * err MEMORY.
 */
int mapi_walk_link(mapi_walk *w, const char *link, size_t len, mapi_error *err);

/* How many pages to fetch next, from next_page on, with `concurrency`
   pages at once: 1 until the last page is known (a page told meta.total),
   then up to concurrency, never past the last page nor max_pages, and at
   most MAPI_PAGES_MAX.  0 when the walk is over. */
size_t mapi_walk_batch(const mapi_walk *w, size_t concurrency);

#endif /* MAPI_PAGE_WALK_H */

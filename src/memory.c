/*
 * memory.c -- the memory of the core, below everything else (memory.h):
 * the arena a document's tree lives in, the large blocks kept per thread
 * for the next document, objects freed through the function their maker
 * installed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"

void mapi_owned_free(void *obj)
{
    mapi_owned *o = obj; /* its first member (C99 6.7.2.1) */

    if (o && o->free_fn)
        o->free_fn(obj);
}

/* ---- the arena ---- */

struct mapi_arena_chunk {
    mapi_arena_chunk *prev;
    size_t size; /* bytes after the header */
};

#define ARENA_MIN_CHUNK ((size_t)4096)
#define CHUNK_HEADER ((sizeof(mapi_arena_chunk) + 7) & ~(size_t)7)

void mapi_arena_init(mapi_arena *a, size_t chunk)
{
    a->pos = a->end = NULL;
    a->chunks = NULL;
    a->bytes = 0;
    a->next = chunk < ARENA_MIN_CHUNK ? ARENA_MIN_CHUNK : chunk;
}

void *mapi_arena_block(mapi_arena *a, size_t size)
{
    mapi_arena_chunk *c;
    size_t got;

    if (size > ((size_t)-1) / 2 - CHUNK_HEADER)
        return NULL;
    c = mapi_block_take(CHUNK_HEADER + size, &got);
    if (!c)
        return NULL;
    c->prev = a->chunks;
    c->size = got - CHUNK_HEADER; /* a kept block may be larger */
    a->chunks = c;
    a->bytes += got;
    return (char *)c + CHUNK_HEADER;
}

void mapi_arena_free(mapi_arena *a)
{
    mapi_arena_chunk *c = a->chunks;
    while (c) {
        mapi_arena_chunk *prev = c->prev;
        mapi_block_give(c, CHUNK_HEADER + c->size);
        c = prev;
    }
    mapi_arena_init(a, a->next);
}

void *mapi_arena_grow(mapi_arena *a, size_t n)
{
    /* chunks of one size: what is left unused is less than one of them */
    size_t size = n > a->next ? n : a->next;
    char *p = mapi_arena_block(a, size);

    if (!p)
        return NULL;
    a->pos = p + n;
    a->end = p + a->chunks->size;
    return p;
}

/* ---- the blocks kept per thread ---- */

/* A thread's kept blocks: plain data, valid at any time of the thread's
   life; freed by the key's destructor at the thread's end (or by
   memory_unload for the thread that unloads the library), after which the
   blocks it is given are freed at once (dead). */
typedef struct block_cache {
    void *p[MAPI_BLOCK_SLOTS];
    size_t size[MAPI_BLOCK_SLOTS];
    size_t n, bytes;
    int armed; /* the key holds it: its destructor runs at the thread's end */
    int dead;
} block_cache;

static __thread block_cache cache;
static pthread_key_t cache_key;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;
static int cache_key_made; /* 0: no key (out of resources): blocks kept until exit */

static void block_cache_free(block_cache *c)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        free(c->p[i]);
    c->n = c->bytes = 0;
    c->dead = 1;
}

static void cache_end(void *c)
{
    block_cache_free(c);
}

static void make_key(void)
{
    cache_key_made = pthread_key_create(&cache_key, cache_end) == 0;
}

/* The calling thread's cache, armed so that it is freed at the thread's end. */
static block_cache *block_cache_here(void)
{
    block_cache *c = &cache;

    if (!c->armed && !c->dead) {
        pthread_once(&cache_once, make_key);
        if (cache_key_made && pthread_setspecific(cache_key, c) == 0)
            c->armed = 1;
    }
    return c;
}

/* At exit() or when the library is unloaded: the calling thread's blocks
   freed (the main thread's at exit), the key deleted, so that no thread
   ends into a destructor that is gone (other threads' blocks then stay
   until the process ends). */
__attribute__((destructor)) static void memory_unload(void)
{
    block_cache_free(&cache);
    if (cache_key_made)
        pthread_key_delete(cache_key);
    cache_key_made = 0;
}


void *mapi_block_take(size_t n, size_t *size)
{
    block_cache *c = block_cache_here();
    size_t best = c->n, i;
    void *p;

    /* the smallest kept block that holds n and is not twice as large */
    for (i = 0; i < c->n; i++)
        if (c->size[i] >= n && c->size[i] / 2 <= n && (best == c->n || c->size[i] < c->size[best]))
            best = i;
    if (best < c->n) {
        p = c->p[best];
        *size = c->size[best];
        c->bytes -= c->size[best];
        c->n--;
        c->p[best] = c->p[c->n];
        c->size[best] = c->size[c->n];
        return p;
    }
    *size = n;
    return malloc(n ? n : 1);
}

void mapi_block_give(void *p, size_t size)
{
    block_cache *c;

    if (!p)
        return;
    c = block_cache_here();
    if (c->dead || size > MAPI_BLOCK_KEEP) {
        free(p);
        return;
    }
    /* room: the oldest blocks go first */
    while (c->n > 0 && (c->n == MAPI_BLOCK_SLOTS || c->bytes + size > MAPI_BLOCK_KEEP)) {
        free(c->p[0]);
        c->bytes -= c->size[0];
        c->n--;
        memmove(c->p, c->p + 1, c->n * sizeof c->p[0]);
        memmove(c->size, c->size + 1, c->n * sizeof c->size[0]);
    }
    c->p[c->n] = p;
    c->size[c->n] = size;
    c->n++;
    c->bytes += size;
}

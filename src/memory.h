/*
 * memory.h -- the memory of the core, below everything else (memory.c):
 * the arena a document's tree lives in, the large blocks kept per thread,
 * objects a lower layer holds and frees through the function their maker
 * installed.  Plain C: the JSON reader's C++ file includes it too.  Not
 * installed.
 */
#ifndef MAPI_MEMORY_H
#define MAPI_MEMORY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- objects freed by their maker's function ---- */

/* The first member of an object that a lower layer may hold and free
   without knowing its type -- an error's response and payout (error.c), a
   document's response (doc_parse.c): free_fn, installed by the layer that
   makes the object, frees it whole.  A lower layer calling through it is a
   downward tie (docs/architecture.md, "The layers"). */
typedef struct mapi_owned {
    void (*free_fn)(void *obj);
} mapi_owned;

/* Frees obj, an object whose first member is a mapi_owned, through its
   free_fn; NULL ignored. */
void mapi_owned_free(void *obj);

/* ---- the arena: every value, string and member array of a document ---- */

typedef struct mapi_arena_chunk mapi_arena_chunk;

typedef struct mapi_arena {
    char *pos, *end;          /* free room in the current chunk */
    mapi_arena_chunk *chunks; /* newest first */
    size_t bytes;             /* bytes taken from malloc, chunk headers included */
    size_t next;              /* size of a chunk */
} mapi_arena;

/* An empty arena whose chunks will hold about chunk bytes each (at least
   4 KiB; a larger allocation gets a chunk of its size). */
void mapi_arena_init(mapi_arena *a, size_t chunk);
/* Frees every chunk; the arena is empty again (init state, same next size). */
void mapi_arena_free(mapi_arena *a);
/* The slow path of mapi_arena_alloc: a new chunk.  NULL when out of memory. */
void *mapi_arena_grow(mapi_arena *a, size_t n);
/* n bytes in a chunk of their own (the current chunk stays current), freed
   with the arena; NULL when out of memory. */
void *mapi_arena_block(mapi_arena *a, size_t n);

/*
 * Large blocks of documents (arena chunks, body copies), kept per thread
 * for the next document instead of going back to malloc: a page read
 * after page would otherwise have glibc give the pages back to the system
 * and fault them in again at every document (a fifth of a decode's time).
 * A thread keeps at most MAPI_BLOCK_KEEP bytes in MAPI_BLOCK_SLOTS blocks,
 * freed when the thread ends (a POSIX thread key's destructor), and the
 * calling thread's when the library is unloaded or the process exits.  mapi_block_take: a block of at least n bytes
 * (*size gets its real size, at most twice n), or NULL when out of memory.
 * mapi_block_give: p, a block of size bytes from mapi_block_take (freed on
 * any thread), kept or freed; NULL is ignored.
 */
#define MAPI_BLOCK_KEEP ((size_t)2 << 20)
#define MAPI_BLOCK_SLOTS 16
void *mapi_block_take(size_t n, size_t *size);
void mapi_block_give(void *p, size_t size);

/* n bytes aligned to 8, or NULL when out of memory.  Freed with the arena. */
static inline void *mapi_arena_alloc(mapi_arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if ((size_t)(a->end - a->pos) >= n) {
        void *p = a->pos;
        a->pos += n;
        return p;
    }
    return mapi_arena_grow(a, n);
}

#ifdef __cplusplus
}
#endif

#endif

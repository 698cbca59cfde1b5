/*
 * memory.h -- the memory of the core, below everything else (memory.c):
 * objects a lower layer holds and frees through the function their maker
 * installed.  Not installed.
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

#ifdef __cplusplus
}
#endif

#endif

/*
 * memory.c -- the memory of the core, below everything else (memory.h):
 * objects freed through the function their maker installed.
 */
#include "memory.h"

void mapi_owned_free(void *obj)
{
    mapi_owned *o = obj; /* its first member (C99 6.7.2.1) */

    if (o && o->free_fn)
        o->free_fn(obj);
}

/*
 * strdup.c -- strings copied: strdup and strndup that take NULL (base
 * layer; for every file of the core).
 */
#include <stdlib.h>
#include <string.h>

#include "base.h"

char *mapi_strdup(const char *s)
{
    return s ? mapi_strndup(s, strlen(s)) : NULL;
}

char *mapi_strndup(const char *s, size_t n)
{
    char *p;

    if (!s)
        return NULL;
    if (memchr(s, '\0', n))
        n = strlen(s);
    p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

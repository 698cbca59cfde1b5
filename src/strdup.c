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

char *mapi_strpair(const char *a, size_t alen, const char *b, size_t blen, char **second)
{
    char *p;

    *second = NULL;
    if (alen > SIZE_MAX - 2 || blen > SIZE_MAX - 2 - alen)
        return NULL;
    p = malloc(alen + blen + 2);
    if (!p)
        return NULL;
    if (alen)
        memcpy(p, a, alen);
    p[alen] = '\0';
    if (blen)
        memcpy(p + alen + 1, b, blen);
    p[alen + 1 + blen] = '\0';
    *second = p + alen + 1;
    return p;
}

/*
 * buf.c -- a growable NUL-terminated byte string (mapi_buf, base.h: out
 * of memory is sticky), and the small byte-string helpers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

void mapi_buf_init(mapi_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->oom = 0;
}

void mapi_buf_free(mapi_buf *b)
{
    free(b->data);
    mapi_buf_init(b);
}

int mapi_buf_reserve(mapi_buf *b, size_t extra)
{
    size_t need, cap;
    char *p;

    if (b->oom)
        return -1;
    if (extra > (size_t)-1 - b->len - 1) {
        b->oom = 1;
        return -1;
    }
    need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > (size_t)-1 / 2 ? need : cap * 2;
    p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int mapi_buf_append(mapi_buf *b, const char *s, size_t n)
{
    if (mapi_buf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int mapi_buf_puts(mapi_buf *b, const char *s)
{
    return mapi_buf_append(b, s, strlen(s));
}

int mapi_buf_vprintf(mapi_buf *b, const char *fmt, va_list ap)
{
    va_list again;
    int n;

    if (b->oom)
        return -1;
    va_copy(again, ap);
    n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0 || mapi_buf_reserve(b, (size_t)n) < 0) {
        va_end(again);
        return b->oom = 1, -1; /* (an encoding error: a failed build too) */
    }
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    va_end(again);
    b->len += (size_t)n;
    return 0;
}

int mapi_buf_printf(mapi_buf *b, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = mapi_buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

char *mapi_buf_take(mapi_buf *b)
{
    char *s;

    if (b->oom) {
        mapi_buf_free(b);
        return NULL;
    }
    if (!b->data) {
        if (mapi_buf_reserve(b, 0) < 0)
            return NULL;
        b->data[0] = '\0';
    }
    s = b->data;
    mapi_buf_init(b);
    return s;
}

void mapi_wipe_free(char *s)
{
    volatile char *p = s;

    if (!s)
        return;
    while (*p)
        *p++ = 0;
    free(s);
}

void mapi_blank_controls(char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            s[i] = ' ';
}

int mapi_has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

int mapi_ascii_lower(int ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch;
}

int mapi_alnum_or(int ch, const char *set)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && strchr(set, ch) != NULL);
}

int mapi_ascii_ieq(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t i;

    for (i = 0; i < alen && i < blen; i++)
        if (mapi_ascii_lower((unsigned char)a[i]) != mapi_ascii_lower((unsigned char)b[i]))
            return 0;
    return alen == blen;
}

int mapi_hex_digit(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
        return (c | 0x20) - 'a' + 10;
    return -1;
}

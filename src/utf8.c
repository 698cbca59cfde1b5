/*
 * utf8.c -- which \u escape is a lone surrogate.
 *
 * simdjson checks UTF-8 strictly (RFC 3629: no overlong forms, encoded
 * surrogates or code points past U+10FFFF) and refuses a \u escape of a
 * lone surrogate (json-c, before it, made one U+FFFD without a word), but
 * it does not say which escape was wrong: doc_parse.c asks this when the
 * reader refuses a string, to name the cause (README, "Decisions").
 */
#include <stddef.h>

#include "internal.h"

static int hex4(const unsigned char *s, unsigned *out)
{
    unsigned v = 0;
    int i;

    for (i = 0; i < 4; i++) {
        unsigned c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* Length of the \u escape (or surrogate pair of escapes) at s[0] == '\\',
   s[1] == 'u': 6 or 12; 0 for a lone surrogate; 2 when four hex digits do
   not follow (another bad escape). */
size_t mapi_utf8_escape(const unsigned char *s, size_t avail)
{
    unsigned hi, lo;

    if (avail < 6 || hex4(s + 2, &hi) < 0)
        return 2;
    if (hi >= 0xDC00 && hi <= 0xDFFF)
        return 0; /* a low surrogate without its high half */
    if (hi < 0xD800 || hi > 0xDBFF)
        return 6;
    if (avail < 12 || s[6] != '\\' || s[7] != 'u' || hex4(s + 8, &lo) < 0 || lo < 0xDC00 ||
        lo > 0xDFFF)
        return 0; /* a high surrogate without its low half */
    return 12;
}

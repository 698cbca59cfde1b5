/*
 * utf8.c -- strict UTF-8 (RFC 3629) and \u escapes ahead of json-c.
 *
 * json-c's JSON_TOKENER_VALIDATE_UTF8 checks only the shape of multi-byte
 * sequences: it lets overlong forms (C0 AF, E0 80 80), encoded UTF-16
 * surrogates (ED A0 80) and code points past U+10FFFF (F4 90 80 80) through,
 * and it turns a \u escape of a lone surrogate into U+FFFD without a word.
 * A payments client should not read text that was not what the server
 * meant, so the whole body is checked here first (README, "Decisions").
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* The high bit of each byte of w that equals b (only the lowest is exact). */
static uint64_t has_byte(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);
    return (x - ONES) & ~x & HIGHS;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WORD_SCAN 1
#else
#define WORD_SCAN 0
#endif

/* From s[i] inside a string: the index of the next byte that is '"', '\\'
   or >= 0x80 (or len), eight bytes at a time where it can. */
static size_t plain_run(const unsigned char *s, size_t i, size_t len)
{
#if WORD_SCAN
    while (len - i >= 8) {
        uint64_t w, m;
        memcpy(&w, s + i, 8);
        m = (w & HIGHS) | has_byte(w, '"') | has_byte(w, '\\');
        if (m)
            return i + ((size_t)__builtin_ctzll(m) >> 3);
        i += 8;
    }
#endif
    while (i < len && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
        i++;
    return i;
}

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
   not follow (json-c rejects that escape itself; the bytes after "\u" are
   still checked here). */
/* (also numscan.c's) */
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

/* Length of the valid UTF-8 sequence starting at s[0] >= 0x80, or 0. */
/* (also numscan.c's) */
size_t mapi_utf8_sequence(const unsigned char *s, size_t avail)
{
    unsigned c = s[0], cp;
    size_t n, k;

    if (c >= 0xC2 && c <= 0xDF) {
        n = 1;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 2;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 3;
        cp = c & 0x07;
    } else {
        return 0; /* a continuation byte, C0/C1 (always overlong), F5..FF */
    }
    if (avail < n + 1)
        return 0;
    for (k = 1; k <= n; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n + 1;
}

int mapi_utf8_check(const char *body, size_t len, mapi_error *err)
{
    const unsigned char *s = (const unsigned char *)body;
    size_t i = 0, n;
    int in_string = 0;

    while (i < len) {
        unsigned c;
        if (in_string) {
            i = plain_run(s, i, len); /* plain ASCII: nothing to check */
            if (i >= len)
                break;
        }
        c = s[i];
        if (c >= 0x80) {
            n = mapi_utf8_sequence(s + i, len - i);
            if (n == 0)
                return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid utf-8 string");
            i += n;
        } else if (!in_string) {
            in_string = c == '"';
            i++;
        } else if (c == '"') {
            in_string = 0;
            i++;
        } else if (c == '\\' && i + 1 < len && s[i + 1] == 'u') {
            n = mapi_utf8_escape(s + i, len - i);
            if (n == 0)
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "invalid JSON: \\u escape of a lone surrogate");
            i += n;
        } else if (c == '\\' && i + 1 < len && s[i + 1] < 0x80) {
            i += 2; /* \" \\ \/ ...: the escaped byte never ends the string */
        } else {
            i++;
        }
    }
    return 0;
}

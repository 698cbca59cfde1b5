/*
 * numscan.c -- exact numbers ahead of json-c.
 *
 * json-c keeps the source text of every fraction/exponent number, but it
 * saturates integers beyond the 64-bit range (123456789012345678901234567890
 * becomes 18446744073709551615) and, even in strict mode, accepts a few
 * tokens RFC 8259 forbids ("1.", NaN, Infinity).  Before json-c sees a body,
 * this scanner walks the tokens outside strings once:
 *   - every number token is checked against the RFC 8259 grammar;
 *   - a bare word must be true, false or null;
 *   - integer tokens of 19 or more digits are marked: the parser copies the
 *     body with a '.' appended to each ("123...890."), which json-c then
 *     stores as a number with that text; jsonapi.c strips the '.' again.
 *     A source "1." is rejected here, so a trailing '.' is always ours.
 * Members (':' outside strings) are counted so that jsonapi.c can detect
 * duplicate keys, which json-c silently collapses.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BIG_DIGITS 19 /* int64 holds every 18-digit integer; 19+ go as text */

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Length of a valid number token at p (p < end), or 0 if invalid.  Sets
   *integer_digits to the digit count when the token is a plain integer,
   else to 0. */
static size_t number_token(const char *p, const char *end, size_t *integer_digits)
{
    const char *s = p;
    const char *digits;
    int plain = 1;

    if (p < end && *p == '-')
        p++;
    digits = p;
    if (p >= end || !is_digit((unsigned char)*p))
        return 0;
    if (*p == '0') {
        p++;
        if (p < end && is_digit((unsigned char)*p))
            return 0; /* leading zero */
    } else {
        while (p < end && is_digit((unsigned char)*p))
            p++;
    }
    *integer_digits = (size_t)(p - digits);
    if (p < end && *p == '.') {
        plain = 0;
        p++;
        if (p >= end || !is_digit((unsigned char)*p))
            return 0; /* "1." */
        while (p < end && is_digit((unsigned char)*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        plain = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !is_digit((unsigned char)*p))
            return 0;
        while (p < end && is_digit((unsigned char)*p))
            p++;
    }
    if (!plain)
        *integer_digits = 0;
    return (size_t)(p - s);
}

static size_t word_token(const char *p, const char *end)
{
    static const char *const words[] = {"true", "false", "null"};
    size_t i;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(end - p) >= n && memcmp(p, words[i], n) == 0)
            return n;
    }
    return 0;
}

int mapi_numscan(const char *body, size_t len, mapi_numscan_result *out, mapi_error *err)
{
    const char *p = body, *end = body + len;

    out->big_ints = 0;
    out->members = 0;
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            /* skip the string; json-c validates its contents */
            p++;
            while (p < end && *p != '"') {
                if (*p == '\\' && p + 1 < end)
                    p++;
                p++;
            }
            if (p < end)
                p++;
        } else if (c == '-' || is_digit(c)) {
            size_t digits = 0, n = number_token(p, end, &digits);
            if (n == 0)
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "invalid JSON number at byte %zu", (size_t)(p - body));
            if (digits >= BIG_DIGITS)
                out->big_ints++;
            p += n;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            size_t n = word_token(p, end);
            if (n == 0)
                return mapi_error_set(err, MAPI_ERR_DECODE,
                                      "invalid JSON literal at byte %zu", (size_t)(p - body));
            p += n;
        } else {
            if (c == ':')
                out->members++;
            p++;
        }
    }
    return 0;
}

char *mapi_numscan_mark(const char *body, size_t len, size_t big_ints, size_t *out_len)
{
    const char *p = body, *end = body + len;
    char *copy, *w;

    if (len > (size_t)-1 - big_ints - 1)
        return NULL;
    copy = malloc(len + big_ints + 1);
    if (!copy)
        return NULL;
    w = copy;
    while (p < end) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            const char *s = p++;
            while (p < end && *p != '"') {
                if (*p == '\\' && p + 1 < end)
                    p++;
                p++;
            }
            if (p < end)
                p++;
            memcpy(w, s, (size_t)(p - s));
            w += p - s;
        } else if (c == '-' || is_digit(c)) {
            size_t digits = 0, n = number_token(p, end, &digits);
            if (n == 0) /* mapi_numscan accepted the body; cannot happen */
                n = 1;
            memcpy(w, p, n);
            w += n;
            p += n;
            if (digits >= BIG_DIGITS)
                *w++ = '.';
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
    *out_len = (size_t)(w - copy);
    return copy;
}

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
 * duplicate keys, which json-c silently collapses.  Strings are checked in
 * the same pass by utf8.c's rules (strict UTF-8, no lone surrogate escape),
 * so the body is read once before json-c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BIG_DIGITS 19 /* int64 holds every 18-digit integer; 19+ go as text */

static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* The high bit of each byte of w that equals b.  Above the lowest match a
   byte may be flagged wrongly (a borrow), so only the lowest flag is exact. */
static uint64_t has_byte(uint64_t w, unsigned char b)
{
    uint64_t x = w ^ (ONES * b);
    return (x - ONES) & ~x & HIGHS;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WORD_SCAN 1
/* Index of the byte holding the lowest flag of a non-zero has_byte mask. */
static size_t first_flag(uint64_t m) { return (size_t)__builtin_ctzll(m) >> 3; }
#else
#define WORD_SCAN 0
#endif

/* Past the string whose opening quote is just before p: after its closing
   quote, or end (a body mapi_numscan accepted: for mapi_numscan_mark).
   Eight bytes at a time to the next '"' or '\\'. */
static const char *skip_string(const char *p, const char *end)
{
    for (;;) {
#if WORD_SCAN
        while (end - p >= 8) {
            uint64_t w, m;
            memcpy(&w, p, 8);
            m = has_byte(w, '"') | has_byte(w, '\\');
            if (m) {
                p += first_flag(m);
                break;
            }
            p += 8;
        }
#endif
        while (p < end && *p != '"' && *p != '\\')
            p++;
        if (p >= end)
            return end;
        if (*p == '"')
            return p + 1;
        p += p + 1 < end ? 2 : 1; /* the escaped byte never ends the string */
    }
}

/* The same while checking the string as mapi_utf8_check does (RFC 3629
   UTF-8, no lone surrogate in \u escapes): past the string, or NULL with
   *bad set to the error's title.  Eight plain bytes at a time: no '"',
   no '\\', all below 0x80 (string bodies are most of a document). */
static const char *scan_string(const char *p, const char *end, const char **bad)
{
    for (;;) {
        unsigned char c;
        size_t n;
#if WORD_SCAN
        while (end - p >= 8) {
            uint64_t w, m;
            memcpy(&w, p, 8);
            m = (w & HIGHS) | has_byte(w, '"') | has_byte(w, '\\');
            if (m) {
                p += first_flag(m);
                break;
            }
            p += 8;
        }
#endif
        while (p < end && (unsigned char)*p < 0x80 && *p != '"' && *p != '\\')
            p++;
        if (p >= end)
            return end;
        c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c == '\\') {
            if (p + 1 < end && p[1] == 'u') {
                n = mapi_utf8_escape((const unsigned char *)p, (size_t)(end - p));
                if (n == 0) {
                    *bad = "invalid JSON: \\u escape of a lone surrogate";
                    return NULL;
                }
                p += n;
            } else {
                /* the escaped byte never ends the string; a byte >= 0x80
                   after '\\' is checked as UTF-8 next (json-c refuses it) */
                p += p + 1 < end && (unsigned char)p[1] < 0x80 ? 2 : 1;
            }
            continue;
        }
        n = mapi_utf8_sequence((const unsigned char *)p, (size_t)(end - p));
        if (n == 0) {
            *bad = "invalid JSON: invalid utf-8 string";
            return NULL;
        }
        p += n;
    }
}

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
        switch (c) {
        case ' ': case '\t': case '\n': case '\r': case ',':
        case '{': case '}': case '[': case ']':
            p++; /* the bulk of what lies between strings */
            continue;
        case ':':
            out->members++;
            p++;
            continue;
        case '"': {
            const char *bad = NULL;
            p = scan_string(p + 1, end, &bad); /* json-c checks its escapes */
            if (!p)
                return mapi_error_set(err, MAPI_ERR_DECODE, "%s", bad);
            continue;
        }
        default:
            break;
        }
        if (c >= 0x80) {
            /* never valid outside a string, but checked as UTF-8 first so
               that the error is the same as mapi_utf8_check's */
            size_t n = mapi_utf8_sequence((const unsigned char *)p, (size_t)(end - p));
            if (n == 0)
                return mapi_error_set(err, MAPI_ERR_DECODE, "invalid JSON: invalid utf-8 string");
            p += n;
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
            p++; /* anything else is json-c's to refuse */
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
            const char *s = p;
            p = skip_string(p + 1, end);
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

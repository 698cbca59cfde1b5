/*
 * value.c -- mapi_value: read-only navigation of a document's compact tree
 * (json_parse.h; it lives in an arena of memory.c) and the JSON text of a
 * value.
 * JSON null is a node of type MAPI_NULL inside the tree; the public
 * functions hand it out as the NULL pointer.  Nothing here mutates a
 * document, so values may be read from several threads at once.
 */
#include <stdlib.h>
#include <string.h>

#include "documents.h"

/* ---- navigation ---- */

/* A node as the public functions give it: JSON null is NULL. */
static const mapi_value *pub(const mapi_value *v)
{
    return v && mapi_tl_type(v) != MAPI_NULL ? v : NULL;
}

mapi_type mapi_value_type(const mapi_value *v)
{
    return v ? mapi_tl_type(v) : MAPI_NULL;
}

int mapi_value_bool(const mapi_value *v)
{
    return v && mapi_tl_type(v) == MAPI_BOOL && mapi_tl_len(v) != 0;
}

/* The value of the text of a MAPI_INT node (it fits: the reader checked). */
static int64_t int_text_value(const char *s)
{
    int neg = *s == '-';
    int64_t v = 0;

    if (neg)
        s++;
    for (; *s >= '0' && *s <= '9'; s++)
        v = neg ? v * 10 - (*s - '0') : v * 10 + (*s - '0');
    return v;
}

int mapi_value_int64(const mapi_value *v, int64_t *out)
{
    if (!v || mapi_tl_type(v) != MAPI_INT)
        return -1;
    *out = int_text_value((const char *)v->p);
    return 0;
}

const char *mapi_value_number(const mapi_value *v, size_t *len)
{
    if (!v || (mapi_tl_type(v) != MAPI_INT && mapi_tl_type(v) != MAPI_NUMBER)) {
        if (len)
            *len = 0;
        return NULL;
    }
    if (len)
        *len = mapi_tl_len(v);
    return (const char *)v->p;
}

const char *mapi_value_number_text(const mapi_value *v)
{
    return mapi_value_number(v, NULL);
}

const char *mapi_value_decimal(const mapi_value *v, size_t *len)
{
    const char *text;
    size_t n;

    if (v && mapi_tl_type(v) == MAPI_STRING)
        return mapi_value_string(v, len);
    text = mapi_value_number(v, &n);
    if (text && (memchr(text, 'e', n) || memchr(text, 'E', n))) { /* an exponent */
        text += n + 1; /* the decimal form the reader stored after the text's NUL */
        n = strlen(text);
    }
    if (len)
        *len = n;
    return text;
}

/* mapi_decimal_form (json_parse.h): "1.50e+1" -> "15.0", "0e5" -> "0"; text
   that is no number with an exponent within this is its own form. */
#define MAPI_DECIMAL_MAX_EXPONENT 400

/* Writes byte c at out[at] when out is not NULL; the next position. */
static size_t put(char *out, size_t at, char c)
{
    if (out)
        out[at] = c;
    return at + 1;
}

size_t mapi_decimal_form(const char *s, size_t n, char *out)
{
    const char *end = s + n, *e = NULL, *mant = s, *p;
    long exp10 = 0, point, nint = 0, nd = 0, i;
    int neg = 0, started = 0, seen_point = 0;
    size_t at = 0;

    for (p = s; p < end; p++)
        if (*p == 'e' || *p == 'E') {
            e = p;
            break;
        }
    if (!e)
        goto as_is;
    p = e + 1;
    if (p < end && (*p == '+' || *p == '-'))
        p++;
    if (p >= end)
        goto as_is;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            goto as_is;
        exp10 = exp10 * 10 + (*p - '0');
        if (exp10 > MAPI_DECIMAL_MAX_EXPONENT)
            goto as_is;
    }
    if (e[1] == '-')
        exp10 = -exp10;
    if (*mant == '-') {
        neg = 1;
        mant++;
    }
    for (p = mant; p < e; p++) {
        if (*p == '.') {
            if (seen_point++)
                goto as_is;
            continue;
        }
        if (*p < '0' || *p > '9')
            goto as_is;
        nd++;
        if (!seen_point)
            nint++;
    }
    if (nd == 0 || nint == 0)
        goto as_is;
    point = nint + exp10; /* where the decimal point falls among the digits */

    if (neg)
        at = put(out, at, '-');
    if (point <= 0) {
        at = put(out, at, '0');
        at = put(out, at, '.');
        for (i = 0; i < -point; i++)
            at = put(out, at, '0');
        for (p = mant; p < e; p++)
            if (*p != '.')
                at = put(out, at, *p);
        return at;
    }
    for (i = 0, p = mant; i < point; i++) {
        char c = '0';
        while (p < e && *p == '.')
            p++;
        if (p < e)
            c = *p++;
        if (c == '0' && !started && i + 1 < point)
            continue; /* leading zeros of the integer part */
        started = 1;
        at = put(out, at, c);
    }
    if (point < nd) {
        at = put(out, at, '.');
        for (; p < e; p++)
            if (*p != '.')
                at = put(out, at, *p);
    }
    return at;
as_is:
    if (out)
        memcpy(out, s, n);
    return n;
}

const char *mapi_value_string(const mapi_value *v, size_t *len)
{
    if (!v || mapi_tl_type(v) != MAPI_STRING)
        return NULL;
    if (len)
        *len = mapi_tl_len(v);
    return (const char *)v->p;
}

size_t mapi_value_len(const mapi_value *v)
{
    if (!v || (mapi_tl_type(v) != MAPI_ARRAY && mapi_tl_type(v) != MAPI_OBJECT))
        return 0;
    return mapi_tl_len(v);
}

const mapi_value *mapi_value_at(const mapi_value *v, size_t i)
{
    if (!v || mapi_tl_type(v) != MAPI_ARRAY || i >= mapi_tl_len(v))
        return NULL;
    return pub((const mapi_value *)v->p + i);
}

const mapi_value *mapi_value_member(const mapi_value *v, const char *key, size_t len)
{
    const mapi_member *m;
    size_t i, n;

    if (!v || !key || mapi_tl_type(v) != MAPI_OBJECT)
        return NULL;
    m = (const mapi_member *)v->p;
    n = mapi_tl_len(v);
    for (i = 0; i < n; i++)
        if (m[i].name->len == len && memcmp(m[i].name->s, key, len) == 0)
            return &m[i].value;
    return NULL;
}

const mapi_value *mapi_value_member_id(const mapi_value *v, size_t id)
{
    const mapi_member *m;
    size_t i, n;

    if (!v || mapi_tl_type(v) != MAPI_OBJECT)
        return NULL;
    m = (const mapi_member *)v->p;
    n = mapi_tl_len(v);
    for (i = 0; i < n; i++)
        if (m[i].name->id == id)
            return &m[i].value;
    return NULL;
}

const mapi_value *mapi_value_get(const mapi_value *v, const char *key)
{
    return key ? pub(mapi_value_member(v, key, strlen(key))) : NULL;
}

const mapi_value *mapi_value_get_n(const mapi_value *v, const char *key, size_t key_len)
{
    return pub(mapi_value_member(v, key, key_len));
}

int mapi_value_has(const mapi_value *v, const char *key)
{
    return key && mapi_value_member(v, key, strlen(key)) != NULL;
}

int mapi_value_has_n(const mapi_value *v, const char *key, size_t key_len)
{
    return mapi_value_member(v, key, key_len) != NULL;
}

void mapi_members_begin(const mapi_value *obj, mapi_members *it)
{
    it->pos = it->end = it->last = NULL;
    if (obj && mapi_tl_type(obj) == MAPI_OBJECT && mapi_tl_len(obj) > 0) {
        it->pos = obj->p;
        it->end = (const mapi_member *)obj->p + mapi_tl_len(obj);
    }
}

int mapi_members_next_n(mapi_members *it, const char **key, size_t *key_len,
                        const mapi_value **value)
{
    const mapi_member *m = (const mapi_member *)it->pos;

    if (!m || m == (const mapi_member *)it->end)
        return 0;
    if (key)
        *key = m->name->s;
    if (key_len)
        *key_len = m->name->len;
    if (value)
        *value = pub(&m->value);
    it->last = m;
    it->pos = m + 1;
    return 1;
}

int mapi_members_next(mapi_members *it, const char **key, const mapi_value **value)
{
    return mapi_members_next_n(it, key, NULL, value);
}

size_t mapi_members_name_id(const mapi_members *it)
{
    const mapi_member *m = (const mapi_member *)it->last;
    return m ? m->name->id : 0;
}

/* ---- JSON text ---- */

static void write_string(mapi_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;

    mapi_buf_append(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[6];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        mapi_buf_append(b, s + run, i - run);
        run = i + 1;
        esc[0] = '\\';
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            mapi_buf_append(b, esc, 6);
            continue;
        }
        mapi_buf_append(b, esc, 2);
    }
    mapi_buf_append(b, s + run, n - run);
    mapi_buf_append(b, "\"", 1);
}

static void write_json(mapi_buf *b, const mapi_value *v)
{
    size_t i, n;

    switch (mapi_value_type(v)) {
    case MAPI_NULL:
        mapi_buf_puts(b, "null");
        break;
    case MAPI_BOOL:
        mapi_buf_puts(b, mapi_value_bool(v) ? "true" : "false");
        break;
    case MAPI_INT:
    case MAPI_NUMBER:
        mapi_buf_append(b, (const char *)v->p, mapi_tl_len(v));
        break;
    case MAPI_STRING:
        write_string(b, (const char *)v->p, mapi_tl_len(v));
        break;
    case MAPI_ARRAY:
        n = mapi_tl_len(v);
        mapi_buf_append(b, "[", 1);
        for (i = 0; i < n; i++) {
            if (i)
                mapi_buf_append(b, ",", 1);
            write_json(b, (const mapi_value *)v->p + i);
        }
        mapi_buf_append(b, "]", 1);
        break;
    case MAPI_OBJECT: {
        const mapi_member *m = (const mapi_member *)v->p;
        n = mapi_tl_len(v);
        mapi_buf_append(b, "{", 1);
        for (i = 0; i < n; i++) {
            if (i)
                mapi_buf_append(b, ",", 1);
            write_string(b, m[i].name->s, m[i].name->len);
            mapi_buf_append(b, ":", 1);
            write_json(b, &m[i].value);
        }
        mapi_buf_append(b, "}", 1);
        break;
    }
    }
}

char *mapi_value_json(const mapi_value *v, size_t *len)
{
    mapi_buf b;
    char *s;

    mapi_buf_init(&b);
    write_json(&b, v);
    if (len)
        *len = b.len;
    s = mapi_buf_take(&b);
    if (!s && len)
        *len = 0;
    return s;
}

/* ---- equality (merging two copies of a resource) ---- */

int mapi_value_equal(const mapi_value *a, const mapi_value *b)
{
    mapi_type t = mapi_value_type(a);
    size_t i, j, n;

    if (t != mapi_value_type(b))
        return 0;
    switch (t) {
    case MAPI_NULL:
        return 1;
    case MAPI_BOOL:
        return mapi_value_bool(a) == mapi_value_bool(b);
    case MAPI_INT:
    case MAPI_NUMBER: /* the same text: "1.0" and "1.00" are two different writings */
    case MAPI_STRING:
        return mapi_tl_len(a) == mapi_tl_len(b) &&
               (a->p == b->p || memcmp(a->p, b->p, mapi_tl_len(a)) == 0);
    case MAPI_ARRAY:
        n = mapi_tl_len(a);
        if (n != mapi_tl_len(b))
            return 0;
        for (i = 0; i < n; i++)
            if (!mapi_value_equal((const mapi_value *)a->p + i, (const mapi_value *)b->p + i))
                return 0;
        return 1;
    case MAPI_OBJECT: {
        const mapi_member *ma = (const mapi_member *)a->p, *mb = (const mapi_member *)b->p;
        n = mapi_tl_len(a);
        if (n != mapi_tl_len(b))
            return 0;
        for (i = 0; i < n; i++) {
            /* names are interned: one pointer per name; the same order first */
            const mapi_member *m = ma[i].name == mb[i].name ? &mb[i] : NULL;
            for (j = 0; !m && j < n; j++)
                if (mb[j].name == ma[i].name)
                    m = &mb[j];
            if (!m || !mapi_value_equal(&ma[i].value, &m->value))
                return 0;
        }
        return 1;
    }
    }
    return 0;
}

/* ---- counts (list pagination meta) ---- */

#define COUNT_MAX_DIGITS 19 /* INT64_MAX has 19 digits */

/* The value of n >= 1 ASCII digits d (leading zeros allowed) followed by
   `zeros` more zeros, if it fits int64_t: 0 and *out, else -1. */
static int digits_value(const char *d, size_t n, int64_t zeros, int64_t *out)
{
    uint64_t v = 0;
    size_t i;

    while (n > 0 && *d == '0') { /* leading zeros add nothing */
        d++;
        n--;
    }
    if (n == 0) {
        *out = 0;
        return 0;
    }
    if (zeros < 0 || (int64_t)n + zeros > COUNT_MAX_DIGITS)
        return -1;
    for (i = 0; i < n + (size_t)zeros; i++) {
        unsigned digit = i < n ? (unsigned)(d[i] - '0') : 0;
        if (v > ((uint64_t)INT64_MAX - digit) / 10)
            return -1;
        v = v * 10 + digit;
    }
    *out = (int64_t)v;
    return 0;
}

/* A number's source text (RFC 8259 grammar, checked at parse time): NULL
   and *out when its value is a whole number 0 .. INT64_MAX ("2.0", "1e3",
   "-0" included), else what it is. */
static const char *number_count(const char *s, int64_t *out)
{
    const char *ip, *fp = "", *p;
    size_t il, fl = 0, i;
    int64_t exp = 0, point;
    int neg = 0, exp_neg = 0, nonzero = 0, fraction = 0;
    char digits[COUNT_MAX_DIGITS + 1];
    size_t nd = 0;

    if (!s)
        return "a number without its text";
    if (*s == '-') {
        neg = 1;
        s++;
    }
    ip = s;
    il = strspn(ip, "0123456789");
    p = ip + il;
    if (*p == '.') {
        fp = p + 1;
        fl = strspn(fp, "0123456789");
        p = fp + fl;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            exp_neg = *p++ == '-';
        for (; *p >= '0' && *p <= '9'; p++)
            if (exp < 1000000000) /* beyond that it only decides all or nothing */
                exp = exp * 10 + (*p - '0');
        if (exp_neg)
            exp = -exp;
    }
    if (il == 0 || *p != '\0')
        return "a number without its text";
    /* the digits ip[0..il) fp[0..fl), with the decimal point after `point` of them */
    point = (int64_t)il + exp;
    for (i = 0; i < il + fl; i++) {
        char c = i < il ? ip[i] : fp[i - il];
        if (c == '0' && nd == 0 && (int64_t)i < point)
            continue; /* a leading zero of the integer part */
        if (c != '0')
            nonzero = 1;
        if ((int64_t)i >= point) {
            if (c != '0')
                fraction = 1;
        } else if (nd < COUNT_MAX_DIGITS + 1) {
            digits[nd++] = c;
        } else {
            nd = COUNT_MAX_DIGITS + 2; /* too many: beyond int64 */
            break;
        }
    }
    if (neg && nonzero)
        return "a negative number";
    if (fraction)
        return "a fraction";
    if (!nonzero) {
        *out = 0;
        return NULL;
    }
    if (nd > COUNT_MAX_DIGITS ||
        digits_value(digits, nd, point - (int64_t)(il + fl) > 0 ? point - (int64_t)(il + fl) : 0,
                     out) != 0)
        return "a number beyond 64 bits";
    return NULL;
}

const char *mapi_value_count_check(const mapi_value *v, int64_t *out)
{
    const char *s;
    size_t len;
    int64_t n;

    switch (mapi_value_type(v)) {
    case MAPI_INT:
        n = int_text_value((const char *)v->p);
        if (n < 0)
            return "a negative number";
        *out = n;
        return NULL;
    case MAPI_NUMBER:
        return number_count(mapi_value_number_text(v), out);
    case MAPI_STRING:
        s = mapi_value_string(v, &len);
        /* exactly the text of a JSON integer >= 0: no sign, space, point,
           exponent or leading zero, so that one value has one spelling */
        if (len == 0 || strspn(s, "0123456789") != len || (len > 1 && s[0] == '0'))
            return "a string that is not plain digits";
        if (digits_value(s, len, 0, out) != 0)
            return "a string of digits beyond 64 bits";
        return NULL;
    case MAPI_BOOL: return "a boolean";
    case MAPI_ARRAY: return "an array";
    case MAPI_OBJECT: return "an object";
    case MAPI_NULL:
    default: return "null";
    }
}

int mapi_value_count(const mapi_value *v, int64_t *out)
{
    /* the check writes *out only for a count */
    return out && mapi_value_count_check(v, out) == NULL ? 0 : -1;
}

/*
 * value.c -- mapi_value: a read-only view of the json-c objects of a
 * document.  A mapi_value pointer IS a json_object pointer; JSON null is the
 * NULL pointer, as in json-c.  Nothing here allocates or mutates, so values
 * may be read from several threads at once (json_object_to_json_string,
 * which caches into the object, is never called).
 */
#include <json-c/json.h>
#include <inttypes.h>
#include <string.h>

#include "internal.h"

#define JO(v) ((struct json_object *)(v))

mapi_type mapi_value_type(const mapi_value *v)
{
    switch (json_object_get_type(JO(v))) {
    case json_type_boolean: return MAPI_BOOL;
    case json_type_int: return MAPI_INT;
    case json_type_double: return MAPI_NUMBER;
    case json_type_string: return MAPI_STRING;
    case json_type_array: return MAPI_ARRAY;
    case json_type_object: return MAPI_OBJECT;
    case json_type_null:
    default: return MAPI_NULL;
    }
}

int mapi_value_bool(const mapi_value *v)
{
    return json_object_is_type(JO(v), json_type_boolean) && json_object_get_boolean(JO(v));
}

int mapi_value_int64(const mapi_value *v, int64_t *out)
{
    if (!json_object_is_type(JO(v), json_type_int))
        return -1;
    /* numscan sends every integer of 19+ digits down the text path, so
       json-c only holds integers that fit int64 exactly. */
    *out = json_object_get_int64(JO(v));
    return 0;
}

/*
 * Where a number's texts live.  json-c's tokener keeps the source text of a
 * parsed double as the object's userdata (json_object_new_double_s); for an
 * integer, and for the plain decimal form of a number written with an
 * exponent, mapi_value_prepare_number adds them at parse time (jsonapi.c's
 * walk, before the document is returned: values are never written to
 * afterwards).  The userdata is then:
 *   integer               "<decimal>"
 *   number, no exponent   "<source>"
 *   number with exponent  "<source>\0<decimal>"
 * Objects that did not come from the parser have no userdata: NULL.
 */
static const char *number_userdata(const mapi_value *v)
{
    if (!json_object_is_type(JO(v), json_type_double) &&
        !json_object_is_type(JO(v), json_type_int))
        return NULL;
    return (const char *)json_object_get_userdata(JO(v));
}

const char *mapi_value_number(const mapi_value *v, size_t *len)
{
    const char *text = number_userdata(v);

    if (len)
        *len = text ? strlen(text) : 0;
    return text;
}

const char *mapi_value_number_text(const mapi_value *v)
{
    return mapi_value_number(v, NULL);
}

const char *mapi_value_decimal(const mapi_value *v, size_t *len)
{
    const char *text;

    if (json_object_is_type(JO(v), json_type_string))
        return mapi_value_string(v, len);
    text = number_userdata(v);
    if (text && json_object_is_type(JO(v), json_type_double) && strpbrk(text, "eE"))
        text += strlen(text) + 1; /* the decimal form stored after the source */
    if (len)
        *len = text ? strlen(text) : 0;
    return text;
}

/*
 * Appends the plain decimal form of the JSON number `text` written with an
 * exponent: the digits moved by the exponent, never rounded ("1.5e2" ->
 * "150", "2.5E-3" -> "0.0025", "1.50e+1" -> "15.0", "0e5" -> "0").  An
 * exponent beyond +-MAPI_DECIMAL_MAX_EXPONENT, or text that is not a JSON
 * number, is appended as it is.
 */
#define MAPI_DECIMAL_MAX_EXPONENT 400

static void decimal_form(mapi_buf *b, const char *text)
{
    const char *e = strpbrk(text, "eE"), *mant = text, *p;
    long exp10 = 0, point, nint = 0, nd = 0, i;
    int neg = 0, started = 0, seen_point = 0;

    if (!e)
        goto as_is;
    p = e + 1;
    if (*p == '+' || *p == '-')
        p++;
    if (!*p)
        goto as_is;
    for (; *p; p++) {
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
        mapi_buf_puts(b, "-");
    if (point <= 0) {
        mapi_buf_puts(b, "0.");
        for (i = 0; i < -point; i++)
            mapi_buf_puts(b, "0");
        for (p = mant; p < e; p++)
            if (*p != '.')
                mapi_buf_append(b, p, 1);
        return;
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
        mapi_buf_append(b, &c, 1);
    }
    if (point < nd) {
        mapi_buf_puts(b, ".");
        for (; p < e; p++)
            if (*p != '.')
                mapi_buf_append(b, p, 1);
    }
    return;
as_is:
    mapi_buf_puts(b, text);
}

int mapi_value_prepare_number(void *json_object)
{
    struct json_object *v = (struct json_object *)json_object;
    mapi_buf b;
    char *text;

    mapi_buf_init(&b);
    if (json_object_is_type(v, json_type_int)) {
        mapi_buf_printf(&b, "%" PRId64, json_object_get_int64(v));
    } else if (json_object_is_type(v, json_type_double)) {
        const char *src = (const char *)json_object_get_userdata(v);
        if (!src || !strpbrk(src, "eE"))
            return 0; /* the source text is the decimal form */
        mapi_buf_puts(&b, src);
        mapi_buf_append(&b, "", 1); /* the NUL between the two texts */
        decimal_form(&b, src);
    } else {
        return 0;
    }
    text = mapi_buf_take(&b);
    if (!text)
        return -1;
    /* frees the tokener's copy of the source, if any */
    json_object_set_userdata(v, text, json_object_free_userdata);
    return 0;
}

const char *mapi_value_string(const mapi_value *v, size_t *len)
{
    if (!json_object_is_type(JO(v), json_type_string))
        return NULL;
    if (len)
        *len = (size_t)json_object_get_string_len(JO(v));
    return json_object_get_string(JO(v));
}

size_t mapi_value_len(const mapi_value *v)
{
    if (json_object_is_type(JO(v), json_type_array))
        return json_object_array_length(JO(v));
    if (json_object_is_type(JO(v), json_type_object))
        return (size_t)json_object_object_length(JO(v));
    return 0;
}

const mapi_value *mapi_value_at(const mapi_value *v, size_t i)
{
    if (!json_object_is_type(JO(v), json_type_array) || i >= json_object_array_length(JO(v)))
        return NULL;
    return (const mapi_value *)json_object_array_get_idx(JO(v), i);
}

const mapi_value *mapi_value_get(const mapi_value *v, const char *key)
{
    struct json_object *m = NULL;
    if (!key || !json_object_is_type(JO(v), json_type_object))
        return NULL;
    if (!json_object_object_get_ex(JO(v), key, &m))
        return NULL;
    return (const mapi_value *)m;
}

int mapi_value_has(const mapi_value *v, const char *key)
{
    if (!key || !json_object_is_type(JO(v), json_type_object))
        return 0;
    return json_object_object_get_ex(JO(v), key, NULL) ? 1 : 0;
}

void mapi_members_begin(const mapi_value *obj, mapi_members *it)
{
    it->pos = NULL;
    if (json_object_is_type(JO(obj), json_type_object))
        it->pos = lh_table_head(json_object_get_object(JO(obj)));
}

int mapi_members_next(mapi_members *it, const char **key, const mapi_value **value)
{
    const struct lh_entry *e = (const struct lh_entry *)it->pos;
    if (!e)
        return 0;
    if (key)
        *key = (const char *)lh_entry_k(e);
    if (value)
        *value = (const mapi_value *)lh_entry_v(e);
    it->pos = lh_entry_next(e);
    return 1;
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
        n = json_object_get_int64(JO(v));
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
    int64_t n;

    if (!out || mapi_value_count_check(v, &n) != NULL)
        return -1;
    *out = n;
    return 0;
}

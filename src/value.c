/*
 * value.c -- mapi_value: a read-only view of the json-c objects of a
 * document.  A mapi_value pointer IS a json_object pointer; JSON null is the
 * NULL pointer, as in json-c.  Nothing here allocates or mutates, so values
 * may be read from several threads at once (json_object_to_json_string,
 * which caches into the object, is never called).
 */
#include <json-c/json.h>
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

const char *mapi_value_number_text(const mapi_value *v)
{
    if (!json_object_is_type(JO(v), json_type_double))
        return NULL;
    /* json-c's tokener keeps the source text of a parsed double as the
       object's userdata (json_object_new_double_s); jsonapi.c checks at
       parse time that every number has it. */
    return (const char *)json_object_get_userdata(JO(v));
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

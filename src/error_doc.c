/*
 * error_doc.c -- a JSON:API error document into a mapi_error (exchange.h,
 * mapi_error_from_errors), the limits an amount error's detail carries, and
 * the one rule of what is an error document.
 */
#include <stdlib.h>
#include <string.h>

#include "exchange.h"

/* ---- error documents ---- */

/* A member JSON:API wants to be a string, as a new string: the string
   itself, or the JSON text of any other value (a validation array or
   object in detail is kept, not dropped); NULL when absent or null, or out
   of memory (*oom set then). */
static char *member_string(const mapi_value *obj, const char *key, int *oom)
{
    const mapi_value *v = mapi_value_get(obj, key);
    const char *s;
    size_t len;
    char *copy;

    if (!v)
        return NULL;
    if (mapi_value_type(v) == MAPI_STRING) {
        s = mapi_value_string(v, &len);
        copy = mapi_strndup(s, len);
    } else {
        copy = mapi_value_json(v, NULL);
    }
    if (!copy)
        *oom = 1;
    return copy;
}

/* errors[].status: a number, or a string of 1..3 digits ("422"); 0 otherwise. */
static int member_status(const mapi_value *obj)
{
    const mapi_value *v = mapi_value_get(obj, "status");
    int64_t n;

    if (mapi_value_type(v) == MAPI_INT) {
        if (mapi_value_int64(v, &n) == 0 && n >= 0 && n <= 999)
            return (int)n;
        return 0;
    }
    if (mapi_value_type(v) == MAPI_STRING) {
        size_t len;
        const char *s = mapi_value_string(v, &len);
        return len > 0 && len <= 3 && strspn(s, "0123456789") == len ? atoi(s) : 0;
    }
    return 0;
}

static int is_limit_code(const char *code)
{
    return code && (strcmp(code, "amount_below_minimum") == 0 ||
                    strcmp(code, "amount_above_maximum") == 0);
}

int mapi_error_from_errors(mapi_error *err, const mapi_value *errors)
{
    size_t n = mapi_value_type(errors) == MAPI_ARRAY ? mapi_value_len(errors) : 0;
    size_t i;
    int oom = 0;

    err->kind = MAPI_ERR_API;
    if (n == 0)
        return 0;
    err->errors = calloc(n, sizeof *err->errors);
    if (!err->errors)
        return -1;
    err->nerrors = n;
    for (i = 0; i < n; i++) {
        const mapi_value *e = mapi_value_at(errors, i);
        mapi_error_entry *en = &err->errors[i];
        if (mapi_value_type(e) != MAPI_OBJECT)
            continue; /* kept as an empty entry so indexes match the document */
        en->status = member_status(e);
        en->code = member_string(e, "code", &oom);
        en->title = member_string(e, "title", &oom);
        en->detail = member_string(e, "detail", &oom);
        en->pointer = member_string(mapi_value_get(e, "source"), "pointer", &oom);
    }
    if (oom)
        return -1;
    err->code = mapi_strdup(err->errors[0].code);
    err->title = mapi_strdup(err->errors[0].title);
    err->detail = mapi_strdup(err->errors[0].detail);
    err->pointer = mapi_strdup(err->errors[0].pointer);
    if ((err->errors[0].code && !err->code) || (err->errors[0].title && !err->title) ||
        (err->errors[0].detail && !err->detail) || (err->errors[0].pointer && !err->pointer))
        return -1;
    for (i = 0; i < n; i++) {
        const mapi_error_entry *en = &err->errors[i];
        if (!is_limit_code(en->code) || !en->detail)
            continue;
        if (mapi_limit_detail_parse(en->detail, &err->amount, &err->minimum,
                                    &err->maximum) < 0)
            return -1;
        if (err->amount || err->minimum || err->maximum)
            break; /* the first entry that carries limits wins */
    }
    return 0;
}

/* ---- "amount: 5.5, minimum: 10.0" ---- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of a decimal number at s: [+-]digits[.digits][(e|E)[+-]digits];
   0 when s does not start with one. */
static size_t number_len(const char *s)
{
    size_t i = 0, d = 0;

    if (s[i] == '-' || s[i] == '+')
        i++;
    while (is_digit(s[i])) {
        i++;
        d++;
    }
    if (d == 0)
        return 0; /* ".5" is not a decimal as the service writes them */
    if (s[i] == '.' && is_digit(s[i + 1])) {
        i++;
        while (is_digit(s[i]))
            i++;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1;
        if (s[j] == '-' || s[j] == '+')
            j++;
        if (is_digit(s[j])) {
            while (is_digit(s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

int mapi_limit_detail_parse(const char *detail, char **amount, char **minimum,
                            char **maximum)
{
    char *found[3] = {NULL, NULL, NULL};
    static const char *const names[3] = {"amount", "minimum", "maximum"};
    char **outs[3] = {amount, minimum, maximum};
    const char *p = detail;
    int i;

    for (i = 0; i < 3; i++)
        if (outs[i])
            *outs[i] = NULL;
    while (p && *p) {
        const char *name;
        size_t name_len, num;

        while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';')
            p++;
        name = p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')
            p++;
        name_len = (size_t)(p - name);
        while (*p == ' ' || *p == '\t')
            p++;
        if (name_len > 0 && *p == ':') {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            num = number_len(p);
            for (i = 0; num > 0 && i < 3; i++) {
                if (strlen(names[i]) == name_len && memcmp(names[i], name, name_len) == 0 &&
                    !found[i]) {
                    found[i] = mapi_strndup(p, num);
                    if (!found[i])
                        goto oom;
                }
            }
            p += num;
        }
        /* skip whatever else this member holds ("EUR", junk) up to the next ',' */
        while (*p && *p != ',' && *p != ';')
            p++;
    }
    for (i = 0; i < 3; i++) {
        if (outs[i])
            *outs[i] = found[i];
        else
            free(found[i]);
    }
    return 0;
oom:
    for (i = 0; i < 3; i++)
        free(found[i]);
    return -1;
}

/* ---- the one rule: is this an error document? ---- */

/* 1 when the document has primary data: a resource, or an array (even
   empty).  data null or absent is no primary data. */
static int has_primary_data(const mapi_doc *doc)
{
    return mapi_doc_is_list(doc) || mapi_doc_data_count(doc) > 0;
}

int mapi_doc_error_rule(const mapi_doc *doc, int status, mapi_error *err)
{
    const mapi_value *errors = doc ? mapi_doc_errors(doc) : NULL;
    int failure_status = status != 0 && (status < 200 || status > 299);

    mapi_error_clear(err);
    /* errors absent, null or []: not an error document, whatever the status
       (a list's meta is data here: its counts are the list calls' rule, mapping.c) */
    if (mapi_value_type(errors) != MAPI_ARRAY || mapi_value_len(errors) == 0)
        return 0;
    if (mapi_error_from_errors(err, errors) != 0)
        return mapi_error_oom(err);
    if (err->nerrors > 0)
        err->status = err->errors[0].status; /* the document's own status */
    if (has_primary_data(doc) && !failure_status) {
        /* JSON:API: data and errors MUST NOT coexist.  Under a 2xx (or no
           status) neither can be believed: refused, with the entries kept. */
        free(err->code);
        free(err->title);
        free(err->detail);
        free(err->pointer);
        free(err->amount);
        free(err->minimum);
        free(err->maximum);
        err->code = err->detail = err->pointer = NULL;
        err->amount = err->minimum = err->maximum = NULL;
        err->kind = MAPI_ERR_DECODE;
        err->title = mapi_strdup("not JSON:API: the document holds both data and errors");
        if (!err->title)
            return mapi_error_oom(err);
    }
    if (mapi_error_message(err) != 0)
        return mapi_error_oom(err);
    return 1;
}

int mapi_doc_error(const mapi_doc *doc, mapi_error *err)
{
    if (!err)
        return -1;
    return mapi_doc_error_rule(doc, 0, err);
}

/*
 * response.c -- mapi_response: what http.c fills (status, headers with
 * lower-cased names, body) and the public accessors of merchantapi.h.
 */
#include <stdlib.h>
#include <string.h>

#include "messages.h"

/* the room a body takes at its first bytes (then doubled as it grows) */
#define BODY_FIRST_CAP 16384

static void response_free(void *res)
{
    mapi_response_free(res);
}

mapi_response *mapi_response_new(void)
{
    mapi_response *res = calloc(1, sizeof(mapi_response));

    if (res)
        res->owned.free_fn = response_free; /* how the layers below free it */
    return res;
}

void mapi_response_clear_headers(mapi_response *res)
{
    size_t i;

    for (i = 0; i < res->nheaders; i++)
        free(res->headers[i].name); /* the value lives in the same block */
    res->nheaders = 0;
}

void mapi_response_free(mapi_response *res)
{
    if (!res)
        return;
    mapi_response_clear_headers(res);
    free(res->headers);
    free(res->body);
    free(res);
}

static void trim(const char **s, size_t *len)
{
    while (*len > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

int mapi_response_add_header(mapi_response *res, const char *name, size_t name_len,
                             const char *value, size_t value_len)
{
    mapi_header h;
    size_t i;

    if (res->nheaders == res->capheaders) {
        size_t cap = res->capheaders ? res->capheaders * 2 : 16;
        mapi_header *p = realloc(res->headers, cap * sizeof *p);
        if (!p)
            return -1;
        res->headers = p;
        res->capheaders = cap;
    }
    trim(&name, &name_len);
    trim(&value, &value_len);
    h.name = mapi_strpair(name, name_len, value, value_len, &h.value); /* one block */
    if (!h.name)
        return -1;
    for (i = 0; h.name[i]; i++)
        h.name[i] = (char)mapi_ascii_lower((unsigned char)h.name[i]);
    res->headers[res->nheaders++] = h;
    return 0;
}

int mapi_response_pad_body(mapi_response *res)
{
    return res->body ? 0 : mapi_response_append_body(res, "", 0, 0, MAPI_JSON_PADDING);
}

int mapi_response_append_body(mapi_response *res, const char *data, size_t n, size_t max_body,
                              size_t first_cap)
{
    if (n > max_body || res->len > max_body - n)
        return 1;
    if (res->len + n + MAPI_JSON_PADDING > res->cap) {
        size_t cap = res->cap ? res->cap : first_cap ? first_cap : BODY_FIRST_CAP;
        char *p;
        while (cap < res->len + n + MAPI_JSON_PADDING)
            cap *= 2;
        if (cap > max_body + MAPI_JSON_PADDING)
            cap = max_body + MAPI_JSON_PADDING;
        p = realloc(res->body, cap);
        if (!p)
            return -1;
        res->body = p;
        res->cap = cap;
    }
    memcpy(res->body + res->len, data, n);
    res->len += n;
    res->body[res->len] = '\0';
    return 0;
}

mapi_response *mapi_response_copy(const mapi_response *r)
{
    mapi_response *c = mapi_response_new();
    size_t i;

    if (!c)
        return NULL;
    c->status = r->status;
    c->elapsed = r->elapsed;
    for (i = 0; i < r->nheaders; i++) {
        if (mapi_response_add_header(c, r->headers[i].name, strlen(r->headers[i].name),
                                     r->headers[i].value, strlen(r->headers[i].value)) < 0)
            goto fail;
    }
    c->body = malloc(r->len + MAPI_JSON_PADDING); /* read in place, as received ones */
    if (!c->body)
        goto fail;
    if (r->len)
        memcpy(c->body, r->body, r->len);
    c->body[r->len] = '\0';
    c->len = r->len;
    c->cap = r->len + MAPI_JSON_PADDING;
    return c;
fail:
    mapi_response_free(c);
    return NULL;
}

/* ---- public accessors ---- */

int mapi_response_status(const mapi_response *res)
{
    return res ? res->status : 0;
}

const char *mapi_response_header(const mapi_response *res, const char *name)
{
    size_t i, n;

    if (!res || !name)
        return NULL;
    n = strlen(name);
    for (i = res->nheaders; i > 0; i--)
        if (mapi_ascii_ieq(res->headers[i - 1].name, n + 1, name, n + 1)) /* NULs too */
            return res->headers[i - 1].value;
    return NULL;
}

int mapi_response_header_at(const mapi_response *res, size_t i, const char **name,
                            const char **value)
{
    if (!res || i >= res->nheaders)
        return 0;
    if (name)
        *name = res->headers[i].name;
    if (value)
        *value = res->headers[i].value;
    return 1;
}

const char *mapi_response_body(const mapi_response *res, size_t *len)
{
    if (len)
        *len = res ? res->len : 0;
    if (!res)
        return NULL;
    return res->body ? res->body : "";
}

double mapi_response_elapsed(const mapi_response *res)
{
    return res ? res->elapsed : 0.0;
}

const char *mapi_response_request_id(const mapi_response *res)
{
    return mapi_response_header(res, "x-request-id");
}

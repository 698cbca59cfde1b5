/*
 * redact.c -- keeping the api key out: the one redaction of the library,
 * of a string, of every field of an error (then its message made again,
 * error.c) and of a response's headers (base layer).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The first occurrence of secret (slen bytes) in s, or NULL; ASCII letters
   compared without case when icase is set. */
static char *find_secret(char *s, const char *secret, size_t slen, int icase)
{
    if (!icase)
        return strstr(s, secret);
    for (; *s; s++)
        if (mapi_ascii_ieq(s, slen, secret, slen))
            return s;
    return NULL;
}

int mapi_redact_ex(char **field, const char *secret, int icase)
{
    size_t slen = secret ? strlen(secret) : 0;
    char *p, *hit;
    mapi_buf b;

    if (!field || !*field || slen < 4 || !find_secret(*field, secret, slen, icase))
        return 0;
    mapi_buf_init(&b);
    p = *field;
    while ((hit = find_secret(p, secret, slen, icase)) != NULL) {
        mapi_buf_append(&b, p, (size_t)(hit - p));
        mapi_buf_puts(&b, "[REDACTED]");
        p = hit + slen;
    }
    mapi_buf_puts(&b, p);
    p = mapi_buf_take(&b);
    if (p) {
        free(*field);
        *field = p;
        return 1;
    }
    /* out of memory: mask the secret where it stands rather than keep it */
    for (p = *field; (hit = find_secret(p, secret, slen, icase)) != NULL; p = hit + slen)
        memset(hit, '*', slen);
    return 1;
}

int mapi_redact(char **field, const char *secret)
{
    return mapi_redact_ex(field, secret, 0);
}

void mapi_error_redact(mapi_error *err, const char *secret)
{
    char **fields[11];
    size_t i, j;

    if (!err || !secret || strlen(secret) < 4)
        return;
    fields[0] = &err->code, fields[1] = &err->title, fields[2] = &err->detail;
    fields[3] = &err->pointer, fields[4] = &err->amount, fields[5] = &err->minimum;
    fields[6] = &err->maximum, fields[7] = &err->method, fields[8] = &err->url;
    fields[9] = &err->request_id, fields[10] = &err->payout_status;
    for (j = 0; j < sizeof fields / sizeof fields[0]; j++)
        mapi_redact(fields[j], secret);
    for (i = 0; i < err->nerrors; i++) {
        mapi_redact(&err->errors[i].code, secret);
        mapi_redact(&err->errors[i].title, secret);
        mapi_redact(&err->errors[i].detail, secret);
        mapi_redact(&err->errors[i].pointer, secret);
    }
    mapi_error_redact(err->settle_error, secret);
    mapi_response_redact(err->response, secret); /* its headers (the body stays as received) */
    if (err->kind == MAPI_ERR_MEMORY)
        return; /* its title and message are ours */
    if (mapi_error_message(err) < 0) {
        mapi_error_oom(err); /* no message: report what happened */
        return;
    }
    mapi_redact(&err->message, secret);
}

/* Masks every occurrence of secret in s in place (no memory needed). */
static void mask_secret(char *s, const char *secret, size_t slen, int icase)
{
    char *hit;

    for (; (hit = find_secret(s, secret, slen, icase)) != NULL; s = hit + slen)
        memset(hit, '*', slen);
}

void mapi_response_redact(mapi_response *res, const char *secret)
{
    size_t i, slen = secret ? strlen(secret) : 0;
    mapi_header *h;
    char *name, *value;

    if (!res || slen < 4)
        return;
    for (i = 0; i < res->nheaders; i++) {
        h = &res->headers[i];
        if (!find_secret(h->name, secret, slen, 1) && !find_secret(h->value, secret, slen, 0))
            continue; /* the usual case: nothing copied */
        /* name and value share one block (response.c): redact copies, then
           put them back as a new block */
        name = mapi_strdup(h->name);
        value = mapi_strdup(h->value);
        if (!name || !value || mapi_redact_ex(&name, secret, 1) < 0 ||
            mapi_redact(&value, secret) < 0 || mapi_response_set_header(res, i, name, value) < 0) {
            mask_secret(h->name, secret, slen, 1); /* out of memory: mask where it stands */
            mask_secret(h->value, secret, slen, 0);
        }
        free(name);
        free(value);
    }
}

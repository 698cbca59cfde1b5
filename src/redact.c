/*
 * redact.c -- keeping the api key out: the one redaction of the library,
 * of a string, of every field of an error (then its message made again,
 * error.c) and of a response's headers (base layer).
 */
#include <stdlib.h>
#include <string.h>

#include "base.h"

/* The first occurrence of secret (slen bytes) in s, or NULL; ASCII letters
   compared without case when icase is set. */
static char *find_secret(char *s, const char *secret, size_t slen, int icase)
{
    unsigned char first = (unsigned char)secret[0] | 0x20;
    size_t i, n;

    if (!icase)
        return strstr(s, secret);
    n = strlen(s);
    /* only where the secret fits; letters equal without case are equal with
       bit 0x20 set: a first test inline, then the whole comparison */
    for (i = 0; n >= slen && i <= n - slen; i++)
        if (((unsigned char)s[i] | 0x20) == first && mapi_ascii_ieq(s + i, slen, secret, slen))
            return s + i;
    return NULL;
}

int mapi_redact_into(char *s, const char *secret, int icase, char **out)
{
    size_t slen = secret ? strlen(secret) : 0;
    char *p, *hit, *copy;
    mapi_buf b;

    if (out)
        *out = NULL;
    if (!s || slen < 4 || !find_secret(s, secret, slen, icase))
        return 0;
    if (out) {
        mapi_buf_init(&b);
        p = s;
        while ((hit = find_secret(p, secret, slen, icase)) != NULL) {
            mapi_buf_append(&b, p, (size_t)(hit - p));
            mapi_buf_puts(&b, "[REDACTED]");
            p = hit + slen;
        }
        mapi_buf_puts(&b, p);
        copy = mapi_buf_take(&b);
        if (copy) {
            *out = copy;
            return 1;
        }
    }
    /* asked to, or out of memory: mask the secret where it stands */
    for (p = s; (hit = find_secret(p, secret, slen, icase)) != NULL; p = hit + slen)
        memset(hit, '*', slen);
    return 1;
}

int mapi_redact_ex(char **field, const char *secret, int icase)
{
    char *copy;

    if (!field || !mapi_redact_into(*field, secret, icase, &copy))
        return 0;
    if (copy) {
        free(*field);
        *field = copy;
    }
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

void mapi_response_redact(mapi_response *res, const char *secret)
{
    size_t i;
    mapi_header *h;
    char *name, *value, *block, *block_value;
    int hit;

    for (i = 0; res && i < res->nheaders; i++) {
        h = &res->headers[i];
        hit = mapi_redact_into(h->name, secret, 1, &name);
        hit |= mapi_redact_into(h->value, secret, 0, &value);
        if (!hit)
            continue; /* the usual case: nothing copied */
        /* name and value share one block (struct mapi_header): a new one */
        if (!name)
            name = h->name;
        if (!value)
            value = h->value;
        block = mapi_strpair(name, strlen(name), value, strlen(value), &block_value);
        if (name != h->name)
            free(name);
        if (value != h->value)
            free(value);
        if (block) {
            free(h->name);
            h->name = block;
            h->value = block_value;
        } else { /* out of memory: the secret masked where it stands */
            mapi_redact_into(h->name, secret, 1, NULL);
            mapi_redact_into(h->value, secret, 0, NULL);
        }
    }
}

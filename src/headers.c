/*
 * headers.c -- request headers of the caller's own (mapi_config.headers,
 * the per-call options, the Lua `headers` options): the one rule that says
 * which are accepted (mapi_header_check, also called by the Lua binding),
 * and how a call's own headers combine with its client's.
 */
#include <stdlib.h>
#include <string.h>

#include "messages.h"

/* The headers the client writes itself, and those that frame the message
   or steer the connection: none can be set by the caller. */
static const char *const reserved[] = {
    "Authorization", "Content-Type", "Accept", "User-Agent", "Host", "Content-Length",
    "Transfer-Encoding", "Connection", "Keep-Alive", "Upgrade", "TE", "Trailer", "Expect",
    "Proxy-Connection", "Proxy-Authorization",
};

int mapi_header_name_equal(const char *a, const char *b)
{
    size_t n = strlen(b) + 1; /* the NULs compared too: a is read no further than its own */

    return mapi_ascii_ieq(a, n, b, n);
}

int mapi_header_check(const char *name, size_t name_len, const char *value, size_t value_len,
                      mapi_error *err)
{
    size_t i;

    if (!name || name_len == 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "a header name is empty");
    for (i = 0; i < name_len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch == '\r' || ch == '\n' || ch == '\0')
            return mapi_error_set(err, MAPI_ERR_USAGE, "a header name contains CR, LF or NUL");
        if (!mapi_alnum_or(ch, "!#$%&'*+-.^_`|~")) /* RFC 9110 tchar */
            return mapi_error_set(err, MAPI_ERR_USAGE,
                                  "a header name is not an HTTP token (byte %zu is 0x%02x)", i,
                                  ch);
    }
    /* a valid token: it may be shown (never a value: it may be a secret) */
    for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (mapi_header_name_equal(name, reserved[i]))
            return mapi_error_set(err, MAPI_ERR_USAGE,
                                  "header %s is the client's own: it cannot be set", name);
    if (!value)
        return mapi_error_set(err, MAPI_ERR_USAGE, "header %s has no value", name);
    for (i = 0; i < value_len; i++) {
        unsigned char ch = (unsigned char)value[i];
        if (ch == '\r' || ch == '\n' || ch == '\0')
            return mapi_error_set(err, MAPI_ERR_USAGE, "header %s value contains CR, LF or NUL",
                                  name);
        if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
            return mapi_error_set(err, MAPI_ERR_USAGE,
                                  "header %s value contains a control byte (0x%02x)", name, ch);
    }
    if (value_len > 0 && (value[0] == ' ' || value[0] == '\t' || value[value_len - 1] == ' ' ||
                          value[value_len - 1] == '\t'))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "header %s value starts or ends with a space or tab", name);
    return 0;
}

int mapi_headers_check(const mapi_header_field *h, size_t n, mapi_error *err)
{
    size_t i, j;

    if (n > 0 && !h)
        return mapi_error_set(err, MAPI_ERR_USAGE, "headers is NULL but nheaders is %zu", n);
    for (i = 0; i < n; i++) {
        if (mapi_header_check(h[i].name, h[i].name ? strlen(h[i].name) : 0, h[i].value,
                              h[i].value ? strlen(h[i].value) : 0, err) < 0)
            return -1;
        for (j = 0; j < i; j++)
            if (mapi_header_name_equal(h[i].name, h[j].name))
                return mapi_error_set(err, MAPI_ERR_USAGE, "header %s is given twice",
                                      h[i].name);
    }
    return 0;
}

void mapi_headers_free(mapi_header_field *h, size_t n)
{
    size_t i;

    if (!h)
        return;
    for (i = 0; i < n; i++) {
        free((char *)h[i].name);
        free((char *)h[i].value);
    }
    free(h);
}

int mapi_headers_merge(const mapi_header_field *base, size_t nbase,
                       const mapi_header_field *own, size_t nown, mapi_header_field **out,
                       size_t *nout)
{
    mapi_header_field *m;
    size_t i, j, n = 0;

    *out = NULL;
    *nout = 0;
    if (nbase + nown == 0)
        return 0;
    m = calloc(nbase + nown, sizeof *m);
    if (!m)
        return -1;
    for (i = 0; i < nbase + nown; i++) {
        const mapi_header_field *f = i < nbase ? &base[i] : &own[i - nbase];
        for (j = 0; i < nbase && j < nown; j++)
            if (mapi_header_name_equal(f->name, own[j].name))
                break;
        if (i < nbase && j < nown)
            continue; /* replaced by the call's own */
        m[n].name = mapi_strdup(f->name);
        m[n].value = mapi_strdup(f->value);
        if (!m[n].name || !m[n].value) {
            mapi_headers_free(m, n + 1);
            return -1;
        }
        n++;
    }
    *out = m;
    *nout = n;
    return 0;
}

/* ---- the headers every request carries ---- */

char *mapi_user_agent(const char *product, const char *curl_version)
{
    mapi_buf b;

    mapi_buf_init(&b);
    mapi_buf_printf(&b, "merchantapi/%s libcurl/%s", MAPI_VERSION,
                    curl_version ? curl_version : "unknown");
    if (product && *product)
        mapi_buf_printf(&b, " %s", product);
    return mapi_buf_take(&b);
}

char *mapi_bearer(const char *api_key)
{
    mapi_buf b;

    if (!api_key || !*api_key)
        return NULL;
    mapi_buf_init(&b);
    mapi_buf_puts(&b, "Bearer ");
    mapi_buf_puts(&b, api_key);
    return mapi_buf_take(&b); /* an oom buffer holds nothing to wipe */
}

size_t mapi_base_headers(const char *authorization, const char *user_agent,
                         const char **names, const char **values)
{
    size_t n = 0;

    names[n] = "Content-Type", values[n++] = MAPI_MEDIA_TYPE;
    names[n] = "Accept", values[n++] = MAPI_MEDIA_TYPE;
    if (authorization)
        names[n] = "Authorization", values[n++] = authorization;
    names[n] = "User-Agent", values[n++] = user_agent;
    return n;
}

/*
 * url.c -- URLs: percent-encoding of path segments and query values, the
 * base_url rules of mapi_client_new, loopback hosts.
 *
 * The base URL is checked by hand (no libcurl parser) so the rules are
 * exactly the ones written here: the same on every libcurl version.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int is_unreserved(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

int mapi_url_encode(mapi_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p;

    for (p = (const unsigned char *)s; *p; p++) {
        if (is_unreserved(*p)) {
            mapi_buf_append(b, (const char *)p, 1);
        } else {
            char e[3];
            e[0] = '%';
            e[1] = hex[*p >> 4];
            e[2] = hex[*p & 15];
            mapi_buf_append(b, e, 3);
        }
    }
    return b->oom ? -1 : 0;
}

char *mapi_percent_encode(const char *s)
{
    mapi_buf b;

    mapi_buf_init(&b);
    mapi_url_encode(&b, s);
    return mapi_buf_take(&b);
}

const char *mapi_url_path(const char *url)
{
    const char *p = strstr(url, "://");
    const char *slash;

    if (!p)
        return url;
    slash = strchr(p + 3, '/');
    return slash ? slash : "/";
}

static int ascii_ieq(const char *a, size_t alen, const char *b)
{
    size_t i;

    if (alen != strlen(b))
        return 0;
    for (i = 0; i < alen; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = (char)(x - 'A' + 'a');
        if (x != y)
            return 0;
    }
    return 1;
}

int mapi_host_is_loopback(const char *host, size_t len)
{
    char tmp[64];

    if (ascii_ieq(host, len, "localhost"))
        return 1;
    if (len >= sizeof tmp)
        return 0;
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
        struct in6_addr a6;
        memcpy(tmp, host + 1, len - 2);
        tmp[len - 2] = '\0';
        return inet_pton(AF_INET6, tmp, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
    } else {
        struct in_addr a4;
        memcpy(tmp, host, len);
        tmp[len] = '\0';
        /* inet_pton takes only the dotted-quad form: "127.1" is not a loopback here */
        return inet_pton(AF_INET, tmp, &a4) == 1 &&
               (ntohl(a4.s_addr) >> 24) == 127;
    }
}

/* Host characters outside brackets: letters, digits, '-', '.', '_', and
   bytes >= 0x80 (an internationalised name; libcurl decides). */
static int is_host_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '.' || c == '_' || c >= 0x80;
}

int mapi_base_url_check(const char *url, char **out, mapi_error *err)
{
    const char *p, *host, *auth_end;
    size_t i, n, host_len;
    int https;
    char *copy;

    *out = NULL;
    if (!url || !*url)
        return mapi_error_set(err, MAPI_ERR_USAGE, "base_url is required");
    n = strlen(url);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)url[i];
        if (c <= 0x20 || c == 0x7f)
            return mapi_error_set(err, MAPI_ERR_USAGE,
                                  "base_url contains a control byte or a space");
    }
    if (n >= 8 && ascii_ieq(url, 8, "https://")) {
        https = 1;
        p = url + 8;
    } else if (n >= 7 && ascii_ieq(url, 7, "http://")) {
        https = 0;
        p = url + 7;
    } else {
        return mapi_error_set(err, MAPI_ERR_USAGE, "base_url must start with https://");
    }
    auth_end = p + strcspn(p, "/?#");
    if (*auth_end == '?' || *auth_end == '#' || strpbrk(auth_end, "?#"))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "base_url must not have a query or fragment");
    if (memchr(p, '@', (size_t)(auth_end - p)))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "base_url must not carry credentials (user@host); use api_key");
    host = p;
    if (*p == '[') {
        const char *close = memchr(p, ']', (size_t)(auth_end - p));
        if (!close || close == p + 1)
            return mapi_error_set(err, MAPI_ERR_USAGE, "base_url has an invalid IPv6 host");
        for (p = host + 1; p < close; p++) {
            unsigned char c = (unsigned char)*p;
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                  c == ':' || c == '.'))
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "base_url has an invalid IPv6 host");
        }
        p = close + 1;
    } else {
        while (p < auth_end && is_host_char((unsigned char)*p))
            p++;
    }
    host_len = (size_t)(p - host);
    if (host_len == 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "base_url has no host");
    if (p < auth_end) {
        unsigned long port = 0;
        const char *digits;
        if (*p != ':')
            return mapi_error_set(err, MAPI_ERR_USAGE, "base_url has an invalid host");
        digits = ++p;
        while (p < auth_end && *p >= '0' && *p <= '9' && port <= 65535)
            port = port * 10 + (unsigned long)(*p++ - '0');
        if (p != auth_end || p == digits || port == 0 || port > 65535)
            return mapi_error_set(err, MAPI_ERR_USAGE, "base_url has an invalid port");
    }
    if (!https && !mapi_host_is_loopback(host, host_len))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "base_url must use https:// (http:// only to a loopback host)");
    while (n > 0 && url[n - 1] == '/' && url + n - 1 >= auth_end)
        n--;
    copy = mapi_strndup(url, n);
    if (!copy)
        return mapi_error_oom(err);
    *out = copy;
    return 0;
}

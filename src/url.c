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

#include "messages.h"

int mapi_url_encode(mapi_buf *b, const char *s)
{
    return mapi_url_encode_n(b, s, strlen(s));
}

size_t mapi_url_encode_to(char *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (mapi_alnum_or(c, "-._~")) { /* RFC 3986 unreserved */
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    return o;
}

int mapi_url_encode_n(mapi_buf *b, const char *s, size_t n)
{
    if (n > (size_t)-1 / 3 || mapi_buf_reserve(b, 3 * n) < 0)
        return b->oom = 1, -1;
    b->len += mapi_url_encode_to(b->data + b->len, s, n);
    b->data[b->len] = '\0';
    return 0;
}

int mapi_host_is_loopback(const char *host, size_t len)
{
    char tmp[64];

    if (mapi_ascii_ieq(host, len, "localhost", 9))
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

/* The port written p..end: digits, 1 .. 65535; or -1. */
static int port_digits(const char *p, const char *end)
{
    const char *digits = p;
    long port = 0;

    while (p < end && *p >= '0' && *p <= '9' && port <= 65535)
        port = port * 10 + (*p++ - '0');
    return p == end && p != digits && port >= 1 && port <= 65535 ? (int)port : -1;
}

/* The host and optional port of an authority p..end (no userinfo): *host
   and *host_len (brackets kept for IPv6), 0; or -1 with *bad saying what is
   wrong ("has no host", ...). */
static int host_port(const char *p, const char *end, const char **host, size_t *host_len,
                     const char **bad)
{
    const char *h = p;

    if (*p == '[') {
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (!close || close == p + 1)
            return *bad = "has an invalid IPv6 host", -1;
        for (p = h + 1; p < close; p++) {
            unsigned char c = (unsigned char)*p;
            if (mapi_hex_digit(c) < 0 && c != ':' && c != '.')
                return *bad = "has an invalid IPv6 host", -1;
        }
        p = close + 1;
    } else { /* bytes >= 0x80: an internationalised name (libcurl decides) */
        while (p < end && (mapi_alnum_or((unsigned char)*p, "-._") || (unsigned char)*p >= 0x80))
            p++;
    }
    *host = h;
    *host_len = (size_t)(p - h);
    if (*host_len == 0)
        return *bad = "has no host", -1;
    if (p < end && *p != ':')
        return *bad = "has an invalid host", -1;
    if (p < end && port_digits(p + 1, end) < 0)
        return *bad = "has an invalid port", -1;
    return 0;
}

/* The end of a URL's path p..end without its trailing '/'s: the one rule of
   trailing slashes (a base URL, its prefix under the origin). */
static const char *trim_slashes(const char *p, const char *end)
{
    while (end > p && end[-1] == '/')
        end--;
    return end;
}

int mapi_base_url_check(const char *url, char **out, mapi_error *err)
{
    const char *p, *host, *auth_end, *bad;
    size_t n, host_len;
    int https;
    char *copy;

    *out = NULL;
    if (!url || !*url)
        return mapi_error_set(err, MAPI_ERR_USAGE, "base_url is required");
    if (strchr(url, ' ') || mapi_has_control(url))
        return mapi_error_set(err, MAPI_ERR_USAGE, "base_url contains a control byte or a space");
    n = strlen(url);
    if (mapi_ascii_ieq(url, 8, "https://", 8)) {
        https = 1;
        p = url + 8;
    } else if (mapi_ascii_ieq(url, 7, "http://", 7)) {
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
    if (host_port(p, auth_end, &host, &host_len, &bad) < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "base_url %s", bad);
    if (!https && !mapi_host_is_loopback(host, host_len))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "base_url must use https:// (http:// only to a loopback host)");
    n = (size_t)(trim_slashes(auth_end, url + n) - url);
    copy = mapi_strndup(url, n);
    if (!copy)
        return mapi_error_oom(err);
    *out = copy;
    return 0;
}

int mapi_url_origin_of(const char *url, size_t len, mapi_url_origin *o)
{
    const char *end = url + len, *colon = memchr(url, ':', len), *auth, *auth_end, *q;

    if (!colon || colon == url || end - colon < 3 || colon[1] != '/' || colon[2] != '/')
        return -1;
    o->scheme = url;
    o->scheme_len = (size_t)(colon - url);
    auth = colon + 3;
    for (auth_end = auth; auth_end < end && *auth_end != '/' && *auth_end != '?' &&
                          *auth_end != '#'; auth_end++)
        if (*auth_end == '@') /* userinfo: dropped */
            auth = auth_end + 1;
    q = auth < auth_end && *auth == '[' ? memchr(auth, ']', (size_t)(auth_end - auth)) : NULL;
    o->host = q ? auth + 1 : auth; /* an IPv6 address without its brackets */
    if (!q)
        for (q = auth; q < auth_end && *q != ':'; q++)
            ;
    o->host_len = (size_t)(q - o->host);
    o->path = auth_end;
    for (o->path_len = 0; auth_end + o->path_len < end && auth_end[o->path_len] != '?' &&
                          auth_end[o->path_len] != '#'; o->path_len++)
        ;
    o->path_len = (size_t)(trim_slashes(auth_end, auth_end + o->path_len) - auth_end);
    q += q < auth_end && *q == ']';
    if (q == auth_end || (*q == ':' && q + 1 == auth_end)) {
        /* the default ports by scheme: this is their one home */
        o->port = mapi_ascii_ieq(url, o->scheme_len, "https", 5) ? 443
                  : mapi_ascii_ieq(url, o->scheme_len, "http", 4) ? 80 : 0;
        return 0;
    }
    o->port = *q == ':' ? port_digits(q + 1, auth_end) : -1;
    return 0;
}

/* ---- proxies ---- */

/* 1 when host (brackets removed) matches one entry of a no_proxy list:
   "*"; a name equal to host or a parent domain of it (a leading '.'
   ignored); an address equal to host, or a CIDR block holding it. */
static int no_proxy_matches(const char *list, const char *host, size_t host_len)
{
    unsigned char hbuf[16], nbuf[16];
    char hostz[64], tok[128];
    int family = 0;
    const char *p = list;

    if (host_len >= 2 && host[0] == '[') {
        host++;
        host_len -= 2;
    }
    if (host_len < sizeof hostz) {
        memcpy(hostz, host, host_len);
        hostz[host_len] = '\0';
        if (inet_pton(AF_INET, hostz, hbuf) == 1)
            family = AF_INET;
        else if (inet_pton(AF_INET6, hostz, hbuf) == 1)
            family = AF_INET6;
    }
    while (*p) {
        size_t n = strcspn(p, ", \t");
        const char *t = p, *slash;
        p += n;
        p += strspn(p, ", \t");
        if (n == 0 || n >= sizeof tok)
            continue;
        if (n == 1 && t[0] == '*')
            return 1;
        if (t[0] == '.') {
            t++;
            n--;
        }
        if (n == 0)
            continue;
        memcpy(tok, t, n);
        tok[n] = '\0';
        slash = strchr(tok, '/');
        if (family && slash) {
            /* addr/bits */
            char *end;
            long bits = strtol(slash + 1, &end, 10);
            int max = family == AF_INET ? 32 : 128, b;
            tok[slash - tok] = '\0';
            if (*end || end == slash + 1 || bits < 0 || bits > max ||
                inet_pton(family, tok, nbuf) != 1)
                continue;
            for (b = 0; b < bits; b++) {
                unsigned char m = (unsigned char)(0x80 >> (b % 8));
                if ((hbuf[b / 8] & m) != (nbuf[b / 8] & m))
                    break;
            }
            if (b == bits)
                return 1;
        } else if (family) {
            if (inet_pton(family, tok, nbuf) == 1 &&
                memcmp(hbuf, nbuf, family == AF_INET ? 4 : 16) == 0)
                return 1;
        } else if (mapi_ascii_ieq(host, host_len, tok, n) ||
                   (host_len > n && host[host_len - n - 1] == '.' &&
                    mapi_ascii_ieq(host + host_len - n, n, tok, n))) {
            return 1;
        }
    }
    return 0;
}

/* The first of the variables that is set and not empty, its name in *name. */
static const char *first_env(const char *const *names, const char **name)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (v && *v) {
            *name = *names;
            return v;
        }
    }
    return NULL;
}

int mapi_proxy_resolve(const char *option, const char *base_url, char **out, mapi_error *err)
{
    static const char *const http_vars[] = {"http_proxy", "all_proxy", "ALL_PROXY", NULL};
    static const char *const https_vars[] = {"https_proxy", "HTTPS_PROXY", "all_proxy",
                                             "ALL_PROXY", NULL};
    static const char *const no_vars[] = {"no_proxy", "NO_PROXY", NULL};
    const char *what = "proxy", *value = option, *base_auth, *base_host, *host, *auth_end, *p;
    const char *bad, *at;
    size_t base_host_len, host_len;
    int https = mapi_ascii_ieq(base_url, 8, "https://", 8);
    mapi_buf b;

    *out = NULL;
    if (!option || !*option)
        return 0;
    /* the base URL's host (base_url passed mapi_base_url_check: no userinfo) */
    base_auth = strstr(base_url, "://") + 3;
    if (host_port(base_auth, base_auth + strcspn(base_auth, "/"), &base_host, &base_host_len,
                  &bad) < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "base_url %s", bad);
    if (strcmp(option, "env") == 0) {
        const char *no_name;
        const char *no = first_env(no_vars, &no_name);
        /* http: only the lower-case http_proxy, as libcurl (a CGI sets HTTP_PROXY
           from a request header) */
        value = first_env(https ? https_vars : http_vars, &what);
        if (!value || (no && no_proxy_matches(no, base_host, base_host_len)))
            return 0;
    }
    if (strchr(value, ' ') || mapi_has_control(value))
        return mapi_error_set(err, MAPI_ERR_USAGE, "%s contains a control byte or a space", what);
    mapi_buf_init(&b);
    if (value != option && !strstr(value, "://"))
        mapi_buf_puts(&b, "http://"); /* libcurl's reading of a bare host:port */
    mapi_buf_puts(&b, value);
    if (!b.data || b.oom) {
        mapi_buf_free(&b);
        return mapi_error_oom(err);
    }
    bad = NULL; /* what is wrong with the proxy URL, after its name */
    if (!mapi_ascii_ieq(b.data, 7, "http://", 7)) {
        bad = "must be an http:// proxy URL (an https:// base URL is tunnelled through it)";
    } else {
        p = b.data + 7;
        auth_end = p + strcspn(p, "/?#");
        for (at = auth_end; at > p && at[-1] != '@'; at--)
            ;
        if (*auth_end && strcmp(auth_end, "/") != 0)
            bad = "must be http://[user:password@]host[:port], without a path";
        else if (host_port(at, auth_end, &host, &host_len, &bad) == 0 && !https &&
                 !mapi_host_is_loopback(host, host_len))
            bad = "is not a loopback host: over an http:// base_url the api key would cross it "
                  "in clear";
    }
    if (bad) {
        mapi_buf_free(&b);
        return mapi_error_set(err, MAPI_ERR_USAGE, "%s %s", what, bad);
    }
    *out = mapi_buf_take(&b);
    return *out ? 0 : mapi_error_oom(err);
}

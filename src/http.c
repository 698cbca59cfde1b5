/*
 * http.c -- the libcurl layer: one easy handle per client, reused so its
 * connection stays alive; one request in, one mapi_response out.
 *
 * Fixed for every request: Content-Type and Accept application/vnd.api+json,
 * Authorization: Bearer <key> when a key is set, the User-Agent, no Expect,
 * no redirects, http/https only, TLS peer and host verification, NOSIGNAL.
 * The body is capped while it arrives (max_body), so memory stays bounded
 * whatever the server sends.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Every header line of one response together, interim ones included. */
#define MAX_HEADER_BYTES (256 * 1024)
#define BODY_FIRST_CAP 16384
/* The largest max_body honoured: a quarter of the address space. */
#define MAX_BODY_LIMIT ((size_t)-1 / 4)

struct mapi_http {
    CURL *easy;
    CURLSH *share;              /* connections, DNS, TLS sessions: easy + multi transfers */
    CURLM *multi;               /* concurrent transfers (multi.c); made on first use */
    struct curl_slist *headers; /* holds the Authorization line: never logged */
    size_t max_body;
    char errbuf[CURL_ERROR_SIZE];
};

/* State of one transfer, shared with the callbacks. */
typedef struct transfer {
    mapi_response *res;
    size_t max_body;
    size_t header_bytes;
    int over_body;    /* the body grew past max_body: aborted */
    int over_headers; /* the headers grew past MAX_HEADER_BYTES: aborted */
    int oom;          /* an allocation failed in a callback: aborted */
} transfer;

/* ---- callbacks ---- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    transfer *t = userdata;
    mapi_response *res = t->res;
    size_t n = size * nmemb;

    if (n > t->max_body || res->len > t->max_body - n) {
        t->over_body = 1;
        return 0; /* aborts the transfer (CURLE_WRITE_ERROR) */
    }
    /* room for the NUL and the JSON reader's padding after the body: the
       document is read in place (mapi_doc_from_response) */
    if (res->len + n + MAPI_JSON_PADDING > res->cap) {
        size_t cap = res->cap ? res->cap : BODY_FIRST_CAP;
        char *p;
        while (cap < res->len + n + MAPI_JSON_PADDING)
            cap *= 2;
        if (cap > t->max_body + MAPI_JSON_PADDING)
            cap = t->max_body + MAPI_JSON_PADDING;
        p = realloc(res->body, cap);
        if (!p) {
            t->oom = 1;
            return 0;
        }
        res->body = p;
        res->cap = cap;
    }
    memcpy(res->body + res->len, data, n);
    res->len += n;
    res->body[res->len] = '\0';
    return n;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *userdata)
{
    transfer *t = userdata;
    size_t n = size * nitems, len = n;
    const char *colon;

    t->header_bytes += n;
    if (t->header_bytes > MAX_HEADER_BYTES) {
        t->over_headers = 1;
        return 0;
    }
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
        len--;
    if (len == 0)
        return n; /* the blank line ending a header block */
    if (len >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        /* A new status line: headers of an interim (1xx) response are dropped. */
        mapi_response_clear_headers(t->res);
        return n;
    }
    if (line[0] == ' ' || line[0] == '\t') {
        if (mapi_response_fold_header(t->res, line, len) < 0) {
            t->oom = 1;
            return 0;
        }
        return n;
    }
    colon = memchr(line, ':', len);
    if (!colon)
        return n; /* not a header line: ignored */
    if (mapi_response_add_header(t->res, line, (size_t)(colon - line), colon + 1,
                                 len - (size_t)(colon - line) - 1) < 0) {
        t->oom = 1;
        return 0;
    }
    return n;
}

/* ---- handle ---- */

static int append_header(struct curl_slist **list, const char *line)
{
    struct curl_slist *l = curl_slist_append(*list, line);

    if (!l)
        return -1;
    *list = l;
    return 0;
}

static long seconds_to_ms(double s, long dflt)
{
    if (!(s > 0))
        return dflt;
    if (s > 86400.0 * 365)
        s = 86400.0 * 365;
    return s * 1000 < 1 ? 1 : (long)(s * 1000 + 0.5);
}

/* Builds "Authorization: Bearer <key>" into the header list, then wipes the
   temporary copy. */
static int append_authorization(struct curl_slist **list, const char *api_key)
{
    static const char prefix[] = "Authorization: Bearer ";
    size_t klen = strlen(api_key);
    char *line = malloc(sizeof prefix + klen);
    volatile char *wipe;
    size_t i;
    int rc;

    if (!line)
        return -1;
    memcpy(line, prefix, sizeof prefix - 1);
    memcpy(line + sizeof prefix - 1, api_key, klen + 1);
    rc = append_header(list, line);
    for (wipe = line, i = 0; i < sizeof prefix + klen; i++)
        wipe[i] = 0;
    free(line);
    return rc;
}

mapi_http *mapi_http_new(const mapi_config *cfg, const char *api_key, mapi_error *err)
{
    mapi_http *h;
    mapi_buf ua;
    char *ua_line;
    const curl_version_info_data *vi = curl_version_info(CURLVERSION_NOW);
    CURLcode rc = CURLE_OK;

    h = calloc(1, sizeof *h);
    if (!h)
        return mapi_error_oom(err), NULL;
    h->max_body = cfg->max_body ? cfg->max_body : (size_t)16 * 1024 * 1024;
    if (h->max_body > MAX_BODY_LIMIT)
        h->max_body = MAX_BODY_LIMIT; /* keeps max_body + 1 and the doubling from overflowing */
    h->easy = curl_easy_init();
    if (!h->easy) {
        free(h);
        mapi_error_set(err, MAPI_ERR_MEMORY, "curl_easy_init failed");
        return NULL;
    }
    h->share = curl_share_init();
    if (!h->share) {
        mapi_http_free(h);
        return mapi_error_oom(err), NULL;
    }
    /* One pool for the easy handle and the concurrent transfers of multi.c.
       CONNECT needs libcurl 7.57; without it the multi keeps its own pool. */
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    if (append_header(&h->headers, "Content-Type: application/vnd.api+json") < 0 ||
        append_header(&h->headers, "Accept: application/vnd.api+json") < 0 ||
        append_header(&h->headers, "Expect:") < 0 ||
        (api_key && *api_key && append_authorization(&h->headers, api_key) < 0)) {
        mapi_http_free(h);
        return mapi_error_oom(err), NULL;
    }
    mapi_buf_init(&ua);
    mapi_buf_printf(&ua, "merchantapi/%s libcurl/%s", MAPI_VERSION,
                    vi && vi->version ? vi->version : "unknown");
    if (cfg->user_agent && *cfg->user_agent)
        mapi_buf_printf(&ua, " %s", cfg->user_agent);
    ua_line = mapi_buf_take(&ua);
    if (!ua_line) {
        mapi_http_free(h);
        return mapi_error_oom(err), NULL;
    }

#define SET(opt, val)                                      \
    do {                                                   \
        if (rc == CURLE_OK)                                \
            rc = curl_easy_setopt(h->easy, opt, val);      \
    } while (0)
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85.0 */
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    if (cfg->cafile)
        SET(CURLOPT_CAINFO, cfg->cafile);
    if (cfg->capath)
        SET(CURLOPT_CAPATH, cfg->capath);
    SET(CURLOPT_TIMEOUT_MS, seconds_to_ms(cfg->timeout, 30000L));
    SET(CURLOPT_CONNECTTIMEOUT_MS, seconds_to_ms(cfg->connect_timeout, 10000L));
    SET(CURLOPT_HTTPHEADER, h->headers);
    SET(CURLOPT_USERAGENT, ua_line);
    SET(CURLOPT_ERRORBUFFER, h->errbuf);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_body);
    SET(CURLOPT_PATH_AS_IS, 1L); /* send the percent-encoded path exactly as built */
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_SHARE, h->share);
#undef SET
    free(ua_line); /* libcurl keeps its own copy */
    if (rc != CURLE_OK) {
        mapi_http_free(h);
        if (rc == CURLE_OUT_OF_MEMORY)
            return mapi_error_oom(err), NULL;
        mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl refused an option: %s",
                       curl_easy_strerror(rc));
        if (err)
            err->curl_code = (int)rc;
        return NULL;
    }
    return h;
}

/* Zeroes every header line before the list is freed: one holds the key. */
static void wipe_headers(struct curl_slist *l)
{
    for (; l; l = l->next) {
        volatile char *p = l->data;
        while (p && *p)
            *p++ = 0;
    }
}

void mapi_http_free(mapi_http *h)
{
    if (!h)
        return;
    if (h->multi)
        curl_multi_cleanup(h->multi); /* its transfers were removed and freed by multi.c */
    if (h->easy)
        curl_easy_cleanup(h->easy);
    if (h->share)
        curl_share_cleanup(h->share); /* last: every handle using it is gone */
    wipe_headers(h->headers); /* the Authorization line holds the key */
    curl_slist_free_all(h->headers);
    free(h);
}

/* ---- one request ---- */

/* NOT_SENT only when no byte of the request was written and the error is
   one that happens before a request can be written. */
static mapi_outcome transport_outcome(CURLcode rc, long request_size, curl_off_t pretransfer)
{
    if (request_size != 0)
        return MAPI_OUTCOME_UNKNOWN;
    switch (rc) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_BAD_FUNCTION_ARGUMENT: /* an option refused before any transfer */
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return MAPI_OUTCOME_NOT_SENT;
    case CURLE_OPERATION_TIMEDOUT:
        /* pretransfer is stamped once connect and TLS are done */
        return pretransfer == 0 ? MAPI_OUTCOME_NOT_SENT : MAPI_OUTCOME_UNKNOWN;
    default:
        return MAPI_OUTCOME_UNKNOWN;
    }
}

static int set_request(CURL *easy, const mapi_http_request *req)
{
    CURLcode rc;

    rc = curl_easy_setopt(easy, CURLOPT_URL, req->url);
    if (rc == CURLE_OK && strcmp(req->method, "GET") == 0) {
        rc = curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L); /* also clears NOBODY */
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    } else if (rc == CURLE_OK && strcmp(req->method, "HEAD") == 0) {
        /* libcurl's own HEAD (mapi_request): it then reads no body after the headers */
        rc = curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    } else if (rc == CURLE_OK) {
        /* A body (maybe empty: "Content-Length: 0") under the given method;
           NOBODY off first, in case the handle's last request was a HEAD. */
        rc = curl_easy_setopt(easy, CURLOPT_NOBODY, 0L);
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                                  (curl_off_t)(req->body ? req->body_len : 0));
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        if (rc == CURLE_OK)
            rc = curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST,
                                  strcmp(req->method, "POST") == 0 ? NULL : req->method);
    }
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, req->fresh_connection ? 1L : 0L);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, req->fresh_connection ? 1L : 0L);
    return (int)rc;
}

/* The outcome of one finished transfer (rc from curl_easy_perform or the
   multi's CURLMSG_DONE): 0 with *out, or -1 with err (see mapi_http_perform). */
static int finish(CURL *easy, transfer *t, CURLcode rc, int sent, const char *errbuf,
                  size_t max_body, mapi_response **out, mapi_error *err)
{
    long status = 0, request_size = 0;
    curl_off_t total = 0, pretransfer = 0;
    const char *rid;

    if (sent) {
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &request_size);
        curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total);
        curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
    } /* else nothing was sent: the zeros above say so */
    /* The callbacks' pointers must not outlive the transfer state. */
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *)NULL);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, (void *)NULL);
    t->res->status = (int)status;
    t->res->elapsed = (double)total / 1e6;

    if (t->oom || rc == CURLE_OUT_OF_MEMORY) {
        mapi_response_free(t->res);
        return mapi_error_oom(err);
    }
    if (t->over_body || t->over_headers || rc == CURLE_FILESIZE_EXCEEDED) {
        if (t->over_headers)
            mapi_error_set(err, MAPI_ERR_DECODE, "response headers over %d bytes",
                           MAX_HEADER_BYTES);
        else
            mapi_error_set(err, MAPI_ERR_DECODE, "body over max_body (%lu bytes)",
                           (unsigned long)max_body);
        if (err && err->kind == MAPI_ERR_DECODE) {
            err->status = (int)status;
            rid = mapi_response_header(t->res, "x-request-id");
            err->request_id = mapi_strdup(rid);
            err->response = t->res;
            if (rid && !err->request_id)
                return mapi_error_oom(err);
        } else {
            mapi_response_free(t->res);
        }
        return -1;
    }
    if (rc != CURLE_OK) {
        rid = mapi_response_header(t->res, "x-request-id");
        mapi_error_set(err, MAPI_ERR_TRANSPORT, "%s", curl_easy_strerror(rc));
        if (err && err->kind == MAPI_ERR_TRANSPORT) {
            err->curl_code = (int)rc;
            err->retryable = 1;
            err->outcome = transport_outcome(rc, request_size, pretransfer);
            if (errbuf[0] && strcmp(errbuf, err->title) != 0)
                err->detail = mapi_strdup(errbuf);
            err->request_id = mapi_strdup(rid);
            if ((errbuf[0] && !err->detail && strcmp(errbuf, err->title) != 0) ||
                (rid && !err->request_id)) {
                mapi_response_free(t->res);
                return mapi_error_oom(err);
            }
            if (mapi_error_message(err) < 0) {
                mapi_response_free(t->res);
                return mapi_error_oom(err);
            }
        }
        mapi_response_free(t->res);
        return -1;
    }
    if (!t->res->body) {
        t->res->body = malloc(MAPI_JSON_PADDING);
        if (!t->res->body) {
            mapi_response_free(t->res);
            return mapi_error_oom(err);
        }
        t->res->body[0] = '\0';
        t->res->cap = MAPI_JSON_PADDING;
    }
    *out = t->res;
    return 0;
}

int mapi_http_perform(mapi_http *h, const mapi_http_request *req, mapi_response **out,
                      mapi_error *err)
{
    transfer t;
    CURLcode rc;
    int sent = 0;

    *out = NULL;
    memset(&t, 0, sizeof t);
    t.max_body = h->max_body;
    t.res = mapi_response_new();
    if (!t.res)
        return mapi_error_oom(err);
    h->errbuf[0] = '\0';
    rc = (CURLcode)set_request(h->easy, req);
    if (rc == CURLE_OK) {
        curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, &t);
        curl_easy_setopt(h->easy, CURLOPT_HEADERDATA, &t);
        rc = curl_easy_perform(h->easy);
        sent = 1;
    }
    return finish(h->easy, &t, rc, sent, h->errbuf, h->max_body, out, err);
}

/* ---- transfers for a multi handle (multi.c) ---- */

struct mapi_http_transfer {
    CURL *easy;
    transfer t;
    size_t max_body;
    char errbuf[CURL_ERROR_SIZE];
};

void *mapi_http_multi(mapi_http *h)
{
    if (!h->multi)
        h->multi = curl_multi_init();
    return h->multi;
}

mapi_http_transfer *mapi_http_transfer_new(mapi_http *h, const mapi_http_request *req,
                                           void *private_data, mapi_error *err)
{
    mapi_http_transfer *x = calloc(1, sizeof *x);
    CURLcode rc = CURLE_OK;

    if (!x)
        return mapi_error_oom(err), NULL;
    x->max_body = h->max_body;
    x->t.max_body = h->max_body;
    x->t.res = mapi_response_new();
    /* every option of the client's handle: headers, TLS, timeouts, callbacks */
    x->easy = x->t.res ? curl_easy_duphandle(h->easy) : NULL;
    if (!x->easy) {
        mapi_http_transfer_free(x);
        return mapi_error_oom(err), NULL;
    }
#define SET(opt, val)                                  \
    do {                                               \
        if (rc == CURLE_OK)                            \
            rc = curl_easy_setopt(x->easy, opt, val);  \
    } while (0)
    SET(CURLOPT_SHARE, h->share); /* not copied by curl_easy_duphandle */
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    SET(CURLOPT_PRIVATE, private_data);
    SET(CURLOPT_PIPEWAIT, 1L); /* HTTP/2: wait to multiplex on one connection */
#undef SET
    if (rc == CURLE_OK)
        rc = (CURLcode)set_request(x->easy, req);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, &x->t);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, &x->t);
    if (rc != CURLE_OK) {
        mapi_http_transfer_free(x);
        if (rc == CURLE_OUT_OF_MEMORY)
            return mapi_error_oom(err), NULL;
        mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl refused an option: %s",
                       curl_easy_strerror(rc));
        if (err)
            err->curl_code = (int)rc;
        return NULL;
    }
    return x;
}

void *mapi_http_transfer_easy(mapi_http_transfer *x)
{
    return x->easy;
}

int mapi_http_transfer_result(mapi_http_transfer *x, int curl_code, mapi_response **out,
                              mapi_error *err)
{
    int rc;

    *out = NULL;
    rc = finish(x->easy, &x->t, (CURLcode)curl_code, 1, x->errbuf, x->max_body, out, err);
    x->t.res = NULL; /* handed over to *out or err, or freed */
    return rc;
}

void mapi_http_transfer_free(mapi_http_transfer *x)
{
    if (!x)
        return;
    if (x->easy)
        curl_easy_cleanup(x->easy);
    mapi_response_free(x->t.res);
    free(x);
}

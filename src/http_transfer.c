/*
 * http_transfer.c -- one transfer of the libcurl layer, whichever handle
 * runs it (the client's easy handle for a blocking call, a loop's duplicate
 * of it): its callbacks (the body capped by max_body, the head read line by
 * line under framing.c's rule), its request options, and its result, one
 * mapi_response or one mapi_error, made by one function (mapi_http_finish)
 * for every driver.
 *
 * No hidden resends (docs/decisions.md: the cases where libcurl sends a
 * request again by itself): a method other than GET and HEAD goes over
 * HTTP/1.1 on a fresh connection that is not kept, and for every method the
 * pre-request callback lets one request through per transfer and aborts the
 * next (TRANSPORT, curl_code 42, outcome UNKNOWN: the call's retry rules
 * decide; a GET retried after that goes over HTTP/1.1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_private.h"

/* ---- what the layer's handles share: header lists, milliseconds, a refused option ---- */

int mapi_http_append_header(struct curl_slist **list, const char *line)
{
    struct curl_slist *l = curl_slist_append(*list, line);

    if (!l)
        return -1;
    *list = l;
    return 0;
}

long mapi_http_ms(double s, long dflt)
{
    if (!(s > 0))
        return dflt;
    if (s > 86400.0 * 365)
        s = 86400.0 * 365;
    return s * 1000 < 1 ? 1 : (long)(s * 1000 + 0.5);
}

int mapi_http_option_refused(CURLcode rc, mapi_error *err)
{
    if (rc == CURLE_OUT_OF_MEMORY)
        return mapi_error_oom(err);
    mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl refused an option: %s",
                   curl_easy_strerror(rc));
    if (err)
        err->curl_code = (int)rc;
    return -1;
}

/* memset called through a volatile pointer: a wipe the compiler cannot
   drop as a store to memory about to be freed. */
static void *(*volatile wipe_memset)(void *, int, size_t) = memset;

void mapi_http_wipe_headers(struct curl_slist *l)
{
    for (; l; l = l->next)
        if (l->data)
            wipe_memset(l->data, 0, strlen(l->data));
}

/* ---- callbacks ---- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    transfer *t = userdata;
    mapi_response *res = t->res;
    size_t n = size * nmemb;
    int rc = mapi_response_append_body(res, data, n, t->max_body, 0);

    if (rc > 0)
        t->over_body = 1; /* aborts the transfer (CURLE_WRITE_ERROR) */
    else if (rc < 0)
        t->oom = 1;
    if (rc != 0)
        return 0;
    return n;
}

/* 1 when line[0..len) is a status line: "HTTP/" a version, a space and a
   three-digit status (HTTP/2's "HTTP/2 200" too). */
static int status_line(const char *line, size_t len)
{
    size_t i = 5;

    if (len < 5 || memcmp(line, "HTTP/", 5) != 0)
        return 0;
    while (i < len && ((line[i] >= '0' && line[i] <= '9') || line[i] == '.'))
        i++;
    return i + 4 <= len && line[i] == ' ' && line[i + 1] >= '0' && line[i + 1] <= '9' &&
           line[i + 2] >= '0' && line[i + 2] <= '9' && line[i + 3] >= '0' && line[i + 3] <= '9';
}

static size_t on_header(char *line, size_t size, size_t nitems, void *userdata)
{
    transfer *t = userdata;
    size_t n = size * nitems, len = n;
    const char *colon;

    t->header_bytes += n;
    if (t->header_bytes > MAPI_MAX_HEADER_BYTES) {
        t->over_headers = 1;
        return 0;
    }
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
        len--;
    if (len == 0) {
        t->in_body = 1; /* the blank line ending a header block (a 1xx one: reset below) */
        return n;
    }
    if ((t->in_body || !t->started) && status_line(line, len)) {
        /* A new status line: headers of an interim (1xx) response are dropped. */
        mapi_response_clear_headers(t->res);
        t->in_body = 0;
        t->started = 1;
        mapi_framing_init(&t->framing);
        return n;
    }
    if (t->in_body)
        return n; /* a chunked body's trailer: counted, never taken (h1_reader.c alike) */
    if (mapi_framing_line(&t->framing, line, len) < 0)
        return 0; /* aborts the transfer: a line llhttp refuses too */
    colon = memchr(line, ':', len);
    if (mapi_framing_field(&t->framing, line, (size_t)(colon - line), colon + 1,
                           len - (size_t)(colon - line) - 1) < 0)
        return 0; /* aborts the transfer: the body's framing is refused */
    if (mapi_response_add_header(t->res, line, (size_t)(colon - line), colon + 1,
                                 len - (size_t)(colon - line) - 1) < 0) {
        t->oom = 1;
        return 0;
    }
    return n;
}

#if HAVE_PREREQ
/* Called by libcurl right before it sends a request: the first one of the
   transfer goes, any other (libcurl's own resend) is stopped. */
static int on_prerequest(void *userdata, char *conn_primary_ip, char *conn_local_ip,
                         int conn_primary_port, int conn_local_port)
{
    transfer *t = userdata;

    (void)conn_primary_ip, (void)conn_local_ip, (void)conn_primary_port, (void)conn_local_port;
    if (!t)
        return CURL_PREREQFUNC_ABORT; /* a transfer without our state: never expected */
    if (++t->requests > 1) {
        t->resend = 1;
        return CURL_PREREQFUNC_ABORT;
    }
    return CURL_PREREQFUNC_OK;
}
#endif

CURLcode mapi_http_set_callbacks(CURL *easy)
{
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);

    MAPI_SETOPT(rc, easy, CURLOPT_WRITEFUNCTION, on_body);
#if HAVE_PREREQ
    MAPI_SETOPT(rc, easy, CURLOPT_PREREQFUNCTION, on_prerequest);
#endif
    return rc;
}

CURLcode mapi_http_set_transfer(CURL *easy, transfer *t)
{
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *)t);

    MAPI_SETOPT(rc, easy, CURLOPT_HEADERDATA, (void *)t);
#if HAVE_PREREQ
    MAPI_SETOPT(rc, easy, CURLOPT_PREREQDATA, (void *)t);
#endif
    return rc;
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

/* A method that may move money goes over HTTP/1.1 on a connection of its
   own (see the top of this file). */
static int own_connection(const mapi_attempt_request *req)
{
    return req->fresh_connection ||
           (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0);
}

/* HTTP/1.1 only: a request on a connection of its own, and a GET retried
   after libcurl wanted to resend it (mapi_http_is_stopped_resend); other GETs
   and HEADs take libcurl's default (HTTP/2 over TLS when offered). */
int mapi_http_http1_only(const mapi_attempt_request *req)
{
    return req->http1 || own_connection(req);
}

int mapi_http_set_request(CURL *easy, const mapi_attempt_request *req, long timeout_ms)
{
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_URL, req->url);
    long once = own_connection(req);

    /* the deadline may cut this request's timeout */
    MAPI_SETOPT(rc, easy, CURLOPT_TIMEOUT_MS,
                req->timeout > 0 ? mapi_http_ms(req->timeout, timeout_ms) : timeout_ms);
    if (strcmp(req->method, "GET") == 0) {
        MAPI_SETOPT(rc, easy, CURLOPT_HTTPGET, 1L); /* also clears NOBODY */
        MAPI_SETOPT(rc, easy, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    } else if (strcmp(req->method, "HEAD") == 0) {
        /* libcurl's own HEAD (mapi_request): it then reads no body after the headers */
        MAPI_SETOPT(rc, easy, CURLOPT_NOBODY, 1L);
        MAPI_SETOPT(rc, easy, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    } else {
        /* A body (maybe empty: "Content-Length: 0") under the given method;
           NOBODY off first, in case the handle's last request was a HEAD. */
        MAPI_SETOPT(rc, easy, CURLOPT_NOBODY, 0L);
        MAPI_SETOPT(rc, easy, CURLOPT_POSTFIELDSIZE_LARGE,
                    (curl_off_t)(req->body ? req->body_len : 0));
        MAPI_SETOPT(rc, easy, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        MAPI_SETOPT(rc, easy, CURLOPT_CUSTOMREQUEST,
                    strcmp(req->method, "POST") == 0 ? NULL : req->method);
    }
    MAPI_SETOPT(rc, easy, CURLOPT_HTTP_VERSION,
                mapi_http_http1_only(req) ? (long)CURL_HTTP_VERSION_1_1
                                          : (long)CURL_HTTP_VERSION_NONE);
    MAPI_SETOPT(rc, easy, CURLOPT_FRESH_CONNECT, once);
    MAPI_SETOPT(rc, easy, CURLOPT_FORBID_REUSE, once);
    return (int)rc;
}

/* mapi_refuse_head of the transfer's response, with its status. */
static int refuse_response(transfer *t, long status, mapi_error *err, const char *title,
                           const char *detail)
{
    t->res->status = (int)status;
    return mapi_refuse_head(t->res, err, title, detail);
}

/* The list is one block: a node for each of the client's lines, pointing
   at the client's own strings (read only: the transfers of a client in
   flight at once share them), then a node for each of the request's own,
   then those lines' bytes.  libcurl only walks the list. */
struct curl_slist *mapi_http_request_headers(const mapi_http *h, const mapi_attempt_request *req,
                                          int *oom)
{
    struct curl_slist *l, *nodes;
    size_t nc = 0, n, i, k = 0, bytes = 0;
    char *p;

    *oom = 0;
    if (req->nheaders == 0)
        return h->headers;
    for (l = h->headers; l; l = l->next)
        nc++;
    for (i = 0; i < req->nheaders; i++) {
        size_t line = strlen(req->headers[i].name) + strlen(req->headers[i].value) + 3;
        if (line > SIZE_MAX / 2 - bytes)
            return *oom = 1, NULL;
        bytes += line; /* "name: value" or "name;" (libcurl's empty value), NUL */
    }
    n = nc + req->nheaders;
    if (n > (SIZE_MAX / 2 - bytes) / sizeof *nodes)
        return *oom = 1, NULL;
    nodes = malloc(n * sizeof *nodes + bytes);
    if (!nodes)
        return *oom = 1, NULL;
    p = (char *)(nodes + n);
    for (l = h->headers; l; l = l->next, k++)
        nodes[k].data = l->data; /* the client's lines first, as they are */
    for (i = 0; i < req->nheaders; i++, k++) {
        const mapi_header_field *f = &req->headers[i];
        size_t nl = strlen(f->name), vl = strlen(f->value);
        nodes[k].data = p;
        memcpy(p, f->name, nl);
        p += nl;
        if (vl > 0) {
            memcpy(p, ": ", 2);
            memcpy(p + 2, f->value, vl);
            p += 2 + vl;
        } else {
            *p++ = ';';
        }
        *p++ = '\0';
    }
    for (k = 0; k + 1 < n; k++)
        nodes[k].next = &nodes[k + 1];
    nodes[n - 1].next = NULL;
    return nodes;
}

void mapi_http_free_request_headers(const mapi_http *h, struct curl_slist *list)
{
    struct curl_slist *l;
    size_t n = 0;
    char *start;

    if (!list || list == h->headers)
        return;
    for (l = list; l->next; l = l->next)
        n++;
    start = (char *)(list + n + 1); /* the request's own lines, the last one last */
    wipe_memset(start, 0, (size_t)(l->data + strlen(l->data) + 1 - start)); /* a value may be a secret */
    free(list);
}

/* rc: curl_easy_perform's, or the multi's CURLMSG_DONE. */
int mapi_http_finish(CURL *easy, transfer *t, CURLcode rc, int sent, const char *errbuf,
                  size_t max_body, mapi_response **out, mapi_error *err)
{
    long status = 0, request_size = 0;
    curl_off_t total = 0, pretransfer = 0;

    if (sent) {
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &request_size);
        curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total);
        curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer);
    } /* else nothing was sent: the zeros above say so */
    /* The callbacks' pointers must not outlive the transfer state. */
    mapi_http_set_transfer(easy, NULL);
    t->res->status = (int)status;
    t->res->elapsed = (double)total / 1e6;

    if (t->resend) {
        /* one request went; libcurl was stopped before sending it again */
        mapi_response_free(t->res);
        mapi_error_transport(err, "libcurl was about to send the request again: stopped",
                             "the connection died, or an HTTP/2 stream was refused or reset "
                             "with HTTP_1_1_REQUIRED, after the request was sent",
                             NULL, MAPI_OUTCOME_UNKNOWN);
        if (err && err->kind == MAPI_ERR_TRANSPORT)
            err->curl_code = (int)CURLE_ABORTED_BY_CALLBACK;
        return -1;
    }
    if (mapi_framing_title(&t->framing))
        return refuse_response(t, status, err, mapi_framing_title(&t->framing), NULL);
    if (!t->oom && !t->in_body && request_size > 0 &&
#if LIBCURL_VERSION_NUM >= 0x080600 /* 8.6.0: CURLE_TOO_LARGE */
        (rc == CURLE_OUT_OF_MEMORY || rc == CURLE_TOO_LARGE)
#else
        rc == CURLE_OUT_OF_MEMORY
#endif
    ) {
        /* While reading a response head, libcurl fails a header line longer
           than CURL_MAX_HTTP_HEADER as out of memory (before 8.6.0: its code
           cannot tell that from a failed allocation there; the detail says
           what libcurl reported) */
        char detail[128];
        snprintf(detail, sizeof detail,
                 "libcurl reported out of memory reading the head: a line over its "
                 "%d-byte limit", (int)CURL_MAX_HTTP_HEADER);
        return refuse_response(t, status, err, "response header line too long", detail);
    }
    if (t->oom || rc == CURLE_OUT_OF_MEMORY) {
        mapi_response_free(t->res);
        return mapi_error_oom(err);
    }
    if (t->over_headers) {
        t->res->status = (int)status;
        return mapi_refuse_head_over(t->res, err);
    }
    if (t->over_body || rc == CURLE_FILESIZE_EXCEEDED) {
        t->res->status = (int)status;
        return mapi_refuse_body(t->res, max_body, err);
    }
    if (rc != CURLE_OK) {
        const char *title = curl_easy_strerror(rc);
        mapi_error_transport(err, title, errbuf[0] && strcmp(errbuf, title) != 0 ? errbuf : NULL,
                             mapi_response_request_id(t->res),
                             transport_outcome(rc, request_size, pretransfer));
        if (err && err->kind == MAPI_ERR_TRANSPORT)
            err->curl_code = (int)rc;
        mapi_response_free(t->res);
        return -1;
    }
    if (mapi_response_pad_body(t->res) < 0) {
        mapi_response_free(t->res);
        return mapi_error_oom(err);
    }
    t->res->framed = 1; /* framing.c's rule applied header by header (on_header) */
    *out = t->res;
    return 0;
}

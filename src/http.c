/*
 * http.c -- the libcurl layer, the only file that calls libcurl: one easy
 * handle per client, reused so its connection stays alive; one request in,
 * one mapi_response out.  Every request is a transfer on an event loop's
 * multis (the end of this file), a duplicate of the client's easy handle
 * finished by the same code: a blocking call on the client's own loop
 * (mapi_http_perform, mapi_http_pool), its pages on the same one, a host's
 * calls on the host's loop.  So every driver answers alike.
 *
 * Fixed for every request: Content-Type and Accept application/vnd.api+json,
 * Authorization: Bearer <key> when a key is set, the User-Agent, no Expect,
 * no redirects, http/https only, TLS peer and host verification, NOSIGNAL,
 * no proxy unless the client was given one (never one from the environment
 * by libcurl's own reading: see mapi_proxy_resolve).
 * A request with headers of the caller's own gets a header list of its own:
 * the fixed lines, then those.
 * The body is capped while it arrives (max_body), so memory stays bounded
 * whatever the server sends; a response head whose framing is refused by
 * the rule every transport applies (framing.c: Content-Length values that
 * disagree, Content-Length with Transfer-Encoding, ...) stops the transfer.
 *
 * No hidden resends: every request that leaves is one attempt of the call.
 * libcurl sends a request again by itself in a few cases (libcurl 7.88,
 * lib/transfer.c Curl_retry_request and lib/multi.c): a reused connection
 * found dead with nothing received, an HTTP/2 stream refused
 * (REFUSED_STREAM, up to 5 times), an HTTP/2 stream reset with
 * HTTP_1_1_REQUIRED (sent again over HTTP/1.1, even after a :status came).
 * Two rules stop them:
 *   - a method other than GET and HEAD (it may move money) goes over
 *     HTTP/1.1 on a fresh connection that is not kept: none of those cases
 *     can arise (the HTTP/2 ones need HTTP/2, the dead-connection one a
 *     reused connection; redirects, Expect and HTTP auth are off);
 *   - whatever the method, the pre-request callback (CURLOPT_PREREQFUNCTION,
 *     called by libcurl before each request it sends, its own resends
 *     included) lets one request through per transfer and aborts the next:
 *     the attempt then fails as TRANSPORT (curl_code 42, outcome UNKNOWN)
 *     and the call's own retry rules decide, counted, observed and logged
 *     like any attempt.  A GET retried after that goes over HTTP/1.1
 *     (mapi_http_resend_refused), which settles all three cases.
 *
 * fork(): every socket libcurl opens for the client is opened and closed by
 * callbacks here, which keep the list of them.  At each request (and when
 * freed) the handle compares getpid() with the process that made its
 * libcurl handles; in a child it gives up the inherited connections without
 * touching them -- each inherited socket is first replaced by /dev/null
 * (dup2), so whatever libcurl does while closing them (OpenSSL's read and
 * close_notify, an HTTP/2 GOAWAY) goes nowhere instead of into the parent's
 * connection -- and makes a fresh easy handle and share: the child opens
 * connections of its own, and the parent's stay as they were.
 */
#include <curl/curl.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "internal.h"

/* Every header line of one response together, interim ones included. */
#define MAX_HEADER_BYTES (256 * 1024)
/* CURLOPT_PREREQFUNCTION: libcurl 7.80.0 */
#define HAVE_PREREQ (LIBCURL_VERSION_NUM >= 0x075000)
#define BODY_FIRST_CAP 16384
/* The largest max_body honoured: a quarter of the address space. */
#define MAX_BODY_LIMIT ((size_t)-1 / 4)

/* A socket libcurl opened, and the identity of what the fd number named
   then (a socket's inode is unique while it lives). */
struct open_sock {
    curl_socket_t fd;
    dev_t dev;
    ino_t ino;
};

/* The sockets libcurl opened for one event loop's multis and has not
   closed: connections belong to a multi, so the list is the loop's and
   lives as long as they do. */
struct sock_list {
    struct open_sock *socks;
    size_t n, cap;
};

struct mapi_http {
    CURL *easy;                 /* the template: every transfer is a duplicate of it */
    CURLSH *share;              /* DNS cache and TLS sessions, never connections (below) */
    struct mapi_http_loop *pool; /* the client's own multi: its connections, for its
                                   blocking calls and its concurrent pages; or NULL */
    CURL *spare;                /* a transfer's easy handle kept for the next one, or NULL */
    struct curl_slist *headers; /* holds the Authorization line: never logged */
    size_t max_body;
    long timeout_ms;            /* the client's timeout: a request's own replaces it */
    pid_t pid;                  /* the process that made easy, share and pool */
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
    int requests;     /* requests libcurl began to send in this transfer */
    int resend;       /* libcurl was about to send the request again: aborted */
    int in_body;      /* the final response's header block ended */
    mapi_framing framing; /* the framing of this header block (framing.c) */
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
    if (len == 0) {
        t->in_body = 1; /* the blank line ending a header block (a 1xx one: reset below) */
        return n;
    }
    if (len >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        /* A new status line: headers of an interim (1xx) response are dropped. */
        mapi_response_clear_headers(t->res);
        t->in_body = 0;
        mapi_framing_init(&t->framing);
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

/* Points the callbacks of easy at t (NULL: detaches them). */
static CURLcode set_transfer(CURL *easy, transfer *t)
{
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_WRITEDATA, (void *)t);

    if (rc == CURLE_OK)
        rc = curl_easy_setopt(easy, CURLOPT_HEADERDATA, (void *)t);
#if HAVE_PREREQ
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(easy, CURLOPT_PREREQDATA, (void *)t);
#endif
    return rc;
}

/* ---- sockets, and fork() ---- */

/* CURLOPT_OPENSOCKETFUNCTION: opens the socket as libcurl would, and keeps
   it in the loop's list (clientp; NULL: no list, the client's template
   handle, which never connects).  CURL_SOCKET_BAD (libcurl: could not
   connect, nothing sent) when the list cannot grow. */
static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct sock_list *l = clientp;
    curl_socket_t s;
    struct stat st;
    size_t i;

    (void)purpose;
    if (l && l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct open_sock *p = realloc(l->socks, cap * sizeof *p);
        if (!p)
            return CURL_SOCKET_BAD;
        l->socks = p;
        l->cap = cap;
    }
    s = socket(a->family, a->socktype, a->protocol);
    if (s == CURL_SOCKET_BAD || !l)
        return s;
    if (fstat(s, &st) != 0) {
        close(s);
        return CURL_SOCKET_BAD;
    }
    for (i = 0; i < l->n && l->socks[i].fd != s; i++)
        ;
    if (i == l->n)
        l->n++; /* else: an entry closed behind our back, reused */
    l->socks[i].fd = s;
    l->socks[i].dev = st.st_dev;
    l->socks[i].ino = st.st_ino;
    return s;
}

/* CURLOPT_CLOSESOCKETFUNCTION: out of the list, then closed. */
static int close_socket(void *clientp, curl_socket_t s)
{
    struct sock_list *l = clientp;
    size_t i;

    for (i = 0; l && i < l->n; i++)
        if (l->socks[i].fd == s) {
            l->socks[i] = l->socks[--l->n];
            break;
        }
    return close(s);
}

/* In a child after fork(): points every socket of the list inherited from
   the parent at /dev/null (dup2 closes the child's copy of the connection,
   which the parent keeps), so that libcurl can then free its handles
   without writing to, or reading from, the parent's connections.  Returns
   0, or -1 when /dev/null could not be opened: the sockets are then closed
   outright and the handles must be left unfreed (their fd numbers may be
   reused). */
static int release_inherited(struct sock_list *l)
{
    int null = open("/dev/null", O_RDWR);
    struct stat st;
    size_t i;

    for (i = 0; i < l->n; i++) {
        const struct open_sock *o = &l->socks[i];
        if (fstat(o->fd, &st) != 0 || st.st_dev != o->dev || st.st_ino != o->ino)
            continue; /* no longer the socket libcurl opened: not ours to touch */
        if (null >= 0)
            (void)dup2(null, o->fd);
        else
            (void)close(o->fd);
    }
    l->n = 0; /* libcurl's closes of them now close the /dev/null copies */
    if (null < 0)
        return -1;
    (void)close(null);
    return 0;
}

static int pool_in_use(const struct mapi_http_loop *l);

static CURLSH *new_share(void)
{
    CURLSH *share = curl_share_init();

    if (!share)
        return NULL;
    /* DNS answers and TLS sessions are shared between the client's own multi
       and the event loops its calls run on; connections are not.  libcurl's
       shared connection cache (CURL_LOCK_DATA_CONNECT) hands one connection
       between multis, and with libcurl 7.88 a connection that nginx ended
       (keepalive_requests: HTTP/1.1 close, HTTP/2 GOAWAY) while several
       transfers used the cache sent one page's request again with another
       page's URL and gave a page another page's answer (RELIABILITY.md,
       "nginx ending connections").  So each multi keeps its own connections:
       the client's (mapi_http_pool) for its blocking calls and its pages, a
       loop's for the calls a host loop runs. */
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    return share;
}

/* 0 when h's handles belong to this process (made here, or renewed after a
   fork()); else renews them (see the top of this file).  -1 with err
   (MEMORY, nothing sent) when a new handle could not be made: the next
   request tries again, the inherited ones are never used. */
static int own_process(mapi_http *h, mapi_error *err)
{
    CURL *easy;
    CURLSH *share;

    if (h->pid == getpid())
        return 0;
    share = new_share();
    easy = share ? curl_easy_duphandle(h->easy) : NULL; /* every option, no connection */
    if (!easy || curl_easy_setopt(easy, CURLOPT_SHARE, share) != CURLE_OK) {
        if (easy)
            curl_easy_cleanup(easy);
        if (share)
            curl_share_cleanup(share);
        return mapi_error_oom(err);
    }
    /* the parent's connections are its pool's: given up without a byte on
       them (mapi_http_loop_free in a child); the easy handle and the share
       never held one */
    if (mapi_http_loop_free(h->pool) == 0) {
        if (h->spare)
            curl_easy_cleanup(h->spare);
        curl_easy_cleanup(h->easy);
        curl_share_cleanup(h->share);
    } /* else left unfreed: a child short of file descriptors leaks them */
    h->pool = NULL;
    h->spare = NULL;
    h->easy = easy;
    h->share = share;
    h->pid = getpid();
    return 0;
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

/* A curl_easy_setopt that failed: MEMORY, or TRANSPORT "libcurl refused an
   option" with its curl_code.  Always -1. */
static int option_refused(CURLcode rc, mapi_error *err)
{
    if (rc == CURLE_OUT_OF_MEMORY)
        return mapi_error_oom(err);
    mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl refused an option: %s",
                   curl_easy_strerror(rc));
    if (err)
        err->curl_code = (int)rc;
    return -1;
}

/* Appends "name: value" to the header list; 0 or -1 (oom).  The line is
   wiped before it is freed (it may hold the key). */
static int append_field(struct curl_slist **list, const char *name, const char *value)
{
    mapi_buf b;
    char *line;
    int rc;

    mapi_buf_init(&b);
    mapi_buf_printf(&b, "%s: %s", name, value);
    line = mapi_buf_take(&b);
    if (!line)
        return -1;
    rc = append_header(list, line);
    mapi_wipe_free(line);
    return rc;
}

/* The headers every request carries (mapi_base_headers, the one list the
   exchange hands Lua transports too) into the header list, the User-Agent
   into *ua (borrowed); 0 or -1 (oom). */
static int base_headers(struct curl_slist **list, const char *api_key, const char *user_agent,
                        const char **ua)
{
    const char *names[MAPI_BASE_HEADERS], *values[MAPI_BASE_HEADERS];
    char *authorization = mapi_bearer(api_key);
    size_t n, i;
    int rc = 0;

    if (api_key && *api_key && !authorization)
        return -1;
    n = mapi_base_headers(authorization, user_agent, names, values);
    for (i = 0; i < n && rc == 0; i++) {
        if (strcmp(names[i], "User-Agent") == 0)
            *ua = values[i]; /* user_agent itself: CURLOPT_USERAGENT */
        else
            rc = append_field(list, names[i], values[i]);
    }
    mapi_wipe_free(authorization);
    return rc;
}

mapi_http *mapi_http_new(const mapi_config *cfg, const char *api_key, const char *proxy,
                         const char *user_agent, mapi_error *err)
{
    mapi_http *h;
    const char *ua_line = user_agent;
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
    h->pid = getpid();
    h->share = new_share();
    if (!h->share) {
        mapi_http_free(h);
        return mapi_error_oom(err), NULL;
    }
    if (base_headers(&h->headers, api_key, user_agent, &ua_line) < 0 ||
        append_header(&h->headers, "Expect:") < 0) {
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
    h->timeout_ms = seconds_to_ms(cfg->timeout, 30000L);
    SET(CURLOPT_TIMEOUT_MS, h->timeout_ms);
    SET(CURLOPT_CONNECTTIMEOUT_MS, seconds_to_ms(cfg->connect_timeout, 10000L));
    SET(CURLOPT_HTTPHEADER, h->headers);
    SET(CURLOPT_USERAGENT, ua_line);
    SET(CURLOPT_ERRORBUFFER, h->errbuf);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_WRITEFUNCTION, on_body);
#if HAVE_PREREQ
    SET(CURLOPT_PREREQFUNCTION, on_prerequest);
#endif
    /* Never a proxy from the environment: the one resolved from cfg->proxy
       (mapi_proxy_resolve), or none ("" turns libcurl's reading off). */
    SET(CURLOPT_PROXY, proxy ? proxy : "");
    SET(CURLOPT_NOPROXY, ""); /* the choice is made: no_proxy is not read again */
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_body);
    SET(CURLOPT_PATH_AS_IS, 1L); /* send the percent-encoded path exactly as built */
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_SHARE, h->share);
    SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
    SET(CURLOPT_OPENSOCKETDATA, (void *)NULL); /* each transfer: its loop's list */
    SET(CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    SET(CURLOPT_CLOSESOCKETDATA, (void *)NULL);
#undef SET
    if (rc != CURLE_OK) {
        mapi_http_free(h);
        return option_refused(rc, err), NULL;
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
    int inherited_left;

    if (!h)
        return;
    /* the pool first: its connections (in a child: the parent's, left as
       they are) and every transfer handle, before the share they use */
    inherited_left = mapi_http_loop_free(h->pool) < 0;
    h->pool = NULL;
    if (!inherited_left) {
        if (h->spare)
            curl_easy_cleanup(h->spare);
        if (h->easy)
            curl_easy_cleanup(h->easy);
        if (h->share)
            curl_share_cleanup(h->share); /* last: every handle using it is gone */
    }
    wipe_headers(h->headers); /* the Authorization line holds the key */
    if (!inherited_left)
        curl_slist_free_all(h->headers); /* (else the leaked easy handle still points at it) */
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

/* A method that may move money goes over HTTP/1.1 on a connection of its
   own (see the top of this file). */
static int own_connection(const mapi_http_request *req)
{
    return req->fresh_connection ||
           (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0);
}

/* HTTP/1.1 only: a request on a connection of its own, and a GET retried
   after libcurl wanted to resend it (mapi_http_resend_refused); other GETs
   and HEADs take libcurl's default (HTTP/2 over TLS when offered). */
static int http1_only(const mapi_http_request *req)
{
    return req->http1 || own_connection(req);
}

static int set_request(CURL *easy, const mapi_http_request *req, long timeout_ms)
{
    CURLcode rc;
    int once;

    rc = curl_easy_setopt(easy, CURLOPT_URL, req->url);
    if (rc == CURLE_OK) /* the deadline may cut this request's timeout */
        rc = curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                              req->timeout > 0 ? seconds_to_ms(req->timeout, timeout_ms)
                                               : timeout_ms);
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
    once = own_connection(req);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                              http1_only(req) ? (long)CURL_HTTP_VERSION_1_1
                                              : (long)CURL_HTTP_VERSION_NONE);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, once ? 1L : 0L);
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, once ? 1L : 0L);
    return (int)rc;
}

/* A response refused before its body: DECODE with title, the status and
   request id, the response (its head) attached; for a confirm, outcome
   UNKNOWN (the request was sent, and an answer whose head could not be
   taken whole is not taken at its word).  Always -1. */
static int refuse_response(transfer *t, long status, mapi_error *err, const char *title,
                           const char *detail)
{
    t->res->status = (int)status;
    return mapi_refuse_head(t->res, err, title, detail);
}

/* The handle's header lines followed by req's own headers ("Name: value";
   "Name;" for an empty value, libcurl's way to send "Name:"), or NULL when
   req has none.  *oom is set when an allocation failed.  Wipe and free. */
static struct curl_slist *request_headers(const mapi_http *h, const mapi_http_request *req,
                                          int *oom)
{
    struct curl_slist *list = NULL, *l;
    size_t i;

    *oom = 0;
    if (req->nheaders == 0)
        return NULL;
    for (l = h->headers; l; l = l->next)
        if (append_header(&list, l->data) < 0)
            goto fail;
    for (i = 0; i < req->nheaders; i++) {
        const mapi_header_field *f = &req->headers[i];
        mapi_buf line;
        char *s;
        int rc;
        mapi_buf_init(&line);
        mapi_buf_puts(&line, f->name);
        if (*f->value) {
            mapi_buf_puts(&line, ": ");
            mapi_buf_puts(&line, f->value);
        } else {
            mapi_buf_puts(&line, ";");
        }
        s = mapi_buf_take(&line);
        if (!s)
            goto fail;
        rc = append_header(&list, s);
        free(s);
        if (rc < 0)
            goto fail;
    }
    return list;
fail:
    wipe_headers(list);
    curl_slist_free_all(list);
    *oom = 1;
    return NULL;
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
    set_transfer(easy, NULL);
    t->res->status = (int)status;
    t->res->elapsed = (double)total / 1e6;

    if (t->resend) {
        /* one request went; libcurl was stopped before sending it again */
        mapi_response_free(t->res);
        mapi_error_set(err, MAPI_ERR_TRANSPORT,
                       "libcurl was about to send the request again: stopped");
        if (err && err->kind == MAPI_ERR_TRANSPORT) {
            err->curl_code = (int)CURLE_ABORTED_BY_CALLBACK;
            err->retryable = 1;
            err->outcome = MAPI_OUTCOME_UNKNOWN;
            err->detail = mapi_strdup("the connection died, or an HTTP/2 stream was refused "
                                      "or reset with HTTP_1_1_REQUIRED, after the request "
                                      "was sent");
            if (!err->detail || mapi_error_message(err) < 0)
                return mapi_error_oom(err);
        }
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
        char title[64];
        snprintf(title, sizeof title, "response headers over %d bytes", MAX_HEADER_BYTES);
        return refuse_response(t, status, err, title, NULL);
    }
    if (t->over_body || rc == CURLE_FILESIZE_EXCEEDED) {
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
    t->res->framed = 1; /* framing.c's rule applied header by header (on_header) */
    *out = t->res;
    return 0;
}

/* One blocking request: a transfer on the client's own multi, waited for
   here.  The same transfer, callbacks and result as a loop's (the last
   section of this file), so a blocking call and a call of the pages answer
   alike, on the same connections. */
struct perform_wait {
    mapi_http_loop *pool;
    mapi_http_transfer *t;
    mapi_response **out;
    mapi_error *err;
    int rc;
    int done;
};

/* mapi_http_loop_done_fn of a blocking request: its result, then it is off. */
static void perform_done(void *ctx, void *priv)
{
    struct perform_wait *w = ctx;

    if (priv != (void *)w || w->done)
        return;
    w->rc = mapi_http_transfer_result(w->t, w->out, w->err);
    mapi_http_loop_remove(w->pool, w->t);
    w->t = NULL;
    w->done = 1;
}

int mapi_http_perform(mapi_http *h, const mapi_http_request *req, mapi_response **out,
                      mapi_error *err)
{
    struct perform_wait w;
    mapi_http_loop *pool;

    *out = NULL;
    pool = mapi_http_pool(h, err);
    if (!pool)
        return -1;
    if (pool_in_use(pool)) {
        /* its pages are under way and one of their observers called the
           client: the transfers would be stepped by two waits */
        mapi_error_set(err, MAPI_ERR_USAGE,
                       "the client is busy: a call made from inside one of its own calls");
        if (err)
            err->outcome = MAPI_OUTCOME_NOT_SENT;
        return -1;
    }
    memset(&w, 0, sizeof w);
    w.pool = pool;
    w.out = out;
    w.err = err;
    if (mapi_http_loop_add(pool, h, req, &w, &w.t, err) < 0)
        return -1;
    while (!w.done) {
        /* libcurl's timer bounds every wait (the request's own timeout
           included); a second at most, whatever it says */
        double wait = mapi_http_loop_timeout(pool);
        if (wait < 0 || wait > 1.0)
            wait = 1.0;
        (void)mapi_http_loop_wait(pool, wait, NULL, perform_done, &w);
    }
    return w.rc;
}

int mapi_http_resend_refused(const mapi_error *e)
{
    return e && e->kind == MAPI_ERR_TRANSPORT && e->curl_code == (int)CURLE_ABORTED_BY_CALLBACK;
}

/* ---- one transfer of an event loop (its multi: the last section) ---- */

struct mapi_http_transfer {
    mapi_http *h;               /* whose easy handle it duplicates (its spare, if any) */
    CURL *easy;
    struct curl_slist *headers; /* the request's own header list, or NULL */
    transfer t;
    void *data;                 /* the driver's */
    struct mapi_http_loop *loop; /* the loop it is added to, or NULL */
    int lane;                   /* which of its multis (LANE_MULTIPLEX, LANE_HTTP1) */
    mapi_http_transfer *prev, *next; /* in loop->running */
    int multi_failed;           /* the CURLMcode that ended it with its multi, or 0 */
    CURLcode code;              /* once done: libcurl's result */
    char errbuf[CURL_ERROR_SIZE];
};

/* Frees x, once off its multi (or never added). */
static void transfer_free(mapi_http_transfer *x)
{
    if (!x)
        return;
    if (x->easy && !x->h->spare && x->h->pid == getpid()) {
        /* kept for the client's next transfer (its multi removed it first) */
        set_transfer(x->easy, NULL);
        curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->h->headers);
        curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, (char *)NULL);
        curl_easy_setopt(x->easy, CURLOPT_PRIVATE, (void *)NULL);
        x->h->spare = x->easy;
    } else if (x->easy) {
        curl_easy_cleanup(x->easy);
    }
    wipe_headers(x->headers);
    curl_slist_free_all(x->headers);
    mapi_response_free(x->t.res);
    free(x);
}

/* A transfer of req over h's settings, carrying data (the driver's); NULL
   with err (MEMORY, TRANSPORT for an option libcurl refused).  Nothing is
   sent until it is added to a loop's multi. */
static mapi_http_transfer *transfer_new(mapi_http *h, const mapi_http_request *req, void *data,
                                        mapi_error *err)
{
    mapi_http_transfer *x = calloc(1, sizeof *x);
    CURLcode rc = CURLE_OK;
    int oom;

    if (!x)
        return mapi_error_oom(err), NULL;
    x->h = h;
    x->data = data;
    x->t.max_body = h->max_body;
    x->headers = request_headers(h, req, &oom);
    x->t.res = oom ? NULL : mapi_response_new();
    /* every option of the client's handle: headers, TLS, timeouts, callbacks;
       a spare one (an earlier transfer's) has them too, and only the options
       set below and by set_request / set_transfer changed */
    if (x->t.res && h->spare) {
        x->easy = h->spare;
        h->spare = NULL;
    } else {
        x->easy = x->t.res ? curl_easy_duphandle(h->easy) : NULL;
    }
    if (!x->easy) {
        transfer_free(x);
        return mapi_error_oom(err), NULL;
    }
#define SET(opt, val)                                  \
    do {                                               \
        if (rc == CURLE_OK)                            \
            rc = curl_easy_setopt(x->easy, opt, val);  \
    } while (0)
    SET(CURLOPT_SHARE, h->share); /* not copied by curl_easy_duphandle */
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    SET(CURLOPT_PRIVATE, (void *)x);
    SET(CURLOPT_PIPEWAIT, 1L); /* HTTP/2: wait to multiplex on one connection */
    SET(CURLOPT_HTTPHEADER, x->headers ? x->headers : h->headers);
#undef SET
    if (rc == CURLE_OK)
        rc = (CURLcode)set_request(x->easy, req, h->timeout_ms);
    if (rc == CURLE_OK)
        rc = set_transfer(x->easy, &x->t);
    if (rc != CURLE_OK) {
        transfer_free(x);
        return option_refused(rc, err), NULL;
    }
    return x;
}

int mapi_http_transfer_result(mapi_http_transfer *x, mapi_response **out, mapi_error *err)
{
    int rc;

    *out = NULL;
    if (x->multi_failed) {
        /* ended by its multi's failure (mapi_http_loop_wait): requests may
           have left, and the multi's state is not to be trusted for a retry */
        set_transfer(x->easy, NULL);
        mapi_response_free(x->t.res);
        x->t.res = NULL;
        if ((CURLMcode)x->multi_failed == CURLM_OUT_OF_MEMORY)
            return mapi_error_oom(err);
        mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl multi: %s",
                       curl_multi_strerror((CURLMcode)x->multi_failed));
        if (err && err->kind == MAPI_ERR_TRANSPORT)
            err->outcome = MAPI_OUTCOME_UNKNOWN;
        return -1;
    }
    rc = finish(x->easy, &x->t, x->code, 1, x->errbuf, x->t.max_body, out, err);
    x->t.res = NULL; /* handed over to *out or err, or freed */
    return rc;
}

mapi_http_loop *mapi_http_pool(mapi_http *h, mapi_error *err)
{
    if (own_process(h, err) < 0)
        return NULL;
    if (!h->pool)
        h->pool = mapi_http_loop_new(err);
    return h->pool;
}

/* ---- the library's global state: libcurl's ---- */

/* The once-guard of curl_global_init: the library's only globals. */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init_once(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int mapi_global_init(mapi_error *err)
{
    if (pthread_once(&global_once, global_init_once) != 0)
        return mapi_error_set(err, MAPI_ERR_TRANSPORT, "pthread_once failed");
    if (global_rc != CURLE_OK) {
        mapi_error_set(err, MAPI_ERR_TRANSPORT, "curl_global_init failed: %s",
                       curl_easy_strerror(global_rc));
        if (err)
            err->curl_code = (int)global_rc;
        return -1;
    }
    return 0;
}

const char *mapi_http_version(void)
{
    const curl_version_info_data *vi = curl_version_info(CURLVERSION_NOW);

    return vi ? vi->version : NULL;
}

/* ------------------------------------------------------------------------ */
/* ---- transfers driven by a host's event loop (loop.c) ----                */
/*                                                                          */
/* libcurl's multi socket interface: CURLMOPT_SOCKETFUNCTION says which     */
/* sockets to watch for what, CURLMOPT_TIMERFUNCTION when to call back      */
/* without I/O; an epoll set of our own holds the sockets, so the whole     */
/* loop is one descriptor (readable when a socket is) and one deadline.     */
/* Each transfer is a mapi_http_transfer of its client (a duplicate of its  */
/* easy handle, on its share: DNS cache and TLS sessions); connections are  */
/* the loop's own, in two multis (struct loop_lane, below).  A client keeps */
/* one such loop for its blocking calls and its pages (mapi_http_pool).     */
/* ------------------------------------------------------------------------ */

#include <errno.h>
#include <sys/epoll.h>

/* Events read from the epoll set per epoll_wait. */
#define LOOP_EVENTS 64

/* A loop's two multis.  libcurl 7.88 puts a transfer that may multiplex on a
   connection in use by another transfer whenever the host's connections are
   known to multiplex (lib/url.c, ConnectionExists), even when that
   connection speaks HTTP/1.1: a confirm's own connection, or a GET's retried
   over HTTP/1.1, then carried a second request, and two transfers read each
   other's answers (a page got another page's items).  So the transfers that
   speak HTTP/1.1 only (http1_only) run on a multi of their own, where none
   may multiplex, and never share a connection cache with those that may. */
enum { LANE_MULTIPLEX = 0, LANE_HTTP1 = 1, LANES = 2 };

struct loop_lane {
    struct mapi_http_loop *loop;
    CURLM *multi;
    int index;
    double timer_at; /* monotonic seconds when libcurl wants its timeout call; < 0: none */
    int pending;     /* 1: finished transfers may wait in the multi's queue, not collected */
};

struct mapi_http_loop {
    struct loop_lane lanes[LANES];
    struct sock_list socks; /* the sockets of both multis' connections */
    pid_t pid;       /* the process that made it: in a child its connections are the parent's */
    int epfd;        /* the epoll set of both multis' sockets: the loop's descriptor */
    int busy;        /* 1 while libcurl's multis are being driven (not re-entered) */
    int deferred;    /* 1: a budget left ready sockets or a due timer for the next wait */
    mapi_http_transfer *running; /* the transfers added and not removed, newest first */
};

/* CURLMOPT_SOCKETFUNCTION: the socket s of a lane's multi is to be watched
   for what (or no longer).  A socket that closed behind our back is
   already out of the set.  The event carries the lane and the socket. */
static int loop_on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    struct loop_lane *lane = userp;
    mapi_http_loop *l = lane->loop;
    struct epoll_event ev;

    (void)easy, (void)socketp;
    if (l->epfd < 0)
        return 0; /* a child's inherited loop being freed: the set is the parent's */
    if (what == CURL_POLL_REMOVE) {
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, s, NULL);
        return 0;
    }
    memset(&ev, 0, sizeof ev);
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    ev.data.u64 = ((uint64_t)(unsigned)lane->index << 32) | (uint64_t)(uint32_t)s;
    if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, s, &ev) != 0 &&
        (errno != ENOENT || epoll_ctl(l->epfd, EPOLL_CTL_ADD, s, &ev) != 0))
        return -1; /* libcurl fails the transfer */
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: call curl_multi_socket_action(TIMEOUT) on the
   lane's multi in timeout_ms (-1: the timer is off). */
static int loop_on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    struct loop_lane *lane = userp;

    (void)multi;
    lane->timer_at =
        timeout_ms < 0 ? -1.0 : mapi_monotonic_seconds() + (double)timeout_ms / 1000.0;
    return 0;
}

static CURLMcode lane_init(mapi_http_loop *l, int i)
{
    struct loop_lane *lane = &l->lanes[i];
    CURLMcode mc;

    lane->loop = l;
    lane->index = i;
    lane->timer_at = -1.0;
    lane->multi = curl_multi_init();
    if (!lane->multi)
        return CURLM_OUT_OF_MEMORY;
    mc = curl_multi_setopt(lane->multi, CURLMOPT_SOCKETFUNCTION, loop_on_socket);
    if (mc == CURLM_OK)
        mc = curl_multi_setopt(lane->multi, CURLMOPT_SOCKETDATA, (void *)lane);
    if (mc == CURLM_OK)
        mc = curl_multi_setopt(lane->multi, CURLMOPT_TIMERFUNCTION, loop_on_timer);
    if (mc == CURLM_OK)
        mc = curl_multi_setopt(lane->multi, CURLMOPT_TIMERDATA, (void *)lane);
    if (mc == CURLM_OK && i == LANE_HTTP1) /* nothing on it may share a connection */
        mc = curl_multi_setopt(lane->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    return mc;
}

mapi_http_loop *mapi_http_loop_new(mapi_error *err)
{
    mapi_http_loop *l = calloc(1, sizeof *l);
    CURLMcode mc = CURLM_OK;
    int i;

    if (!l)
        return mapi_error_oom(err), NULL;
    l->pid = getpid();
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return mapi_error_set(err, MAPI_ERR_TRANSPORT, "epoll_create1 failed"), NULL;
    }
    for (i = 0; i < LANES && mc == CURLM_OK; i++)
        mc = lane_init(l, i);
    if (mc == CURLM_OUT_OF_MEMORY) {
        mapi_http_loop_free(l);
        return mapi_error_oom(err), NULL;
    }
    if (mc != CURLM_OK) {
        mapi_http_loop_free(l);
        return mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl multi: %s",
                              curl_multi_strerror(mc)), NULL;
    }
    return l;
}

int mapi_http_loop_free(mapi_http_loop *l)
{
    int i;

    if (!l)
        return 0;
    if (l->pid != getpid()) {
        /* in a child: the epoll set is the parent's too (one open
           description), so it is closed before libcurl, cleaning up, would
           take the parent's sockets out of it; the connections are the
           parent's, pointed at /dev/null first (release_inherited) */
        if (l->epfd >= 0)
            close(l->epfd);
        l->epfd = -1;
        if (release_inherited(&l->socks) < 0)
            return -1; /* left unfreed: their fd numbers may be reused */
    }
    for (i = 0; i < LANES; i++)
        if (l->lanes[i].multi)
            curl_multi_cleanup(l->lanes[i].multi);
    if (l->epfd >= 0)
        close(l->epfd);
    free(l->socks.socks);
    free(l);
    return 0;
}

int mapi_http_loop_fd(const mapi_http_loop *l)
{
    return l->epfd;
}

double mapi_http_loop_timeout(const mapi_http_loop *l)
{
    double at = -1.0, left;
    int i;

    if (l->deferred || l->lanes[LANE_MULTIPLEX].pending || l->lanes[LANE_HTTP1].pending)
        return 0.0;
    for (i = 0; i < LANES; i++)
        if (l->lanes[i].timer_at >= 0 && (at < 0 || l->lanes[i].timer_at < at))
            at = l->lanes[i].timer_at;
    if (at < 0)
        return -1.0;
    left = at - mapi_monotonic_seconds();
    return left > 0 ? left : 0.0;
}

int mapi_http_loop_add(mapi_http_loop *l, mapi_http *h, const mapi_http_request *req,
                       void *private_data, mapi_http_transfer **out, mapi_error *err)
{
    mapi_http_transfer *t;
    CURLMcode mc;

    *out = NULL;
    if (own_process(h, err) < 0)
        return -1;
    if (l->pid != getpid()) {
        mapi_error_set(err, MAPI_ERR_USAGE,
                       "this loop was made before fork(): its connections are the parent's; "
                       "make a loop in this process");
        if (err)
            err->outcome = MAPI_OUTCOME_NOT_SENT;
        return -1;
    }
    t = transfer_new(h, req, private_data, err);
    if (!t)
        return -1;
    t->lane = http1_only(req) ? LANE_HTTP1 : LANE_MULTIPLEX;
    /* the loop's connections: its list of their sockets */
    if (curl_easy_setopt(t->easy, CURLOPT_OPENSOCKETDATA, (void *)&l->socks) != CURLE_OK ||
        curl_easy_setopt(t->easy, CURLOPT_CLOSESOCKETDATA, (void *)&l->socks) != CURLE_OK) {
        transfer_free(t);
        return mapi_error_oom(err);
    }
    /* PIPEWAIT holds a transfer back until a connection being opened shows
       whether it multiplexes: only HTTP/2 over TLS can; over http:// it would
       put the calls of a loop one behind the other */
    if (t->lane == LANE_HTTP1 || strncmp(req->url, "http://", 7) == 0)
        curl_easy_setopt(t->easy, CURLOPT_PIPEWAIT, 0L);
    mc = curl_multi_add_handle(l->lanes[t->lane].multi, t->easy);
    if (mc != CURLM_OK) {
        transfer_free(t);
        if (mc == CURLM_OUT_OF_MEMORY)
            return mapi_error_oom(err);
        mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl multi: %s", curl_multi_strerror(mc));
        if (err)
            err->outcome = MAPI_OUTCOME_NOT_SENT; /* never added: nothing left */
        return -1;
    }
    t->loop = l;
    t->next = l->running;
    if (l->running)
        l->running->prev = t;
    l->running = t;
    *out = t;
    return 0;
}

void mapi_http_loop_remove(mapi_http_loop *l, mapi_http_transfer *t)
{
    if (!t)
        return;
    curl_multi_remove_handle(l->lanes[t->lane].multi, t->easy);
    if (t->loop == l) {
        if (t->prev)
            t->prev->next = t->next;
        else
            l->running = t->next;
        if (t->next)
            t->next->prev = t->prev;
    }
    transfer_free(t);
}

/* 1 when a lane may hold finished transfers not collected yet. */
static int loop_pending(const mapi_http_loop *l)
{
    return l->lanes[LANE_MULTIPLEX].pending || l->lanes[LANE_HTTP1].pending;
}

/* Hands the finished transfers of both lanes to done (which removes each),
   as many as b allows; the rest stay in the multis' queues for the next
   call. */
static void loop_collect(mapi_http_loop *l, mapi_budget *b, mapi_http_loop_done_fn done,
                         void *ctx)
{
    CURLMsg *msg;
    int left, i;

    for (i = 0; i < LANES; i++) {
        struct loop_lane *lane = &l->lanes[i];
        while (lane->pending) {
            mapi_http_transfer *x = NULL;
            if (!mapi_budget_take(b, b ? &b->collected : NULL))
                return; /* pending stays: the next wait collects first */
            msg = curl_multi_info_read(lane->multi, &left);
            if (!msg) {
                lane->pending = 0;
                break;
            }
            lane->pending = left > 0;
            if (msg->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            if (!x)
                continue;
            x->code = msg->data.result; /* msg dies with the handle's removal */
            done(ctx, x->data);
        }
    }
}

int mapi_http_loop_wait(mapi_http_loop *l, double seconds, mapi_budget *b,
                        mapi_http_loop_done_fn done, void *ctx)
{
    struct epoll_event evs[LOOP_EVENTS];
    int n, i, running = 0, ms;
    CURLMcode mc = CURLM_OK, failed = CURLM_OK;
    double now;

    if (l->busy)
        return -1;
    if (loop_pending(l)) {
        /* what a budget left: the oldest work, done first; then no waiting */
        loop_collect(l, b, done, ctx);
        seconds = 0;
    }
    if (l->deferred)
        seconds = 0;
    l->deferred = 0;
    if (seconds < 0)
        ms = -1;
    else if (seconds > 86400.0)
        ms = 86400 * 1000;
    else
        ms = (int)(seconds * 1000.0 + 0.999); /* never wake before the time */
    mapi_budget_pause(b);
    n = epoll_wait(l->epfd, evs, LOOP_EVENTS, ms);
    mapi_budget_resume(b);
    if (n < 0)
        n = 0; /* EINTR: a signal; the caller steps again */
    l->busy = 1;
    for (i = 0; i < n; i++) {
        int mask = 0;
        unsigned lane = (unsigned)(evs[i].data.u64 >> 32);
        curl_socket_t s = (curl_socket_t)(uint32_t)(evs[i].data.u64 & 0xffffffffu);
        if (lane >= LANES)
            continue;
        if (!mapi_budget_take(b, NULL)) {
            l->deferred = 1; /* level-triggered: the next epoll_wait reports them again */
            break;
        }
        if (evs[i].events & (EPOLLIN | EPOLLHUP))
            mask |= CURL_CSELECT_IN;
        if (evs[i].events & EPOLLOUT)
            mask |= CURL_CSELECT_OUT;
        if (evs[i].events & EPOLLERR)
            mask |= CURL_CSELECT_ERR;
        mc = curl_multi_socket_action(l->lanes[lane].multi, s, mask, &running);
        l->lanes[lane].pending = 1;
        if (mc != CURLM_OK && mc != CURLM_BAD_SOCKET) /* BAD_SOCKET: closed meanwhile */
            failed = mc;
    }
    now = mapi_monotonic_seconds();
    for (i = 0; i < LANES; i++) {
        struct loop_lane *lane = &l->lanes[i];
        if (lane->timer_at < 0 || now < lane->timer_at)
            continue;
        if (!mapi_budget_take(b, NULL)) {
            l->deferred = 1; /* timer_at stays: still due */
            continue;
        }
        lane->timer_at = -1.0; /* libcurl sets it again when it wants one */
        mc = curl_multi_socket_action(lane->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        lane->pending = 1;
        if (mc != CURLM_OK)
            failed = mc;
    }
    l->busy = 0;
    loop_collect(l, b, done, ctx);
    if (failed != CURLM_OK) {
        /* A multi failed (out of memory, most likely): what it was doing is
           lost -- a socket it no longer watches, a timer never set -- and its
           transfers would never end.  Each transfer ends now with that failure. */
        mapi_http_transfer *x, *next;
        for (x = l->running; x; x = next) {
            next = x->next;
            x->multi_failed = (int)failed;
            done(ctx, x->data);
        }
    }
    return n;
}

/* 1 while transfers are on l or libcurl is being driven. */
static int pool_in_use(const mapi_http_loop *l)
{
    return l->running != NULL || l->busy;
}

/*
 * http.c -- the client's side of the libcurl layer (http.h): one easy
 * handle per client, reused so its connection stays alive, for the
 * blocking calls (mapi_http_perform); a loop's transfers duplicate it
 * (http_loop.c), and every transfer ends in mapi_http_finish
 * (http_transfer.c), so every driver answers alike.  Fixed on the handle:
 * the headers every request carries (mapi_base_headers), no Expect, no
 * redirects, http/https only, TLS peer and host verification, NOSIGNAL, no
 * proxy but the client's (never libcurl's reading of the environment:
 * mapi_proxy_resolve).
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
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_private.h"

/* The largest max_body honoured: a quarter of the address space. */
#define MAX_BODY_LIMIT ((size_t)-1 / 4)

/* ---- sockets, and fork() ---- */

/* CURLOPT_OPENSOCKETFUNCTION: opens the socket as libcurl would, and keeps
   it in its connection cache's list (clientp: the client's easy handle's,
   or the loop's a transfer runs on).  CURL_SOCKET_BAD (libcurl: could not
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

/* dup2 closes the child's copy of a connection (the parent keeps its own),
   so that libcurl frees its handles without a byte on the parent's; without
   /dev/null the sockets are closed outright (their fd numbers may be reused). */
int mapi_http_release_inherited(struct sock_list *l)
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

int mapi_http_has_socket(const mapi_http *h, int fd)
{
    size_t i;

    for (i = 0; h && i < h->socks.n; i++)
        if (h->socks.socks[i].fd == fd)
            return 1;
    return 0;
}

static CURLSH *new_share(void)
{
    CURLSH *share = curl_share_init();

    if (!share)
        return NULL;
    /* DNS answers and TLS sessions, never connections (docs/decisions.md,
       "Each event loop keeps its own connections": libcurl 7.88's shared
       connection cache gave a page another page's answer) */
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    return share;
}

/* Frees h's handles: the spare and the easy one, then the share they use
   (libcurl takes NULL for each). */
static void free_handles(mapi_http *h)
{
    curl_easy_cleanup(h->spare);
    curl_easy_cleanup(h->easy);
    curl_share_cleanup(h->share);
}

/* Frees h's own loop, if any, through the function its owner installed with
   it (http_loop.c, mapi_http_client_loop): 0, or -1 when the parent's
   connections could not be given up safely in a child (mapi_http_loop_free). */
static int free_pool(mapi_http *h)
{
    int rc = h->pool ? h->pool_free(h->pool) : 0;

    h->pool = NULL;
    h->pool_free = NULL;
    return rc;
}

/* A handle that could not be made: the next request tries again, the
   inherited ones are never used. */
int mapi_http_own_process(mapi_http *h, mapi_error *err)
{
    CURL *easy;
    CURLSH *share;
    int left;

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
    /* the parent's connections, the easy handle's and its pool's: given up
       without a byte on them (release_inherited; mapi_http_loop_free in a
       child); the share never held one */
    left = free_pool(h) < 0;
    left |= mapi_http_release_inherited(&h->socks) < 0;
    if (!left)
        free_handles(h); /* else left unfreed: a child short of file descriptors leaks them */
    h->spare = NULL;
    h->easy = easy;
    h->share = share;
    h->pid = getpid();
    return 0;
}

/* ---- handle ---- */

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
    rc = mapi_http_append_header(list, line);
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
    h->max_body = cfg->max_body ? cfg->max_body : MAPI_DEFAULT_MAX_BODY;
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
    if (!h->share || base_headers(&h->headers, api_key, user_agent, &ua_line) < 0 ||
        mapi_http_append_header(&h->headers, "Expect:") < 0) {
        mapi_http_free(h);
        return mapi_error_oom(err), NULL;
    }

#define SET(opt, val) MAPI_SETOPT(rc, h->easy, opt, val)
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
    h->timeout_ms = mapi_http_ms(cfg->timeout, (long)(MAPI_DEFAULT_TIMEOUT * 1000));
    SET(CURLOPT_TIMEOUT_MS, h->timeout_ms);
    SET(CURLOPT_CONNECTTIMEOUT_MS,
        mapi_http_ms(cfg->connect_timeout, (long)(MAPI_DEFAULT_CONNECT_TIMEOUT * 1000)));
    SET(CURLOPT_HTTPHEADER, h->headers);
    SET(CURLOPT_USERAGENT, ua_line);
    SET(CURLOPT_ERRORBUFFER, h->errbuf);
    if (rc == CURLE_OK)
        rc = mapi_http_set_callbacks(h->easy);
    /* Never a proxy from the environment: the one resolved from cfg->proxy
       (mapi_proxy_resolve), or none ("" turns libcurl's reading off). */
    SET(CURLOPT_PROXY, proxy ? proxy : "");
    SET(CURLOPT_NOPROXY, ""); /* the choice is made: no_proxy is not read again */
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)h->max_body);
    SET(CURLOPT_PATH_AS_IS, 1L); /* send the percent-encoded path exactly as built */
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_SHARE, h->share);
    /* the blocking calls' connections in h's list (the fork guard's); a
       transfer of a loop, a duplicate of this handle, sets its loop's */
    SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
    SET(CURLOPT_OPENSOCKETDATA, (void *)&h->socks);
    SET(CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    SET(CURLOPT_CLOSESOCKETDATA, (void *)&h->socks);
#undef SET
    if (rc != CURLE_OK) {
        mapi_http_free(h);
        return mapi_http_option_refused(rc, err), NULL;
    }
    return h;
}

void mapi_http_free(mapi_http *h)
{
    int inherited_left;

    if (!h)
        return;
    /* the pool first: its connections (in a child: the parent's, left as
       they are) and every transfer handle, before the share they use */
    inherited_left = free_pool(h) < 0 ||
                     (h->pid != getpid() && mapi_http_release_inherited(&h->socks) < 0);
    mapi_http_wipe_headers(h->headers); /* the Authorization line holds the key */
    if (!inherited_left) { /* (else the leaked easy handle still points at the list) */
        free_handles(h);
        curl_slist_free_all(h->headers);
        free(h->socks.socks);
    }
    free(h);
}

/* On the client's easy handle, whose connections are its own (one request
   at a time cannot meet the defect of the loop's lanes, http_loop.c). */
int mapi_http_perform(mapi_http *h, const mapi_attempt_request *req, mapi_response **out,
                      mapi_error *err)
{
    transfer t;
    CURLcode rc;
    int sent = 0, oom, result;
    struct curl_slist *headers;

    *out = NULL;
    if (mapi_http_own_process(h, err) < 0)
        return -1;
    memset(&t, 0, sizeof t);
    t.max_body = h->max_body;
    headers = mapi_http_request_headers(h, req, &oom); /* h->headers: none of its own */
    t.res = oom ? NULL : mapi_response_new();
    if (!t.res) {
        mapi_http_free_request_headers(h, headers);
        return mapi_error_oom(err);
    }
    h->errbuf[0] = '\0';
    rc = (CURLcode)mapi_http_set_request(h->easy, req, h->timeout_ms);
    if (rc == CURLE_OK && headers != h->headers)
        rc = curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, headers);
    if (rc == CURLE_OK) {
        rc = mapi_http_set_transfer(h->easy, &t);
        if (rc == CURLE_OK) {
            rc = curl_easy_perform(h->easy);
            sent = 1;
        }
    }
    result = mapi_http_finish(h->easy, &t, rc, sent, h->errbuf, h->max_body, out, err);
    if (headers != h->headers) {
        curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, h->headers); /* the next call's */
        mapi_http_free_request_headers(h, headers);
    }
    return result;
}

int mapi_http_is_stopped_resend(const mapi_error *e)
{
    return e && e->kind == MAPI_ERR_TRANSPORT && e->curl_code == (int)CURLE_ABORTED_BY_CALLBACK;
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


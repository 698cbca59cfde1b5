/*
 * http_private.h -- what the three files of the libcurl layer share: the
 * client's handle (http.c), one transfer's setup, callbacks and result
 * (http_transfer.c), and the event loops' multis (http_loop.c).  Nothing
 * outside those three files includes it.  A declaration without a comment
 * is documented at its definition.
 */
#ifndef MAPI_HTTP_PRIVATE_H
#define MAPI_HTTP_PRIVATE_H

#include <curl/curl.h>
#include <sys/types.h>

#include "http.h"

/* CURLOPT_PREREQFUNCTION: libcurl 7.80.0 */
#define HAVE_PREREQ (LIBCURL_VERSION_NUM >= 0x075000)

/* rc = curl_easy_setopt(easy, opt, val) while rc is CURLE_OK: a run of
   options ends with the first libcurl refused. */
#define MAPI_SETOPT(rc, easy, opt, val)              \
    do {                                             \
        if ((rc) == CURLE_OK)                        \
            (rc) = curl_easy_setopt(easy, opt, val); \
    } while (0)

/* A socket libcurl opened, and the identity of what the fd number named
   then (a socket's inode is unique while it lives). */
struct open_sock {
    curl_socket_t fd;
    dev_t dev;
    ino_t ino;
};

/* The sockets libcurl opened for one connection cache and has not closed:
   the client's easy handle's, or an event loop's multis'; the list lives
   as long as the cache does. */
struct sock_list {
    struct open_sock *socks;
    size_t n, cap;
};

struct mapi_http {
    CURL *easy;                 /* the blocking calls' handle, and the template every
                                   transfer of a loop duplicates */
    struct sock_list socks;     /* the sockets of easy's own connections */
    CURLSH *share;              /* DNS cache and TLS sessions, never connections (below) */
    struct mapi_http_loop *pool; /* the client's own loop (made by http_loop.c,
                                   mapi_http_client_loop): its connections, for its
                                   concurrent pages; or NULL */
    int (*pool_free)(struct mapi_http_loop *); /* installed with pool by http_loop.c,
                                   which owns it: how the handle frees it */
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
    int started;      /* a status line came */
    mapi_framing framing; /* the framing of this header block (framing.c) */
} transfer;

/* The three files in their order: http_loop.c uses http.c and
   http_transfer.c, http.c uses http_transfer.c, never the other way (the
   handle frees the loop it keeps through the function http_loop.c
   installed, pool_free). */

/* ---- http.c ---- */

int mapi_http_own_process(mapi_http *h, mapi_error *err);
int mapi_http_release_inherited(struct sock_list *l);

/* ---- http_transfer.c ---- */

/* Appends a copy of line to *list; 0, or -1 out of memory. */
int mapi_http_append_header(struct curl_slist **list, const char *line);
void mapi_http_wipe_headers(struct curl_slist *l);
/* s seconds in milliseconds, dflt when s <= 0 (and at least 1 ms). */
long mapi_http_ms(double s, long dflt);
int mapi_http_option_refused(CURLcode rc, mapi_error *err);

/* Sets the header, body and pre-request callbacks on a new easy handle. */
CURLcode mapi_http_set_callbacks(CURL *easy);
CURLcode mapi_http_set_transfer(CURL *easy, transfer *t);
int mapi_http_http1_only(const mapi_attempt_request *req);
/* Sets req's URL, method, body, timeout and connection rules on easy;
   a CURLcode (0: all taken). */
int mapi_http_set_request(CURL *easy, const mapi_attempt_request *req, long timeout_ms);
/* The header list of one transfer of req over h, the one way every
   transfer (blocking or in a loop) is given its headers: the client's lines
   (h->headers: their strings shared, neither copied nor changed, so that
   the transfers of a client in flight at once share them), then the
   request's own (a traced call's traceparent, the caller's headers), in one
   allocation; h->headers itself when req has none.  NULL with *oom set when
   out of memory.  Freed by mapi_http_free_request_headers. */
struct curl_slist *mapi_http_request_headers(const mapi_http *h, const mapi_attempt_request *req,
                                             int *oom);
/* Frees what mapi_http_request_headers made (the request's own lines,
   wiped: a value may be a secret); the client's list stays.  NULL ignored. */
void mapi_http_free_request_headers(const mapi_http *h, struct curl_slist *list);
int mapi_http_finish(CURL *easy, transfer *t, CURLcode rc, int sent, const char *errbuf,
                     size_t max_body, mapi_response **out, mapi_error *err);

#endif

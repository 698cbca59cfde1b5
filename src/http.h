/*
 * http.h -- what the HTTP layer (http.c, http_transfer.c, http_loop.c: the
 * only files that call libcurl) offers the rest of the core: one request on
 * a client's easy handle, and transfers driven by an event loop.  Hidden
 * like internal.h, which includes it in its layer order: include internal.h,
 * not this file.  What the three files share is http_private.h.
 */
#ifndef MAPI_HTTP_H
#define MAPI_HTTP_H

/* ---- the HTTP layer: libcurl (http.c, http_transfer.c) ---- */

typedef struct mapi_http mapi_http;

typedef struct mapi_http_request {
    const char *method;     /* "GET", "PUT", ... */
    const char *url;        /* full URL, already percent-encoded */
    const char *body;       /* NULL for none */
    size_t body_len;
    int fresh_connection;   /* 1: a request that may move money: HTTP/1.1 on a connection of
                               its own, never resent by libcurl (any method but GET/HEAD
                               gets that anyway) */
    int http1;              /* 1: HTTP/1.1 (a GET retried after mapi_http_resend_refused) */
    const mapi_header_field *headers; /* the caller's own, sent after the client's */
    size_t nheaders;
    double timeout;         /* seconds for this request (the deadline may cut it); <= 0: the
                               client's timeout */
} mapi_http_request;

/* Settings copied from the config (validated by the caller); proxy: the
   proxy URL to use (mapi_proxy_resolve), or NULL for none; user_agent: the
   whole User-Agent value (mapi_user_agent). */
mapi_http *mapi_http_new(const mapi_config *cfg, const char *api_key, const char *proxy,
                         const char *user_agent, mapi_error *err);
void mapi_http_free(mapi_http *h);

/* One request on the client's easy handle (the headers of mapi_base_headers,
   then req's own; no redirects; TLS verified; max_body enforced while
   receiving): 0 with *out (any HTTP status; the caller owns it), or -1 with
   err TRANSPORT (curl_code set, outcome NOT_SENT when the request provably
   never left, else UNKNOWN; retryable 1) or DECODE (mapi_refuse_body,
   mapi_refuse_head: response attached). */
int mapi_http_perform(mapi_http *h, const mapi_http_request *req, mapi_response **out,
                      mapi_error *err);
/* 1 when fd is a socket libcurl opened for h's blocking calls and has not
   closed: one that the fork guard gives up, without a byte on it, in a
   child (http.c); else 0. */
int mapi_http_has_socket(const mapi_http *h, int fd);
/* 1 when e is an attempt libcurl was stopped from sending again by itself
   (TRANSPORT, curl_code 42: a dead connection, an HTTP/2 stream refused or
   reset with HTTP_1_1_REQUIRED): the call's next attempt goes over HTTP/1.1
   (mapi_http_request.http1). */
int mapi_http_resend_refused(const mapi_error *e);

/* libcurl's version ("8.1.2"), for the User-Agent; NULL when unknown.
   (mapi_global_init, public, is here too: libcurl's global state.) */
const char *mapi_http_version(void);

/* ---- the HTTP layer: transfers driven by an event loop (http_loop.c; the budget: loop.c) ---- */

/* libcurl's multi socket interface behind one epoll descriptor: loop.c
   drives it without knowing libcurl.  One per mapi_loop; single-threaded. */
typedef struct mapi_http_loop mapi_http_loop;
/* One request on a loop: set up like mapi_http_perform's (a duplicate of
   the client's easy handle: the same headers, TLS, limits and resend rules),
   sharing the client's connections, DNS cache and TLS sessions (one CURLSH),
   multiplexed over HTTP/2 when offered. */
typedef struct mapi_http_transfer mapi_http_transfer;
/* A transfer finished: ctx is mapi_http_loop_wait's, priv the transfer's
   private_data.  Read its result (mapi_http_transfer_result), then take it
   off with mapi_http_loop_remove, inside the callback. */
typedef void (*mapi_http_loop_done_fn)(void *ctx, void *priv);
/* A new loop: two multi handles (transfers that may multiplex, and those
   that speak HTTP/1.1 only), their connections and one epoll set; NULL
   with err (MEMORY, TRANSPORT).  Free with mapi_http_loop_free (NULL
   ignored) once every transfer is off: 0, or -1 in a child after fork()
   when the parent's connections could not be given up safely (left
   unfreed).  A loop made before fork() refuses transfers in the child. */
mapi_http_loop *mapi_http_loop_new(mapi_error *err);
int mapi_http_loop_free(mapi_http_loop *l);
/* The epoll descriptor: readable when a socket of a transfer is ready.
   Owned by l. */
int mapi_http_loop_fd(const mapi_http_loop *l);
/* Seconds until libcurl wants to be called without I/O (0: now, also when
   a budget left work for the next mapi_http_loop_wait), or -1 when it set
   no timer. */
double mapi_http_loop_timeout(const mapi_http_loop *l);
/* Starts one request of the client whose HTTP layer is h on the loop: a
   transfer set up as mapi_http_perform's, with private_data handed back to
   the done callback.  0 with *out (remove it with mapi_http_loop_remove), or
   -1 with err (MEMORY, TRANSPORT outcome NOT_SENT): nothing was sent. */
int mapi_http_loop_add(mapi_http_loop *l, mapi_http *h, const mapi_http_request *req,
                       void *private_data, mapi_http_transfer **out, mapi_error *err);
/* Takes t off the loop and frees it (a transfer under way is abandoned).
   NULL ignored. */
void mapi_http_loop_remove(mapi_http_loop *l, mapi_http_transfer *t);
/* The client's own multi, made at its first use and freed with h: the
   connections of its blocking calls (mapi_http_perform) and of its pages
   (pages.c); a host's loop keeps connections of its own.  Renewed in a
   child after fork().  NULL with err (MEMORY, TRANSPORT). */
mapi_http_loop *mapi_http_pool(mapi_http *h, mapi_error *err);
/* A finished transfer's result: exactly what mapi_http_perform returns for
   it (0 with *out, or -1 with err).  Once only. */
int mapi_http_transfer_result(mapi_http_transfer *x, mapi_response **out, mapi_error *err);
/* How much one step of a loop may do, by the rules of mapi_loop_step_budget
   (merchantapi.h): seconds of work, the transfers collected, calls reported.
   Its time is the wall clock (monotonic), not CPU time.  The one budget of a
   step: loop.c checks it for the C loop's work, lua_loop.c for the Lua
   tasks' resumes and pieces (lua/merchantapi/loop.lua keeps none). */
typedef struct mapi_budget {
    double max_seconds;   /* <= 0: no bound on time */
    size_t max_calls;     /* 0: no bound on collected, nor on reported */
    int wait;             /* 1: the step waits for ready work within max_seconds, and
                             its waits count (mapi_loop_step_within) */
    double spent;         /* seconds of work before `since` */
    double since;         /* monotonic seconds the current stretch of work began; < 0: waiting */
    size_t units;         /* pieces of work done: socket events, timer calls, collected, reported */
    size_t collected;     /* finished transfers handed to the done callback */
    size_t reported;      /* ended calls reported (loop.c) */
    int full;             /* 1: a piece did not fit (mapi_budget_take_cost): the step is over */
} mapi_budget;
/* A budget of max_seconds (<= 0: none) and max_calls (0: none), its work
   counted from now. */
void mapi_budget_start(mapi_budget *b, double max_seconds, size_t max_calls);
/* Whether one more piece of work may be done now; counter: &b->collected,
   &b->reported (checked against max_calls), or NULL.  1: done, counted; 0:
   to leave for the next step.  b NULL: always 1. */
int mapi_budget_take(mapi_budget *b, size_t *counter);
/* mapi_budget_take for a piece expected to last `cost` seconds (<= 0: not
   known): also 0 when it would end after max_seconds, unless less than a
   tenth of them is spent (a piece longer than the budget runs at the start
   of a step, never starved); once it refuses, the budget is full: every
   later take of the step is refused (the work that did not fit is not
   offered again in the same step, nor squeezed out by smaller pieces), and
   mapi_budget_left is 0. */
int mapi_budget_take_cost(mapi_budget *b, size_t *counter, double cost);
/* A wait begins (its time is not work, unless b->wait) / ends.  b NULL:
   nothing. */
void mapi_budget_pause(mapi_budget *b);
void mapi_budget_resume(mapi_budget *b);
/* Seconds of work so far (0 without max_seconds). */
double mapi_budget_spent(const mapi_budget *b);
/* Seconds the step may still wait for and work, in whole milliseconds
   rounded down (a wait never ends after the budget): 0 when the time is
   spent, or max_calls calls were reported; -1 without max_seconds. */
double mapi_budget_left(const mapi_budget *b);
/* Waits up to `seconds` (0: not at all; < 0: until a socket is ready) for
   the sockets, moves the ready transfers on, calls libcurl's timeout when
   it is due, then calls done for each finished transfer -- each of these
   as far as budget b allows (NULL: every one); what it cut off is left for
   the next call, which does it first (finished transfers), or finds it
   again in the epoll set (level-triggered: a socket not served stays
   ready).  When libcurl's multi itself failed meanwhile (out of memory,
   most likely), done is then called for every transfer still on it, whose
   result is MEMORY, or TRANSPORT "libcurl multi: ..." with outcome
   UNKNOWN, not retryable: what the multi was doing is lost, and none would
   ever end.  seconds NAN: no look at the sockets, the rest as above (sends
   what was added since: libcurl's timer is due then).  Returns the number
   of ready sockets, or -1 when called from inside itself. */
int mapi_http_loop_wait(mapi_http_loop *l, double seconds, mapi_budget *b,
                        mapi_http_loop_done_fn done, void *ctx);

#endif /* MAPI_HTTP_H */

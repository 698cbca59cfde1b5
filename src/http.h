/*
 * http.h -- what the HTTP layer (http.c, http_transfer.c, http_loop.c: the
 * only files that call libcurl) offers the rest of the core: one request on
 * a client's easy handle, and transfers driven by an event loop.  The
 * header of the layer "HTTP over libcurl" (floor 60 of
 * docs/architecture.md's "The layers"): it includes only messages.h (and
 * through it base.h), below it; included by the drivers above the layer
 * (client.c, loop.c, pages.c) and by the layer's own files
 * (http_private.h), never by the exchange, its sibling: a request is
 * messages.h's mapi_attempt_request, the exchange's to hand out.  What the
 * three files share is http_private.h.
 */
#ifndef MAPI_HTTP_H
#define MAPI_HTTP_H

#include "messages.h"

/* ---- the HTTP layer: libcurl (http.c, http_transfer.c) ---- */

typedef struct mapi_http mapi_http;

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
int mapi_http_perform(mapi_http *h, const mapi_attempt_request *req, mapi_response **out,
                      mapi_error *err);
/* 1 when fd is a socket libcurl opened for h's blocking calls and has not
   closed: one that the fork guard gives up, without a byte on it, in a
   child (http.c); else 0. */
int mapi_http_has_socket(const mapi_http *h, int fd);
/* A test: 1 when e is the failure of a request libcurl was stopped from
   sending again by itself (TRANSPORT, curl_code 42: a dead connection, an
   HTTP/2 stream refused or reset with HTTP_1_1_REQUIRED), else 0.  The
   drivers tell the exchange so (MAPI_ENDED_RESEND_STOPPED), which decides
   the next attempt (mapi_attempt_request.http1). */
int mapi_http_is_stopped_resend(const mapi_error *e);

/* libcurl's version ("8.1.2"), for the User-Agent; NULL when unknown.
   (mapi_global_init, public, is here too: libcurl's global state.) */
const char *mapi_http_version(void);

/* ---- the HTTP layer: transfers driven by an event loop (http_loop.c) ---- */

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
int mapi_http_loop_add(mapi_http_loop *l, mapi_http *h, const mapi_attempt_request *req,
                       void *private_data, mapi_http_transfer **out, mapi_error *err);
/* Takes t off the loop and frees it (a transfer under way is abandoned).
   NULL ignored. */
void mapi_http_loop_remove(mapi_http_loop *l, mapi_http_transfer *t);
/* The client's own loop, made at its first use (http_loop.c owns it; freed
   with h): the connections of its pages (pages.c); a host's loop keeps
   connections of its own.  Renewed in a child after fork().  NULL with err
   (MEMORY, TRANSPORT). */
mapi_http_loop *mapi_http_client_loop(mapi_http *h, mapi_error *err);
/* A finished transfer's result: exactly what mapi_http_perform returns for
   it (0 with *out, or -1 with err).  Once only. */
int mapi_http_transfer_result(mapi_http_transfer *x, mapi_response **out, mapi_error *err);
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

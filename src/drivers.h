/*
 * drivers.h -- internal: the drivers (floor 70 of docs/architecture.md's
 * "The layers"), which move an exchange's attempts over the HTTP layer: the
 * client and its blocking driver (client.c), calls driven by an event loop
 * (loop.c), a list's pages at once (pages.c); the C pager (pager.c) is
 * public only.  Includes exchange.h (and through it the layers below); the
 * HTTP layer's http.h, the exchange's sibling, is included by the drivers'
 * files themselves, so that the binding above does not see it.
 */
#ifndef MAPI_DRIVERS_H
#define MAPI_DRIVERS_H

#include <stddef.h>

#include "exchange.h"

struct mapi_http;
struct mapi_http_loop;

/* ---- the client and its blocking driver (client.c) ---- */

/* Runs the built call k with the client's retry rules over libcurl (the
   blocking driver), and releases k (mapi_call_release); on failure err gets
   attempts, method, url, message, and the api key redacted. */
int mapi_client_run(mapi_client *c, mapi_call *k, mapi_doc **out, mapi_error *err);
/* An exchange for the built call k with the client's settings and random
   hook (what every driver runs: the blocking loop, pages.c, a Lua
   transport); NULL with err MEMORY.  k is copied: release it after. */
mapi_exchange *mapi_client_prepare(mapi_client *c, const mapi_call *k, mapi_error *err);
/* How an attempt over libcurl ended, in the exchange's terms: rc and e as
   mapi_http_perform or mapi_http_transfer_result gave them (0: an answer;
   -1: e, a resend libcurl was stopped from making told apart by
   mapi_http_is_stopped_resend).  The one reading of libcurl's result, for
   the blocking driver and the loop's. */
mapi_ended mapi_client_http_ended(int rc, const mapi_error *e);
/* The client's observer, when one is set (for drivers other than client.c's). */
void mapi_client_observe(const mapi_client *c, mapi_attempt_event ev,
                         const mapi_attempt_info *info);
/* calls.c's builders (mapi_call_build_*) for client c, its mapi_call_base. */
int mapi_call_endpoint(mapi_client *c, const mapi_endpoint *e, const char *id,
                       const mapi_page_params *p, const mapi_call_opts *opts, mapi_call *k,
                       mapi_error *err);
int mapi_call_request(mapi_client *c, const char *method, const char *path_and_query,
                      const char *body, size_t body_len, const mapi_request_opts *opts,
                      mapi_call *k, mapi_error *err);
/* c's base URL, checked, without trailing '/'s; owned by c. */
const char *mapi_client_base_url(const mapi_client *c);
/* The calls built for c: a test hook (built once, whatever drives it). */
unsigned long mapi_client_calls_built(const mapi_client *c);
/* Replace a client's hooks; fn NULL restores the default.  Tests use them to
   avoid real waits; an event-loop binding may plug a non-blocking sleep. */
void mapi_client_set_sleep(mapi_client *c, mapi_sleep_fn fn, void *ctx);
void mapi_client_set_random(mapi_client *c, mapi_random_fn fn, void *ctx);

/* What other drivers (pages.c) need of a client: borrowed, valid while the
   client lives. */
typedef struct mapi_client_parts {
    struct mapi_http *http;
    mapi_sleep_fn sleep;
    void *sleep_ctx;
} mapi_client_parts;
void mapi_client_parts_get(mapi_client *c, mapi_client_parts *out);

/* ---- calls driven by an event loop (loop.c) ---- */

/* One pass of mapi_loop_step_budget with a budget of the caller's (started
   with mapi_budget_start; NULL: none), so that the caller can read what the
   step spent (mapi_budget_spent: lua_loop.c, whose tasks share the budget).
   With b->wait, a timeout other than 0 becomes the time b has left when
   that is shorter (mapi_budget_left): lua_loop.c makes its passes so, the
   tasks resumed between them (mapi_loop_step_within, for C). */
int mapi_loop_step_in(mapi_loop *l, double timeout, mapi_budget *b);

/* From inside a step of l (a callback or an observer it calls), for a
   caller that frees l once the step has returned (lua_loop.c: loop:close()
   from a hook): the step begins nothing more -- no attempt (an attempt
   whose REQUEST observer made this call is not sent), no wait -- and
   returns once what it has read is reported; new calls are refused (USAGE,
   "the loop is being freed").  Outside a step: nothing. */
void mapi_loop_stop(mapi_loop *l);

/* Runs exchange x (prepared by mapi_client_prepare) of client c on loop l:
   each attempt a transfer of the loop, the waits between attempts timers of
   the loop, every decision x's.  owns: 1 when the loop frees x once done.
   observer NULL: the client's (mapi_client_observe); else this one for
   every attempt of this call.  0: done(ctx, doc, err) is called exactly
   once, from mapi_loop_step or mapi_loop_free; -1 with err (MEMORY, USAGE
   for a loop being freed), done never called (x freed when owned). */
int mapi_loop_run_exchange(mapi_loop *l, mapi_client *c, mapi_exchange *x, int owns,
                           mapi_observer_fn observer, void *observer_ctx,
                           mapi_loop_done_fn done, void *ctx, mapi_error *err);

/* A loop over io, an HTTP loop it does not own (a client's,
   mapi_http_client_loop: the pages run on the client's connections);
   mapi_loop_free leaves io as it is, with no transfer on it.  NULL with err
   (MEMORY). */
struct mapi_http_loop;
mapi_loop *mapi_loop_over(struct mapi_http_loop *io, mapi_error *err);

/* One attempt of a call on a loop, for a driver that decides its own waits
   (pages.c: the retry rounds).  The handle of a call not yet reported. */
typedef struct mapi_loop_op mapi_loop_op;
/* An attempt's end as exchange x decided it (mapi_exchange_end_attempt): step DONE
   with doc (the callee's), RETRY with wait (seconds) and e this attempt's
   error, FAILED with e the call's final error.  e may be moved out (reset
   it to MAPI_ERROR_INIT then); the loop clears what is left. */
typedef void (*mapi_loop_attempt_fn)(void *ctx, mapi_step step, mapi_doc *doc, double wait,
                                     mapi_error *e);
/* Begins the next attempt of exchange x (not owned: it must outlive the
   call) of client c at l's next step, as x hands it out
   (mapi_exchange_request: over HTTP/1.1 after a stopped resend).  The exchange
   decides as in mapi_loop_run_exchange (a confirm's settling read
   included), except that a retry is not waited for: attempt(ctx, ...) is
   called once, from mapi_loop_step or mapi_loop_free.  0 with *out, or -1
   with err (MEMORY, USAGE for a loop being freed): no attempt began. */
int mapi_loop_attempt(mapi_loop *l, mapi_client *c, mapi_exchange *x,
                      mapi_loop_attempt_fn attempt, void *ctx, mapi_loop_op **out,
                      mapi_error *err);
/* A timer of loop l (a task's sleep, lua_loop.c): done(ctx, NULL, err
   empty) is called once, from the first mapi_loop_step at or after
   `seconds` from now (or from mapi_loop_free), like a call's end; a timer
   is not a call for a budget's max_calls.  0, or -1 with err (MEMORY,
   USAGE for a loop being freed). */
int mapi_loop_timer(mapi_loop *l, double seconds, mapi_loop_done_fn done, void *ctx,
                    mapi_error *err);
/* Drops the call o of l before its callback (a transfer under way is
   abandoned): the callback is never called.  Not for a call being
   reported (from inside its own callback). */
void mapi_loop_cancel(mapi_loop *l, mapi_loop_op *o);

/* ---- a list's pages at once: the page batch (pages.c) ---- */

/* The pages first_page .. first_page + count - 1 of a list, the policy every
   driver follows (pages.c's header).  _new: the arguments checked once, every
   page's exchange prepared; NULL with err (USAGE, MEMORY).  _next: the page
   to start now (its index i), or -1 (the window is full, a page failed
   before those left, or none is left); *x its exchange, handed over (the
   driver frees it), NULL when it starts again (a retry round).  _find: the
   index of a page in flight by its exchange, or -1.  _ended: page i ended
   with doc (taken) or *e its final error (moved); dropped after a failed
   page.  _kept: how many pages are kept (those before the first that did not
   come), *err that page's error when it failed (borrowed), else NULL; _doc:
   kept page k's document (the caller may take it: NULL it).  _run: the
   libcurl driver (-1 with err when its loop cannot be made). */
typedef struct mapi_page_batch mapi_page_batch;
mapi_page_batch *mapi_page_batch_new(mapi_client *client, const char *account_id,
                                     const mapi_page_params *base, long first_page,
                                     size_t count, size_t concurrency,
                                     const mapi_call_opts *opts, mapi_error *err);
void mapi_page_batch_free(mapi_page_batch *b);
long mapi_page_batch_next(mapi_page_batch *b, mapi_exchange **x);
long mapi_page_batch_find(const mapi_page_batch *b, const mapi_exchange *x);
void mapi_page_batch_ended(mapi_page_batch *b, size_t i, mapi_doc *doc, mapi_error *e);
size_t mapi_page_batch_kept(const mapi_page_batch *b, mapi_error **err);
mapi_doc **mapi_page_batch_doc(mapi_page_batch *b, size_t k);
int mapi_page_batch_run(mapi_page_batch *b, mapi_error *err);

#endif /* MAPI_DRIVERS_H */

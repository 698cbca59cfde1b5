/*
 * exchange.h -- internal: one call across its attempts, without I/O
 * (exchange.c): the request each attempt sends (mapi_attempt_request,
 * messages.h), how an attempt ended in the exchange's terms (mapi_ended),
 * and every decision between attempts; with what it runs on each answer:
 * error documents (error_doc.c), a response mapped (mapping.c), retries
 * (retry.c), and attempt.h (attempt.c, trace.c); the metrics it records
 * into where an attempt ends are metrics.h's (floor 55).  The header of
 * the layer "one call across attempts" (floor 60 of docs/architecture.md's
 * "The layers"): it includes only the headers of the layers below
 * (documents.h, calls.h and through them messages.h, base.h; metrics.h),
 * never http.h, the HTTP layer's, its sibling at the same floor.
 */
#ifndef MAPI_EXCHANGE_H
#define MAPI_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "documents.h"
#include "calls.h"
#include "attempt.h"
#include "metrics.h"

/* ---- error documents (error_doc.c) ---- */

/* Fills err->errors / nerrors from an errors[] array value, and code,
   title, detail, pointer from its first entry, and amount/minimum/maximum
   from the first amount_below_minimum / amount_above_maximum entry whose
   detail parses.  Sets kind API.  0, or -1 when out of memory. */
int mapi_error_from_errors(mapi_error *err, const mapi_value *errors);
/* mapi_doc_error's rule (merchantapi.h: "is this an error document"), for
   the client's mapping of every response (mapping.c) too: status is the
   HTTP status the document came with (0: none, as mapi_doc_error).  A
   list's meta is not read (its counts: the list calls', mapping.c).  Under
   a non-2xx status errors with primary data is API (status and errors
   agree on a failure); the DECODE of both keeps errors[] only (no code,
   title, detail, pointer). */
int mapi_doc_error_rule(const mapi_doc *doc, int status, mapi_error *err);
/* Parses a limit detail "amount: 5.5, minimum: 10.0" (or "maximum: ..."):
   each out pointer (may be NULL) gets a new string with the exact decimal
   text of that member, or NULL when the member is absent.  0, or -1 when
   out of memory (all outputs NULL then). */
int mapi_limit_detail_parse(const char *detail, char **amount, char **minimum,
                            char **maximum);

/* ---- mapping responses to results (mapping.c) ---- */

/* 1 when a Content-Type is application/vnd.api+json or application/json
   (case-insensitive, parameters allowed). */
int mapi_media_type_is_json(const char *content_type);
/* Maps one response of call k: 0 with *out (a document that owns res), or
   -1 with *e filled (kind, status, request_id, retry_after, retryable;
   e->response owns res or a copy of it).  The outcome is the exchange's. */
int mapi_map_response(const mapi_call *k, mapi_response *res, int max_depth, mapi_doc **out,
                      mapi_error *e);

/* ---- retries (retry.c) ---- */

/* Seconds to wait before retry number `retry` (0 for the first retry): full
   jitter, u * min(8, 0.5 * 2^retry), with u in [0, 1) from the random hook. */
double mapi_backoff_delay(int retry, double u);
/* A wait before a retry (the exchange's; wait_for_txid's, core.retry_wait):
   retry_after when >= 0, else the backoff of retry number `retry` (0: the
   first): base <= 0, mapi_backoff_delay's; else base * 2^retry at most cap;
   times jitter's u (NULL: 1), which is drawn only for a backoff. */
double mapi_retry_wait(double retry_after, int retry, double base, double cap,
                       mapi_random_fn jitter, void *ctx);
/* A Retry-After value (delta seconds, or an HTTP date compared with `now`) in
   seconds, capped at 60 and never negative; -1 when value is NULL or not
   a valid Retry-After. */
double mapi_retry_after_parse(const char *value, time_t now);
/* The Retry-After of response res (NULL: none) as above, against the time
   now: the one reading of the header for every answer. */
double mapi_response_retry_after(const mapi_response *res);
/* 1 for the statuses a call may retry: 429, 502, 503, 504. */
int mapi_status_retryable(int status);
/* The default deadline of a call (merchantapi.h, mapi_config.deadline): what
   max_retries + 1 attempts of `timeout` seconds and the longest backoff
   before each retry can take together. */
double mapi_default_deadline(double timeout, int max_retries);

/* ---- one call across its attempts (exchange.c) ---- */

/* What an exchange copies from its client (nothing is borrowed). */
typedef struct mapi_exchange_settings {
    const char *api_key;    /* NULL or "": no Authorization header */
    const char *user_agent; /* the whole User-Agent value */
    int max_retries;        /* retries after the first attempt */
    int max_depth;          /* JSON nesting cap; <= 0: MAPI_DEFAULT_MAX_DEPTH */
    size_t max_body;        /* bytes; 0: MAPI_DEFAULT_MAX_BODY */
    double timeout, connect_timeout; /* seconds, handed to transports; <= 0: defaults */
    double deadline;        /* seconds for the whole call; <= 0: mapi_default_deadline */
    int debug;              /* 1: one MERCHANTAPI_DEBUG line per attempt to stderr */
    const mapi_header_field *headers; /* the client's own headers (mapi_config.headers) */
    size_t nheaders;
    int trace;              /* 1: a new trace for the call (mapi_config.trace) */
    uint64_t trace_seed;    /* the seed of the call's trace and span ids */
    struct mapi_metrics *metrics; /* the client's (metrics.h; borrowed), or NULL: none */
} mapi_exchange_settings;

typedef struct mapi_exchange mapi_exchange;

/* How an attempt ended for the call. */
typedef enum mapi_step {
    MAPI_STEP_DONE = 0, /* *out holds the document */
    MAPI_STEP_FAILED,   /* *e is the call's final error (finished: mapi_exchange_fail) */
    MAPI_STEP_RETRY,    /* wait *wait seconds, then begin the next attempt; *e holds this
                           attempt's error (clear it, or finish it with mapi_exchange_fail) */
    MAPI_STEP_SETTLE    /* the confirm failed with outcome UNKNOWN and is settled: begin
                           the read of its payout now (mapi_exchange_attempt_call); *e is empty */
} mapi_step;

/* A new exchange for the built call k (every string and the body copied);
   NULL with err MEMORY.  Free with mapi_exchange_free (NULL ignored). */
mapi_exchange *mapi_exchange_new(const mapi_call *k, const mapi_exchange_settings *s,
                                 mapi_error *err);
void mapi_exchange_free(mapi_exchange *x);
/* The jitter source; fn NULL: the exchange's own generator. */
void mapi_exchange_set_random(mapi_exchange *x, mapi_random_fn fn, void *ctx);
/* The call (method, url, body, confirm, ...) as it was built, owned by the
   exchange. */
const mapi_call *mapi_exchange_call(const mapi_exchange *x);
/* What the attempt begun last (or the next one) sends: the call, or once a
   confirm is being settled, the read of its payout (GET, same URL).  Owned
   by the exchange; read it after mapi_exchange_begin_attempt. */
const mapi_call *mapi_exchange_attempt_call(const mapi_exchange *x);
/* The limits a transport should apply to the attempt begun last: seconds
   (the timeout, cut to what is left of the deadline), seconds, bytes (a
   transport may stop reading after max_body + 1 bytes of body). */
void mapi_exchange_limits(const mapi_exchange *x, double *timeout, double *connect_timeout,
                          size_t *max_body);
/* What the attempt begun last sends (the call, or the read settling it):
   method, URL, body, fresh_connection for a call that may move money, the
   headers of one's own, the attempt's timeout, and http1 as the exchange
   decided when the attempt before it ended (MAPI_ENDED_RESEND_STOPPED).
   Borrowed from x until the next attempt begins. */
void mapi_exchange_request(const mapi_exchange *x, mapi_attempt_request *req);
/* How many request headers mapi_exchange_header_at gives. */
size_t mapi_exchange_header_count(const mapi_exchange *x);
/* Request header i (0-based): mapi_base_headers', then the headers of one's
   own (mapi_headers_merge of the client's and the call's) -- what libcurl
   sends.  1, or 0 past the end.  Borrowed; the Authorization value holds
   the key: never log it. */
int mapi_exchange_header_at(const mapi_exchange *x, size_t i, const char **name,
                            const char **value);
/* Begins the next attempt: counts it, stamps the time (the first attempt
   also starts the deadline) and sets its timeout.  Returns the attempt's
   facts for a MAPI_ATTEMPT_REQUEST observer (borrowed). */
const mapi_attempt_info *mapi_exchange_begin_attempt(mapi_exchange *x);
/* How an attempt ended, in the exchange's terms: what a driver reads from
   its transport's result (mapi_client_http_ended for libcurl's). */
typedef enum mapi_ended {
    MAPI_ENDED_ANSWER = 0,   /* an answer came (res), whatever its status */
    MAPI_ENDED_FAILED,       /* no answer: *e as the transport filled it */
    MAPI_ENDED_RESEND_STOPPED /* no answer, *e filled (TRANSPORT, outcome UNKNOWN): the
                                 request went once, and the transport was stopped from
                                 sending it again by itself (a reused connection died, an
                                 HTTP/2 stream was refused): a retry, when the call's rules
                                 allow one, goes at once over HTTP/1.1 (mapi_attempt_request.http1;
                                 docs/decisions.md, "No hidden resends") */
} mapi_ended;
/* Ends the attempt begun last, as it ended (how).  res: the response (taken
   in every case; with MAPI_ENDED_ANSWER), or NULL when the attempt failed
   with *e (as mapi_http_perform fills it: kind TRANSPORT with outcome
   NOT_SENT or UNKNOWN, DECODE, MEMORY).  Maps it as the call says, decides
   (see mapi_step; a retry only when mapi_exchange_fits) and what the next
   attempt sends (mapi_exchange_request), writes the MERCHANTAPI_DEBUG line.
   A settling confirm: MAPI_STEP_SETTLE; the read's end gives the confirm's
   result (mapi_confirm_payout). */
mapi_step mapi_exchange_end_attempt(mapi_exchange *x, mapi_ended how, mapi_response *res,
                                    mapi_error *e, mapi_doc **out, double *wait);
/* Finishes *e as the call's final error: attempts, method, url, message,
   outcome only for the confirm, the api key redacted (and while settling,
   the confirm's error with *e as its settle_error). */
void mapi_exchange_fail(mapi_exchange *x, mapi_error *e);
/* 1 when a retry after `wait` seconds from now begins before the call's
   deadline (the rule mapi_exchange_end_attempt applies); 0 otherwise. */
int mapi_exchange_fits(const mapi_exchange *x, double wait);
/* Finishes *e (an attempt's error whose retry did not fit) as the call's
   final error, deadline_exceeded 1. */
void mapi_exchange_expire(mapi_exchange *x, mapi_error *e);
/* The facts of the attempt ended last, for a MAPI_ATTEMPT_RESPONSE observer:
   borrowed, valid until the next begin and while *out / *e live. */
const mapi_attempt_info *mapi_exchange_info(const mapi_exchange *x);

#endif /* MAPI_EXCHANGE_H */

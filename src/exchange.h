/*
 * exchange.h -- internal: one call across its attempts, without I/O
 * (exchange.c): the request each attempt sends (mapi_attempt_request,
 * internal.h), how an attempt ended in the exchange's terms (mapi_ended),
 * and every decision between attempts.  Included by internal.h in its
 * place; it knows nothing of the HTTP layer (http.h), its sibling.
 */
#ifndef MAPI_EXCHANGE_H
#define MAPI_EXCHANGE_H

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

/*
 * attempt.h -- internal: the facts of an attempt's record the exchange
 * cannot take from elsewhere (attempt.c) and W3C Trace Context's ids
 * (trace.c; its format is the builder's, calls.h).  Of the exchange's layer
 * (floor 60): exchange.h includes it.
 */
#ifndef MAPI_ATTEMPT_H
#define MAPI_ATTEMPT_H

#include <stddef.h>
#include <stdint.h>

#include "merchantapi.h"

/* ---- the attempt record (attempt.c; mapi_attempt_info) ---- */

/* server.address of a URL the client checked (brackets of an IPv6 host
   removed), with *port its port or the scheme's; NULL when out of memory. */
char *mapi_attempt_server(const char *url, int *port);
/* The MERCHANTAPI_DEBUG line of a record (mapi_attempt_format's text), made
   once: a new string the caller frees, or NULL when out of memory. */
char *mapi_attempt_line(const mapi_attempt_info *in);
/* error.type (mapi_attempt_info) of an attempt that got status (0: none)
   and failed with kind (a status is written into buf; a kind's name is static). */
const char *mapi_attempt_error_type(int status, mapi_error_kind kind, char *buf, size_t size);

/* ---- W3C Trace Context: the ids (trace.c) ---- */

/* 64 bits from /dev/urandom (the clock when it cannot be read): a client's
   seed, drawn once. */
uint64_t mapi_trace_seed(void);
/* This process's generation: it changes in a child after fork(), when a
   seed drawn before must be drawn again. */
unsigned long mapi_trace_forks(void);
/* The next 64 random bits of the generator whose state is *state. */
uint64_t mapi_trace_next(uint64_t *state);
/* A random id of `bytes` bytes, never all zeros, as 2 x bytes lowercase hex
   digits and a NUL into out. */
void mapi_trace_id(uint64_t *state, char *out, size_t bytes);

#endif /* MAPI_ATTEMPT_H */

/*
 * metrics.h -- internal: a client's metrics, recorded where an attempt ends
 * (the exchange calls mapi_metrics_record) into cells found by their
 * attributes: no string and no Lua table is made per attempt.  The header
 * of the metrics layer (floor 55): exchange.h includes it.  The metrics, their names and attributes: docs/guide/observe.md,
 * "Metrics"; read out by lua/merchantapi/metrics.lua (src/lua_metrics.c).
 */
#ifndef MAPI_METRICS_H
#define MAPI_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "merchantapi.h"

/* The duration histogram's buckets: the 14 boundaries (seconds) OpenTelemetry's
   HTTP metrics conventions advise for http.client.request.duration, then the
   bucket of the durations above the last. */
#define MAPI_METRICS_BOUNDS 14
#define MAPI_METRICS_BUCKETS (MAPI_METRICS_BOUNDS + 1)
/* Cells of a store, the overflow cell aside: status codes and error.type are
   open sets, so an attempt whose attribute set finds no cell once these are
   taken is counted in the overflow cell (attribute otel.metric.overflow =
   true, OpenTelemetry's name for it). */
#define MAPI_METRICS_CELLS 128

extern const double mapi_metrics_bounds[MAPI_METRICS_BOUNDS];

/* One attribute set's counts.  The strings are the cell's own copies (NULL:
   the attribute is absent); status 0 and server_port 0 are absent too. */
typedef struct mapi_metrics_cell {
    uint32_t hash;          /* of the attributes below (metrics.c) */
    int overflow;           /* 1: the overflow cell, no other attribute */
    char *method;           /* http.request.method */
    char *server_address;   /* server.address */
    int server_port;        /* server.port */
    int status;             /* http.response.status_code */
    char *error_type;       /* error.type */
    char *endpoint;         /* merchantapi.endpoint */
    int lists;              /* 1: the endpoint lists pages (a row with `lists`) */
    int untaken;            /* 1: made since the last mapi_metrics_take_cell */
    uint64_t buckets[MAPI_METRICS_BUCKETS]; /* durations per bucket (not cumulative) */
    double sum;             /* seconds */
    uint64_t retries;       /* merchantapi.client.retries: resend_count >= 1 */
    uint64_t unknown_outcomes; /* merchantapi.client.unknown_outcomes: outcome "unknown" */
    uint64_t settled_confirms; /* merchantapi.client.settled_confirms: settled_by "read" */
    uint64_t pages;         /* merchantapi.client.pages: a success of a listing endpoint */
} mapi_metrics_cell;

typedef struct mapi_metrics mapi_metrics;

/* A new store holding one reference, or NULL when out of memory. */
mapi_metrics *mapi_metrics_new(void);
/* One more reference to m (the client's and a Lua object's); returns m. */
mapi_metrics *mapi_metrics_retain(mapi_metrics *m);
/* Lets go of one reference; the last frees the store (NULL ignored). */
void mapi_metrics_release(mapi_metrics *m);
/* Counts one ended attempt (a RESPONSE record): its elapsed seconds into the
   histogram, and the counters it adds to, in the cell of its attributes.
   Makes no allocation once the cell exists; a cell that cannot be made (the
   table full, or out of memory) counts in the overflow cell. */
void mapi_metrics_record(mapi_metrics *m, const mapi_attempt_info *in);
/* The same, with duration (seconds) in place of in->elapsed: NaN leaves the
   histogram alone (a Lua record without duration). */
void mapi_metrics_record_duration(mapi_metrics *m, const mapi_attempt_info *in, double duration);
/* Makes the cell of in's attributes at 0 if there is none (so that it reads
   0 before any attempt).  0, or -1 when it could not be made. */
int mapi_metrics_seed(mapi_metrics *m, const mapi_attempt_info *in);
/* Cells made so far, the overflow cell last once it counted: cell i for i
   below mapi_metrics_cells(m); borrowed until the store changes. */
size_t mapi_metrics_cells(const mapi_metrics *m);
const mapi_metrics_cell *mapi_metrics_cell_at(const mapi_metrics *m, size_t i);
/* Copies cell i's counts into *out (its strings borrowed) and sets the
   cell's counts to 0 (what a flush to a shared store takes); returns 1 when
   *out holds something to add (a count, or a cell not taken before), else 0. */
int mapi_metrics_take_cell(mapi_metrics *m, size_t i, mapi_metrics_cell *out);

/* The client's metrics (client.c), made by the first call of this function
   (each endpoint's cell at 0 under the base URL's server): from then on
   every attempt of the client's calls is counted, whatever drives it (the
   exchanges borrow the store: a client outlives its exchanges).  Owned by
   the client (mapi_metrics_retain to keep it longer); NULL when out of
   memory. */
mapi_metrics *mapi_client_metrics(mapi_client *c);

#endif /* MAPI_METRICS_H */

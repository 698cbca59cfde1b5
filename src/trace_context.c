/*
 * trace_context.c -- the format of W3C Trace Context
 * (https://www.w3.org/TR/trace-context/), at the builder's floor: the check
 * of a caller's traceparent and tracestate (calls.c's builders), and what an
 * id is (trace.c draws them).
 */
#include <string.h>

#include "calls.h"

int mapi_trace_id_zero(const char *s, size_t n)
{
    static const char zeros[32 + 1] = "00000000000000000000000000000000";
    size_t k;

    for (; n > 0; s += k, n -= k) { /* an id is 32 or 16 digits: one memcmp */
        k = n < 32 ? n : 32;
        if (memcmp(s, zeros, k) != 0)
            return 0;
    }
    return 1;
}

int mapi_trace_hex(const char *s, size_t n, int nonzero)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return !(nonzero && mapi_trace_id_zero(s, n));
}

int mapi_trace_check(const char *traceparent, const char *tracestate, mapi_error *err)
{
    const char *t = traceparent;
    size_t i, n;

    if (tracestate) {
        n = strlen(tracestate);
        if (!t)
            return mapi_error_set(err, MAPI_ERR_USAGE, "tracestate needs a traceparent");
        if (n > MAPI_TRACESTATE_MAX)
            return mapi_error_set(err, MAPI_ERR_USAGE, "tracestate is over %d bytes",
                                  MAPI_TRACESTATE_MAX);
        for (i = 0; i < n; i++)
            if (tracestate[i] < 0x20 || tracestate[i] > 0x7e)
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "tracestate holds a byte that is not printable ASCII");
    }
    if (!t)
        return 0;
    if (strlen(t) != MAPI_TRACEPARENT_LEN || strncmp(t, "00-", 3) != 0 || t[35] != '-' ||
        t[52] != '-' || !mapi_trace_hex(t + 3, 32, 1) || !mapi_trace_hex(t + 36, 16, 1) ||
        !mapi_trace_hex(t + 53, 2, 0))
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "traceparent must be \"00-<32 hex trace id>-<16 hex parent id>-"
                              "<2 hex flags>\" (lowercase, ids not all zeros)");
    return 0;
}

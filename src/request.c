/*
 * request.c -- the generic call: any method and path under the base URL
 * (mapi_request, mapi_request_ex), and mapi_get_payout, the read that
 * follows a confirmed payout to its txid (interface, "Events").
 *
 * The call is built by calls.c (the path is checked there, not rewritten:
 * it goes out byte for byte, so what the caller wrote is what the server
 * sees) and run by the client's driver (client.c): a generic call behaves
 * like the three endpoints.
 */
#include "internal.h"

int mapi_request_ex(mapi_client *c, const char *method, const char *path_and_query,
                    const char *body, size_t body_len, const mapi_request_opts *opts,
                    mapi_doc **out, mapi_error *err)
{
    mapi_call k;

    if (out)
        *out = NULL;
    if (!c || !out || !method || !path_and_query)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "mapi_request: client, method, path and out are required");
    if (mapi_call_request(c, method, path_and_query, body, body_len, opts, &k, err) < 0)
        return -1;
    return mapi_client_run(c, &k, out, err);
}

int mapi_request(mapi_client *c, const char *method, const char *path_and_query,
                 const char *body, size_t body_len, mapi_doc **out, mapi_error *err)
{
    return mapi_request_ex(c, method, path_and_query, body, body_len, NULL, out, err);
}

int mapi_get_payout_ex(mapi_client *c, const char *payout_id, const mapi_call_opts *call,
                       mapi_doc **out, mapi_error *err)
{
    mapi_call k;

    if (out)
        *out = NULL;
    if (!c || !out)
        return mapi_error_set(err, MAPI_ERR_USAGE, "mapi_get_payout: client and out are required");
    if (mapi_call_get_payout(c, payout_id, call, &k, err) < 0)
        return -1;
    return mapi_client_run(c, &k, out, err);
}

int mapi_get_payout(mapi_client *c, const char *payout_id, mapi_doc **out, mapi_error *err)
{
    return mapi_get_payout_ex(c, payout_id, NULL, out, err);
}

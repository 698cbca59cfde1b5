/*
 * request.c -- the generic call: any method and path under the base URL
 * (mapi_request, mapi_request_ex), and mapi_get_payout, the read that
 * follows a confirmed payout to its txid (interface, "Events").
 *
 * The path is checked here, not rewritten: it goes out byte for byte, so
 * what the caller wrote is what the server sees.  Everything after the
 * check -- headers, retries, decoding, errors -- is the client's own
 * (client.c, mapping.c): a generic call behaves like the three endpoints.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PAYOUTS_PATH "/api/public/v1/payouts/"
#define MAX_RETRIES_LIMIT 100

/* The methods mapi_request sends, and whether each is safe to repeat. */
static const struct {
    const char *name;
    int safe; /* GET, HEAD: retried like the GET endpoints */
} methods[] = {
    {"GET", 1}, {"HEAD", 1}, {"POST", 0}, {"PUT", 0}, {"PATCH", 0}, {"DELETE", 0},
};

/* 1 safe, 0 unsafe, -1 not a method mapi_request sends. */
static int method_safety(const char *method)
{
    size_t i;

    for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (strcmp(method, methods[i].name) == 0)
            return methods[i].safe;
    return -1;
}

static int is_hex(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* RFC 3986 pchar without '%': unreserved, sub-delims, ':' and '@'. */
static int is_pchar(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
        return 1;
    return ch != '\0' && strchr("-._~!$&'()*+,;=:@", ch) != NULL;
}

/* 1 when the segment s[0..n) is "." or "..", written plainly or with %2E. */
static int is_dot_segment(const char *s, size_t n)
{
    size_t dots = 0, i = 0;

    while (i < n) {
        if (s[i] == '.') {
            i++;
        } else if (n - i >= 3 && s[i] == '%' && s[i + 1] == '2' &&
                   (s[i + 2] == 'e' || s[i + 2] == 'E')) {
            i += 3;
        } else {
            return 0;
        }
        dots++;
    }
    return dots == 1 || dots == 2;
}

/* Checks path_and_query by the rules of merchantapi.h.  0, or -1 (USAGE). */
static int check_path(const char *p, mapi_error *err)
{
    size_t i, seg = 1; /* start of the current path segment */
    int in_query = 0;

    if (p[0] != '/')
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "path must start with \"/\" (a path under base_url, not a URL)");
    if (p[1] == '/')
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "path must not start with \"//\" (a network-path reference)");
    for (i = 1;; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (!in_query && (ch == '/' || ch == '?' || ch == '\0')) {
            if (is_dot_segment(p + seg, i - seg))
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "path must not hold a \".\" or \"..\" segment");
            seg = i + 1;
            if (ch == '?')
                in_query = 1;
        }
        if (ch == '\0')
            return 0;
        if (ch == '%') {
            if (!is_hex(p[i + 1]) || !is_hex(p[i + 2]))
                return mapi_error_set(err, MAPI_ERR_USAGE,
                                      "path has a '%%' at byte %zu that is not a %%XX escape",
                                      i);
            i += 2;
            continue;
        }
        if (ch == '/' || ch == '?' || is_pchar(ch) || (in_query && (ch == '[' || ch == ']')))
            continue;
        if (ch == '\r' || ch == '\n')
            return mapi_error_set(err, MAPI_ERR_USAGE, "path contains CR or LF");
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "path byte %zu (0x%02x) must be percent-encoded", i, ch);
    }
}

/* A USAGE error of an unsafe method provably sent nothing. */
static int usage_outcome(int safety, mapi_error *err)
{
    if (err && safety == 0)
        err->outcome = MAPI_OUTCOME_NOT_SENT;
    return -1;
}

int mapi_request_ex(mapi_client *c, const char *method, const char *path_and_query,
                    const char *body, size_t body_len, const mapi_request_opts *opts,
                    mapi_doc **out, mapi_error *err)
{
    mapi_request_opts dflt = MAPI_REQUEST_OPTS_INIT;
    mapi_call k;
    mapi_buf url;
    char *u;
    int safety, rc;

    if (out)
        *out = NULL;
    if (!c || !out || !method || !path_and_query)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "mapi_request: client, method, path and out are required");
    if (!opts)
        opts = &dflt;
    safety = method_safety(method);
    if (safety < 0)
        return mapi_error_set(err, MAPI_ERR_USAGE,
                              "method must be GET, HEAD, POST, PUT, PATCH or DELETE");
    if (check_path(path_and_query, err) < 0)
        return usage_outcome(safety, err);
    if (!body && body_len > 0) {
        mapi_error_set(err, MAPI_ERR_USAGE, "body is NULL but body_len is %zu", body_len);
        return usage_outcome(safety, err);
    }
    if (body && safety == 1)
        return mapi_error_set(err, MAPI_ERR_USAGE, "a %s request takes no body", method);
    if (opts->max_retries < -1 || opts->max_retries > MAX_RETRIES_LIMIT) {
        mapi_error_set(err, MAPI_ERR_USAGE, "max_retries must be -1 or 0 .. %d",
                       MAX_RETRIES_LIMIT);
        return usage_outcome(safety, err);
    }
    if (opts->type && !*opts->type) {
        mapi_error_set(err, MAPI_ERR_USAGE, "type must be NULL or a non-empty string");
        return usage_outcome(safety, err);
    }
    if (opts->id && (!*opts->id || !opts->type)) {
        mapi_error_set(err, MAPI_ERR_USAGE, "id must be NULL or a non-empty string with a type");
        return usage_outcome(safety, err);
    }
    if (!(opts->deadline >= 0)) {
        mapi_error_set(err, MAPI_ERR_USAGE, "deadline must be >= 0 seconds");
        return usage_outcome(safety, err);
    }

    memset(&k, 0, sizeof k);
    k.method = method;
    k.confirm = !safety; /* fresh connection, outcome, cautious retries */
    k.type = opts->type;
    k.id = opts->id;
    k.deadline = opts->deadline;
    k.body = body;
    k.body_len = body ? body_len : 0;
    k.generic = 1;
    k.headers = opts->headers; /* checked by the client's call path */
    k.nheaders = opts->nheaders;
    if (opts->max_retries >= 0) {
        k.has_max_retries = 1;
        k.max_retries = opts->max_retries;
    }
    mapi_buf_init(&url);
    mapi_buf_puts(&url, mapi_client_base_url(c));
    mapi_buf_puts(&url, path_and_query);
    u = mapi_buf_take(&url);
    if (!u) {
        mapi_error_oom(err);
        return usage_outcome(safety, err);
    }
    k.url = u;
    rc = mapi_client_run(c, &k, out, err);
    free(u);
    return rc;
}

int mapi_request(mapi_client *c, const char *method, const char *path_and_query,
                 const char *body, size_t body_len, mapi_doc **out, mapi_error *err)
{
    return mapi_request_ex(c, method, path_and_query, body, body_len, NULL, out, err);
}

int mapi_get_payout_ex(mapi_client *c, const char *payout_id, const mapi_call_opts *call,
                       mapi_doc **out, mapi_error *err)
{
    mapi_request_opts opts = MAPI_REQUEST_OPTS_INIT;
    mapi_buf path;
    char *p;
    int rc;

    if (out)
        *out = NULL;
    if (!c || !out)
        return mapi_error_set(err, MAPI_ERR_USAGE, "mapi_get_payout: client and out are required");
    if (!payout_id || !*payout_id)
        return mapi_error_set(err, MAPI_ERR_USAGE, "payout_id is empty");
    if (strcmp(payout_id, ".") == 0 || strcmp(payout_id, "..") == 0)
        return mapi_error_set(err, MAPI_ERR_USAGE, "payout_id must not be \".\" or \"..\"");
    mapi_buf_init(&path);
    mapi_buf_puts(&path, PAYOUTS_PATH);
    mapi_url_encode(&path, payout_id);
    p = mapi_buf_take(&path);
    if (!p)
        return mapi_error_oom(err);
    opts.type = "payouts";
    opts.id = payout_id;
    if (call) {
        opts.headers = call->headers;
        opts.nheaders = call->nheaders;
        opts.deadline = call->deadline; /* checked by mapi_request_ex */
    }
    rc = mapi_request_ex(c, "GET", p, NULL, 0, &opts, out, err);
    free(p);
    return rc;
}

int mapi_get_payout(mapi_client *c, const char *payout_id, mapi_doc **out, mapi_error *err)
{
    return mapi_get_payout_ex(c, payout_id, NULL, out, err);
}

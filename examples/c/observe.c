/*
 * observe.c -- every attempt of a C program's calls, as the attempt records
 * of the client's observer: OpenTelemetry's HTTP client names, the trace and
 * span ids of a traced call, and the same line MERCHANTAPI_DEBUG writes
 * (mapi_attempt_format).  Reads a channel (a flaky one shows its retries),
 * then confirms a payout in the caller's own trace (a traceparent).
 *
 *   cc observe.c $(pkg-config --cflags --libs merchantapi) -o observe
 *   MERCHANTAPI_BASE_URL=... MERCHANTAPI_API_KEY=... ./observe <channel_id> <payout_id>
 */
#include <stdio.h>
#include <stdlib.h>

#include <merchantapi.h>

static const char *or_none(const char *s)
{
    return s ? s : "-";
}

/* The observer: called before (REQUEST) and after (RESPONSE) each attempt;
   the record is complete after.  Everything it points to is borrowed for
   this call only: copy what you keep. */
static void observe(void *ctx, mapi_attempt_event event, const mapi_attempt_info *a)
{
    char line[512];
    int n;

    (void)ctx;
    if (event != MAPI_ATTEMPT_RESPONSE)
        return;
    printf("span %s trace %s parent %s\n", or_none(a->span_id), or_none(a->trace_id),
           or_none(a->parent_span_id));
    printf("  http.request.method=%s server.address=%s server.port=%d\n", a->method,
           a->server_address, a->server_port);
    printf("  url.full=%s\n", a->url);
    printf("  http.response.status_code=%d error.type=%s http.request.resend_count=%d\n",
           a->status, or_none(a->error_type), a->resend_count);
    printf("  merchantapi.endpoint=%s merchantapi.attempt=%d merchantapi.outcome=%s\n",
           or_none(a->endpoint), a->attempt, or_none(a->outcome));
    printf("  merchantapi.request_id=%s merchantapi.settled_by=%s duration=%.6f s\n",
           or_none(a->request_id), or_none(a->settled_by), a->elapsed);
    /* the debug line, from the same record (truncated to the buffer: n says
       how long it was) */
    n = mapi_attempt_format(a, line, sizeof line);
    if (n >= 0)
        printf("  %s%s\n", line, (size_t)n >= sizeof line ? "..." : "");
}

int main(int argc, char **argv)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *client;
    mapi_doc *doc = NULL;
    mapi_call_opts opts = MAPI_CALL_OPTS_INIT;
    int rc = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s <channel_id> <payout_id>\n", argv[0]);
        return 2;
    }
    mapi_config_init(&cfg);
    cfg.base_url = getenv("MERCHANTAPI_BASE_URL");
    cfg.api_key = getenv("MERCHANTAPI_API_KEY");
    cfg.trace = 1; /* every call a trace of its own, unless given the caller's */
    client = mapi_client_new(&cfg, &err);
    if (!client) {
        fprintf(stderr, "client: %s\n", err.message ? err.message : "failed");
        mapi_error_clear(&err);
        return 1;
    }
    mapi_client_set_observer(client, observe, NULL);

    if (mapi_get_channel(client, argv[1], &doc, &err) != 0) {
        fprintf(stderr, "get_channel: %s\n", err.message);
        mapi_error_clear(&err);
        rc = 1;
    }
    mapi_doc_free(doc);
    doc = NULL;

    /* the caller's trace (e.g. the request being served): its trace id and
       the id of the caller's own span */
    opts.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    if (mapi_confirm_payout_ex(client, argv[2], &opts, &doc, &err) != 0) {
        fprintf(stderr, "confirm_payout: %s\n", err.message);
        mapi_error_clear(&err);
        rc = 1;
    }
    mapi_doc_free(doc);
    mapi_client_free(client);
    return rc;
}

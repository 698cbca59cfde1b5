/*
 * loop.c -- calls that never block, from C: a channel, a page of
 * addresses and a confirm at once on a mapi_loop, driven by poll() on the
 * loop's descriptor and its timeout, as a host's own event loop would.
 *
 *   cc -std=c99 loop.c $(pkg-config --cflags --libs merchantapi)
 *   MERCHANTAPI_BASE_URL=... MERCHANTAPI_API_KEY=... ./a.out CHANNEL_ID ACCOUNT_ID PAYOUT_ID
 */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <merchantapi.h>

static const char *str_attr(const mapi_doc *doc, const char *name)
{
    const char *s = mapi_value_string(mapi_resource_attr(mapi_doc_data(doc, 0), name), NULL);
    return s ? s : "?";
}

static void on_channel(void *ctx, mapi_doc *doc, mapi_error *err)
{
    (void)ctx;
    if (!doc) {
        fprintf(stderr, "channel: %s\n", err->message);
        return;
    }
    printf("channel %s is %s\n", mapi_resource_id(mapi_doc_data(doc, 0)), str_attr(doc, "status"));
    mapi_doc_free(doc);
}

static void on_page(void *ctx, mapi_doc *doc, mapi_error *err)
{
    int64_t total = 0;

    (void)ctx;
    if (!doc) {
        fprintf(stderr, "addresses: %s\n", err->message);
        return;
    }
    mapi_value_count(mapi_value_get(mapi_doc_meta(doc), "total"), &total);
    printf("page 1: %zu of %lld addresses\n", mapi_doc_data_count(doc), (long long)total);
    mapi_doc_free(doc);
}

static void on_confirm(void *ctx, mapi_doc *doc, mapi_error *err)
{
    (void)ctx;
    if (!doc) {
        fprintf(stderr, "confirm: %s (outcome %s)\n", err->message,
                mapi_outcome_name(err->outcome));
        return;
    }
    printf("payout %s is %s\n", mapi_resource_id(mapi_doc_data(doc, 0)), str_attr(doc, "status"));
    mapi_doc_free(doc);
}

int main(int argc, char **argv)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_page_params page = {NULL, NULL, 1, 5};
    mapi_client *client;
    mapi_loop *loop;
    struct pollfd pfd;
    int running, polls = 0;

    if (argc != 4) {
        fprintf(stderr, "usage: %s CHANNEL_ID ACCOUNT_ID PAYOUT_ID\n", argv[0]);
        return 2;
    }
    mapi_config_init(&cfg);
    cfg.base_url = getenv("MERCHANTAPI_BASE_URL");
    cfg.api_key = getenv("MERCHANTAPI_API_KEY");
    client = mapi_client_new(&cfg, &err);
    loop = client ? mapi_loop_new(&err) : NULL;
    if (!loop || mapi_loop_get_channel(loop, client, argv[1], NULL, on_channel, NULL, &err) ||
        mapi_loop_list_addresses(loop, client, argv[2], &page, NULL, on_page, NULL, &err) ||
        mapi_loop_confirm_payout(loop, client, argv[3], NULL, on_confirm, NULL, &err)) {
        fprintf(stderr, "%s\n", err.message ? err.message : "out of memory");
        mapi_error_clear(&err);
        mapi_loop_free(loop);
        mapi_client_free(client);
        return 1;
    }
    /* the host's loop: poll the descriptor until the timeout, then step */
    pfd.fd = mapi_loop_fd(loop);
    do {
        double t = mapi_loop_timeout(loop);
        pfd.events = POLLIN;
        poll(&pfd, 1, t < 0 ? -1 : (int)(t * 1000.0 + 0.999));
        polls++;
        running = mapi_loop_step(loop, 0.0);
    } while (running > 0);
    printf("3 calls done in %d polls\n", polls);
    mapi_loop_free(loop);
    mapi_client_free(client);
    return 0;
}

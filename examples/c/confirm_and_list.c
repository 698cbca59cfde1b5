/*
 * confirm_and_list.c -- the C library on its own: confirm a payout draft,
 * then list every receiving address of an account, page by page.
 *
 *   cc confirm_and_list.c $(pkg-config --cflags --libs merchantapi) -o confirm_and_list
 *   MERCHANTAPI_BASE_URL=... MERCHANTAPI_API_KEY=... ./confirm_and_list <payout_id> <account_id>
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <merchantapi.h>

static const char *str(const mapi_resource *r, const char *name)
{
    const char *s = mapi_value_string(mapi_resource_attr(r, name), NULL);
    return s ? s : "(null)";
}

/* amount may be a JSON number or a decimal string: its decimal text, as the
   Lua module gives it ("250.10", "1200") */
static const char *decimal(const mapi_resource *r, const char *name)
{
    const char *s = mapi_value_decimal(mapi_resource_attr(r, name), NULL);
    return s ? s : "(null)";
}

static int fail(const char *what, mapi_error *err)
{
    fprintf(stderr, "%s: %s\n", what, err->message ? err->message : "failed");
    if (err->outcome == MAPI_OUTCOME_UNKNOWN && err->retryable) /* read after it: a draft */
        fprintf(stderr, "not confirmed, the payout is still a draft: trying again is safe\n");
    else if (err->outcome == MAPI_OUTCOME_UNKNOWN) /* no read, or neither draft nor done */
        fprintf(stderr, "the confirm may have gone through: read the payout before trying "
                        "again\n");
    mapi_error_clear(err);
    return 1;
}

int main(int argc, char **argv)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *client;
    mapi_doc *doc;
    mapi_page_params p = {"created_at", "asc", 1, 10};
    const mapi_resource *payout, *account;
    int64_t total = -1, seen = 0; /* -1: the service did not tell */

    if (argc != 3) {
        fprintf(stderr, "usage: %s <payout_id> <account_id>\n", argv[0]);
        return 2;
    }
    mapi_config_init(&cfg);
    cfg.base_url = getenv("MERCHANTAPI_BASE_URL");
    cfg.api_key = getenv("MERCHANTAPI_API_KEY");
    client = mapi_client_new(&cfg, &err);
    if (!client)
        return fail("client", &err);

    if (mapi_confirm_payout(client, argv[1], &doc, &err) != 0) {
        mapi_client_free(client);
        return fail("confirm", &err);
    }
    payout = mapi_doc_data(doc, 0);
    account = mapi_resource_related(doc, payout, "accountCharged", 0);
    printf("payout %s is %s: %s %s, charged %s %s to %s\n", mapi_resource_id(payout),
           str(payout, "status"), decimal(payout, "amount"),
           str(payout, "currency"), str(payout, "amountCharged"),
           str(payout, "amountChargedCurrency"), str(account, "label"));
    mapi_doc_free(doc);

    do {
        size_t i, n;
        if (mapi_list_addresses(client, argv[2], &p, &doc, &err) != 0) {
            mapi_client_free(client);
            return fail("list", &err);
        }
        n = mapi_doc_data_count(doc);
        /* 22 or "22"; absent ("meta": {}) leaves total unknown */
        mapi_value_count(mapi_value_get(mapi_doc_meta(doc), "total"), &total);
        for (i = 0; i < n; i++) {
            const mapi_resource *a = mapi_doc_data(doc, i);
            const mapi_resource *net = mapi_resource_related(doc, a, "network", 0);
            printf("  %3" PRId64 "  %-44s %s\n", ++seen, str(a, "value"), str(net, "code"));
        }
        mapi_doc_free(doc);
        if (n < (size_t)p.per_page)
            break;
        p.page++;
    } while (total < 0 || seen < total);
    printf("%" PRId64 " addresses\n", seen);
    mapi_client_free(client);
    return 0;
}

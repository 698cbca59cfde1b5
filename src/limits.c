/*
 * limits.c -- the limits of option values, one check each, asked by the
 * builder of a call (calls.c: a call's deadline and page options) and by
 * mapi_client_new (the client's): the same value is refused with the same
 * USAGE title from C and from Lua, before anything is sent.  Lua checks
 * only what Lua alone can (a value's Lua type: lua/merchantapi/options.lua;
 * the binding, lua_options.c, only converts); every limit is here (each
 * is listed in calls.h).  The service's largest page size is not shown
 * by the interface: the server refuses a larger one.
 */
#include <limits.h>
#include <string.h>

#include "calls.h"

static const char *seconds_in_range(double seconds, const char *title)
{
    return seconds > 0 && seconds <= 1e9 ? NULL : title;
}

const char *mapi_limit_timeout(double seconds)
{
    return seconds_in_range(seconds, "timeout must be a number of seconds > 0 (at most 1e9)");
}

const char *mapi_limit_connect_timeout(double seconds)
{
    return seconds_in_range(seconds,
                            "connect_timeout must be a number of seconds > 0 (at most 1e9)");
}

const char *mapi_limit_deadline(double seconds)
{
    return seconds_in_range(seconds, "deadline must be a number of seconds > 0 (at most 1e9)");
}

const char *mapi_limit_max_retries(long long n)
{
    return n >= 0 && n <= MAPI_MAX_RETRIES ? NULL
                                           : "max_retries must be an integer from 0 to 100";
}

const char *mapi_limit_max_body(unsigned long long n)
{
    return n >= 1 && n <= (unsigned long long)SIZE_MAX
               ? NULL
               : "max_body must be a number of bytes >= 1";
}

const char *mapi_limit_max_depth(long long n)
{
    return n >= 0 ? NULL : "max_depth must be >= 0";
}

const char *mapi_limit_page(long long n)
{
    return n >= 1 && n <= LONG_MAX ? NULL : "page must be an integer >= 1";
}

const char *mapi_limit_per_page(long long n)
{
    return n >= 1 && n <= LONG_MAX ? NULL : "per_page must be an integer >= 1";
}

const char *mapi_limit_order(const char *s)
{
    return s && strcmp(s, "created_at") == 0 ? NULL : "order must be \"created_at\"";
}

const char *mapi_limit_order_type(const char *s)
{
    return s && (strcmp(s, "asc") == 0 || strcmp(s, "desc") == 0)
               ? NULL
               : "order_type must be \"asc\" or \"desc\"";
}

int mapi_limit_refuse(const char *title, mapi_error *err)
{
    if (!title)
        return 0;
    return mapi_error_set(err, MAPI_ERR_USAGE, "%s", title);
}

const char *mapi_limit_page_params(const mapi_page_params *p)
{
    const char *bad = NULL;

    if (!p)
        return NULL;
    if (p->order && (bad = mapi_limit_order(p->order)))
        return bad;
    if (p->order_type && (bad = mapi_limit_order_type(p->order_type)))
        return bad;
    if (p->page != 0 && (bad = mapi_limit_page(p->page)))
        return bad;
    if (p->per_page != 0 && (bad = mapi_limit_per_page(p->per_page)))
        return bad;
    return NULL;
}

/* ---- the pages of one list_addresses_pages call ---- */

int mapi_pages_check(long count, long concurrency, mapi_error *err)
{
    if (concurrency < 1)
        return mapi_error_set(err, MAPI_ERR_USAGE, "concurrency must be an integer >= 1");
    if (count < 1 || count > MAPI_PAGES_MAX)
        return mapi_error_set(err, MAPI_ERR_USAGE, "count must be an integer from 1 to %d",
                              MAPI_PAGES_MAX);
    return 0;
}

size_t mapi_pages_concurrency(size_t concurrency)
{
    return concurrency < 1 ? 1 : concurrency > MAPI_PAGES_MAX_CONCURRENCY
                                     ? MAPI_PAGES_MAX_CONCURRENCY
                                     : concurrency;
}

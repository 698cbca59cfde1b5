/*
 * attempt.c -- what an attempt's record (mapi_attempt_info, filled by the
 * exchange) takes from here (attempt.h), and the one formatter of the
 * MERCHANTAPI_DEBUG line made from a record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exchange.h"

char *mapi_attempt_server(const char *url, int *port)
{
    mapi_url_origin o;

    if (mapi_url_origin_of(url, strlen(url), &o) < 0) /* a URL the client made: never */
        return *port = 0, mapi_strdup("");
    *port = o.port > 0 ? o.port : 0;
    return mapi_strndup(o.host, o.host_len);
}

const char *mapi_attempt_error_type(int status, mapi_error_kind kind, char *buf, size_t size)
{
    if (kind == MAPI_ERR_NONE)
        return NULL;
    if (status >= 400 && status <= 999) {
        snprintf(buf, size, "%d", status);
        return buf;
    }
    return mapi_error_kind_name(kind);
}

char *mapi_attempt_line(const mapi_attempt_info *in)
{
    mapi_buf b;
    char *line;

    mapi_buf_init(&b);
    mapi_buf_printf(&b, "merchantapi: %s %s attempt %d/%d: ", in->method ? in->method : "",
                    in->url ? in->url : "", in->attempt, in->max_attempts);
    if (in->status)
        mapi_buf_printf(&b, "%d", in->status);
    else
        mapi_buf_puts(&b, "no response");
    if (in->error != MAPI_ERR_NONE) {
        mapi_buf_printf(&b, " (%s", mapi_error_kind_name(in->error));
        if (in->code)
            mapi_buf_printf(&b, " %s", in->code);
        else if (in->title && in->error != MAPI_ERR_API && in->error != MAPI_ERR_HTTP)
            mapi_buf_printf(&b, ": %s", in->title);
        mapi_buf_puts(&b, ")");
    }
    mapi_buf_printf(&b, " in %.3f s", in->elapsed);
    if (in->request_id)
        mapi_buf_printf(&b, ", request id %s", in->request_id);
    if (in->retry_in >= 0)
        mapi_buf_printf(&b, ", retry in %.3f s", in->retry_in);
    line = mapi_buf_take(&b);
    if (line)
        mapi_blank_controls(line, strlen(line));
    return line;
}

int mapi_attempt_format(const mapi_attempt_info *in, char *buf, size_t size)
{
    char *line = in ? mapi_attempt_line(in) : NULL;
    size_t n;

    if (!line)
        return -1;
    n = strlen(line);
    if (size > 0) {
        size_t copy = n < size - 1 ? n : size - 1;
        memcpy(buf, line, copy);
        buf[copy] = '\0';
    }
    free(line);
    return n > (size_t)0x7fffffff ? -1 : (int)n;
}

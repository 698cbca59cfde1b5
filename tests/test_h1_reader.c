/*
 * test_h1_reader.c -- the HTTP/1.1 response reader of src/h1_reader.c (the
 * cosocket transport's): answers read whole and one byte at a time give the
 * same result; each framing fault is framing.c's (the title libcurl's path
 * gives); the caps (head, line, chunk-size line, max_body) hold as the bytes
 * arrive; chunks are read with libcurl's tolerance; keep-alive.  No server.
 */
#include "testutil.h"

#include "h1_reader.h"

/* What one answer read gives: the state, then status, body, the number of
   headers, keep-alive, or the error's kind, title and outcome. */
typedef struct got {
    mapi_h1_state state;
    int status, keep, kind, outcome;
    size_t nheaders, head_bytes;
    char body[64], title[96];
} got;

/* Reads raw (len bytes) in pieces of `step` bytes (0: whole), then the
   close when eof. */
static got read_answer(const char *raw, size_t len, size_t step, int eof, int head_only,
                       size_t max_body)
{
    mapi_h1_reader *r = mapi_h1_reader_new(head_only, max_body);
    mapi_error err = MAPI_ERROR_INIT;
    mapi_response *res = NULL;
    got g;
    size_t i = 0;

    memset(&g, 0, sizeof g);
    assert_non_null(r);
    g.state = MAPI_H1_MORE;
    while (i < len && g.state != MAPI_H1_ENDED) { /* past DONE too: the bytes after */
        size_t n = step && step < len - i ? step : len - i;
        g.state = mapi_h1_feed(r, raw + i, n);
        i += n;
    }
    if (eof && g.state == MAPI_H1_MORE)
        g.state = mapi_h1_eof(r);
    g.keep = mapi_h1_keep_alive(r);
    if (mapi_h1_result(r, &res, &err) == 0) {
        g.status = res->status;
        g.nheaders = res->nheaders;
        g.head_bytes = res->head_bytes;
        assert_true(res->len < sizeof g.body);
        memcpy(g.body, res->body, res->len + 1);
        assert_int_equal(res->framed, 1);
        mapi_response_free(res);
    } else {
        g.kind = err.kind;
        g.outcome = err.outcome;
        g.status = err.status;
        snprintf(g.title, sizeof g.title, "%s", err.title ? err.title : "");
        mapi_error_clear(&err);
    }
    mapi_h1_reader_free(r);
    return g;
}

/* The answer read whole, and one byte at a time: the same. */
static got both(const char *raw, int eof)
{
    size_t len = strlen(raw);
    got whole = read_answer(raw, len, 0, eof, 0, 1000);
    got bytes = read_answer(raw, len, 1, eof, 0, 1000);

    assert_int_equal(whole.state, bytes.state);
    assert_int_equal(whole.status, bytes.status);
    assert_int_equal(whole.kind, bytes.kind);
    assert_int_equal(whole.keep, bytes.keep);
    assert_int_equal(whole.nheaders, bytes.nheaders);
    assert_string_equal(whole.body, bytes.body);
    assert_string_equal(whole.title, bytes.title);
    return whole;
}

static void refused(const char *raw, const char *title)
{
    got g = both(raw, 1);

    assert_int_equal(g.state, MAPI_H1_ENDED);
    assert_int_equal(g.kind, MAPI_ERR_DECODE);
    assert_int_equal(g.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_string_equal(g.title, title);
}

static void failed(const char *raw, const char *title)
{
    got g = both(raw, 1);

    assert_int_equal(g.kind, MAPI_ERR_TRANSPORT);
    assert_int_equal(g.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_string_equal(g.title, title);
}

static void answers(void **state)
{
    got g;

    (void)state;
    g = both("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Request-Id: r1\r\n\r\n{}", 0);
    assert_int_equal(g.state, MAPI_H1_DONE);
    assert_int_equal(g.status, 200);
    assert_string_equal(g.body, "{}");
    assert_int_equal(g.nheaders, 2);
    assert_int_equal(g.keep, 1);
    assert_int_equal(g.head_bytes, 56);

    /* interim answers skipped; chunks with extensions, spaces after the size,
       LF-only ends; trailers (one named like a status line) skipped */
    g = both("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
             "3;ext=1\r\nabc\r\n2 \r\nde\n1\nf\n0\r\nHTTP/1.1: x\r\nT: 1\r\n\r\n", 0);
    assert_int_equal(g.state, MAPI_H1_DONE);
    assert_int_equal(g.status, 201);
    assert_string_equal(g.body, "abcdef");
    assert_int_equal(g.nheaders, 1);
    assert_int_equal(g.keep, 1);

    /* LF-only head, any byte but CR and LF in a value, an empty name */
    g = both("HTTP/1.1 200 OK\nX: a\x01" "b\n: v\nContent-Length: 1\n\nx", 0);
    assert_int_equal(g.state, MAPI_H1_DONE);
    assert_string_equal(g.body, "x");
    assert_int_equal(g.nheaders, 3);

    /* delimited by the close: done only then, never kept */
    g = both("HTTP/1.1 200 OK\r\n\r\nabc", 0);
    assert_int_equal(g.state, MAPI_H1_MORE);
    g = both("HTTP/1.1 200 OK\r\n\r\nabc", 1);
    assert_int_equal(g.state, MAPI_H1_DONE);
    assert_string_equal(g.body, "abc");
    assert_int_equal(g.keep, 0);

    /* no body: HEAD, 204, 304 */
    g = read_answer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 38, 0, 0, 1, 1000);
    assert_int_equal(g.state, MAPI_H1_DONE);
    assert_int_equal(g.keep, 1);
    g = both("HTTP/1.1 204 No Content\r\n\r\n", 0);
    assert_int_equal(g.state, MAPI_H1_DONE);
    assert_int_equal(g.status, 204);
}

static void keep_alive(void **state)
{
    (void)state;
    assert_int_equal(both("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", 0).keep,
                     0);
    assert_int_equal(both("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 0).keep, 0);
    /* a byte after the answer: the connection is not kept */
    assert_int_equal(both("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy", 0).keep, 0);
}

static void framing_faults(void **state)
{
    (void)state;
    refused("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "conflicting Content-Length headers");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            "conflicting Content-Length headers");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n{}", "invalid Content-Length header");
    /* a number first, then not: libcurl reads the number, framing.c refuses the rest */
    refused("HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\n{}", "invalid Content-Length header");
    refused("HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}", "invalid Content-Length header");
    /* not read by libcurl in an answer with no body: framing.c's */
    refused("HTTP/1.1 204 No Content\r\nContent-Length: x\r\n\r\n", "invalid Content-Length header");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551616\r\n\r\n{}",
            "invalid Content-Length header");
    refused("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
            "Content-Length and Transfer-Encoding together");
    refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n",
            "Content-Length and Transfer-Encoding together");
    refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            "unsupported Transfer-Encoding (only chunked)");
    refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\n",
            "unsupported Transfer-Encoding (only chunked)");
    /* lines llhttp refuses: framing.c's rule refuses them on libcurl's path too */
    refused("HTTP/1.1 200 OK\r\nno colon\r\nContent-Length: 2\r\n\r\n{}",
            "malformed response header line");
    refused("HTTP/1.1 200 OK\r\nX/Y: 1\r\n\r\n{}", "malformed response header line");
    refused("HTTP/1.1 200 OK\r\nX: one\r\n two\r\nContent-Length: 2\r\n\r\n{}",
            "malformed response header line");
    refused("HTTP/1.1 200 OK\r\nX: one\r\n\ttwo\r\nContent-Length: 2\r\n\r\n{}",
            "malformed response header line");
    refused("HTTP/1.1 200 OK\r\nX:\r\n two\r\nContent-Length: 2\r\n\r\n{}",
            "malformed response header line");
    refused("HTTP/1.1 201 Created\r\nContent-Length: 2\r\n 3\r\n\r\n{}",
            "malformed response header line");
}

static void transport_faults(void **state)
{
    (void)state;
    failed("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
           "Failure when receiving data from the peer");
    failed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n  2\r\n{}\r\n0\r\n\r\n",
           "Failure when receiving data from the peer");
    failed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}x\r\n0\r\n\r\n",
           "Failure when receiving data from the peer");
    /* 17 hex digits (libcurl's limit is 16), even zeros */
    failed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000002\r\n{}\r\n",
           "Failure when receiving data from the peer");
    failed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", "Transferred a partial file");
    failed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}", "Transferred a partial file");
    failed("HTTP/1.1 200 OK\r\nContent-", "Failure when receiving data from the peer");
    failed("", "Server returned nothing (no headers, no data)");
    failed("SSH-2.0-OpenSSH\r\n\r\n", "Weird server reply");
}

/* A Content-Length with no number first (libcurl 7.88.1: "Invalid
   Content-Length: value", curl 8), however llhttp meets it: a folded one
   (its first line empty), an empty one, a letter, a sign; a HEAD's too. */
static void unreadable_length(void **state)
{
    got g;

    (void)state;
    failed("HTTP/1.1 200 OK\r\nContent-Length:\r\n 2\r\n\r\n{}", "Weird server reply");
    failed("HTTP/1.1 201 Created\r\nContent-Length:\r\n\t2\r\nX: 1\r\n\r\n{}",
           "Weird server reply");
    failed("HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n{}", "Weird server reply");
    failed("HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n{}", "Weird server reply");
    failed("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}", "Weird server reply");
    failed("HTTP/1.1 404 Not Found\r\nContent-Length:\t-2\r\n\r\n{}", "Weird server reply");
    g = read_answer("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 38, 1, 1, 1, 1000);
    assert_int_equal(g.kind, MAPI_ERR_TRANSPORT);
    assert_string_equal(g.title, "Weird server reply");
}

/* A trailer line with no colon (one named like a status line): libcurl
   7.88.1 fails the transfer (curl 43, "Failed reading the chunked-encoded
   stream"), its body read whole; a folded trailer line it takes. */
static void trailer_without_colon(void **state)
{
    const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n";
    char raw[256];
    got g;

    (void)state;
    snprintf(raw, sizeof raw, "%sHTTP/1.1 200 OK\r\n\r\n", chunked);
    failed(raw, "Failed reading the chunked-encoded stream");
    snprintf(raw, sizeof raw, "%sX-A: 1\r\nno colon\r\nX-B: 2\r\n\r\n", chunked);
    failed(raw, "Failed reading the chunked-encoded stream");
    failed("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\n{}\n0\nHTTP/1.1 200 OK\n\n",
           "Failed reading the chunked-encoded stream");
    /* taken: a colon anywhere, an empty name, a folded line */
    snprintf(raw, sizeof raw, "%sHTTP/1.1 200 OK: x\r\n: v\r\nX-A: 1\r\n b\r\n\tc\r\n\r\n", chunked);
    g = both(raw, 0);
    assert_int_equal(g.state, MAPI_H1_DONE);
    assert_string_equal(g.body, "{}");
    assert_int_equal(g.nheaders, 1);
}

/* Feeds `n` bytes of c at a time, `times` times: the state after. */
static mapi_h1_state flood(mapi_h1_reader *r, char c, size_t n, size_t times)
{
    char *block = malloc(n);
    mapi_h1_state st = MAPI_H1_MORE;
    size_t i;

    assert_non_null(block);
    memset(block, c, n);
    for (i = 0; i < times && st == MAPI_H1_MORE; i++)
        st = mapi_h1_feed(r, block, n);
    free(block);
    return st;
}

static void caps(void **state)
{
    mapi_h1_reader *r;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_response *res = NULL;
    const char *head = "HTTP/1.1 200 OK\r\nX-Long: ";
    const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    char title[64];
    size_t i;

    (void)state;
    /* a header line of 2 MiB: refused at libcurl's 100 KiB line cap */
    r = mapi_h1_reader_new(0, 1000);
    mapi_h1_feed(r, head, strlen(head));
    assert_int_equal(flood(r, 'l', 4096, 512), MAPI_H1_ENDED);
    assert_int_equal(mapi_h1_result(r, &res, &err), -1);
    assert_string_equal(err.title, "response header line too long");
    assert_int_equal(err.status, 200);
    mapi_error_clear(&err);
    mapi_h1_reader_free(r);

    /* a head of many lines past 256 KiB */
    r = mapi_h1_reader_new(0, 1000);
    mapi_h1_feed(r, "HTTP/1.1 200 OK\r\n", 17);
    for (i = 0; i < 20000 && mapi_h1_state_of(r) == MAPI_H1_MORE; i++)
        mapi_h1_feed(r, "X-Many: 0123456789\r\n", 20);
    assert_int_equal(mapi_h1_state_of(r), MAPI_H1_ENDED);
    assert_true(i * 20 < MAPI_MAX_HEADER_BYTES + 100);
    assert_int_equal(mapi_h1_result(r, &res, &err), -1);
    snprintf(title, sizeof title, "response headers over %d bytes", MAPI_MAX_HEADER_BYTES);
    assert_string_equal(err.title, title);
    mapi_error_clear(&err);
    mapi_h1_reader_free(r);

    /* a chunk-size line of 2 MiB of zeros: failed after 16 digits */
    r = mapi_h1_reader_new(0, 1000);
    mapi_h1_feed(r, chunked, strlen(chunked));
    assert_int_equal(flood(r, '0', 4096, 512), MAPI_H1_ENDED);
    mapi_h1_reader_free(r);
    /* a chunk extension of 2 MiB: failed past 4096 bytes */
    r = mapi_h1_reader_new(0, 1000);
    mapi_h1_feed(r, chunked, strlen(chunked));
    mapi_h1_feed(r, "2;", 2);
    assert_int_equal(flood(r, 'e', 1024, 2048), MAPI_H1_ENDED);
    mapi_h1_reader_free(r);
    /* trailers count with the head */
    r = mapi_h1_reader_new(0, 1000);
    mapi_h1_feed(r, chunked, strlen(chunked));
    mapi_h1_feed(r, "0\r\nX-T: ", 8);
    assert_int_equal(flood(r, 't', 4096, 512), MAPI_H1_ENDED);
    assert_int_equal(mapi_h1_result(r, &res, &err), -1);
    assert_string_equal(err.title, title);
    mapi_error_clear(&err);
    mapi_h1_reader_free(r);

    /* max_body: a Content-Length over it refused before any byte of body;
       a chunked or close-delimited body when it passes */
    for (i = 0; i < 3; i++) {
        static const char *const heads[] = {
            "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n",
            "HTTP/1.1 200 OK\r\n\r\n"};
        mapi_h1_state st;
        r = mapi_h1_reader_new(0, 10);
        st = mapi_h1_feed(r, heads[i], strlen(heads[i]));
        if (st == MAPI_H1_MORE)
            st = mapi_h1_feed(r, "01234567890", 11);
        assert_int_equal(st, MAPI_H1_ENDED);
        assert_int_equal(mapi_h1_result(r, &res, &err), -1);
        assert_int_equal(err.kind, MAPI_ERR_DECODE);
        assert_string_equal(err.title, "body over max_body (10 bytes)");
        mapi_error_clear(&err);
        mapi_h1_reader_free(r);
    }
    /* exactly max_body: read */
    assert_int_equal(read_answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", 49, 0,
                                 0, 0, 10).state,
                     MAPI_H1_DONE);
}

/* A reader reset once its answer was taken reads the next answer as a new
   one would: nothing of the last (a fault, bytes after it, a close, HEAD)
   left; one whose answer was not taken is not reset. */
static void reset(void **state)
{
    static const char *const lasts[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", /* refused */
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  /* failed */
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy",                 /* bytes after */
        "HTTP/1.0 200 OK\r\nContent-Length: 5\r\nA: 1\r\n\r\n",           /* HEAD, 1.0 */
    };
    const char *next = "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nX-Request-Id: r2"
                       "\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    size_t i;

    (void)state;
    for (i = 0; i < sizeof lasts / sizeof lasts[0]; i++) {
        mapi_h1_reader *r = mapi_h1_reader_new(i == 3, 1000);
        mapi_error err = MAPI_ERROR_INIT;
        mapi_response *res = NULL;

        assert_non_null(r);
        mapi_h1_feed(r, lasts[i], strlen(lasts[i]));
        assert_int_equal(mapi_h1_reader_reset(r, 0, 1000), 1); /* not taken: kept */
        assert_non_null(mapi_h1_response(r));
        if (mapi_h1_result(r, &res, &err) == 0)
            mapi_response_free(res);
        mapi_error_clear(&err);
        res = NULL;
        assert_int_equal(mapi_h1_reader_reset(r, 0, 1000), 0);
        assert_int_equal(mapi_h1_feed(r, next, strlen(next)), MAPI_H1_DONE);
        assert_int_equal(mapi_h1_keep_alive(r), 1);
        assert_int_equal(mapi_h1_result(r, &res, &err), 0);
        assert_int_equal(res->status, 201);
        assert_int_equal(res->nheaders, 2);
        assert_int_equal(res->len, 2);
        assert_memory_equal(res->body, "ok", 2);
        assert_string_equal(mapi_response_header(res, "x-request-id"), "r2");
        mapi_response_free(res);
        mapi_h1_reader_free(r);
    }
    { /* after a long line (its room let go): the same */
        static char longer[12000];
        mapi_h1_reader *r = mapi_h1_reader_new(0, 1000);
        mapi_error err = MAPI_ERROR_INIT;
        mapi_response *res = NULL;
        int n = snprintf(longer, sizeof longer, "HTTP/1.1 200 OK\r\nX-Long: %0*d\r\n"
                         "Content-Length: 0\r\n\r\n", 10000, 7);

        assert_non_null(r);
        assert_int_equal(mapi_h1_feed(r, longer, (size_t)n), MAPI_H1_DONE);
        assert_int_equal(mapi_h1_result(r, &res, &err), 0);
        assert_int_equal(strlen(mapi_response_header(res, "x-long")), 10000);
        mapi_response_free(res);
        res = NULL;
        assert_int_equal(mapi_h1_reader_reset(r, 0, 1000), 0);
        assert_int_equal(mapi_h1_feed(r, next, strlen(next)), MAPI_H1_DONE);
        assert_int_equal(mapi_h1_result(r, &res, &err), 0);
        assert_int_equal(res->nheaders, 2);
        assert_string_equal(mapi_response_header(res, "x-request-id"), "r2");
        mapi_response_free(res);
        mapi_h1_reader_free(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answers),
        cmocka_unit_test(keep_alive),
        cmocka_unit_test(framing_faults),
        cmocka_unit_test(transport_faults),
        cmocka_unit_test(unreadable_length),
        cmocka_unit_test(trailer_without_colon),
        cmocka_unit_test(caps),
        cmocka_unit_test(reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_framing.c -- the framing rule of src/framing.c, the one every
 * transport meets: Content-Length values that disagree or are not numbers,
 * Content-Length with Transfer-Encoding, codings other than chunked, and
 * whole answers (a Lua transport's) whose body is shorter (transport) or
 * longer (decode) than their Content-Length.  No server: the rule alone.
 * (test_http.c shows it on libcurl's path, spec/faults/framing_spec.lua over
 * the cosocket transport and a custom one.)
 */
#include "testutil.h"

/* The framing of a head given as "Name: value" lines (NULL-terminated). */
static mapi_framing head(const char *const *lines)
{
    mapi_framing f;

    mapi_framing_init(&f);
    for (; *lines; lines++) {
        const char *colon = strchr(*lines, ':');
        assert_non_null(colon);
        mapi_framing_field(&f, *lines, (size_t)(colon - *lines), colon + 1, strlen(colon + 1));
    }
    return f;
}

#define HEAD(...) head((const char *const[]){__VA_ARGS__, NULL})

static void lengths(void **state)
{
    mapi_framing f;

    (void)state;
    f = HEAD("Content-Length: 42");
    assert_null(mapi_framing_title(&f));
    assert_true(f.has_length);
    assert_true(f.length == 42);
    assert_false(f.chunked);

    /* leading zeros, spaces and tabs around: one number */
    f = HEAD("CONTENT-LENGTH:  042 \t");
    assert_null(mapi_framing_title(&f));
    assert_true(f.length == 42);

    /* a second field, even an equal one, and a list, even of equal numbers:
       refused (RFC 9110 8.6 lets a recipient; llhttp does) */
    f = HEAD("Content-Length: 42", "Content-Length: 43");
    assert_string_equal(mapi_framing_title(&f), "conflicting Content-Length headers");
    f = HEAD("content-length: 42", "Content-Length: 42");
    assert_string_equal(mapi_framing_title(&f), "conflicting Content-Length headers");
    f = HEAD("Content-Length: 42, 43");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    f = HEAD("Content-Length: 2, 2");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");

    f = HEAD("Content-Length: abc");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    f = HEAD("Content-Length: -1");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    f = HEAD("Content-Length: 4 2");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    f = HEAD("Content-Length:");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    f = HEAD("Content-Length: 42,");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    f = HEAD("Content-Length: 123456789012345678901234"); /* 24 digits */
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    /* over 64 bits: refused (as llhttp); 2^64 - 1 is a number */
    f = HEAD("Content-Length: 18446744073709551616");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
    f = HEAD("Content-Length: 018446744073709551615");
    assert_null(mapi_framing_title(&f));
    assert_true(f.length == MAPI_FRAMING_LENGTH_MAX);

    /* the first fault stays, whatever follows */
    f = HEAD("Content-Length: x", "Content-Length: 1", "Content-Length: 2");
    assert_string_equal(mapi_framing_title(&f), "invalid Content-Length header");
}

static void codings(void **state)
{
    mapi_framing f;

    (void)state;
    f = HEAD("Transfer-Encoding: chunked");
    assert_null(mapi_framing_title(&f));
    assert_true(f.chunked);
    assert_false(f.has_length);
    f = HEAD("transfer-encoding:  Chunked ");
    assert_null(mapi_framing_title(&f));
    assert_true(f.chunked);

    f = HEAD("Transfer-Encoding: gzip, chunked");
    assert_string_equal(mapi_framing_title(&f), "unsupported Transfer-Encoding (only chunked)");
    f = HEAD("Transfer-Encoding: gzip");
    assert_string_equal(mapi_framing_title(&f), "unsupported Transfer-Encoding (only chunked)");
    f = HEAD("Transfer-Encoding: chunked, chunked");
    assert_string_equal(mapi_framing_title(&f), "unsupported Transfer-Encoding (only chunked)");
    f = HEAD("Transfer-Encoding: chunked", "Transfer-Encoding: chunked");
    assert_string_equal(mapi_framing_title(&f), "unsupported Transfer-Encoding (only chunked)");
    f = HEAD("Transfer-Encoding: ");
    assert_string_equal(mapi_framing_title(&f), "unsupported Transfer-Encoding (only chunked)");
    f = HEAD("Transfer-Encoding: chunkedx");
    assert_string_equal(mapi_framing_title(&f), "unsupported Transfer-Encoding (only chunked)");

    /* RFC 9112 6.3: both is ambiguous, in either order */
    f = HEAD("Content-Length: 5", "Transfer-Encoding: chunked");
    assert_string_equal(mapi_framing_title(&f), "Content-Length and Transfer-Encoding together");
    f = HEAD("Transfer-Encoding: chunked", "Content-Length: 5");
    assert_string_equal(mapi_framing_title(&f), "Content-Length and Transfer-Encoding together");

    /* other headers are not the rule's */
    f = HEAD("Content-Type: text/plain", "Content-Length-X: nope", "X-Transfer-Encoding: gzip");
    assert_null(mapi_framing_title(&f));
    assert_false(f.has_length);
}

/* A response as a Lua transport hands it: status, headers, body. */
static mapi_response *answer(int status, const char *const *headers, const char *body)
{
    mapi_response *res = mapi_response_new();
    size_t len = strlen(body);

    assert_non_null(res);
    res->status = status;
    for (; *headers; headers += 2)
        assert_int_equal(mapi_response_add_header(res, headers[0], strlen(headers[0]),
                                                  headers[1], strlen(headers[1])),
                         0);
    res->body = malloc(len + MAPI_JSON_PADDING);
    assert_non_null(res->body);
    memcpy(res->body, body, len + 1);
    res->len = len;
    res->cap = len + MAPI_JSON_PADDING;
    return res;
}

#define ANSWER(status, body, ...) answer(status, (const char *const[]){__VA_ARGS__, NULL}, body)

static void whole_answers(void **state)
{
    mapi_error err = MAPI_ERROR_INIT;
    mapi_response *res;

    (void)state;
    res = ANSWER(200, "{}", "Content-Length", "2", "X-Request-Id", "r1");
    assert_int_equal(mapi_response_framed(res, "GET", &err), 0);
    mapi_response_free(res);
    res = ANSWER(200, "{}", "Transfer-Encoding", "chunked");
    assert_int_equal(mapi_response_framed(res, "GET", &err), 0);
    mapi_response_free(res);
    res = ANSWER(200, "{}", "X-Request-Id", "r1"); /* delimited by the close */
    assert_int_equal(mapi_response_framed(res, "GET", &err), 0);
    mapi_response_free(res);
    /* no body to measure: HEAD, 204, 304 */
    res = ANSWER(200, "", "Content-Length", "99");
    assert_int_equal(mapi_response_framed(res, "HEAD", &err), 0);
    mapi_response_free(res);
    res = ANSWER(304, "", "Content-Length", "99");
    assert_int_equal(mapi_response_framed(res, "GET", &err), 0);
    mapi_response_free(res);

    /* a refused head: DECODE, the head kept, outcome UNKNOWN */
    res = ANSWER(201, "{}", "Content-Length", "2", "Content-Length", "3", "X-Request-Id", "r2");
    assert_int_equal(mapi_response_framed(res, "PUT", &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "conflicting Content-Length headers");
    assert_int_equal(err.status, 201);
    assert_string_equal(err.request_id, "r2");
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_ptr_equal(err.response, res);
    mapi_error_clear(&err);

    res = ANSWER(200, "{}", "Content-Length", "2", "Transfer-Encoding", "chunked");
    assert_int_equal(mapi_response_framed(res, "HEAD", &err), -1); /* a head's rule */
    assert_string_equal(err.title, "Content-Length and Transfer-Encoding together");
    mapi_error_clear(&err);

    /* shorter than its Content-Length: the connection ended first */
    res = ANSWER(200, "{\"da", "Content-Length", "38", "X-Request-Id", "r3");
    assert_int_equal(mapi_response_framed(res, "GET", &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_TRANSPORT);
    assert_string_equal(err.title, "body cut short");
    assert_string_equal(err.detail, "4 of 38 bytes");
    assert_int_equal(err.retryable, 1);
    assert_int_equal(err.outcome, MAPI_OUTCOME_UNKNOWN);
    assert_string_equal(err.request_id, "r3");
    assert_null(err.response);
    mapi_error_clear(&err);

    /* longer: the framing lies */
    res = ANSWER(200, "{}{}", "Content-Length", "2");
    assert_int_equal(mapi_response_framed(res, "GET", &err), -1);
    assert_int_equal(err.kind, MAPI_ERR_DECODE);
    assert_string_equal(err.title, "body longer than its Content-Length");
    mapi_error_clear(&err);
}

/* Head lines that are not "name: value": refused as llhttp refuses them. */
static void lines(void **state)
{
    static const char *const good[] = {"X: 1", "X:", ": x", "X Y: 1", "X: a\x01b", "X: a:b"};
    static const char *const bad[] = {"no colon", " folded", "\tfolded", "X/Y: 1", "X(Y): 1",
                                      "HTTP/1.1: x", "X\x01: 1", "X: a\rb"};
    mapi_framing f;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof good / sizeof *good; i++) {
        mapi_framing_init(&f);
        assert_int_equal(mapi_framing_line(&f, good[i], strlen(good[i])), 0);
        assert_null(mapi_framing_title(&f));
    }
    for (i = 0; i < sizeof bad / sizeof *bad; i++) {
        mapi_framing_init(&f);
        assert_int_equal(mapi_framing_line(&f, bad[i], strlen(bad[i])), -1);
        assert_string_equal(mapi_framing_title(&f), "malformed response header line");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lengths),
        cmocka_unit_test(lines),
        cmocka_unit_test(codings),
        cmocka_unit_test(whole_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

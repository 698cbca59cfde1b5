/*
 * test_fork.c -- a client used on both sides of fork(): the child never
 * reuses the parent's kept-alive connection (it opens its own), each side
 * gets the answers to its own requests, and the parent's connection keeps
 * working -- the same one -- while the child runs, after it exits, and
 * after a child that only freed the client.  Over plain HTTP and over TLS
 * (HTTP/2 when the sandbox offers it), where a close_notify sent by the
 * child would end the parent's connection.
 *
 * The sandbox's echo route tells which connection a request came on
 * (meta.connection, nginx's serial number) and the path it saw.
 *
 * The fork guard's list holds the blocking calls' connection: the socket
 * a child gives up (pointed at /dev/null) before libcurl lets it go.
 *
 * A traced client's ids after fork(): the child's are not its parent's.
 */
#include "testutil.h"
#include "http.h" /* the fork guard: mapi_http_has_socket */

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>
#ifdef __linux__
#include <linux/tcp.h>
#endif

/* ---- the parent's connection, seen from the kernel ---- */

/* The one TCP socket of this process connected to port `port` (the
   client's kept-alive connection), or -1 (none, or several). */
static int connection_fd(long port)
{
    int fd, found = -1, n = 0;

    for (fd = 3; fd < 1024; fd++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        long p = -1;
        if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
            continue;
        if (ss.ss_family == AF_INET)
            p = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            p = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        if (p == port) {
            found = fd;
            n++;
        }
    }
    return n == 1 ? found : -1;
}

/* Bytes the kernel has sent on socket fd (TCP_INFO, Linux 4.19+), or -1
   where that cannot be known: the check is then skipped.  A child that
   wrote on the parent's connection (a request, a TLS close_notify, an
   HTTP/2 GOAWAY) shows here, whatever the server does about it. */
static long long bytes_sent(int fd)
{
#if defined(__linux__)
    struct tcp_info ti;
    socklen_t len = sizeof ti;

    memset(&ti, 0, sizeof ti);
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof ti.tcpi_bytes_sent)
        return -1;
    return (long long)ti.tcpi_bytes_sent;
#else
    (void)fd;
    return -1;
#endif
}

/* Whether the fork guard of client c lists socket fd: one of the sockets of
   its blocking calls' connections, which a child gives up without a byte on
   them before libcurl closes its copies (http.c). */
static int guard_knows(mapi_client *c, int fd)
{
    mapi_client_parts parts;

    mapi_client_parts_get(c, &parts);
    return mapi_http_has_socket(parts.http, fd);
}

/* Child exit codes (0: every check passed). */
enum {
    CHILD_OK = 0,
    CHILD_CALL_FAILED = 10,   /* a call failed, or answered another path */
    CHILD_REUSED_PARENTS = 11, /* the child's request came on the parent's connection */
    CHILD_NO_KEEPALIVE = 12,   /* the child's second request came on yet another connection */
    CHILD_PAGES_FAILED = 13,
    CHILD_PIPE = 14
};

/* GET <base>/api/public/v1/echo/<tag>: 0 with the connection it came on
   when the sandbox saw exactly that path, else -1.  No cmocka here: it runs
   in children too. */
static int echo(mapi_client *c, const char *tag, int64_t *conn)
{
    char path[128], want[128];
    mapi_doc *doc = NULL;
    mapi_error err = MAPI_ERROR_INIT;
    const char *got;
    int ok;

    snprintf(path, sizeof path, "/api/public/v1/echo/%s", tag);
    snprintf(want, sizeof want, "/api/public/v1/echo/%s", tag);
    if (mapi_request(c, "GET", path, NULL, 0, &doc, &err) != 0) {
        fprintf(stderr, "[%ld] echo %s: %s\n", (long)getpid(), tag,
                err.message ? err.message : "?");
        mapi_error_clear(&err);
        return -1;
    }
    got = mapi_value_string(mapi_resource_attr(mapi_doc_data(doc, 0), "path"), NULL);
    ok = got && strcmp(got, want) == 0 &&
         mapi_value_int64(mapi_value_get(mapi_doc_meta(doc), "connection"), conn) == 0;
    if (!ok)
        fprintf(stderr, "[%ld] echo %s: got path %s\n", (long)getpid(), tag, got ? got : "?");
    mapi_doc_free(doc);
    return ok ? 0 : -1;
}

static void parent_echo(mapi_client *c, const char *tag, int64_t *conn)
{
    if (echo(c, tag, conn) != 0)
        fail_msg("parent: echo %s failed", tag);
}

/* The exit code of child pid. */
static int child_status(pid_t pid)
{
    int st = 0;

    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Child A: calls while the parent calls too (in lock step through pipes). */
static int child_calls(mapi_client *c, int64_t parent_conn, int to_parent, int from_parent)
{
    int64_t c1 = 0, c2 = 0;
    char byte = 'x';

    if (echo(c, "child-1", &c1) != 0)
        return CHILD_CALL_FAILED;
    if (c1 == parent_conn)
        return CHILD_REUSED_PARENTS;
    /* the parent calls now, on its connection, while this one stays open */
    if (write(to_parent, &byte, 1) != 1 || read(from_parent, &byte, 1) != 1)
        return CHILD_PIPE;
    if (echo(c, "child-2", &c2) != 0)
        return CHILD_CALL_FAILED;
    if (c2 != c1)
        return CHILD_NO_KEEPALIVE;
    mapi_client_free(c);
    return CHILD_OK;
}

/* Child C: its first call is a concurrent page fetch (the multi handle). */
static int child_pages(mapi_client *c, int64_t parent_conn)
{
    mapi_page_params p;
    mapi_doc *docs[3] = {NULL, NULL, NULL};
    mapi_error errs[3] = {MAPI_ERROR_INIT, MAPI_ERROR_INIT, MAPI_ERROR_INIT};
    int64_t conn = 0;
    int i, rc = CHILD_OK;

    memset(&p, 0, sizeof p);
    p.per_page = 5;
    if (mapi_list_addresses_pages(c, "acct-22", &p, 1, 3, 3, docs, errs) != 0)
        rc = CHILD_PAGES_FAILED;
    for (i = 0; i < 3; i++) {
        if (rc == CHILD_OK && mapi_doc_data_count(docs[i]) != 5)
            rc = CHILD_PAGES_FAILED;
        mapi_doc_free(docs[i]);
        mapi_error_clear(&errs[i]);
    }
    if (rc == CHILD_OK && echo(c, "child-pages", &conn) != 0)
        rc = CHILD_CALL_FAILED;
    if (rc == CHILD_OK && conn == parent_conn)
        rc = CHILD_REUSED_PARENTS;
    mapi_client_free(c);
    return rc;
}

/* Nothing was sent on the parent's connection since `before` was read. */
static void assert_untouched(int fd, long long before, const char *when)
{
    long long now = bytes_sent(fd);

    if (before >= 0 && now != before)
        fail_msg("%s: %lld bytes went out on the parent's connection", when, now - before);
}

static void fork_with_warm_client(const char *base, long port, const char *cafile)
{
    int fd;
    long long sent;
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;
    int64_t p1 = 0, conn = 0;
    int to_parent[2], from_parent[2];
    char byte;
    pid_t pid;

    mapi_config_init(&cfg);
    cfg.base_url = base;
    cfg.api_key = tu_api_key();
    cfg.cafile = cafile;
    cfg.max_retries = 0; /* a request that fails shows, never hidden by a retry */
    c = mapi_client_new(&cfg, &err);
    if (!c)
        fail_msg("mapi_client_new: %s", err.message ? err.message : "?");

    /* warm: one connection, kept alive */
    parent_echo(c, "parent-1", &p1);
    parent_echo(c, "parent-2", &conn);
    assert_int_equal(conn, p1);
    fd = connection_fd(port);
    assert_true(fd >= 0); /* exactly one connection to the sandbox */
    if (!guard_knows(c, fd))
        fail_msg("the fork guard does not list the blocking calls' connection (fd %d)", fd);
    if (bytes_sent(fd) < 0)
        fprintf(stderr, "no TCP_INFO bytes counter here: the connection numbers only\n");
    fflush(NULL);

    /* A: the child calls, the parent calls in between, on its own connection */
    assert_int_equal(pipe(to_parent), 0);
    assert_int_equal(pipe(from_parent), 0);
    sent = bytes_sent(fd);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(to_parent[0]);
        close(from_parent[1]);
        _exit(child_calls(c, p1, to_parent[1], from_parent[0]));
    }
    close(to_parent[1]); /* a child that ends early is then an EOF here, not a hang */
    close(from_parent[0]);
    if (read(to_parent[0], &byte, 1) != 1)
        fail_msg("child A ended before its second call: exit %d", child_status(pid));
    assert_untouched(fd, sent, "child A's first call");
    parent_echo(c, "parent-3", &conn);
    assert_int_equal(conn, p1);
    sent = bytes_sent(fd);
    assert_int_equal(write(from_parent[1], &byte, 1), 1);
    close(to_parent[0]);
    close(from_parent[1]);
    assert_int_equal(child_status(pid), CHILD_OK);
    assert_untouched(fd, sent, "child A's second call and mapi_client_free");
    parent_echo(c, "parent-4", &conn); /* after the child's exit */
    assert_int_equal(conn, p1);

    /* B: a child that only frees the client must leave the connection alone */
    fflush(NULL);
    sent = bytes_sent(fd);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        mapi_client_free(c);
        _exit(CHILD_OK);
    }
    assert_int_equal(child_status(pid), CHILD_OK);
    assert_untouched(fd, sent, "child B's mapi_client_free");
    parent_echo(c, "parent-5", &conn);
    assert_int_equal(conn, p1);
    assert_int_equal(connection_fd(port), fd); /* the same socket, still listed */
    assert_true(guard_knows(c, fd));

    /* C: a child whose first call is the concurrent page fetch */
    fflush(NULL);
    sent = bytes_sent(fd);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_pages(c, p1));
    assert_int_equal(child_status(pid), CHILD_OK);
    assert_untouched(fd, sent, "child C's pages");
    parent_echo(c, "parent-6", &conn);
    assert_int_equal(conn, p1);

    mapi_client_free(c);
}

static void fork_over_http(void **state)
{
    const char *port = tu_env("SANDBOX_PORT", NULL);
    const char *colon;
    (void)state;
    TU_NEED_SANDBOX();
    colon = strrchr(tu_base_url(), ':');
    fork_with_warm_client(tu_base_url(), colon ? strtol(colon + 1, NULL, 10) :
                                         port ? strtol(port, NULL, 10) : 80, NULL);
}

static void fork_over_tls(void **state)
{
    const char *port = tu_env("SANDBOX_PORT", NULL);
    const char *tls_port = tu_env("SANDBOX_TLS_PORT", NULL);
    const char *prefix = tu_env("SANDBOX_PREFIX", NULL);
    char base[128], cafile[1024];
    long plain, tls;
    (void)state;
    TU_NEED_SANDBOX();
    if (!port || !prefix) {
        fprintf(stderr, "SANDBOX_PORT / SANDBOX_PREFIX unset: no TLS port known\n");
        skip();
    }
    plain = strtol(port, NULL, 10); /* sandbox/README.md: how the TLS port follows it */
    tls = tls_port ? strtol(tls_port, NULL, 10) : plain == 8089 ? 8443 : plain + 1000;
    snprintf(base, sizeof base, "https://localhost:%ld", tls);
    assert_true((size_t)snprintf(cafile, sizeof cafile, "%s/tls/ca.pem", prefix) <
                sizeof cafile);
    fork_with_warm_client(base, tls, cafile);
}

/* ---- trace ids on both sides of fork() ---- */

/* The ids of a call's last attempt, from the observer. */
typedef struct ids {
    char trace[33], span[17];
} ids;

static void last_ids(void *ctx, mapi_attempt_event ev, const mapi_attempt_info *in)
{
    ids *s = ctx;

    if (ev == MAPI_ATTEMPT_RESPONSE && in->trace_id && in->span_id) {
        snprintf(s->trace, sizeof s->trace, "%s", in->trace_id);
        snprintf(s->span, sizeof s->span, "%s", in->span_id);
    }
}

/* One traced call; 0 when it came and its ids were seen. */
static int traced_call(mapi_client *c, ids *s, const char *tag)
{
    int64_t conn = 0;

    memset(s, 0, sizeof *s);
    return echo(c, tag, &conn) == 0 && s->span[0] ? 0 : -1;
}

/* A client (trace = 1) seeds its generator in the parent; after fork()
   the child and the parent each make a traced call: their trace and span
   ids differ (the child draws a new seed, trace.c). */
static void fork_trace_ids(void **state)
{
    mapi_config cfg;
    mapi_error err = MAPI_ERROR_INIT;
    mapi_client *c;
    ids mine, theirs;
    int fds[2];
    pid_t pid;
    (void)state;
    TU_NEED_SANDBOX();
    mapi_config_init(&cfg);
    cfg.base_url = tu_base_url();
    cfg.api_key = tu_api_key();
    cfg.trace = 1;
    c = mapi_client_new(&cfg, &err);
    assert_non_null(c);
    mapi_client_set_observer(c, last_ids, &mine);
    assert_int_equal(traced_call(c, &mine, "trace-before"), 0); /* the seed is drawn */
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int ok;
        close(fds[0]);
        ok = traced_call(c, &mine, "trace-child") == 0 &&
             write(fds[1], &mine, sizeof mine) == (ssize_t)sizeof mine;
        _exit(ok ? CHILD_OK : CHILD_CALL_FAILED);
    }
    close(fds[1]);
    assert_int_equal(traced_call(c, &mine, "trace-parent"), 0);
    assert_int_equal(read(fds[0], &theirs, sizeof theirs), (ssize_t)sizeof theirs);
    close(fds[0]);
    assert_int_equal(child_status(pid), CHILD_OK);
    assert_string_not_equal(mine.span, theirs.span);
    assert_string_not_equal(mine.trace, theirs.trace);
    mapi_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fork_over_http),
        cmocka_unit_test(fork_over_tls),
        cmocka_unit_test(fork_trace_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

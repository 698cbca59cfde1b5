/*
 * http_loop.c -- the libcurl layer's event loops: transfers of a client's
 * requests on a loop's multis, driven by a host's event loop (loop.c) or
 * waited for by the client's pages (pages.c; a client keeps one loop for
 * them, mapi_http_client_loop, made and owned here).  libcurl's multi socket interface:
 * CURLMOPT_SOCKETFUNCTION says which sockets to watch for what,
 * CURLMOPT_TIMERFUNCTION when to call back without I/O; an epoll set of our
 * own holds the sockets, so the whole loop is one descriptor (readable when
 * a socket is) and one deadline.  Each transfer duplicates its client's
 * easy handle, on its share (DNS cache and TLS sessions); connections are
 * the loop's own, in two multis (struct loop_lane).
 */
#define _GNU_SOURCE /* epoll_pwait2: a wait to the microsecond */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "http_private.h"

/* ---- one transfer of an event loop ---- */

struct mapi_http_transfer {
    mapi_http *h;               /* whose easy handle it duplicates (its spare, if any) */
    CURL *easy;
    struct curl_slist *headers; /* mapi_http_request_headers': the transfer's list */
    transfer t;
    void *data;                 /* the driver's */
    int lane;                   /* which of its multis (LANE_MULTIPLEX, LANE_HTTP1) */
    mapi_http_transfer *prev, *next; /* in loop->running */
    int multi_failed;           /* the CURLMcode that ended it with its multi, or 0 */
    CURLcode code;              /* once done: libcurl's result */
    char errbuf[CURL_ERROR_SIZE];
};

/* err for a multi call that failed with mc: MEMORY, or TRANSPORT "libcurl
   multi: ..." with outcome.  Always -1. */
static int multi_failed(CURLMcode mc, mapi_outcome outcome, mapi_error *err)
{
    if (mc == CURLM_OUT_OF_MEMORY)
        return mapi_error_oom(err);
    mapi_error_set(err, MAPI_ERR_TRANSPORT, "libcurl multi: %s", curl_multi_strerror(mc));
    if (err && err->kind == MAPI_ERR_TRANSPORT)
        err->outcome = outcome;
    return -1;
}

/* Frees x, once off its multi (or never added). */
static void transfer_free(mapi_http_transfer *x)
{
    if (!x)
        return;
    if (x->easy && !x->h->spare && x->h->pid == getpid()) {
        /* kept for the client's next transfer (its multi removed it first) */
        mapi_http_set_transfer(x->easy, NULL);
        curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->h->headers);
        curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, (char *)NULL);
        curl_easy_setopt(x->easy, CURLOPT_PRIVATE, (void *)NULL);
        x->h->spare = x->easy;
    } else if (x->easy) {
        curl_easy_cleanup(x->easy);
    }
    mapi_http_free_request_headers(x->h, x->headers);
    mapi_response_free(x->t.res);
    free(x);
}

/* A transfer of req over h's settings, carrying data (the driver's); NULL
   with err (MEMORY, TRANSPORT for an option libcurl refused).  Nothing is
   sent until it is added to a loop's multi. */
static mapi_http_transfer *transfer_new(mapi_http *h, const mapi_attempt_request *req, void *data,
                                        mapi_error *err)
{
    mapi_http_transfer *x = calloc(1, sizeof *x);
    CURLcode rc = CURLE_OK;
    int oom;

    if (!x)
        return mapi_error_oom(err), NULL;
    x->h = h;
    x->data = data;
    x->t.max_body = h->max_body;
    x->headers = mapi_http_request_headers(h, req, &oom);
    x->t.res = oom ? NULL : mapi_response_new();
    /* every option of the client's handle: headers, TLS, timeouts, callbacks;
       a spare one (an earlier transfer's) has them too, and only the options
       set below and by set_request / set_transfer changed */
    if (x->t.res && h->spare) {
        x->easy = h->spare; /* on h->share already */
        h->spare = NULL;
    } else {
        x->easy = x->t.res ? curl_easy_duphandle(h->easy) : NULL;
        if (x->easy)
            rc = curl_easy_setopt(x->easy, CURLOPT_SHARE, h->share); /* not duplicated */
    }
    if (!x->easy) {
        transfer_free(x);
        return mapi_error_oom(err), NULL;
    }
#define SET(opt, val) MAPI_SETOPT(rc, x->easy, opt, val)
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    SET(CURLOPT_PRIVATE, (void *)x);
    SET(CURLOPT_PIPEWAIT, 1L); /* HTTP/2: wait to multiplex on one connection */
    SET(CURLOPT_HTTPHEADER, x->headers);
#undef SET
    if (rc == CURLE_OK)
        rc = (CURLcode)mapi_http_set_request(x->easy, req, h->timeout_ms);
    if (rc == CURLE_OK)
        rc = mapi_http_set_transfer(x->easy, &x->t);
    if (rc != CURLE_OK) {
        transfer_free(x);
        return mapi_http_option_refused(rc, err), NULL;
    }
    return x;
}

int mapi_http_transfer_result(mapi_http_transfer *x, mapi_response **out, mapi_error *err)
{
    int rc;

    *out = NULL;
    if (x->multi_failed) {
        /* ended by its multi's failure (mapi_http_loop_wait): requests may
           have left, and the multi's state is not to be trusted for a retry */
        mapi_http_set_transfer(x->easy, NULL);
        mapi_response_free(x->t.res);
        x->t.res = NULL;
        return multi_failed((CURLMcode)x->multi_failed, MAPI_OUTCOME_UNKNOWN, err);
    }
    rc = mapi_http_finish(x->easy, &x->t, x->code, 1, x->errbuf, x->t.max_body, out, err);
    x->t.res = NULL; /* handed over to *out or err, or freed */
    return rc;
}

/* ---- the loop ---- */

/* Events read from the epoll set per epoll_wait. */
#define LOOP_EVENTS 64

/* A loop's two multis: the transfers that speak HTTP/1.1 only
   (mapi_http_http1_only) run on one of their own, where none may multiplex
   (docs/decisions.md: libcurl 7.88 put a second transfer on an HTTP/1.1
   connection in use, and two pages read each other's answers). */
enum { LANE_MULTIPLEX = 0, LANE_HTTP1 = 1, LANES = 2 };

struct loop_lane {
    struct mapi_http_loop *loop;
    CURLM *multi;
    int index;
    double timer_at; /* monotonic seconds when libcurl wants its timeout call; < 0: none */
    int pending;     /* 1: finished transfers may wait in the multi's queue, not collected */
};

struct mapi_http_loop {
    struct loop_lane lanes[LANES];
    struct sock_list socks; /* the sockets of both multis' connections */
    pid_t pid;       /* the process that made it: in a child its connections are the parent's */
    int epfd;        /* the epoll set of both multis' sockets: the loop's descriptor */
    int busy;        /* 1 while libcurl's multis are being driven (not re-entered) */
    int deferred;    /* 1: a budget left ready sockets or a due timer for the next wait */
    mapi_http_transfer *running; /* the transfers added and not removed, newest first */
};

/* CURLMOPT_SOCKETFUNCTION: the socket s of a lane's multi is to be watched
   for what (or no longer).  socketp is non-NULL once s is in the set
   (curl_multi_assign; libcurl forgets it with CURL_POLL_REMOVE): added,
   then modified, with no call that fails; one that closed behind our back
   is already out of the set.  The event carries the lane and the socket. */
static int loop_on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    struct loop_lane *lane = userp;
    mapi_http_loop *l = lane->loop;
    struct epoll_event ev;

    (void)easy;
    if (l->epfd < 0)
        return 0; /* a child's inherited loop being freed: the set is the parent's */
    if (what == CURL_POLL_REMOVE) {
        (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, s, NULL);
        return 0;
    }
    memset(&ev, 0, sizeof ev);
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    ev.data.u64 = ((uint64_t)(unsigned)lane->index << 32) | (uint64_t)(uint32_t)s;
    if (epoll_ctl(l->epfd, socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s, &ev) != 0 &&
        (errno != (socketp ? ENOENT : EEXIST) ||
         epoll_ctl(l->epfd, socketp ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, s, &ev) != 0))
        return -1; /* libcurl fails the transfer */
    if (!socketp)
        curl_multi_assign(lane->multi, s, lane);
    return 0;
}

/* CURLMOPT_TIMERFUNCTION: call curl_multi_socket_action(TIMEOUT) on the
   lane's multi in timeout_ms (-1: the timer is off). */
static int loop_on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    struct loop_lane *lane = userp;

    (void)multi;
    lane->timer_at =
        timeout_ms < 0 ? -1.0 : mapi_monotonic_seconds() + (double)timeout_ms / 1000.0;
    return 0;
}

static CURLMcode lane_init(mapi_http_loop *l, int i)
{
    struct loop_lane *lane = &l->lanes[i];
    CURLMcode mc;

    lane->loop = l;
    lane->index = i;
    lane->timer_at = -1.0;
    lane->multi = curl_multi_init();
    if (!lane->multi)
        return CURLM_OUT_OF_MEMORY;
    mc = curl_multi_setopt(lane->multi, CURLMOPT_SOCKETFUNCTION, loop_on_socket);
    if (mc == CURLM_OK)
        mc = curl_multi_setopt(lane->multi, CURLMOPT_SOCKETDATA, (void *)lane);
    if (mc == CURLM_OK)
        mc = curl_multi_setopt(lane->multi, CURLMOPT_TIMERFUNCTION, loop_on_timer);
    if (mc == CURLM_OK)
        mc = curl_multi_setopt(lane->multi, CURLMOPT_TIMERDATA, (void *)lane);
    if (mc == CURLM_OK && i == LANE_HTTP1) /* nothing on it may share a connection */
        mc = curl_multi_setopt(lane->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    return mc;
}

mapi_http_loop *mapi_http_loop_new(mapi_error *err)
{
    mapi_http_loop *l = calloc(1, sizeof *l);
    CURLMcode mc = CURLM_OK;
    int i;

    if (!l)
        return mapi_error_oom(err), NULL;
    l->pid = getpid();
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return mapi_error_set(err, MAPI_ERR_TRANSPORT, "epoll_create1 failed"), NULL;
    }
    for (i = 0; i < LANES && mc == CURLM_OK; i++)
        mc = lane_init(l, i);
    if (mc != CURLM_OK) {
        mapi_http_loop_free(l);
        return multi_failed(mc, MAPI_OUTCOME_NONE, err), NULL;
    }
    return l;
}

int mapi_http_loop_free(mapi_http_loop *l)
{
    int i;

    if (!l)
        return 0;
    if (l->pid != getpid()) {
        /* in a child: the epoll set is the parent's too (one open
           description), so it is closed before libcurl, cleaning up, would
           take the parent's sockets out of it; the connections are the
           parent's, pointed at /dev/null first (mapi_http_release_inherited) */
        if (l->epfd >= 0)
            close(l->epfd);
        l->epfd = -1;
        if (mapi_http_release_inherited(&l->socks) < 0)
            return -1; /* left unfreed: their fd numbers may be reused */
    }
    for (i = 0; i < LANES; i++)
        if (l->lanes[i].multi)
            curl_multi_cleanup(l->lanes[i].multi);
    if (l->epfd >= 0)
        close(l->epfd);
    free(l->socks.socks);
    free(l);
    return 0;
}

mapi_http_loop *mapi_http_client_loop(mapi_http *h, mapi_error *err)
{
    if (mapi_http_own_process(h, err) < 0) /* in a child: the parent's loop given up */
        return NULL;
    if (!h->pool) {
        h->pool = mapi_http_loop_new(err);
        /* the handle frees it (mapi_http_free, or in a child) through this
           function, before the share its transfers use */
        h->pool_free = h->pool ? mapi_http_loop_free : NULL;
    }
    return h->pool;
}

int mapi_http_loop_fd(const mapi_http_loop *l)
{
    return l->epfd;
}

/* 1 when a lane may hold finished transfers not collected yet. */
static int loop_pending(const mapi_http_loop *l)
{
    return l->lanes[LANE_MULTIPLEX].pending || l->lanes[LANE_HTTP1].pending;
}

double mapi_http_loop_timeout(const mapi_http_loop *l)
{
    double at = -1.0, left;
    int i;

    if (l->deferred || loop_pending(l))
        return 0.0;
    for (i = 0; i < LANES; i++)
        if (l->lanes[i].timer_at >= 0 && (at < 0 || l->lanes[i].timer_at < at))
            at = l->lanes[i].timer_at;
    if (at < 0)
        return -1.0;
    left = at - mapi_monotonic_seconds();
    return left > 0 ? left : 0.0;
}

int mapi_http_loop_add(mapi_http_loop *l, mapi_http *h, const mapi_attempt_request *req,
                       void *private_data, mapi_http_transfer **out, mapi_error *err)
{
    mapi_http_transfer *t;
    CURLMcode mc;

    *out = NULL;
    if (mapi_http_own_process(h, err) < 0)
        return -1;
    if (l->pid != h->pid) { /* h->pid is this process's now */
        mapi_error_set(err, MAPI_ERR_USAGE,
                       "this loop was made before fork(): its connections are the parent's; "
                       "make a loop in this process");
        if (err)
            err->outcome = MAPI_OUTCOME_NOT_SENT;
        return -1;
    }
    t = transfer_new(h, req, private_data, err);
    if (!t)
        return -1;
    t->lane = mapi_http_http1_only(req) ? LANE_HTTP1 : LANE_MULTIPLEX;
    /* the loop's connections: its list of their sockets */
    if (curl_easy_setopt(t->easy, CURLOPT_OPENSOCKETDATA, (void *)&l->socks) != CURLE_OK ||
        curl_easy_setopt(t->easy, CURLOPT_CLOSESOCKETDATA, (void *)&l->socks) != CURLE_OK) {
        transfer_free(t);
        return mapi_error_oom(err);
    }
    /* PIPEWAIT holds a transfer back until a connection being opened shows
       whether it multiplexes: only HTTP/2 over TLS can; over http:// it would
       put the calls of a loop one behind the other */
    if (t->lane == LANE_HTTP1 || strncmp(req->url, "http://", 7) == 0)
        curl_easy_setopt(t->easy, CURLOPT_PIPEWAIT, 0L);
    mc = curl_multi_add_handle(l->lanes[t->lane].multi, t->easy);
    if (mc != CURLM_OK) {
        transfer_free(t);
        return multi_failed(mc, MAPI_OUTCOME_NOT_SENT, err); /* never added: nothing left */
    }
    t->next = l->running;
    if (l->running)
        l->running->prev = t;
    l->running = t;
    *out = t;
    return 0;
}

void mapi_http_loop_remove(mapi_http_loop *l, mapi_http_transfer *t)
{
    if (!t)
        return;
    curl_multi_remove_handle(l->lanes[t->lane].multi, t->easy);
    if (t->prev)
        t->prev->next = t->next;
    else
        l->running = t->next;
    if (t->next)
        t->next->prev = t->prev;
    transfer_free(t);
}

/* Hands the finished transfers of both lanes to done (which removes each),
   as many as b allows; the rest stay in the multis' queues for the next
   call. */
static void loop_collect(mapi_http_loop *l, mapi_budget *b, mapi_http_loop_done_fn done,
                         void *ctx)
{
    CURLMsg *msg;
    int left, i;

    for (i = 0; i < LANES; i++) {
        struct loop_lane *lane = &l->lanes[i];
        while (lane->pending) {
            mapi_http_transfer *x = NULL;
            if (!mapi_budget_take(b, b ? &b->collected : NULL))
                return; /* pending stays: the next wait collects first */
            msg = curl_multi_info_read(lane->multi, &left);
            if (!msg) {
                lane->pending = 0;
                break;
            }
            lane->pending = left > 0;
            if (msg->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
            if (!x)
                continue;
            x->code = msg->data.result; /* msg dies with the handle's removal */
            done(ctx, x->data);
        }
    }
}

/* epoll_wait for seconds (< 0: no end) -- to the microsecond where the
   kernel can (epoll_pwait2, Linux 5.11), else for ms milliseconds: a step's
   budget ends between two whole milliseconds, and waiting to the next one
   would overrun it or, rounded down, leave the rest of it unused. */
static int wait_events(int epfd, struct epoll_event *evs, double seconds, int ms)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    if (seconds >= 0 && ms < 86400 * 1000) {
        struct timespec ts;
        int n;
        ts.tv_sec = (time_t)seconds;
        ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec > 999999999L)
            ts.tv_nsec = 999999999L;
        n = epoll_pwait2(epfd, evs, LOOP_EVENTS, &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n; /* else an older kernel: whole milliseconds */
    }
#else
    (void)seconds;
#endif
    return epoll_wait(epfd, evs, LOOP_EVENTS, ms);
}

int mapi_http_loop_wait(mapi_http_loop *l, double seconds, mapi_budget *b,
                        mapi_http_loop_done_fn done, void *ctx)
{
    struct epoll_event evs[LOOP_EVENTS];
    int n = 0, i, running = 0, ms, sockets = !isnan(seconds);
    CURLMcode mc = CURLM_OK, failed = CURLM_OK;
    double now;

    if (l->busy)
        return -1;
    if (loop_pending(l)) {
        /* what a budget left: the oldest work, done first; then no waiting */
        loop_collect(l, b, done, ctx);
        seconds = 0;
    }
    if (l->deferred)
        seconds = 0;
    if (sockets) {
        l->deferred = 0;
        if (seconds < 0)
            ms = -1;
        else if (seconds > 86400.0)
            ms = 86400 * 1000;
        else if (b && b->wait)
            ms = (int)(seconds * 1000.0); /* a step's budget: never wake after it */
        else
            ms = (int)(seconds * 1000.0 + 0.999); /* never wake before the time */
        mapi_budget_pause(b);
        n = wait_events(l->epfd, evs, seconds, ms);
        mapi_budget_resume(b);
        if (n < 0)
            n = 0; /* EINTR: a signal; the caller steps again */
    }
    l->busy = 1;
    for (i = 0; i < n; i++) {
        int mask = 0;
        unsigned lane = (unsigned)(evs[i].data.u64 >> 32);
        curl_socket_t s = (curl_socket_t)(uint32_t)(evs[i].data.u64 & 0xffffffffu);
        if (lane >= LANES)
            continue;
        if (!mapi_budget_take(b, NULL)) {
            l->deferred = 1; /* level-triggered: the next epoll_wait reports them again */
            break;
        }
        if (evs[i].events & (EPOLLIN | EPOLLHUP))
            mask |= CURL_CSELECT_IN;
        if (evs[i].events & EPOLLOUT)
            mask |= CURL_CSELECT_OUT;
        if (evs[i].events & EPOLLERR)
            mask |= CURL_CSELECT_ERR;
        mc = curl_multi_socket_action(l->lanes[lane].multi, s, mask, &running);
        l->lanes[lane].pending = 1;
        if (mc != CURLM_OK && mc != CURLM_BAD_SOCKET) /* BAD_SOCKET: closed meanwhile */
            failed = mc;
    }
    now = mapi_monotonic_seconds();
    for (i = 0; i < LANES; i++) {
        struct loop_lane *lane = &l->lanes[i];
        if (lane->timer_at < 0 || now < lane->timer_at)
            continue;
        if (!mapi_budget_take(b, NULL)) {
            l->deferred = 1; /* timer_at stays: still due */
            continue;
        }
        lane->timer_at = -1.0; /* libcurl sets it again when it wants one */
        mc = curl_multi_socket_action(lane->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        lane->pending = 1;
        if (mc != CURLM_OK)
            failed = mc;
    }
    l->busy = 0;
    loop_collect(l, b, done, ctx);
    if (failed != CURLM_OK) {
        /* A multi failed (out of memory, most likely): what it was doing is
           lost -- a socket it no longer watches, a timer never set -- and its
           transfers would never end.  Each transfer ends now with that failure. */
        mapi_http_transfer *x, *next;
        for (x = l->running; x; x = next) {
            next = x->next;
            x->multi_failed = (int)failed;
            done(ctx, x->data);
        }
    }
    return n;
}

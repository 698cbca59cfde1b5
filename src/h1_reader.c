/*
 * h1_reader.c -- the HTTP/1.1 response reader of the transports the library
 * drives itself (h1_reader.h): llhttp for the status line and the header
 * lines, framing.c's rule for the body's framing, the body read here.
 *
 * Where llhttp decides before our rule (docs/decisions.md, "One HTTP/1.1
 * reader"): its lenient header mode takes LF-only line ends and any byte
 * but CR and LF in a value, as libcurl does; Content-Length with
 * Transfer-Encoding is left to framing.c (its lenient chunked-length mode);
 * a second Content-Length, a list in one, a line that is not "name: value"
 * and a folded line it refuses, and framing.c refuses them too, for every
 * transport; a Content-Length with no number fails as libcurl fails it.
 * Chunks are read here with libcurl's tolerance (spaces and extensions after
 * the size, LF-only line ends); trailers are skipped, counted with the head,
 * but a line with no colon, which libcurl fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llhttp.h>

#include "h1_reader.h"

#if LLHTTP_VERSION_MAJOR < 8
#error "llhttp 8.0 or later is needed (docs/decisions.md)"
#endif

enum phase {
    P_HEAD,       /* llhttp reads the head */
    P_LENGTH,     /* a body of `left` bytes */
    P_CLOSE,      /* a body delimited by the close */
    P_SIZE,       /* a chunk-size line: hex digits */
    P_EXT,        /* the rest of a chunk-size line, up to its LF */
    P_DATA,       /* a chunk's `left` bytes */
    P_DATA_END,   /* the CR LF (or LF) after a chunk */
    P_DATA_LF,    /* the LF after that CR */
    P_TRAILER,    /* trailer lines, up to the empty one */
    P_DONE,
    P_ENDED
};

enum fault {
    F_NONE,
    F_FRAMING,   /* framing.c's refusal (r->framing.fault) */
    F_HEAD_OVER, /* the head passed MAPI_MAX_HEADER_BYTES */
    F_LINE_LONG, /* a head line passed MAPI_H1_MAX_LINE */
    F_BODY_OVER, /* the body passed max_body */
    F_TRANSPORT, /* title and detail: as libcurl reports the same bytes */
    F_MEMORY
};

struct mapi_h1_reader {
    llhttp_t p;
    mapi_response *res;
    mapi_framing framing;
    mapi_buf name, value;
    int phase, fault, head_only, in_value, extra, close_delimited, taken;
    size_t max_body, head_bytes, line_bytes, fields, lfs;
    size_t hex, chunk_line, trailer_line;
    int trailer_colon, trailer_fold; /* the current trailer line's ':', its leading SP/HT */
    unsigned long long left;
    const char *scan; /* LFs of the current head counted up to here (this feed) */
    const char *title;
    char detail[96], title_buf[64];
};

#define WEIRD "Weird server reply"
#define BAD_LENGTH_VALUE "Invalid Content-Length: value" /* libcurl's words */
static mapi_h1_state fail(mapi_h1_reader *r, const char *title, const char *detail);

/* ---- the head: llhttp's callbacks ---- */

static mapi_h1_reader *of(llhttp_t *p)
{
    return (mapi_h1_reader *)p->data;
}

/* Counts the head's LFs up to at (in the bytes being fed): a value span
   with more LFs before it than the lines read so far is on a folded line. */
static size_t lfs_before(mapi_h1_reader *r, const char *at)
{
    const char *nl;

    while (r->scan < at && (nl = memchr(r->scan, '\n', (size_t)(at - r->scan))) != NULL) {
        r->lfs++;
        r->scan = nl + 1;
    }
    r->scan = at;
    return r->lfs;
}

static int refuse(mapi_h1_reader *r, mapi_framing_fault fault)
{
    mapi_framing_fault_set(&r->framing, fault);
    r->fault = F_FRAMING;
    return -1;
}

static int on_message_begin(llhttp_t *p)
{
    mapi_h1_reader *r = of(p);

    mapi_response_clear_headers(r->res);
    mapi_framing_init(&r->framing);
    r->fields = 0;
    r->lfs = 0;
    return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len)
{
    mapi_h1_reader *r = of(p);

    if (r->in_value) { /* a field ended with no value callback since: cannot happen */
        r->in_value = 0;
        r->name.len = 0;
    }
    return mapi_buf_append(&r->name, at, len) < 0 ? (r->fault = F_MEMORY, -1) : 0;
}

/* The field read so far, as libcurl's path takes a line: libcurl's reading
   of a Content-Length, the framing rule, then the response's headers. */
static int take_field(mapi_h1_reader *r)
{
    const char *v = r->value.data ? r->value.data : "";

    if (mapi_framing_length_unreadable(r->p.status_code, r->name.data, r->name.len, v,
                                       r->value.len))
        return fail(r, WEIRD, BAD_LENGTH_VALUE), -1; /* ended by head_error */
    if (mapi_framing_field(&r->framing, r->name.data ? r->name.data : "", r->name.len, v,
                           r->value.len) < 0) {
        r->fault = F_FRAMING;
        return -1;
    }
    if (mapi_response_add_header(r->res, r->name.data ? r->name.data : "", r->name.len, v,
                                 r->value.len) < 0) {
        r->fault = F_MEMORY;
        return -1;
    }
    r->fields++;
    r->name.len = r->value.len = 0;
    r->in_value = 0;
    return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len)
{
    mapi_h1_reader *r = of(p);

    if (len == 0)
        return 0; /* llhttp's mark of an empty value, at the next line's start */
    /* the status line and one line per field before this one */
    if (lfs_before(r, at) > r->fields + 1) {
        /* on a folded line: the field's first line is taken as it was (as
           libcurl's path takes it), then the fold refused */
        if (take_field(r) < 0)
            return -1;
        return refuse(r, MAPI_FRAMING_LINE);
    }
    r->in_value = 1;
    return mapi_buf_append(&r->value, at, len) < 0 ? (r->fault = F_MEMORY, -1) : 0;
}

static int on_header_value_complete(llhttp_t *p)
{
    return take_field(of(p));
}

static int on_headers_complete(llhttp_t *p)
{
    mapi_h1_reader *r = of(p);

    if (r->name.len && take_field(r) < 0) /* a field with an empty value */
        return -1;
    return HPE_PAUSED; /* the body is read here (feed) */
}

static const llhttp_settings_t *settings(void)
{
    static llhttp_settings_t s;
    static int ready;

    if (!ready) {
        llhttp_settings_init(&s);
        s.on_message_begin = on_message_begin;
        s.on_header_field = on_header_field;
        s.on_header_value = on_header_value;
        s.on_header_value_complete = on_header_value_complete;
        s.on_headers_complete = on_headers_complete;
        ready = 1;
    }
    return &s;
}

static void parser_init(mapi_h1_reader *r)
{
    llhttp_init(&r->p, HTTP_RESPONSE, settings());
    r->p.data = r;
    llhttp_set_lenient_headers(&r->p, 1);        /* LF-only line ends, any value byte */
    llhttp_set_lenient_chunked_length(&r->p, 1); /* framing.c decides Content-Length + TE */
#if LLHTTP_VERSION_MAJOR >= 9
    llhttp_set_lenient_optional_cr_before_lf(&r->p, 1);
#endif
}

/* ---- creation ---- */

/* r (zeroed but for its name and value buffers) ready for an answer */
static void start(mapi_h1_reader *r, mapi_response *res, int head_only, size_t max_body)
{
    r->res = res;
    mapi_framing_init(&r->framing);
    r->head_only = head_only;
    r->max_body = max_body;
    parser_init(r);
}

mapi_h1_reader *mapi_h1_reader_new(int head_only, size_t max_body)
{
    mapi_h1_reader *r = calloc(1, sizeof *r);
    mapi_response *res = mapi_response_new();

    if (!r || !res) {
        free(r);
        mapi_response_free(res);
        return NULL;
    }
    mapi_buf_init(&r->name);
    mapi_buf_init(&r->value);
    start(r, res, head_only, max_body);
    return r;
}

/* the most room a reset keeps in a name or value buffer, in bytes: a line
   of 100 KiB read once is not held by a reader waiting in a pool */
#define KEPT_ROOM 4096

/* b emptied, its room kept up to KEPT_ROOM (a buffer that ran out of
   memory starts anew) */
static void empty(mapi_buf *b)
{
    if (b->oom || b->cap > KEPT_ROOM) {
        mapi_buf_free(b);
        mapi_buf_init(b);
    } else if (b->data) {
        b->len = 0;
        b->data[0] = '\0';
    }
}

int mapi_h1_reader_reset(mapi_h1_reader *r, int head_only, size_t max_body)
{
    mapi_buf name = r->name, value = r->value; /* their room is kept */
    mapi_response *res;

    if (!r->taken)
        return 1;
    res = mapi_response_new();
    if (!res)
        return -1;
    memset(r, 0, sizeof *r);
    r->name = name;
    r->value = value;
    empty(&r->name);
    empty(&r->value);
    start(r, res, head_only, max_body);
    return 0;
}

void mapi_h1_reader_free(mapi_h1_reader *r)
{
    if (!r)
        return;
    mapi_response_free(r->res);
    mapi_buf_free(&r->name);
    mapi_buf_free(&r->value);
    free(r);
}

/* ---- ends ---- */

static mapi_h1_state end(mapi_h1_reader *r, int fault)
{
    r->fault = fault;
    r->phase = P_ENDED;
    return MAPI_H1_ENDED;
}

/* A TRANSPORT failure titled as libcurl titles the same bytes. */
static mapi_h1_state fail(mapi_h1_reader *r, const char *title, const char *detail)
{
    r->title = title;
    snprintf(r->detail, sizeof r->detail, "%s", detail);
    return end(r, F_TRANSPORT);
}

static mapi_h1_state done(mapi_h1_reader *r)
{
    r->phase = P_DONE;
    return MAPI_H1_DONE;
}

/* ---- the body ---- */

static mapi_h1_state body_bytes(mapi_h1_reader *r, const char *data, size_t n)
{
    mapi_response *res = r->res;
    int rc = mapi_response_append_body(res, data, n, r->max_body,
                                       r->phase == P_LENGTH ? res->len + r->left + MAPI_JSON_PADDING
                                                            : 0);

    if (rc != 0)
        return end(r, rc > 0 ? F_BODY_OVER : F_MEMORY);
    return MAPI_H1_MORE;
}

#define BAD_CHUNK "Failure when receiving data from the peer"
#define BAD_TRAILER "Failed reading the chunked-encoded stream" /* libcurl's words */

/* The end of a chunk-size line: the chunk's data, or the trailers. */
static void size_line_ended(mapi_h1_reader *r)
{
    r->phase = r->left ? P_DATA : P_TRAILER;
    r->trailer_line = 0;
    r->trailer_colon = r->trailer_fold = 0;
}

/* Reads a chunked body (libcurl's tolerance: spaces and extensions after
   the size, LF or CR LF after each line and chunk); *used: bytes read. */
static mapi_h1_state chunked(mapi_h1_reader *r, const char *d, size_t n, size_t *used)
{
    size_t i = 0;

    while (i < n) {
        char c = d[i];
        int h;
        switch (r->phase) {
        case P_SIZE:
            if (++r->chunk_line > MAPI_H1_MAX_CHUNK_LINE)
                return fail(r, BAD_CHUNK, "a chunk-size line over 4096 bytes");
            h = mapi_hex_digit((unsigned char)c);
            if (h >= 0) {
                if (++r->hex > 16)
                    return fail(r, BAD_CHUNK,
                                "Too long hexadecimal number in chunked-encoding");
                r->left = r->left * 16 + (unsigned)h;
            } else if (r->hex == 0) {
                return fail(r, BAD_CHUNK,
                            "Illegal or missing hexadecimal sequence in chunked-encoding");
            } else if (c == '\n') {
                size_line_ended(r);
            } else {
                r->phase = P_EXT;
            }
            i++;
            break;
        case P_EXT:
            if (++r->chunk_line > MAPI_H1_MAX_CHUNK_LINE)
                return fail(r, BAD_CHUNK, "a chunk-size line over 4096 bytes");
            if (c == '\n')
                size_line_ended(r);
            i++;
            break;
        case P_DATA: {
            size_t k = n - i < r->left ? n - i : (size_t)r->left;
            if (body_bytes(r, d + i, k) != MAPI_H1_MORE)
                return MAPI_H1_ENDED;
            r->left -= k;
            i += k;
            if (r->left == 0)
                r->phase = P_DATA_END;
            break;
        }
        case P_DATA_END:
        case P_DATA_LF:
            if (c == '\n') {
                r->phase = P_SIZE;
                r->hex = r->chunk_line = 0;
            } else if (c == '\r' && r->phase == P_DATA_END) {
                r->phase = P_DATA_LF;
            } else {
                return fail(r, BAD_CHUNK, "Malformed encoding found in chunked-encoding");
            }
            i++;
            break;
        case P_TRAILER:
            /* skipped, never taken (libcurl's path alike), counted with the
               head; a line with no colon, not a fold, fails (libcurl's too) */
            if (++r->head_bytes > MAPI_MAX_HEADER_BYTES) {
                r->res->head_bytes = r->head_bytes;
                return end(r, F_HEAD_OVER);
            }
            i++;
            if (c == '\n') {
                if (r->trailer_line == 0) {
                    *used = i;
                    return done(r);
                }
                if (!r->trailer_colon && !r->trailer_fold)
                    return fail(r, BAD_TRAILER, "a trailer line with no colon");
                r->trailer_line = 0;
                r->trailer_colon = r->trailer_fold = 0;
            } else if (c != '\r' || r->trailer_line > 0) {
                if (r->trailer_line == 0 && (c == ' ' || c == '\t'))
                    r->trailer_fold = 1;
                else if (c == ':')
                    r->trailer_colon = 1;
                r->trailer_line++;
            }
            break;
        default:
            *used = i;
            return MAPI_H1_MORE;
        }
    }
    *used = i;
    return MAPI_H1_MORE;
}

/* The head is read: how the body is framed. */
static mapi_h1_state head_ended(mapi_h1_reader *r)
{
    int status = r->p.status_code;

    r->res->status = status;
    r->res->head_bytes = r->head_bytes;
    if (r->head_only || status < 200 || status == 204 || status == 304)
        return done(r);
    if (r->framing.chunked) {
        r->phase = P_SIZE;
        r->hex = r->chunk_line = 0;
        r->left = 0;
    } else if (r->framing.has_length) {
        if (r->framing.length > r->max_body)
            return end(r, F_BODY_OVER); /* as libcurl's CURLOPT_MAXFILESIZE */
        r->left = r->framing.length;
        if (r->left == 0)
            return done(r);
        r->phase = P_LENGTH;
    } else {
        r->phase = P_CLOSE;
        r->close_delimited = 1;
    }
    return MAPI_H1_MORE;
}

/* An llhttp error in the head: framing.c's fault it stands for, or a
   transport failure (not an HTTP/1.x answer). */
static mapi_h1_state head_error(mapi_h1_reader *r, llhttp_errno_t e)
{
    if (r->fault == F_MEMORY || r->fault == F_TRANSPORT)
        return end(r, r->fault);
    if (r->fault == F_FRAMING || r->framing.fault != MAPI_FRAMING_OK)
        return end(r, F_FRAMING);
    if (r->p.status_code != 0 && r->lfs > r->fields + 1) {
        /* on a folded line (llhttp may refuse it before a value callback):
           the field's first line taken, then the fold refused */
        if (r->name.len && take_field(r) < 0)
            return end(r, r->fault);
        refuse(r, MAPI_FRAMING_LINE);
        return end(r, F_FRAMING);
    }
    switch (e) {
    case HPE_UNEXPECTED_CONTENT_LENGTH: /* a second one (CL with TE is lenient) */
        refuse(r, MAPI_FRAMING_CONFLICT);
        return end(r, F_FRAMING);
    case HPE_INVALID_CONTENT_LENGTH:
        /* no digit before the byte refused (llhttp's value span ends there),
           but "+n" (libcurl reads it, framing.c refuses it) */
        if (r->value.len == 0 && *llhttp_get_error_pos(&r->p) != '+' &&
            mapi_framing_length_unreadable(r->p.status_code, r->name.data, r->name.len, "", 0))
            return fail(r, WEIRD, BAD_LENGTH_VALUE);
        refuse(r, MAPI_FRAMING_BAD_LENGTH);
        return end(r, F_FRAMING);
    default:
        break;
    }
    if (r->p.status_code != 0 && r->lfs >= 1) {
        /* past the status line: a header line llhttp refuses */
        refuse(r, MAPI_FRAMING_LINE);
        return end(r, F_FRAMING);
    }
    return fail(r, "Weird server reply", "not an HTTP/1.x status line");
}

/* Feeds the head to llhttp; *used: the bytes that were the head's. */
static mapi_h1_state head(mapi_h1_reader *r, const char *d, size_t n, size_t *used)
{
    size_t k = 0, room = MAPI_MAX_HEADER_BYTES - r->head_bytes + 1, line_over = 0;
    llhttp_errno_t e;
    const char *nl;

    /* no more than the caps: the head's room, and a line's (its bytes
       looked at only when this feed could hold a line over the cap) */
    if (n > room)
        n = room;
    while (k < n && r->line_bytes + (n - k) > MAPI_H1_MAX_LINE) {
        nl = memchr(d + k, '\n', n - k);
        size_t seg = nl ? (size_t)(nl - (d + k)) + 1 : n - k;
        if (r->line_bytes + seg > MAPI_H1_MAX_LINE) {
            n = k + (MAPI_H1_MAX_LINE - r->line_bytes) + 1;
            line_over = 1;
            break;
        }
        r->line_bytes = 0;
        k += seg;
    }
    r->scan = d;
    e = llhttp_execute(&r->p, d, n);
    lfs_before(r, e == HPE_OK ? d + n : llhttp_get_error_pos(&r->p));
    if (e == HPE_PAUSED) {
        size_t at = (size_t)(llhttp_get_error_pos(&r->p) - d);
        r->head_bytes += at;
        *used = at;
        r->line_bytes = 0;
        if (r->p.status_code >= 100 && r->p.status_code < 200 && r->p.status_code != 101) {
            /* an interim answer: the real one follows (its bytes count) */
            parser_init(r);
            return MAPI_H1_MORE;
        }
        return head_ended(r);
    }
    *used = n;
    if (e != HPE_OK)
        return head_error(r, e);
    r->head_bytes += n;
    for (k = n; k > 0 && d[k - 1] != '\n'; k--) /* the line this feed ends in */
        ;
    r->line_bytes = k > 0 ? n - k : r->line_bytes + n;
    if (line_over) {
        r->res->status = r->p.status_code;
        r->res->head_bytes = r->head_bytes;
        return end(r, F_LINE_LONG);
    }
    if (r->head_bytes > MAPI_MAX_HEADER_BYTES) {
        r->res->status = r->p.status_code;
        r->res->head_bytes = r->head_bytes;
        return end(r, F_HEAD_OVER);
    }
    return MAPI_H1_MORE;
}

mapi_h1_state mapi_h1_feed(mapi_h1_reader *r, const char *data, size_t len)
{
    mapi_h1_state st = MAPI_H1_MORE;
    size_t used;

    while (len > 0 && st == MAPI_H1_MORE) {
        used = len;
        switch (r->phase) {
        case P_HEAD:
            st = head(r, data, len, &used);
            break;
        case P_LENGTH:
            used = len < r->left ? len : (size_t)r->left;
            st = body_bytes(r, data, used);
            r->left -= used;
            if (st == MAPI_H1_MORE && r->left == 0)
                st = done(r);
            break;
        case P_CLOSE:
            st = body_bytes(r, data, len);
            break;
        case P_DONE:
            r->extra = 1; /* bytes after the answer: the connection is not kept */
            return MAPI_H1_DONE;
        case P_ENDED:
            return MAPI_H1_ENDED;
        default:
            st = chunked(r, data, len, &used);
            break;
        }
        data += used;
        len -= used;
    }
    if (len > 0 && st == MAPI_H1_DONE)
        r->extra = 1;
    return mapi_h1_state_of(r);
}

mapi_h1_state mapi_h1_eof(mapi_h1_reader *r)
{
    char detail[80];

    switch (r->phase) {
    case P_CLOSE:
        r->close_delimited = 1;
        return done(r);
    case P_DONE:
    case P_ENDED:
        return mapi_h1_state_of(r);
    case P_HEAD:
        if (r->head_bytes == 0 && r->p.status_code == 0 && r->lfs == 0 && r->name.len == 0)
            return fail(r, "Server returned nothing (no headers, no data)",
                        "the connection closed before any byte of an answer");
        return fail(r, "Failure when receiving data from the peer",
                    "the connection closed inside the head");
    case P_LENGTH:
        snprintf(detail, sizeof detail, "end of response with %llu bytes missing", r->left);
        return fail(r, "Transferred a partial file", detail);
    default:
        return fail(r, "Transferred a partial file",
                    "transfer closed with outstanding read data remaining");
    }
}

mapi_h1_state mapi_h1_state_of(const mapi_h1_reader *r)
{
    return r->phase == P_DONE ? MAPI_H1_DONE : r->phase == P_ENDED ? MAPI_H1_ENDED : MAPI_H1_MORE;
}

int mapi_h1_failed(const mapi_h1_reader *r)
{
    return r->phase == P_ENDED && r->fault == F_TRANSPORT;
}

int mapi_h1_keep_alive(const mapi_h1_reader *r)
{
    return r->phase == P_DONE && !r->extra && !r->close_delimited && r->p.http_major == 1 &&
           r->p.http_minor == 1 && !(r->p.flags & F_CONNECTION_CLOSE);
}

const mapi_response *mapi_h1_response(const mapi_h1_reader *r)
{
    return r->taken ? NULL : r->res;
}

const char *mapi_h1_title(mapi_h1_reader *r)
{
    switch (r->phase == P_ENDED ? r->fault : F_NONE) {
    case F_FRAMING:
        return mapi_framing_title(&r->framing);
    case F_HEAD_OVER:
        return mapi_head_over_title(r->title_buf);
    case F_LINE_LONG:
        return "response header line too long";
    case F_BODY_OVER:
        return mapi_body_over_title(r->title_buf, r->max_body);
    case F_TRANSPORT:
        return r->title;
    case F_MEMORY:
        return "out of memory";
    default:
        return NULL;
    }
}

int mapi_h1_result(mapi_h1_reader *r, mapi_response **out, mapi_error *err)
{
    mapi_response *res = r->res;
    char detail[96];

    if (r->taken)
        return mapi_error_set(err, MAPI_ERR_MEMORY, "the answer was already taken");
    r->taken = 1;
    r->res = NULL;
    res->status = r->p.status_code;
    if (r->phase == P_DONE) {
        if (mapi_response_pad_body(res) < 0) {
            mapi_response_free(res);
            return mapi_error_oom(err);
        }
        res->framed = 1; /* framing.c's rule applied field by field, the length kept */
        res->head_bytes = r->head_bytes;
        *out = res;
        return 0;
    }
    if (r->phase != P_ENDED)
        fail(r, "Failure when receiving data from the peer", "the answer is not complete");
    switch (r->fault) {
    case F_FRAMING:
        return mapi_refuse_head(res, err, mapi_framing_title(&r->framing), NULL);
    case F_HEAD_OVER:
        return mapi_refuse_head_over(res, err);
    case F_LINE_LONG:
        snprintf(detail, sizeof detail, "a line over %d bytes", MAPI_H1_MAX_LINE);
        return mapi_refuse_head(res, err, "response header line too long", detail);
    case F_BODY_OVER:
        return mapi_refuse_body(res, r->max_body, err);
    case F_TRANSPORT:
        mapi_error_transport(err, r->title, r->detail, mapi_response_request_id(res),
                             MAPI_OUTCOME_UNKNOWN);
        mapi_response_free(res);
        return -1;
    default:
        mapi_response_free(res);
        return mapi_error_oom(err);
    }
}

/*
 * json_parse.cpp -- the JSON reader (json_parse.h): simdjson's On-Demand
 * API walked once into the compact tree, with simdjson's error codes only
 * (built with -fno-exceptions); memory from malloc and the caller's arena.
 *
 * What simdjson checks: UTF-8 (RFC 3629), control characters unescaped in
 * strings (stage 1, before any value is read), the structure (commas,
 * colons, brackets), string escapes and lone surrogates (\ud800 alone is an
 * error, not U+FFFD).  What the reader checks itself: every literal exactly,
 * every number token against RFC 8259's grammar (json_tree.c: simdjson reads
 * no number here, they keep their exact text), duplicate member names, the
 * depth cap, content after the value.
 */
/* simdjson's own invariants (SIMDJSON_ASSUME: the state of its iterator,
   never the input) are assert() calls unless NDEBUG is defined, and cost
   more than the walk itself (2.7x its time on a 322 KiB page): they are
   hints to the compiler here, and checks in the sanitizer builds. */
#if defined(__SANITIZE_ADDRESS__)
#define MAPI_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MAPI_SANITIZED 1
#endif
#endif
#if !defined(NDEBUG) && !defined(MAPI_SANITIZED) && !defined(MAPI_SIMDJSON_CHECKS)
#define NDEBUG 1
#endif
#include <simdjson.h>

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "json_parse.h"

static_assert(simdjson::SIMDJSON_PADDING <= MAPI_JSON_PADDING, "MAPI_JSON_PADDING below simdjson's");

using namespace simdjson;

namespace {

const size_t KEEP_CAPACITY = (size_t)1 << 20; /* a parser kept per thread: docs/decisions.md */
const size_t MAX_LEN = ((size_t)-1) >> MAPI_TL_SHIFT;
const size_t PREDICT = 1024; /* member positions remembered: 64 groups of 16 */

/* A remembered name: valid for the parse numbered gen only (the table is
   kept per thread; a name lives in one document's arena). */
struct seen_slot {
    const mapi_name *nm;
    uint64_t gen;
};

struct builder {
    mapi_tree t; /* the arena, scratch arrays, names */
    /* the body being read, which the document owns: string values are
       left in it (see read_string); orig: the same bytes unchanged, for
       the diagnosis of a failure */
    char *wbuf;
    const char *buf, *orig;
    /* !orig (a response's body, read where it was received): string values
       are copied here instead, one after the other, a block of the body's
       size (a text and its NUL never take more room than its token) */
    char *text, *text_end;
    size_t len;
    int max_depth;
    /* the name last read at a member position (the name of the member
       the object is the value of, or is in an array of; its index), checked
       before the name table: the objects of a page repeat their names in
       the same order */
    seen_slot *seen;
    uint64_t gen;
    /* the failure */
    mapi_json_status status;
    size_t offset;
};

mapi_json_status fail(builder &b, mapi_json_status st, const char *at)
{
    b.status = st;
    b.offset = at ? (size_t)(at - b.buf) : (size_t)-1;
    return st;
}

/* Room for one more member or element (the rare case out of line). */
template <typename T> inline bool room(T *&arr, size_t &cap, size_t n)
{
    return n < cap || mapi_tree_reserve((void **)&arr, &cap, n + 1, sizeof(T)) == 0;
}

/* ---- names ---- */

/* The interned name of the key s[0..n) (padded) of member `index` of an
   object at `depth` under the member name of id `parent`: the name last
   seen there when it is the same, else the name table's. */
inline const mapi_name *intern_key(builder &b, const char *s, size_t n, size_t parent,
                                   int depth, size_t index)
{
    uint64_t hd[2];
    mapi_name_head(s, n, 1, hd);
    uint32_t g = (uint32_t)(parent * 64 + (size_t)depth) * UINT32_C(0x9E3779B1) >> 26;
    seen_slot &seen = b.seen[((size_t)g << 4) | (index < 15 ? index : 15)];
    const mapi_name *nm = seen.nm;
    if (seen.gen == b.gen && nm->len == n && nm->head[0] == hd[0] && nm->head[1] == hd[1] &&
        (n <= 16 || memcmp(nm->s + 16, s + 16, n - 16) == 0))
        return nm;
    nm = mapi_tree_intern(&b.t, s, n, hd, 1);
    seen.nm = nm;
    seen.gen = b.gen;
    return nm;
}

/* ---- scalars ---- */

inline bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A raw token without the white space simdjson leaves after it. */
std::string_view trimmed(std::string_view t)
{
    size_t n = t.size();
    while (n > 0 && is_space(t[n - 1]))
        n--;
    return t.substr(0, n);
}

inline struct mapi_value make(const void *p, size_t len, unsigned flags)
{
    struct mapi_value v;
    v.p = p;
    v.tl = (len << MAPI_TL_SHIFT) | flags;
    return v;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* The first '"' or '\\' at or after s (one is there: simdjson found the
   string closed; the padding makes the 16- or 8-byte reads safe). */
inline const char *quote_or_backslash(const char *s)
{
#if defined(__SSE2__)
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
    for (;;) {
        __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s));
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(w, q), _mm_cmpeq_epi8(w, bs)));
        if (m)
            return s + __builtin_ctz(m);
        s += 16;
    }
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (;;) {
        uint64_t w, q, bs;
        memcpy(&w, s, 8);
        q = w ^ (ONES * '"');
        bs = w ^ (ONES * '\\');
        q = ((q - ONES) & ~q & HIGHS) | ((bs - ONES) & ~bs & HIGHS);
        if (q)
            return s + (__builtin_ctzll(q) >> 3);
        s += 8;
    }
#else
    while (*s != '"' && *s != '\\')
        s++;
    return s;
#endif
}

/* Where a value goes: a member or an element of the containers being read
   (their scratch arrays may move while a nested container is read: the
   place is an index), or a fixed node. */
struct dest {
    struct mapi_value *fixed; /* the root */
    bool member;              /* else b.t.val */
    size_t i;
};

inline struct mapi_value *place(builder &b, const dest &d)
{
    return d.fixed ? d.fixed : d.member ? &b.t.mem[d.i].value : &b.t.val[d.i];
}

mapi_json_status read_value(builder &b, ondemand::value &v, const dest &d, int depth,
                            size_t parent, bool type_member);

/* Where a value that simdjson could not type starts: a word ("NaN",
   "<html>") is a literal, anything else misplaced syntax. */
mapi_json_status untyped(builder &b, std::string_view tok)
{
    const char *at = tok.data();
    if (!at || at < b.buf || at >= b.buf + b.len)
        return fail(b, MAPI_JSON_EOF, b.buf + b.len);
    if (strchr("{}[],:\"", *at) && *at != '\0')
        return fail(b, MAPI_JSON_SYNTAX, at);
    return fail(b, MAPI_JSON_LITERAL, at);
}

/*
 * A string value is left where it is in the body (which the document
 * owns): its closing quote becomes its NUL.  simdjson never reads that
 * byte again: it moves from structural character to structural character
 * (a string's opening quote is one, its closing quote is not), and only
 * get_string reads a string's bytes, once, here, before the write.  A
 * string with escapes is unescaped (by get_string, into simdjson's buffer)
 * and copied back over its own source, never longer than it ("\n" is two
 * bytes, "\u00e9" six for two): the NUL lands at the latest on the closing
 * quote.  The bytes of a string are read by nothing after its value.
 */
mapi_json_status read_string(builder &b, ondemand::value &v, std::string_view tok,
                             struct mapi_value *out, bool as_name, int depth)
{
    const char *s = tok.data() + 1, *e = quote_or_backslash(s);
    std::string_view text;

    if (*e == '"') {
        text = std::string_view(s, (size_t)(e - s));
    } else if (v.get_string().get(text) != SUCCESS) {
        return fail(b, MAPI_JSON_STRING, tok.data());
    }
    if (as_name) {
        /* remembered as the (depth)th "member" of a "type": a page's
           resources and linkages repeat their types level by level */
        const mapi_name *nm = intern_key(b, text.data(), text.size(), MAPI_N_TYPE, depth, 15);
        if (!nm)
            return fail(b, MAPI_JSON_MEMORY, NULL);
        *out = make(nm->s, nm->len, MAPI_STRING | MAPI_TL_NAME);
        return MAPI_JSON_OK;
    }
    if (text.size() >= MAX_LEN)
        return fail(b, MAPI_JSON_TOO_LARGE, NULL);
    char *w;
    if (!b.orig) { /* the body is not ours: a copy in the text block */
        if ((size_t)(b.text_end - b.text) <= text.size())
            return fail(b, MAPI_JSON_MEMORY, NULL); /* never: kept safe */
        w = b.text;
        b.text += text.size() + 1;
        memcpy(w, text.data(), text.size());
        w[text.size()] = '\0';
        *out = make(w, text.size(), MAPI_STRING);
        return MAPI_JSON_OK;
    }
    w = b.wbuf + (s - b.buf);
    if (*e != '"')
        memcpy(w, text.data(), text.size());
    w[text.size()] = '\0';
    *out = make(w, text.size(), MAPI_STRING);
    return MAPI_JSON_OK;
}

mapi_json_status read_scalar(builder &b, ondemand::json_type t, std::string_view raw,
                             struct mapi_value *out)
{
    std::string_view tok = trimmed(raw);
    switch (t) {
    case ondemand::json_type::number: {
        mapi_type nt;
        const char *copy = mapi_tree_number(&b.t, tok.data(), tok.size(), &nt);
        if (!copy)
            return fail(b, nt == MAPI_NULL ? MAPI_JSON_NUMBER : MAPI_JSON_MEMORY, tok.data());
        *out = make(copy, tok.size(), nt);
        return MAPI_JSON_OK;
    }
    case ondemand::json_type::boolean:
        if (tok == "true")
            *out = make(NULL, 1, MAPI_BOOL);
        else if (tok == "false")
            *out = make(NULL, 0, MAPI_BOOL);
        else
            return fail(b, MAPI_JSON_LITERAL, tok.data());
        return MAPI_JSON_OK;
    case ondemand::json_type::null:
        if (tok != "null")
            return fail(b, MAPI_JSON_LITERAL, tok.data());
        *out = make(NULL, 0, MAPI_NULL);
        return MAPI_JSON_OK;
    default:
        return untyped(b, tok);
    }
}

/* An iteration error of simdjson inside a container: a structural error. */
mapi_json_status structure(builder &b, error_code e)
{
    switch (e) {
    case MEMALLOC:
        return fail(b, MAPI_JSON_MEMORY, NULL);
    case DEPTH_ERROR:
        return fail(b, MAPI_JSON_DEPTH, NULL);
    case STRING_ERROR:
        return fail(b, MAPI_JSON_STRING, NULL);
    default:
        return fail(b, MAPI_JSON_SYNTAX, NULL);
    }
}

/* The container just read, scratch[base..count), moved into the arena as a
   node of type `type` at its place d (computed only now: the scratch arrays
   may move while it is read; writing the node there, rather than handing it
   back through memory, also spares a store-forwarding stall).  A loop copies
   the few entries most containers have (a call of memcpy costs more). */
template <typename T>
inline mapi_json_status close_container(builder &b, T *scratch, size_t &count, size_t base,
                                        const dest &d, unsigned type)
{
    size_t n = count - base;
    T *arr = NULL;
    if (n) {
        arr = static_cast<T *>(mapi_arena_alloc(b.t.arena, n * sizeof *arr));
        if (!arr)
            return fail(b, MAPI_JSON_MEMORY, NULL);
        if (n <= 8) {
            for (size_t i = 0; i < n; i++)
                arr[i] = scratch[base + i];
        } else {
            memcpy(arr, scratch + base, n * sizeof *arr);
        }
    }
    count = base;
    *place(b, d) = make(arr, n, type);
    return MAPI_JSON_OK;
}

mapi_json_status read_object(builder &b, ondemand::value &v, const dest &d, int depth,
                             size_t parent)
{
    ondemand::object obj;
    size_t base = b.t.nmem;
    error_code e = v.get_object().get(obj);

    if (e != SUCCESS)
        return structure(b, e);
    for (auto fr : obj) {
        /* the field in place: a copy of it (its 8 + 4 byte parts read back
           as 16) stalls on store forwarding */
        if ((e = fr.error()) != SUCCESS)
            return structure(b, e);
        ondemand::field &f = fr.value_unsafe();
        const char *k = f.key().raw(), *end = quote_or_backslash(k);
        std::string_view key;
        if (*end == '"') {
            key = std::string_view(k, (size_t)(end - k));
        } else if (f.unescaped_key().get(key) != SUCCESS) {
            return fail(b, MAPI_JSON_STRING, k - 1);
        }
        const mapi_name *nm = intern_key(b, key.data(), key.size(), parent, depth, b.t.nmem - base);
        if (!nm)
            return fail(b, MAPI_JSON_MEMORY, NULL);
        if (!room(b.t.mem, b.t.capmem, b.t.nmem))
            return fail(b, MAPI_JSON_MEMORY, NULL);
        dest md = {NULL, true, b.t.nmem++};
        b.t.mem[md.i].name = nm;
        mapi_json_status st = read_value(b, f.value(), md, depth, nm->id, nm->id == MAPI_N_TYPE);
        if (st != MAPI_JSON_OK)
            return st;
    }
    if (mapi_tree_unique(&b.t, base) != 0)
        return fail(b, MAPI_JSON_DUPLICATE, NULL);
    return close_container(b, b.t.mem, b.t.nmem, base, d, MAPI_OBJECT);
}

mapi_json_status read_array(builder &b, ondemand::value &v, const dest &d, int depth,
                            size_t parent)
{
    ondemand::array arr;
    size_t base = b.t.nval;
    error_code e = v.get_array().get(arr);

    if (e != SUCCESS)
        return structure(b, e);
    for (auto er : arr) {
        if ((e = er.error()) != SUCCESS)
            return structure(b, e);
        ondemand::value &x = er.value_unsafe();
        if (!room(b.t.val, b.t.capval, b.t.nval))
            return fail(b, MAPI_JSON_MEMORY, NULL);
        dest ed = {NULL, false, b.t.nval++};
        mapi_json_status st = read_value(b, x, ed, depth, parent, false);
        if (st != MAPI_JSON_OK)
            return st;
    }
    return close_container(b, b.t.val, b.t.nval, base, d, MAPI_ARRAY);
}

/* One value at nesting `depth` (its container's), of the member name of id
   parent (or in an array of it); type_member: the value of a member named
   "type" (a string one is interned). */
mapi_json_status read_value(builder &b, ondemand::value &v, const dest &d, int depth,
                            size_t parent, bool type_member)
{
    std::string_view raw = v.raw_json_token();
    ondemand::json_type t;

    if (v.type().get(t) != SUCCESS)
        return untyped(b, trimmed(raw));
    switch (t) {
    case ondemand::json_type::object:
    case ondemand::json_type::array:
        if (depth + 1 > b.max_depth)
            return fail(b, MAPI_JSON_DEPTH, raw.data());
        return t == ondemand::json_type::object ? read_object(b, v, d, depth + 1, parent)
                                                : read_array(b, v, d, depth + 1, parent);
    case ondemand::json_type::string:
        /* scalars: nothing moves while they are read */
        return read_string(b, v, raw, place(b, d), type_member, depth);
    default:
        return read_scalar(b, t, raw, place(b, d));
    }
}

mapi_json_status from_stage1(builder &b, error_code e)
{
    switch (e) {
    case EMPTY:
    case UNCLOSED_STRING:
        return fail(b, MAPI_JSON_EOF, b.buf + b.len);
    case UTF8_ERROR:
        return fail(b, MAPI_JSON_UTF8, NULL);
    case UNESCAPED_CHARS:
        return fail(b, MAPI_JSON_CONTROL, NULL);
    case CAPACITY:
        return fail(b, MAPI_JSON_TOO_LARGE, NULL);
    default: /* MEMALLOC, DEPTH_ERROR, syntax (no string is read yet) */
        return structure(b, e);
    }
}

mapi_json_status read_document(builder &b, ondemand::parser &parser, char *buf,
                               struct mapi_value *root)
{
    ondemand::document doc;
    ondemand::json_type t;
    error_code e = parser.iterate(padded_string_view(buf, b.len, b.len + MAPI_JSON_PADDING))
                       .get(doc);

    if (e != SUCCESS)
        return from_stage1(b, e);
    bool typed = doc.type().get(t) == SUCCESS;
    if (!typed || (t != ondemand::json_type::object && t != ondemand::json_type::array)) {
        /* a scalar document: simdjson reads those apart from containers */
        std::string_view raw;
        if (doc.raw_json_token().get(raw) != SUCCESS)
            return fail(b, MAPI_JSON_SYNTAX, NULL);
        if (!typed)
            return untyped(b, trimmed(raw));
        std::string_view tok = trimmed(raw);
        if (t == ondemand::json_type::string) {
            std::string_view text;
            if (*quote_or_backslash(tok.data() + 1) == '\\' &&
                doc.get_string().get(text) != SUCCESS)
                return fail(b, MAPI_JSON_STRING, tok.data());
            *root = make(NULL, 0, MAPI_STRING); /* its text is never read: not JSON:API */
        } else if (read_scalar(b, t, raw, root) != MAPI_JSON_OK) {
            return b.status;
        }
        if (raw.data() + raw.size() < b.buf + b.len)
            return fail(b, MAPI_JSON_TRAILING, raw.data() + raw.size());
        return MAPI_JSON_OK;
    }
    ondemand::value v;
    if ((e = doc.get_value().get(v)) != SUCCESS)
        return structure(b, e);
    dest d = {root, false, 0};
    if (read_value(b, v, d, 0, MAPI_N_KNOWN, false) != MAPI_JSON_OK) {
        /* a structural failure told by the body's brackets (json_tree.c), in
           the body unchanged (string values were written into) */
        if (b.status == MAPI_JSON_SYNTAX)
            b.status = mapi_json_diagnose(b.orig ? b.orig : b.buf, b.len, &b.offset);
        return b.status;
    }
    const char *rest;
    if (doc.current_location().get(rest) == SUCCESS)
        return fail(b, MAPI_JSON_TRAILING, rest);
    return MAPI_JSON_OK;
}

/* ---- what a thread keeps between documents (the blocks: memory.c) ---- */

/* the reader's scratch arrays (json_tree.c), freed at the thread's end */
struct tree_owner {
    mapi_tree t;
    ~tree_owner() { mapi_tree_free(&t); }
};

} // namespace

extern "C" mapi_json_status mapi_json_parse(char *buf, size_t len, const char *orig,
                                            int max_depth, mapi_arena *arena,
                                            mapi_json_result *out)
{
    static thread_local ondemand::parser kept;
    static thread_local tree_owner kept_tree;
    static thread_local seen_slot seen[PREDICT];
    static thread_local uint64_t gen;
    builder b;
    mapi_json_status st;

    memset(&b, 0, sizeof b);
    b.seen = seen;
    b.gen = ++gen; /* from 1: a slot never filled has gen 0 */
    b.wbuf = buf;
    b.buf = buf;
    b.orig = orig;
    b.len = len;
    b.max_depth = max_depth < 1 ? 1 : max_depth > MAPI_JSON_MAX_DEPTH ? MAPI_JSON_MAX_DEPTH
                                                                      : max_depth;
    b.offset = (size_t)-1;
    out->root = make(NULL, 0, MAPI_NULL);
    memset(buf + len, 0, MAPI_JSON_PADDING);

    if (mapi_tree_begin(&b.t, &kept_tree.t, arena) != 0) {
        st = fail(b, MAPI_JSON_MEMORY, NULL);
    } else if (len > MAX_LEN / 2 || len >= (size_t)0xFFFFFFFF - MAPI_JSON_PADDING) {
        st = fail(b, MAPI_JSON_TOO_LARGE, NULL);
    } else if (!orig && !(b.text = static_cast<char *>(
                            mapi_arena_block(arena, len + MAPI_JSON_PADDING)))) {
        st = fail(b, MAPI_JSON_MEMORY, NULL);
    } else if ((b.text_end = b.text ? b.text + len + MAPI_JSON_PADDING : NULL),
               len <= KEEP_CAPACITY) {
        st = read_document(b, kept, buf, &out->root);
    } else {
        /* buffers for this body only: a large one is not kept per thread */
        ondemand::parser once;
        st = read_document(b, once, buf, &out->root);
    }
    out->names = b.t.nnames;
    out->offset = b.offset;
    out->dup = st == MAPI_JSON_DUPLICATE ? b.t.dup : NULL;
    mapi_tree_end(&b.t, &kept_tree.t);
    return st;
}

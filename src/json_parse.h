/*
 * json_parse.h -- the JSON reader (json_parse.cpp, json_tree.c: see
 * docs/architecture.md's "Layout") behind a C interface: all the C files and
 * the C++ file share, plain C, no C++ type, nothing that throws.  Not
 * installed.
 */
#ifndef MAPI_JSON_PARSE_H
#define MAPI_JSON_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "merchantapi.h"
#include "memory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes a body buffer must have readable (and writable: they are zeroed)
   after its end for the reader (>= simdjson's SIMDJSON_PADDING, checked in
   json_parse.cpp).  Response bodies are allocated with them. */
#define MAPI_JSON_PADDING 64

/* The arena, the blocks kept per thread and objects freed by their maker's
   function: memory.h (memory.c, below the reader). */

/* One step of the hashes of names (json_parse.cpp) and of the (type, id)
   index (doc_index.c): w mixed into h. */
static inline uint64_t mapi_hash_mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * UINT64_C(0x9E3779B97F4A7C15);
    return h ^ (h >> 29);
}

/* ---- values ---- */

/* A member name, interned per document: equal names are one mapi_name.
   s is NUL-terminated (a name may hold NUL bytes: len counts them all);
   id numbers the document's distinct names from 0. */
typedef struct mapi_name {
    const char *s;
    size_t len;
    size_t id;
    uint64_t head[2]; /* the reader's: s[0..16) as two words, zero past len */
} mapi_name;

/*
 * One JSON value.  tl = (length << MAPI_TL_SHIFT) | flags | mapi_type:
 *   MAPI_NULL    p NULL
 *   MAPI_BOOL    p NULL, length 0 or 1
 *   MAPI_INT     p the token's text (NUL-terminated), length its bytes;
 *                at most 18 digits: the value fits int64_t
 *   MAPI_NUMBER  p the token's text, as for MAPI_INT; when it has an
 *                exponent ('e' or 'E'), its decimal form (mapi_decimal_form)
 *                follows the text's NUL, NUL-terminated too
 *   MAPI_STRING  p the bytes (NUL-terminated), length without the NUL,
 *                in the body read or a copy (mapi_json_parse);
 *                MAPI_TL_NAME: p is the s of an interned mapi_name
 *   MAPI_ARRAY   p length struct mapi_value elements
 *   MAPI_OBJECT  p length mapi_member entries, in document order
 */
struct mapi_value {
    const void *p;
    size_t tl;
};

#define MAPI_TL_TYPE 7u  /* the mapi_type bits */
#define MAPI_TL_NAME 8u  /* a string value that is an interned name ("type" values) */
#define MAPI_TL_SHIFT 4

typedef struct mapi_member {
    const mapi_name *name;
    struct mapi_value value;
} mapi_member;

static inline mapi_type mapi_tl_type(const struct mapi_value *v)
{
    return (mapi_type)(v->tl & MAPI_TL_TYPE);
}

static inline size_t mapi_tl_len(const struct mapi_value *v)
{
    return v->tl >> MAPI_TL_SHIFT;
}

/* The mapi_name a MAPI_TL_NAME string value is the text of. */
static inline const mapi_name *mapi_tl_name(const struct mapi_value *v)
{
    return (const mapi_name *)(const void *)((const char *)v->p - sizeof(mapi_name));
}

/* Names every document interns first, with these ids (JSON:API's members):
   the JSON:API layer compares ids instead of bytes. */
enum mapi_known_name {
    MAPI_N_DATA = 0,
    MAPI_N_INCLUDED,
    MAPI_N_META,
    MAPI_N_JSONAPI,
    MAPI_N_ERRORS,
    MAPI_N_LINKS,
    MAPI_N_TYPE,
    MAPI_N_ID,
    MAPI_N_LID,
    MAPI_N_ATTRIBUTES,
    MAPI_N_RELATIONSHIPS,
    MAPI_N_KNOWN /* how many */
};

/* The first n <= 8 bytes of s as a zero-extended word.  padded: 8 bytes
   may be read at s (the word is the same either way). */
static inline uint64_t mapi_load_short(const char *s, size_t n, int padded)
{
    uint64_t w = 0;
    size_t i;

    if (padded) {
        if (n == 0)
            return 0;
        memcpy(&w, s, 8);
        return w & (~UINT64_C(0) >> (64 - 8 * n));
    }
    for (i = 0; i < n; i++)
        w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    return w;
}

/* A name's first 16 bytes, zero past its end (mapi_name.head): with its
   length, all a name of up to 16 bytes is compared by. */
static inline void mapi_name_head(const char *s, size_t n, int padded, uint64_t head[2])
{
    head[0] = mapi_load_short(s, n < 8 ? n : 8, padded);
    head[1] = n > 8 ? mapi_load_short(s + 8, n < 16 ? n - 8 : 8, padded) : 0;
}

/* ---- numbers ---- */

/* The plain decimal form of the valid JSON number s[0..n) (value.c), by
   mapi_value_decimal's rule (merchantapi.h).  Writes it to out (no NUL) when
   out is not NULL and returns its length: call it with NULL first for the
   room it needs. */
size_t mapi_decimal_form(const char *s, size_t n, char *out);

/* ---- reading a body ---- */

typedef enum mapi_json_status {
    MAPI_JSON_OK = 0,
    MAPI_JSON_MEMORY,    /* out of memory */
    MAPI_JSON_TOO_LARGE, /* beyond what the reader or a length field holds */
    MAPI_JSON_EOF,       /* unexpected end of input: empty, an unclosed string or container */
    MAPI_JSON_UTF8,      /* invalid UTF-8 */
    MAPI_JSON_CONTROL,   /* a control character (U+0000-U+001F) unescaped in a string */
    MAPI_JSON_STRING,    /* a bad escape: offset is the string's opening quote */
    MAPI_JSON_NUMBER,    /* a number outside RFC 8259's grammar ("1.", "01", "-") */
    MAPI_JSON_LITERAL,   /* a word that is not true, false or null, or a stray token */
    MAPI_JSON_SYNTAX,    /* a misplaced or missing ',', ':', bracket or brace */
    MAPI_JSON_TRAILING,  /* something after the document's value */
    MAPI_JSON_DEPTH,     /* nested deeper than the cap */
    MAPI_JSON_DUPLICATE  /* an object names a member twice: dup is the name */
} mapi_json_status;

typedef struct mapi_json_result {
    struct mapi_value root;
    size_t names;          /* distinct member names: ids 0 .. names - 1 */
    size_t offset;         /* failures: the byte where it was found, or (size_t)-1 */
    const mapi_name *dup;  /* MAPI_JSON_DUPLICATE: the name (in the arena) */
} mapi_json_result;

/* The deepest nesting the reader accepts, whatever max_depth asks. */
#define MAPI_JSON_MAX_DEPTH 1024

/* ---- the tree's writer (json_tree.c): what reading needs of no simdjson type ---- */

typedef struct mapi_tree {
    mapi_arena *arena;
    /* the members / elements of the containers being read, innermost last */
    mapi_member *mem;
    size_t nmem, capmem;
    struct mapi_value *val;
    size_t nval, capval;
    /* interned names: open addressing over mapi_name pointers */
    mapi_name **slots;
    size_t nslots, nnames;
    /* duplicate detection: stamps[id] == serial when seen in this object */
    uint32_t *stamps;
    size_t capstamps;
    uint32_t serial;
    const mapi_name *dup; /* the name an object held twice */
} mapi_tree;

/* t ready for a document into arena: the scratch arrays taken from kept
   (the arrays a thread keeps between documents; left empty), the names of
   enum mapi_known_name interned.  0, or -1 out of memory. */
int mapi_tree_begin(mapi_tree *t, mapi_tree *kept, mapi_arena *arena);
/* t's scratch arrays back into kept, or freed when too large to keep. */
void mapi_tree_end(mapi_tree *t, mapi_tree *kept);
/* Frees the scratch arrays of a kept tree (its thread ends). */
void mapi_tree_free(mapi_tree *kept);
/* Room for need elements of sz bytes in *arr (realloc'd, *cap doubled):
   0, or -1 out of memory. */
int mapi_tree_reserve(void **arr, size_t *cap, size_t need, size_t sz);
/* The interned name of s[0..n) with its head (mapi_name_head), made on
   first sight; NULL when out of memory.  padded: n + 8 bytes may be read
   at s. */
const mapi_name *mapi_tree_intern(mapi_tree *t, const char *s, size_t n, const uint64_t head[2],
                                  int padded);
/* 0 when no name comes twice among t->mem[base .. nmem), else -1 with t->dup. */
int mapi_tree_unique(mapi_tree *t, size_t base);
/* The number token s[0..n) (its padding may be read past s + n) checked
   against RFC 8259's grammar: *type MAPI_INT (at most 18 digits), MAPI_NUMBER,
   or MAPI_NULL for a token outside it (NULL returned).  Returns its text
   copied into the arena (mapi_value's MAPI_INT / MAPI_NUMBER), NULL when out
   of memory. */
const char *mapi_tree_number(mapi_tree *t, const char *s, size_t n, mapi_type *type);
/* Where the body buf[0..len) that simdjson found structurally wrong is
   wrong, by its brackets: MAPI_JSON_EOF (unclosed, *at = len),
   MAPI_JSON_DEPTH or MAPI_JSON_SYNTAX (*at the byte, or left as it is when
   the brackets match). */
mapi_json_status mapi_json_diagnose(const char *buf, size_t len, size_t *at);

/*
 * Reads buf[0..len) -- one JSON value (RFC 8259, UTF-8), containers nested
 * at most max_depth deep (1 .. MAPI_JSON_MAX_DEPTH) -- into out->root, every
 * node, number text and name allocated from arena.  buf must be followed by
 * MAPI_JSON_PADDING bytes that belong to it: they are set to zero.
 * orig NULL: buf is read in place and stays as it is (but for the
 * padding), string values are copied into the arena (a block of len).
 * orig not NULL (the same len bytes, unchanged; read on failures only):
 * buf becomes part of the tree -- string values stay in it, unescaped in
 * place, their closing quote (or a byte before it) overwritten by their
 * NUL -- so it must live as long as the arena, and is no longer the JSON
 * text; no copy is made.
 * Numbers keep their exact text; strings are unescaped (a \u0000 is a
 * byte of the string); objects keep their members in document order and
 * must not repeat a name.  Every string value of a member named "type" is
 * interned like a name (MAPI_TL_NAME).  Returns MAPI_JSON_OK, or what was
 * wrong with out->offset (and out->dup) set; the arena then holds partial
 * work that only mapi_arena_free releases.
 */
mapi_json_status mapi_json_parse(char *buf, size_t len, const char *orig, int max_depth,
                                 mapi_arena *arena, mapi_json_result *out);

#ifdef __cplusplus
}
#endif

#endif /* MAPI_JSON_PARSE_H */

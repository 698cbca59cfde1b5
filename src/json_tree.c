/*
 * json_tree.c -- the parts of the JSON reader that need no simdjson type
 * (json_parse.h), and where a body simdjson called wrong is wrong.
 */
#include <stdlib.h>
#include <string.h>

#include "json_parse.h"

#define MAX_LEN (((size_t)-1) >> MAPI_TL_SHIFT)
/* scratch arrays grown beyond these go back to malloc after a document */
#define KEEP_ENTRIES ((size_t)1 << 16)
#define KEEP_SLOTS ((size_t)4096)

int mapi_tree_reserve(void **arr, size_t *cap, size_t need, size_t sz)
{
    size_t c = *cap ? *cap : 64;
    void *p;

    if (need <= *cap)
        return 0;
    while (c < need) {
        if (c > ((size_t)-1) / 2 / sz)
            return -1;
        c *= 2;
    }
    p = realloc(*arr, c * sz);
    if (!p)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

/* ---- names ---- */

/* The well-known names, in the order of enum mapi_known_name. */
static const char *const KNOWN[MAPI_N_KNOWN] = {"data", "included", "meta", "jsonapi", "errors",
                                                "links", "type", "id", "lid", "attributes",
                                                "relationships"};

/* A hash of a name: its length and head, then eight bytes at a time.
   padded: s[0..n + 8) may be read; the hash is the same either way. */
static size_t hash_name(const char *s, size_t n, const uint64_t head[2], int padded)
{
    uint64_t h = mapi_hash_mix((uint64_t)n * UINT64_C(0xC2B2AE3D27D4EB4F), head[0]);
    if (n <= 8)
        return (size_t)h;
    h = mapi_hash_mix(h, head[1]);
    for (s += 16, n = n > 16 ? n - 16 : 0; n > 0; s += 8, n -= n < 8 ? n : 8)
        h = mapi_hash_mix(h, mapi_load_short(s, n < 8 ? n : 8, padded));
    return (size_t)h;
}

static int grow_names(mapi_tree *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 256, i, j;
    mapi_name **s;

    if (n > ((size_t)-1) / 4 / sizeof(mapi_name *))
        return -1;
    s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (i = 0; i < t->nslots; i++) {
        mapi_name *nm = t->slots[i];
        if (!nm)
            continue;
        j = hash_name(nm->s, nm->len, nm->head, 0) & (n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = nm;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return 0;
}

/* Compared by length and head, and the bytes past 16 when there are more. */
const mapi_name *mapi_tree_intern(mapi_tree *t, const char *s, size_t n, const uint64_t head[2],
                                  int padded)
{
    size_t mask, j;
    mapi_name *nm;
    char *text;

    if ((t->nnames + 1) * 2 > t->nslots && grow_names(t) != 0)
        return NULL;
    mask = t->nslots - 1;
    for (j = hash_name(s, n, head, padded) & mask; (nm = t->slots[j]) != NULL;
         j = (j + 1) & mask)
        if (nm->len == n && nm->head[0] == head[0] && nm->head[1] == head[1] &&
            (n <= 16 || memcmp(nm->s + 16, s + 16, n - 16) == 0))
            return nm;
    if (n >= MAX_LEN - sizeof(mapi_name) - 1 ||
        mapi_tree_reserve((void **)&t->stamps, &t->capstamps, t->nnames + 1, sizeof *t->stamps) != 0)
        return NULL;
    /* the bytes right after the struct: mapi_tl_name finds it from them */
    nm = mapi_arena_alloc(t->arena, sizeof(mapi_name) + n + 1);
    if (!nm)
        return NULL;
    text = (char *)(nm + 1);
    memcpy(text, s, n);
    text[n] = '\0';
    nm->s = text;
    nm->len = n;
    nm->id = t->nnames;
    nm->head[0] = head[0];
    nm->head[1] = head[1];
    t->stamps[t->nnames] = 0;
    t->nnames++;
    t->slots[j] = nm;
    return nm;
}

int mapi_tree_unique(mapi_tree *t, size_t base)
{
    size_t i;

    if (t->nmem - base < 2)
        return 0;
    if (++t->serial == 0) { /* wrapped: start the stamps over */
        memset(t->stamps, 0, t->nnames * sizeof *t->stamps);
        t->serial = 1;
    }
    for (i = base; i < t->nmem; i++) {
        size_t id = t->mem[i].name->id;
        if (t->stamps[id] == t->serial) {
            t->dup = t->mem[i].name;
            return -1;
        }
        t->stamps[id] = t->serial;
    }
    return 0;
}

/* ---- numbers ---- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* RFC 8259: -? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?  MAPI_INT for
   an integer of at most 18 digits, MAPI_NUMBER for any other valid number
   (*exp: it has an exponent), MAPI_NULL for an invalid token. */
static mapi_type number_class(const char *s, size_t n, int *exp)
{
    size_t i = 0, digits;
    int neg = 0, integer = 1;

    *exp = 0;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= n || !is_digit(s[i]))
        return MAPI_NULL;
    if (s[i] == '0') {
        i++;
        if (i < n && is_digit(s[i]))
            return MAPI_NULL; /* "01" */
    } else {
        while (i < n && is_digit(s[i]))
            i++;
    }
    digits = i - (size_t)neg;
    if (i < n && s[i] == '.') {
        integer = 0;
        if (++i >= n || !is_digit(s[i]))
            return MAPI_NULL; /* "1." */
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        integer = 0;
        *exp = 1;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || !is_digit(s[i]))
            return MAPI_NULL; /* "1e" */
        while (i < n && is_digit(s[i]))
            i++;
    }
    if (i != n)
        return MAPI_NULL;
    if (!integer)
        return MAPI_NUMBER;
    /* int64_t holds every integer of 18 digits; 19 and more stay text
       (mapi_value_number_text gives them), whatever their value */
    return digits < 19 ? MAPI_INT : MAPI_NUMBER;
}

const char *mapi_tree_number(mapi_tree *t, const char *s, size_t n, mapi_type *type)
{
    int exp;
    size_t d, i;
    char *p;

    *type = number_class(s, n, &exp);
    if (*type == MAPI_NULL)
        return NULL;
    if (exp) {
        /* the text, a NUL, its decimal form (what mapi_value_decimal gives), a NUL */
        d = mapi_decimal_form(s, n, NULL);
        p = mapi_arena_alloc(t->arena, n + d + 2);
        if (!p)
            return NULL;
        memcpy(p, s, n);
        mapi_decimal_form(s, n, p + n + 1);
        p[n + 1 + d] = '\0';
    } else {
        /* the byte after a number is the reader's (a comma, a bracket),
           never overwritten.  Texts are short: 16 bytes at a time (from
           the padded body) costs less than a call of memcpy. */
        p = mapi_arena_alloc(t->arena, n + 16);
        if (!p)
            return NULL;
        if (n < 64) {
            for (i = 0; i < n; i += 16)
                memcpy(p + i, s + i, 16);
        } else {
            memcpy(p, s, n);
        }
    }
    p[n] = '\0';
    return p;
}

/* ---- the scratch arrays ---- */

int mapi_tree_begin(mapi_tree *t, mapi_tree *kept, mapi_arena *arena)
{
    int i;
    uint64_t head[2];

    *t = *kept;
    memset(kept, 0, sizeof *kept);
    t->arena = arena;
    t->nmem = t->nval = t->nnames = 0;
    t->serial = 0;
    t->dup = NULL;
    if (t->slots)
        memset(t->slots, 0, t->nslots * sizeof *t->slots);
    for (i = 0; i < MAPI_N_KNOWN; i++) {
        size_t n = strlen(KNOWN[i]);
        mapi_name_head(KNOWN[i], n, 0, head);
        if (!mapi_tree_intern(t, KNOWN[i], n, head, 0))
            return -1;
    }
    return 0;
}

/* Frees the array *p of *cap entries when it holds more than keep. */
static void drop_above(void **p, size_t *cap, size_t keep)
{
    if (*cap > keep) {
        free(*p);
        *p = NULL;
        *cap = 0;
    }
}

void mapi_tree_end(mapi_tree *t, mapi_tree *kept)
{
    drop_above((void **)&t->mem, &t->capmem, KEEP_ENTRIES);
    drop_above((void **)&t->val, &t->capval, KEEP_ENTRIES);
    drop_above((void **)&t->slots, &t->nslots, KEEP_SLOTS);
    drop_above((void **)&t->stamps, &t->capstamps, KEEP_SLOTS);
    *kept = *t;
    kept->arena = NULL;
    kept->dup = NULL;
}

void mapi_tree_free(mapi_tree *kept)
{
    free(kept->mem);
    free(kept->val);
    free(kept->slots);
    free(kept->stamps);
    memset(kept, 0, sizeof *kept);
}

/* ---- failures ---- */

mapi_json_status mapi_json_diagnose(const char *buf, size_t len, size_t *at)
{
    uint64_t stack[MAPI_JSON_MAX_DEPTH / 64 + 1] = {0};
    size_t depth = 0;
    const char *p = buf, *end = buf + len;

    for (; p < end; p++) {
        char c = *p;
        if (c == '"') {
            for (p++; p < end && *p != '"'; p++)
                if (*p == '\\')
                    p++;
        } else if (c == '{' || c == '[') {
            if (depth >= MAPI_JSON_MAX_DEPTH) {
                *at = (size_t)(p - buf);
                return MAPI_JSON_DEPTH;
            }
            if (c == '[')
                stack[depth / 64] |= UINT64_C(1) << (depth % 64);
            else
                stack[depth / 64] &= ~(UINT64_C(1) << (depth % 64));
            depth++;
        } else if ((c == '}' || c == ']') &&
                   (depth-- == 0 ||
                    ((stack[depth / 64] >> (depth % 64)) & 1) != (uint64_t)(c == ']'))) {
            *at = (size_t)(p - buf);
            return MAPI_JSON_SYNTAX;
        }
    }
    if (depth > 0) {
        *at = len;
        return MAPI_JSON_EOF;
    }
    return MAPI_JSON_SYNTAX;
}

/*
 * limit.cpp -- the honest limit of a call, for `make bench`: a program that
 * does only the work client:get_channel must do, in a loop, and nothing else.
 * Each call:
 *   - the GET of the channel on one reused libcurl easy handle (connection
 *     kept alive; HTTP/2 over TLS when offered, libcurl's default), with
 *     the request headers curl_loop.c sends, the response headers kept;
 *   - simdjson's On-Demand parse of the body (the parser reused);
 *   - the values client:get_channel returns, built with the Lua C API in
 *     one lua_State: `channel, nil, res`.  The channel and its targetAccount
 *     are tables of id, type and the non-null attributes, the relationship
 *     resolved to the included table; each resource with relationships has
 *     the document's holder as metatable ({[1] = body, [2] = weak-valued
 *     slots, [5] = a mark}); res is { status, request_id, elapsed, headers
 *     (lower-case names), meta, jsonapi, body, document (a closure on the
 *     body) }.  The results are then dropped, as a caller's loop does.
 * Left out, as the module must do them and the limit need not: the
 * exchange (retries, the outcome rule, hooks, the debug line), options and
 * their checks, the response framing check, JSON:API validation (duplicate
 * members, member names, number and literal rules, the (type, id) index
 * beyond a scan), error documents and error mapping.
 *
 *   limit URL SECONDS [CAFILE]
 *
 * Prints "calls N seconds S": N complete calls in S seconds of looping
 * (after one warm-up call that opens the connection).  Exits 1 on a failed
 * call.  The api key comes from MERCHANTAPI_API_KEY.  A bench tool in C++
 * because simdjson's API is C++; not part of the library.
 */
#include <simdjson.h>

#include <lua.hpp>

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

using namespace simdjson;

/* A growing byte buffer with SIMDJSON_PADDING spare bytes past len. */
struct buffer {
    char *data;
    size_t len, cap;
    int oom;
};

static int reserve(buffer *b, size_t n)
{
    size_t need = b->len + n + SIMDJSON_PADDING, cap = b->cap ? b->cap : 16384;
    char *p;

    if (need <= b->cap)
        return 0;
    while (cap < need)
        cap *= 2;
    p = static_cast<char *>(realloc(b->data, cap));
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    buffer *b = static_cast<buffer *>(userdata);
    size_t n = size * nmemb;

    if (reserve(b, n) < 0)
        return 0;
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return n;
}

/* The response headers: "name\0value\0" pairs, the name lower-cased; a new
   status line (an interim 1xx answer) starts them again. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
    buffer *b = static_cast<buffer *>(userdata);
    size_t n = size * nmemb, i, colon, end = n;
    char *out;

    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        b->len = 0;
        return n;
    }
    for (colon = 0; colon < n && data[colon] != ':'; colon++)
        ;
    if (colon == 0 || colon == n)
        return n; /* the blank line ending the head */
    while (end > colon + 1 && (data[end - 1] == '\r' || data[end - 1] == '\n' ||
                               data[end - 1] == ' ' || data[end - 1] == '\t'))
        end--;
    i = colon + 1;
    while (i < end && (data[i] == ' ' || data[i] == '\t'))
        i++;
    if (reserve(b, n + 2) < 0)
        return 0;
    out = b->data + b->len;
    for (size_t k = 0; k < colon; k++)
        *out++ = static_cast<char>(tolower(static_cast<unsigned char>(data[k])));
    *out++ = '\0';
    memcpy(out, data + i, end - i);
    out += end - i;
    *out++ = '\0';
    b->len = static_cast<size_t>(out - b->data);
    return n;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

/* ------------------------------------------------------------------------ */
/* The Lua values                                                           */
/* ------------------------------------------------------------------------ */

static const char holder_mark = 'h';
#define WEAK_V "limit.weak_v"
#define MAX_DEPTH 64

/* res.document: returns the body again (the module's parses it on demand). */
static int res_document(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    return 1;
}

/* Pushes a JSON value as a Lua value (null: nil; an integer that fits: an
   integer; another number: its text).  Returns 0, or -1 on a bad value. */
static int push_value(lua_State *L, ondemand::value v, int depth)
{
    ondemand::json_type t;
    std::string_view s;

    if (depth > MAX_DEPTH || v.type().get(t) != SUCCESS)
        return -1;
    switch (t) {
    case ondemand::json_type::object: {
        ondemand::object obj;
        if (v.get_object().get(obj) != SUCCESS)
            return -1;
        lua_createtable(L, 0, 4);
        for (auto fr : obj) {
            ondemand::field f;
            ondemand::value x;
            bool null;
            if (std::move(fr).get(f) != SUCCESS || f.unescaped_key().get(s) != SUCCESS)
                return -1;
            x = f.value();
            if (x.is_null().get(null) != SUCCESS)
                return -1;
            if (null)
                continue;
            lua_pushlstring(L, s.data(), s.size());
            if (push_value(L, x, depth + 1) < 0)
                return -1;
            lua_rawset(L, -3);
        }
        return 0;
    }
    case ondemand::json_type::array: {
        ondemand::array arr;
        lua_Integer i = 0;
        if (v.get_array().get(arr) != SUCCESS)
            return -1;
        lua_createtable(L, 4, 0);
        for (auto er : arr) {
            ondemand::value x;
            if (std::move(er).get(x) != SUCCESS || push_value(L, x, depth + 1) < 0)
                return -1;
            lua_rawseti(L, -2, ++i);
        }
        return 0;
    }
    case ondemand::json_type::string:
        if (v.get_string().get(s) != SUCCESS)
            return -1;
        lua_pushlstring(L, s.data(), s.size());
        return 0;
    case ondemand::json_type::boolean: {
        bool b;
        if (v.get_bool().get(b) != SUCCESS)
            return -1;
        lua_pushboolean(L, b);
        return 0;
    }
    case ondemand::json_type::number: {
        int64_t n;
        if (v.get_int64().get(n) == SUCCESS) {
            lua_pushinteger(L, static_cast<lua_Integer>(n));
            return 0;
        }
        s = v.raw_json_token();
        while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' ||
                              s.back() == '\t' || s.back() == ',' || s.back() == '}' ||
                              s.back() == ']'))
            s.remove_suffix(1);
        lua_pushlstring(L, s.data(), s.size());
        return 0;
    }
    case ondemand::json_type::null:
        lua_pushnil(L);
        return 0;
    }
    return -1;
}

/* A to-one relationship waiting for its target: the resource (slot index),
   its name and the target's type and id (views into the parser's buffer,
   valid until the next parse). */
struct pending {
    int slot;
    std::string_view name, type, id;
};

struct walk {
    lua_State *L;
    int slots, holder, body;
    int n;                      /* resources in slots */
    std::string_view type[16], id[16];
    pending rel[16];
    int nrel;
};

/* Makes the holder (once) and sets it as the metatable of the table on top. */
static void set_holder(walk *w)
{
    lua_State *L = w->L;
    if (lua_isnil(L, w->holder)) {
        lua_createtable(L, 5, 0);
        lua_pushvalue(L, w->body);
        lua_rawseti(L, -2, 1);
        lua_pushvalue(L, w->slots);
        lua_rawseti(L, -2, 2);
        lua_pushlightuserdata(L, const_cast<char *>(&holder_mark));
        lua_rawseti(L, -2, 5);
        lua_replace(L, w->holder);
    }
    lua_pushvalue(L, w->holder);
    lua_setmetatable(L, -2);
}

/* One resource object: its table into slots.  Returns 0 or -1. */
static int push_resource(walk *w, ondemand::value v)
{
    lua_State *L = w->L;
    ondemand::object obj;
    std::string_view key, type, id;
    int extras = 0;

    if (w->n >= 16 || v.get_object().get(obj) != SUCCESS)
        return -1;
    lua_createtable(L, 0, 16);
    for (auto fr : obj) {
        ondemand::field f;
        if (std::move(fr).get(f) != SUCCESS || f.unescaped_key().get(key) != SUCCESS)
            return -1;
        ondemand::value x = f.value();
        if (key == "id" || key == "type") {
            std::string_view s;
            if (x.get_string().get(s) != SUCCESS)
                return -1;
            (key == "id" ? id : type) = s;
            lua_pushlstring(L, key.data(), key.size());
            lua_pushlstring(L, s.data(), s.size());
            lua_rawset(L, -3);
        } else if (key == "attributes") {
            ondemand::object attrs;
            if (x.get_object().get(attrs) != SUCCESS)
                return -1;
            for (auto ar : attrs) {
                ondemand::field a;
                ondemand::value av;
                bool null;
                if (std::move(ar).get(a) != SUCCESS || a.unescaped_key().get(key) != SUCCESS)
                    return -1;
                av = a.value();
                if (av.is_null().get(null) != SUCCESS)
                    return -1;
                if (null)
                    continue;
                lua_pushlstring(L, key.data(), key.size());
                if (push_value(L, av, 1) < 0)
                    return -1;
                lua_rawset(L, -3);
            }
        } else if (key == "relationships") {
            ondemand::object rels;
            if (x.get_object().get(rels) != SUCCESS)
                return -1;
            for (auto rr : rels) {
                ondemand::field r;
                ondemand::object ro;
                std::string_view name;
                extras = 1;
                if (std::move(rr).get(r) != SUCCESS || r.unescaped_key().get(name) != SUCCESS ||
                    r.value().get_object().get(ro) != SUCCESS)
                    return -1;
                for (auto mr : ro) {
                    ondemand::field m;
                    ondemand::object link;
                    pending p = {w->n, name, {}, {}};
                    if (std::move(mr).get(m) != SUCCESS || m.unescaped_key().get(key) != SUCCESS)
                        return -1;
                    if (key != "data")
                        continue;
                    if (m.value().get_object().get(link) != SUCCESS)
                        continue; /* null or to-many: not in the channel */
                    if (link["type"].get_string().get(p.type) != SUCCESS ||
                        link["id"].get_string().get(p.id) != SUCCESS || w->nrel >= 16)
                        return -1;
                    w->rel[w->nrel++] = p;
                }
            }
        } else if (key == "links" || key == "meta") {
            extras = 1;
        }
    }
    if (extras)
        set_holder(w);
    w->type[w->n] = type;
    w->id[w->n] = id;
    lua_rawseti(L, w->slots, ++w->n);
    return 0;
}

/*
 * Pushes `channel, nil, res` for the body in buf (len bytes, padded) and
 * the headers in hdr.  Returns 0, or -1 when the body is not the document
 * expected.
 */
static int push_results(lua_State *L, ondemand::parser &parser, const buffer *buf,
                        const buffer *hdr, long status, double elapsed)
{
    ondemand::document doc;
    ondemand::object root;
    std::string_view key;
    walk w;
    int top = lua_gettop(L), meta, jsonapi, data_slot = 0;
    const char *request_id = NULL;

    if (parser.iterate(padded_string_view(buf->data, buf->len, buf->cap)).get(doc) != SUCCESS ||
        doc.get_object().get(root) != SUCCESS)
        return -1;
    lua_pushlstring(L, buf->data, buf->len); /* top + 1: body */
    lua_createtable(L, 2, 0);                /* top + 2: slots */
    lua_pushnil(L);                          /* top + 3: holder, when needed */
    lua_pushnil(L);                          /* top + 4: meta */
    lua_pushnil(L);                          /* top + 5: jsonapi */
    w.L = L;
    w.body = top + 1;
    w.slots = top + 2;
    w.holder = top + 3;
    meta = top + 4;
    jsonapi = top + 5;
    w.n = w.nrel = 0;
    for (auto fr : root) {
        ondemand::field f;
        if (std::move(fr).get(f) != SUCCESS || f.unescaped_key().get(key) != SUCCESS)
            return -1;
        ondemand::value v = f.value();
        if (key == "data") {
            if (push_resource(&w, v) < 0)
                return -1;
            data_slot = w.n;
        } else if (key == "included") {
            ondemand::array arr;
            if (v.get_array().get(arr) != SUCCESS)
                return -1;
            for (auto er : arr) {
                ondemand::value x;
                if (std::move(er).get(x) != SUCCESS || push_resource(&w, x) < 0)
                    return -1;
            }
        } else if (key == "meta" || key == "jsonapi") {
            if (push_value(L, v, 0) < 0)
                return -1;
            lua_replace(L, key == "meta" ? meta : jsonapi);
        }
    }
    if (data_slot == 0)
        return -1;
    /* the relationships, resolved by a scan of (type, id) */
    for (int i = 0; i < w.nrel; i++) {
        const pending *p = &w.rel[i];
        lua_rawgeti(L, w.slots, p->slot + 1);
        lua_pushlstring(L, p->name.data(), p->name.size());
        for (int j = 0; j < w.n; j++) {
            if (w.type[j] == p->type && w.id[j] == p->id) {
                lua_rawgeti(L, w.slots, j + 1);
                break;
            }
            if (j == w.n - 1)
                lua_pushnil(L);
        }
        lua_rawset(L, -3);
        lua_pop(L, 1);
    }
    if (!lua_isnil(L, w.holder)) {
        luaL_getmetatable(L, WEAK_V);
        lua_setmetatable(L, w.slots);
    }

    lua_rawgeti(L, w.slots, data_slot); /* channel */
    lua_pushnil(L);
    lua_createtable(L, 0, 10); /* res */
    lua_pushinteger(L, status);
    lua_setfield(L, -2, "status");
    lua_createtable(L, 0, 8);
    for (size_t off = 0; off < hdr->len;) {
        const char *name = hdr->data + off, *value = name + strlen(name) + 1;
        if (strcmp(name, "x-request-id") == 0)
            request_id = value;
        lua_pushstring(L, value);
        lua_setfield(L, -2, name);
        off = static_cast<size_t>(value - hdr->data) + strlen(value) + 1;
    }
    lua_setfield(L, -2, "headers");
    if (request_id) {
        lua_pushstring(L, request_id);
        lua_setfield(L, -2, "request_id");
    }
    lua_pushnumber(L, elapsed);
    lua_setfield(L, -2, "elapsed");
    lua_pushvalue(L, meta);
    lua_setfield(L, -2, "meta");
    lua_pushvalue(L, jsonapi);
    lua_setfield(L, -2, "jsonapi");
    lua_pushvalue(L, w.body);
    lua_setfield(L, -2, "body");
    lua_pushvalue(L, w.body);
    lua_pushnil(L);
    lua_pushcclosure(L, res_document, 2);
    lua_setfield(L, -2, "document");
    /* channel, nil, res in place of the work slots */
    for (int i = 3; i >= 1; i--)
        lua_replace(L, top + i);
    lua_settop(L, top + 3);
    return 0;
}

/* ------------------------------------------------------------------------ */

struct state {
    CURL *easy;
    buffer body, hdr;
    ondemand::parser parser;
    lua_State *L;
};

static int one_call(state *s)
{
    long status = 0;
    double elapsed = 0;
    CURLcode rc;
    lua_State *L = s->L;

    s->body.len = 0;
    s->hdr.len = 0;
    rc = curl_easy_perform(s->easy);
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(s->easy, CURLINFO_TOTAL_TIME, &elapsed);
    if (rc != CURLE_OK || status != 200 || s->body.oom || s->hdr.oom) {
        fprintf(stderr, "limit: %s, status %ld\n", curl_easy_strerror(rc), status);
        return -1;
    }
    if (push_results(L, s->parser, &s->body, &s->hdr, status, elapsed) < 0) {
        fprintf(stderr, "limit: the body is not the channel document\n");
        lua_settop(L, 0);
        return -1;
    }
    /* what calls.lua checks of the channel: channel.targetAccount.currencyCode */
    lua_getfield(L, -3, "targetAccount");
    if (lua_type(L, -1) != LUA_TTABLE || lua_getfield(L, -1, "currencyCode") != LUA_TSTRING) {
        fprintf(stderr, "limit: the channel has no targetAccount.currencyCode\n");
        lua_settop(L, 0);
        return -1;
    }
    lua_settop(L, 0);
    return 0;
}

int main(int argc, char **argv)
{
    const char *key = getenv("MERCHANTAPI_API_KEY");
    struct curl_slist *headers = NULL, *l;
    char auth[512];
    state s;
    double seconds, t0, t = 0;
    long calls = 0;
    int rc = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: limit URL SECONDS [CAFILE]\n");
        return 2;
    }
    seconds = atof(argv[2]);
    memset(&s.body, 0, sizeof s.body);
    memset(&s.hdr, 0, sizeof s.hdr);
    s.L = luaL_newstate();
    if (!s.L || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    luaL_newmetatable(s.L, WEAK_V);
    lua_pushliteral(s.L, "v");
    lua_setfield(s.L, -2, "__mode");
    lua_settop(s.L, 0);
    s.easy = curl_easy_init();
    if (!s.easy)
        return 1;
    l = curl_slist_append(headers, "Content-Type: application/vnd.api+json");
    if (l)
        l = curl_slist_append(headers = l, "Accept: application/vnd.api+json");
    if (l && key && *key &&
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", key) < static_cast<int>(sizeof auth))
        l = curl_slist_append(headers = l, auth);
    if (!l) {
        curl_slist_free_all(headers);
        curl_easy_cleanup(s.easy);
        return 1;
    }
    headers = l;
    curl_easy_setopt(s.easy, CURLOPT_URL, argv[1]);
    curl_easy_setopt(s.easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(s.easy, CURLOPT_USERAGENT, "limit");
    curl_easy_setopt(s.easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s.easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(s.easy, CURLOPT_WRITEDATA, &s.body);
    curl_easy_setopt(s.easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(s.easy, CURLOPT_HEADERDATA, &s.hdr);
    curl_easy_setopt(s.easy, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(s.easy, CURLOPT_SSL_VERIFYHOST, 2L);
    if (argc > 3 && *argv[3])
        curl_easy_setopt(s.easy, CURLOPT_CAINFO, argv[3]);

    if (one_call(&s) < 0) {
        rc = 1;
    } else {
        t0 = now();
        do {
            if (one_call(&s) < 0) {
                rc = 1;
                break;
            }
            calls++;
            t = now() - t0;
        } while (t < seconds);
        if (rc == 0)
            printf("calls %ld seconds %.6f\n", calls, t);
    }
    free(s.body.data);
    free(s.hdr.data);
    curl_slist_free_all(headers);
    curl_easy_cleanup(s.easy);
    curl_global_cleanup();
    lua_close(s.L);
    return rc;
}

/*
 * lua_binding.h -- what the C files of merchantapi.core share.  Not
 * installed; every symbol is hidden (the module exports only
 * luaopen_merchantapi_core).  docs/architecture.md's "Layout" names each
 * file's job; one section below per file.  A declaration without a comment
 * is documented at its definition.  The header of the binding's base
 * (floor 80 of docs/architecture.md's "The layers"): it includes the
 * drivers' header (drivers.h, and through it every layer of the core below
 * them) and no header of the binding above its base.
 */
#ifndef MAPI_LUA_BINDING_H
#define MAPI_LUA_BINDING_H

#include "merchantapi.h"
#include "lua_compat.h"
#include "drivers.h"

/* Metatables, in the registry under these names. */
#define CLIENT_MT "merchantapi.client"
#define EXCHANGE_MT "merchantapi.exchange"
#define ERROR_MT "merchantapi.error"

/* The binding's own raised errors, one text each: a stack without room for
   the values to push (luaL_checkstack), an allocation that failed. */
#define MAPI_LUA_NO_STACK "merchantapi: out of stack space"
#define MAPI_LUA_NO_MEMORY "merchantapi: out of memory"

/* ---- the base: lifetimes, metatables, the client's hold (lua_base.c) ---- */

/* luaL_newmetatable with __name; the metatable is left on the stack. */
void mapi_lua_new_metatable(lua_State *L, const char *name);
/* Registers the metatable of a userdata: __name, __index = a table of the
   methods (a NULL-terminated list; NULL: none, an anchor), __gc = gc. */
void mapi_lua_class_metatable(lua_State *L, const char *name, const luaL_Reg *methods,
                              lua_CFunction gc);
/* Registers the anchors' metatable. */
void mapi_lua_base_open(lua_State *L);

/* The anchor of a call's document and error, or of an error alone: a
   userdata that owns C memory across Lua calls (freed by __gc, or at once by
   the code that made it; one finalizer per call instead of two). */
#define CALL_BOX_MT "merchantapi.call_box"
typedef struct call_box {
    mapi_doc *doc;
    mapi_error err;
} call_box;

/* Pushes a new empty anchor (its metatable set). */
call_box *mapi_lua_push_call_box(lua_State *L);

/* Pushes the body of resp as a string ("" for none). */
void mapi_lua_push_body(lua_State *L, const mapi_response *resp);
/* t[key] = value on the table on top (nothing for value NULL); t[key] = an
   integer; t[key] = a number. */
void mapi_lua_set_string(lua_State *L, const char *key, const char *value);
void mapi_lua_set_int(lua_State *L, const char *key, long value);
void mapi_lua_set_number(lua_State *L, const char *key, double value);

/* Anchored strings (lua_base.c): one table per Lua state, kept in the
   registry, holding the Lua strings of the keys the binding sets on every
   call, so that a call fetches each by index instead of hashing its bytes
   into Lua's string table again.  Slots 1 .. MAPI_LIT_COUNT - 1: the
   literal keys below; then the names of documents by their number
   (mapi_members_name_id), and the names of a response's headers by their
   position: each kept from the last call that met one (at most
   MAPI_LUA_NAME_MAX bytes), and used only when its bytes are the name's
   (mapi_lua_push_name). */
enum mapi_lua_lit {
    MAPI_LIT_STATUS = 1, MAPI_LIT_REQUEST_ID, MAPI_LIT_ELAPSED, MAPI_LIT_HEADERS,
    MAPI_LIT_META, MAPI_LIT_JSONAPI, MAPI_LIT_LINKS, MAPI_LIT_BODY, MAPI_LIT_DOCUMENT,
    MAPI_LIT_SETTLED_BY, MAPI_LIT_METHOD, MAPI_LIT_URL, MAPI_LIT_TIMEOUT,
    MAPI_LIT_CONNECT_TIMEOUT, MAPI_LIT_MAX_BODY, MAPI_LIT_FRESH_CONNECTION, MAPI_LIT_ATTEMPT,
    MAPI_LIT_ID, MAPI_LIT_TYPE, MAPI_LIT_LID, MAPI_LIT_RETRY, MAPI_LIT_DONE,
    MAPI_LIT_COUNT
};
/* The slots of document names (by number) and of header names (by position). */
#define MAPI_LUA_NAME_SLOTS 256
#define MAPI_LUA_HEADER_SLOTS 32
/* Names longer than this (bytes) are not kept. */
#define MAPI_LUA_NAME_MAX 64
#define MAPI_LUA_NAME_SLOT(id) (MAPI_LIT_COUNT + (int)(id))
#define MAPI_LUA_HEADER_SLOT(i) (MAPI_LIT_COUNT + MAPI_LUA_NAME_SLOTS + (int)(i))
/* Pushes the anchors' table (made at the first call in a state); returns its
   stack index. */
int mapi_lua_push_anchors(lua_State *L);
/* Pushes the string s[0..len) through the anchors at stack index anchors,
   slot (MAPI_LUA_NAME_SLOT / MAPI_LUA_HEADER_SLOT): the one kept there when
   it has these bytes, else a new one, kept there for the next call. */
void mapi_lua_push_name(lua_State *L, int anchors, int slot, const char *s, size_t len);
/* t[lit] = the value on top (popped), t the table at stack index t (absolute). */
void mapi_lua_set_lit(lua_State *L, int anchors, int t, int lit);

/* Pushes a body box: a copy of doc's body in the C heap, freed by the box's
   __gc -- what a page's holder keeps (lua_values.c), whose body no Lua
   string holds: a page's body (300 KB at 1,000 addresses) made a Lua string
   would charge the collector with it at once, paid in a loop step's piece.
   Raises out of memory (the box owns nothing yet). */
void mapi_lua_push_body_box(lua_State *L, const mapi_doc *doc);
/* The body held by the value at idx (> 0): a string or a body box; NULL for
   anything else or an empty box. */
const char *mapi_lua_body_of(lua_State *L, int idx, size_t *len);

/* The context of the observer that runs hooks (mapi_lua_observer,
   lua_transport.c), a client's or a loop call's: L the thread running
   the call, ref the registry ref of the table holding on_request and
   on_response, which receives hook_raised and hook_error (the first
   error a hook raised), and busy the client's flag, set while a hook
   runs.  Hooks run under a protected
   call: an error is recorded, never raised. */
typedef struct mapi_lua_hooks {
    lua_State *L;
    int ref;
    int *busy;
} mapi_lua_hooks;

/* The client userdata (lua_client.c makes it and gives it its methods). */
typedef struct client_box {
    mapi_client *client;  /* NULL once closed */
    int holds;            /* calls under way (mapi_lua_client_hold) */
    int close_pending;    /* close() came while holds > 0: closed at the last release */
    int busy;             /* one of its hooks is running */
    mapi_lua_hooks hooks; /* the client's observer (hooks.ref: LUA_NOREF without hooks) */
} client_box;

/* The client userdata at idx (raises when idx holds something else). */
client_box *mapi_lua_check_client(lua_State *L, int idx);
/* client:close(): frees the handle now, or, while calls hold it, marks it
   closed for new calls and frees it at the last release. */
void mapi_lua_client_close(lua_State *L, client_box *cb);
/* For a call under way (a prepared exchange, a call with hooks): the
   mapi_client of the client userdata at idx, held so that close() waits
   for the call's end; NULL (nothing held) when closed.  *busy (when busy is
   not NULL): the client's flag that is set while one of its hooks runs.
   The client's own hooks (over libcurl) then run on L's thread.  Each hold
   is ended by one release, which frees the client when a close() came
   meanwhile. */
mapi_client *mapi_lua_client_hold(lua_State *L, int idx, int **busy);
void mapi_lua_client_release(lua_State *L, int idx);
/* A hold kept with a registry ref of the client at idx (*ref; LUA_NOREF
   and NULL when closed); again: a further hold for a call holding it
   already, which a close() meanwhile does not refuse.  The ref is taken
   before the check (its allocation may run a __gc that closes). */
mapi_client *mapi_lua_client_ref(lua_State *L, int idx, int again, int *ref);
/* The release of a hold kept with a registry ref of the client (*ref, made
   LUA_NOREF; nothing for LUA_NOREF): an exchange's, a page batch's. */
void mapi_lua_client_unref(lua_State *L, int *ref);
/* The title of the usage error of a call on a client closed (or closing). */
#define MAPI_LUA_CLIENT_CLOSED "the client is closed"

/* The exchange userdata: one call built once (lua_client.c), driven by a
   Lua transport, and what it holds between Lua calls. */
typedef struct exchange_box exchange_box;
struct exchange_box {
    struct mapi_exchange *x; /* NULL until built */
    mapi_response *pending;  /* a response being built from the transport's table */
    mapi_doc *doc;           /* the call's document once done (until x:result) */
    mapi_error err;          /* the attempt's error; the call's once done */
    int state;               /* lua_transport.c's X_ states */
    int on_loop;             /* 1 while a loop (lua_loop.c) runs the call; 2: and __gc
                                came meanwhile (lua_close finalizes in any order): the
                                loop frees what the box holds when it lets go */
    int cref;                /* registry ref of the client it holds, or LUA_NOREF */
};

/* exchange_box.state: idle (an attempt may begin), an attempt under way,
   the call done (x:result() may be taken), the result taken.  A loop
   (lua_loop.c) holds an exchange in X_SENDING for the whole call. */
enum { X_IDLE = 0, X_SENDING, X_DONE, X_TAKEN };

/* Pushes a new empty exchange userdata (freed by __gc). */
exchange_box *mapi_lua_push_exchange_box(lua_State *L);
/* The exchange's __gc (lua_transport.c registers its metatable). */
int mapi_lua_exchange_box_gc(lua_State *L);
/* Frees what xb holds (its exchange, response, document, error) and lets
   go of its client: __gc's work, done by the loop for a box finalized
   while its call ran. */
void mapi_lua_exchange_box_clear(lua_State *L, exchange_box *xb);

/* ---- the response object, results (lua_response.c) ---- */

/* The results of a call that succeeded, on a document and an error whose
   owner anchors them (a call_box, an exchange): value, nil, res -- value
   merchantapi.null when the document has no primary data (data null, a
   meta-only document, a 2xx without a body): truthy on every success -- or
   nil, err, message with err.res when err is set (decode's verdict,
   mapi_doc_error; a call's documents were judged by the exchange).  *docp
   is freed and set to NULL, err cleared.  body: the stack index of the body
   string, or 0 to take the document's.  Returns 3. */
int mapi_lua_push_doc_results(lua_State *L, mapi_doc **docp, mapi_error *err, int body);
/* The results of a call that failed: nil, err, message
   (mapi_lua_error_table_results), with err.res the response when one came; clears the error.  res carries
   meta, jsonapi and links when the answer's body is a JSON:API document (an
   error document, or a 2xx the call refused), as on success.  Returns 3. */
int mapi_lua_push_err_results(lua_State *L, mapi_error *err);
int mapi_lua_decode(lua_State *L);
/* Registers the anchors', weak tables' and errors' metatables. */
void mapi_lua_convert_open(lua_State *L);

/* ---- Lua values from documents (lua_values.c) ---- */

void mapi_lua_push_doc_members(lua_State *L, const mapi_doc *doc);
int mapi_lua_push_flattened(lua_State *L, const mapi_doc *doc, int meta, int links, int body);
/* Pushes the flattened primary data of doc alone, with its own body, meta
   and links (a list's page, a settled confirm's payout); 0 and nothing
   pushed when doc has no primary data. */
int mapi_lua_push_data(lua_State *L, const mapi_doc *doc);
/*
 * One conversion of doc's resources into tables, at once
 * (mapi_lua_push_flattened) or in pieces (lua_pages.c): the caller pushes
 * three stack slots from `slots` on -- the slot array (resource index + 1
 * -> its table), the holder, the key cache's table: each nil until made
 * here -- and runs steps [from, to) of 2n (n resources: step i makes
 * resource i's table, step n + i sets its relationships, once every table
 * is made).  Returns 0, the three values left at slots for the next steps;
 * or, when `to` is 2n, 1 with the value in the slot of slots (a list's
 * array with .meta and .links, the values at stack indexes meta and links,
 * or the one resource's table) and the rest popped.  doc must be alive and
 * unchanged from the first step to the last; body as for
 * mapi_lua_push_flattened.  A document without primary data (not a list,
 * no data) is the caller's to refuse.
 */
int mapi_lua_flatten_steps(lua_State *L, const mapi_doc *doc, int slots, size_t from, size_t to,
                           int meta, int links, int body);
/* Pushes the whole document (res:document()): unflattened, JSON null as
   merchantapi.null. */
void mapi_lua_push_root(lua_State *L, const mapi_doc *doc);
int mapi_lua_resource_info(lua_State *L);
/* Registers the weak tables' metatables. */
void mapi_lua_values_open(lua_State *L);

/* ---- the error object (lua_error.c) ---- */

/* Pushes the contract's error table for e (every field; docs/contract.md
   "Errors"), with the merchantapi.error metatable. */
void mapi_lua_push_error(lua_State *L, const mapi_error *e);
/* The results (nil, err, message: mapi_lua_error_table_results) of a new
   error the binding makes itself (a closed client, an id with a NUL
   byte): kind, title, method; outcome "not_sent" when method may move money (the core's rule,
   mapi_error_tag_not_sent).  Returns 3. */
int mapi_lua_new_error_results(lua_State *L, const char *kind, const char *title,
                               const char *method);
/* The results of every failure of the Lua module: the error table on top
   of the stack becomes nil, err, message -- message its one-line `message`,
   last so that LuaJIT's `assert`, which raises its last argument, raises a
   string (OpenResty logs a table as "unknown reason"); what else the
   failure carries (the response: `res`) is a field of err.  Returns 3. */
int mapi_lua_error_table_results(lua_State *L);
/* The kind named name ("usage"; mapi_error_kind_name), MAPI_ERR_NONE for
   none (NULL, or no kind's name). */
mapi_error_kind mapi_lua_error_kind(const char *name);
/* Registers the one metatable of every error table, the Lua side's included
   (merchantapi.errors sets it from core.error_metatable): __tostring,
   __concat. */
void mapi_lua_error_open(lua_State *L);

/* ---- option tables (lua_options.c) ---- */

struct mapi_endpoint; /* calls.h */
/* The option sets of the calls: names and Lua types (lua_options.c). */
typedef enum mapi_lua_options {
    MAPI_LUA_OPTS_CALL,    /* every endpoint: headers, deadline, traceparent, tracestate */
    MAPI_LUA_OPTS_LIST,    /* and a list's order, order_type, page, per_page */
    MAPI_LUA_OPTS_CONFIRM, /* and settle (a call that may move money) */
    MAPI_LUA_OPTS_REQUEST, /* client:request's: and query, body */
    MAPI_LUA_OPTS_PAGES,   /* list_addresses_pages: order, order_type, per_page, headers,
                              traceparent, tracestate */
    MAPI_LUA_OPTS_NEW      /* merchantapi.new's (transport, hooks, metrics: Lua's) */
} mapi_lua_options;
/* The set of an endpoint's options, from its row (lists, moves_money). */
mapi_lua_options mapi_lua_endpoint_options(const struct mapi_endpoint *e);
/* The one check of the names and Lua types of the options table at idx
   (nil: none) against set: raises "unknown option 'x' to 'fname'" or "bad
   option 'x' to 'fname' (want expected, got <type, or a number's value>)"
   (headers: "string names and values expected, got ... = ...") at the
   first caller outside the module's own Lua files.  Reads raw fields only
   (lua_next): nothing of the table's metatable runs. */
void mapi_lua_check_options(lua_State *L, int idx, mapi_lua_options set, const char *fname);
/* core.check_options(call, opts[, fname]): mapi_lua_check_options of the
   options of call (an endpoint's name, "request" or "list_addresses_pages")
   for a Lua function that hands them on later (client:request builds its
   query and body first; client:addresses checks its pages' options before
   the first page); messages name fname (default: call). */
int mapi_lua_check_options_fn(lua_State *L);

/* The options at a stack index: a wrong Lua type raises ("bad option
   'name' (... expected, got ...)"); nil is "not given".  A string (NULL
   for nil; *len its length, NUL bytes included); an integer (0: nil, *out
   untouched; 1: *out set; a fraction raises); seconds (*out untouched for
   nil; a given 0, the C API's "the default", becomes -1, which the core's
   limit refuses as any value out of range, limits.c). */
const char *mapi_lua_opt_string(lua_State *L, int idx, const char *name, size_t *len);
int mapi_lua_opt_integer(lua_State *L, int idx, const char *name, int64_t *out);
void mapi_lua_opt_seconds(lua_State *L, int idx, const char *name, double *out);
/* A string option the core checks (order, order_type, traceparent,
   tracestate): NULL for nil; one holding a NUL byte, which a C string
   cannot carry, becomes "\n", a value each of those checks refuses. */
const char *mapi_lua_opt_text(lua_State *L, int idx, const char *name);
/* Whether the Lua string s of len bytes holds a NUL byte (0 for NULL). */
int mapi_lua_has_nul(const char *s, size_t len);
/* Reads the headers table at idx (name -> value, both strings; nil: none)
   into an array of mapi_header_field, sorted by name, anchored in a
   userdata pushed on the stack (the strings stay anchored by the table,
   which must stay on the stack too).  A header holding a NUL byte (which
   a C string cannot carry) is checked here by the core's rule
   (mapi_header_check, on the whole Lua string); the others the core checks
   with the call.  Returns 0; or -1 with a call_box pushed above the array,
   holding the USAGE error of that header.  Raises when the table holds a
   name or a value that is not a string. */
int mapi_lua_read_headers(lua_State *L, int idx, const mapi_header_field **out, size_t *n);
/* core.new's options (the table at index 1: base_url, api_key, timeout,
   connect_timeout, max_retries, max_body, cafile, capath, user_agent,
   proxy, deadline, settle; headers and hooks are the caller's) into *cfg
   (mapi_config_init'ed first, user_agent LUA_VERSION when not given), the
   values pushed at 2..13, where they stay to anchor the strings.  Returns
   the USAGE title of a value that C cannot carry (a NUL byte; max_body
   below 1), or NULL: the limits are mapi_client_new's. */
const char *mapi_lua_read_config(lua_State *L, mapi_config *cfg);
/* A call's options from the table at index opts (or nil) into *o: deadline,
   and settle (a boolean) when with_settle; headers are read apart.  Their
   limits are the builder's (calls.c).  Pushes traceparent and tracestate
   (a table given; they stay, anchoring the strings). */
void mapi_lua_read_call_options(lua_State *L, int opts, mapi_call_opts *o, int with_settle);
/* A list's options from the table at index opts (nil: made an empty table
   there) into *p: order, order_type, per_page, and page when with_page.
   Pushes each value read (they stay on the stack, anchoring the strings).
   A value C cannot carry (a NUL byte, an integer beyond a long or below 1)
   becomes one the core's limits refuse (the builder checks them). */
void mapi_lua_read_page_options(lua_State *L, int opts, mapi_page_params *p, int with_page);

/* ---- the client (lua_client.c) ---- */

int mapi_lua_new(lua_State *L);
/* Registers the client's metatable (its methods), and the exchange's. */
void mapi_lua_client_open(lua_State *L);

/* ---- a list's pages at once (lua_pages.c) ---- */

/* Pushes the userdata of the page batch mapi_page_batch_new makes
   (src/pages.c) for the client at index client, which it holds; returns the
   batch, or NULL with err (the userdata pushed empty; a closed client:
   MAPI_LUA_CLIENT_CLOSED). */
struct mapi_page_batch *mapi_lua_push_page_batch(lua_State *L, int client,
                                                 const char *account_id,
                                                 const mapi_page_params *p, long first_page,
                                                 size_t count, size_t concurrency,
                                                 const mapi_call_opts *opts, mapi_error *err);
/* b:result() of the batch userdata at idx: pushes lists, err.  Returns 2. */
int mapi_lua_page_batch_result(lua_State *L, int idx);
/* Registers the batch's metatable. */
void mapi_lua_pages_open(lua_State *L);

/* ---- the pager's page walk (lua_walk.c) ---- */

/* Registers the walk's metatable and sets core.page_walk and
   core.page_is_last in the module's table on the top of the stack. */
void mapi_lua_walk_open(lua_State *L);

/* ---- custom transports and hooks (lua_transport.c) ---- */


void mapi_lua_observer(void *ctx, mapi_attempt_event event, const mapi_attempt_info *info);
int mapi_lua_hook_raised(lua_State *L);
int mapi_lua_hook_results(lua_State *L);

int mapi_lua_framing(lua_State *L);
/* core.retry_wait(retry_after, retry, base, cap) -> seconds: the core's
   "Retry-After first, else backoff" (mapi_retry_wait, no jitter):
   retry_after when not nil (a response's, err.retry_after), else
   base * 2^retry, at most cap.  wait_for_txid's waits. */
int mapi_lua_retry_wait(lua_State *L);

/* Registers the exchange metatable (and the h1_reader's). */
void mapi_lua_transport_open(lua_State *L);

/* ---- the HTTP/1.1 reader (lua_h1_reader.c) ---- */

#define H1_READER_MT "merchantapi.h1_reader"
struct mapi_h1_reader;
int mapi_lua_h1_reader(lua_State *L);
/* The reader of the core.h1_reader userdata at idx, or NULL when idx holds
   something else (or a freed one). */
struct mapi_h1_reader *mapi_lua_to_h1_reader(lua_State *L, int idx);
/* Registers the h1_reader metatable. */
void mapi_lua_h1_reader_open(lua_State *L);

/* ---- the event loop (lua_loop.c) ---- */

int mapi_lua_loop_new(lua_State *L);
/* Registers the loop's metatable. */
void mapi_lua_loop_open(lua_State *L);

/* ---- metrics (lua_metrics.c) ---- */

/* core.metrics_new() -> store: an empty store of metrics cells, with
   store:record(rec) and store:cells(take) (merchantapi.metrics). */
int mapi_lua_metrics_new(lua_State *L);
/* core.client_metrics(c) -> store: client c's own store, made at the first
   call (from then on every attempt of c is counted in C, whatever drives
   it); raises for a closed client. */
int mapi_lua_client_metrics(lua_State *L);

#endif /* MAPI_LUA_BINDING_H */

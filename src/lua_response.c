/*
 * lua_response.c -- merchantapi.core: the response object and a call's
 * results (value, nil, res | nil, err, message), core.decode, and the
 * registration of the metatables of results (anchors, values, errors).
 * Values: lua_values.c; errors: lua_error.c; anchors and the binding's
 * memory rules: lua_base.c; lua_client.c makes the calls,
 * lua_merchantapi.c is the module.
 */
#include <stdlib.h>
#include <string.h>

#include "merchantapi.h"
#include "lua_compat.h"
#include "lua_binding.h"

/* ------------------------------------------------------------------------ */
/* The response object                                                      */
/* ------------------------------------------------------------------------ */

/* res:document() -- upvalue 1: the body; upvalue 2: the decoded document
   once built.  Returns the whole document unflattened (null as
   merchantapi.null), or nil, err, message when the body is not a JSON:API
   document. */
static int res_document(lua_State *L)
{
    const char *body;
    size_t len;
    call_box *cb;

    if (!lua_isnil(L, lua_upvalueindex(2))) {
        lua_pushvalue(L, lua_upvalueindex(2));
        return 1;
    }
    body = lua_tolstring(L, lua_upvalueindex(1), &len);
    if (body == NULL) {
        return mapi_lua_new_error_results(L, "decode", "the response has no body", NULL);
    }
    cb = mapi_lua_push_call_box(L);
    if (mapi_doc_parse(body, len, &cb->doc, &cb->err) != 0)
        return mapi_lua_push_err_results(L, &cb->err); /* nil, err, message */
    mapi_lua_push_root(L, cb->doc);
    mapi_doc_free(cb->doc);
    cb->doc = NULL;
    lua_pushvalue(L, -1);
    lua_replace(L, lua_upvalueindex(2));
    return 1;
}

/*
 * Pushes the response object: status, headers (lower-case names; the last
 * of repeated headers), request_id, elapsed, body (the string at stack
 * index body), meta, jsonapi and links (the values at stack indexes
 * members .. members + 2 as mapi_lua_push_doc_members pushed them; 0 for
 * none) and document().  resp may be NULL (decode).
 */
static void push_response(lua_State *L, const mapi_response *resp, int body, int members)
{
    static const int names[] = {MAPI_LIT_META, MAPI_LIT_JSONAPI, MAPI_LIT_LINKS};
    const char *name, *value;
    size_t i;
    int anchors, t, headers;

    luaL_checkstack(L, 8, MAPI_LUA_NO_STACK);
    anchors = mapi_lua_push_anchors(L); /* the keys: lua_binding.h */
    lua_createtable(L, 0, 10);
    t = lua_gettop(L);
    if (resp) {
        mapic_pushint64(L, (int64_t)mapi_response_status(resp));
        mapi_lua_set_lit(L, anchors, t, MAPI_LIT_STATUS);
        value = mapi_response_request_id(resp);
        if (value) {
            lua_pushstring(L, value);
            mapi_lua_set_lit(L, anchors, t, MAPI_LIT_REQUEST_ID);
        }
        lua_pushnumber(L, (lua_Number)mapi_response_elapsed(resp));
        mapi_lua_set_lit(L, anchors, t, MAPI_LIT_ELAPSED);
    }
    /* sized once (a hint: a repeated header takes one slot) */
    lua_createtable(L, 0, resp && resp->nheaders < 64 ? (int)resp->nheaders : 0);
    headers = lua_gettop(L);
    for (i = 0; resp && mapi_response_header_at(resp, i, &name, &value); i++) {
        if (i < MAPI_LUA_HEADER_SLOTS)
            mapi_lua_push_name(L, anchors, MAPI_LUA_HEADER_SLOT(i), name, strlen(name));
        else
            lua_pushstring(L, name);
        lua_pushstring(L, value ? value : "");
        lua_rawset(L, headers); /* the last of repeated headers stays */
    }
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_HEADERS);
    for (i = 0; members && i < sizeof names / sizeof names[0]; i++) {
        lua_pushvalue(L, members + (int)i);
        mapi_lua_set_lit(L, anchors, t, names[i]);
    }
    lua_pushvalue(L, body);
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_BODY);
    lua_pushvalue(L, body);
    lua_pushnil(L);
    lua_pushcclosure(L, res_document, 2);
    mapi_lua_set_lit(L, anchors, t, MAPI_LIT_DOCUMENT);
    lua_replace(L, anchors); /* the object where the anchors were */
}

int mapi_lua_push_doc_results(lua_State *L, mapi_doc **docp, mapi_error *err, int body)
{
    const mapi_doc *doc = *docp;
    int meta, failed;

    luaL_checkstack(L, 10, MAPI_LUA_NO_STACK);
    if (body == 0) {
        mapi_lua_push_body(L, mapi_doc_response(doc));
        body = lua_gettop(L);
    }
    mapi_lua_push_doc_members(L, doc);
    meta = lua_gettop(L) - 2;

    failed = err->kind != MAPI_ERR_NONE;
    if (failed) { /* decode's verdict: the core's (mapi_doc_error) */
        mapi_lua_push_error(L, err);
        mapi_error_clear(err);
    } else if (mapi_lua_push_flattened(L, doc, meta, meta + 2, body)) {
        lua_pushnil(L);
    } else {
        lua_pushlightuserdata(L, NULL); /* merchantapi.null */
        lua_pushnil(L);
    }
    push_response(L, mapi_doc_response(doc), body, meta);
    mapi_lua_set_string(L, "settled_by", mapi_doc_settled_by(doc)); /* a settled confirm: "read" */
    mapi_doc_free(*docp);
    *docp = NULL;
    if (failed) {
        lua_setfield(L, -2, "res");
        return mapi_lua_error_table_results(L);
    }
    return 3;
}

int mapi_lua_push_err_results(lua_State *L, mapi_error *err)
{
    const mapi_response *resp = err->response;
    int top, body, meta = 0;
    const char *text;
    size_t len;
    call_box *pb;

    mapi_lua_push_error(L, err);
    if (!resp) {
        mapi_error_clear(err);
        return mapi_lua_error_table_results(L);
    }
    top = lua_gettop(L);
    luaL_checkstack(L, 10, MAPI_LUA_NO_STACK);
    mapi_lua_push_body(L, resp);
    body = lua_gettop(L);
    text = lua_tolstring(L, body, &len);
    pb = mapi_lua_push_call_box(L);
    if (len > 0 && mapi_doc_parse(text, len, &pb->doc, &pb->err) == 0) {
        mapi_lua_push_doc_members(L, pb->doc);
        meta = lua_gettop(L) - 2;
        mapi_doc_free(pb->doc);
        pb->doc = NULL;
    }
    mapi_error_clear(&pb->err);
    push_response(L, resp, body, meta);
    lua_setfield(L, top, "res");
    lua_settop(L, top);
    mapi_error_clear(err);
    return mapi_lua_error_table_results(L);
}

/* ------------------------------------------------------------------------ */
/* decode                                                                   */
/* ------------------------------------------------------------------------ */

/* core.decode(body) -> value, nil, res | nil, err, message: value as the
   calls give it (merchantapi.null for no primary data) */
int mapi_lua_decode(lua_State *L)
{
    size_t len;
    const char *body;
    call_box *cb;

    if (lua_type(L, 1) != LUA_TSTRING)
        return mapic_typeerror(L, 1, "string");
    lua_settop(L, 1);
    body = lua_tolstring(L, 1, &len);
    cb = mapi_lua_push_call_box(L);
    if (mapi_doc_parse(body, len, &cb->doc, &cb->err) != 0)
        return mapi_lua_push_err_results(L, &cb->err);
    mapi_doc_error(cb->doc, &cb->err); /* the document's verdict, as a call's (mapping.c) */
    /* res.body and res:document() use the argument itself, not a copy of it */
    return mapi_lua_push_doc_results(L, &cb->doc, &cb->err, 1);
}

/* ------------------------------------------------------------------------ */
/* Registration                                                             */
/* ------------------------------------------------------------------------ */

void mapi_lua_convert_open(lua_State *L)
{
    mapi_lua_base_open(L);
    mapi_lua_values_open(L);
    mapi_lua_error_open(L);
}

/*
 * lua_binding.h -- what the C files of merchantapi.core share.  Not
 * installed; every symbol is hidden (the module exports only
 * luaopen_merchantapi_core).
 *
 *   lua_merchantapi.c  the module, the client userdata, values, errors
 *   lua_transport.c    custom transports (exchanges) and attempt hooks
 */
#ifndef MAPI_LUA_BINDING_H
#define MAPI_LUA_BINDING_H

#include "merchantapi.h"
#include "lua_compat.h"

/* The mapi_client of the client userdata at idx (raises when idx holds
   something else); NULL once the client is closed. */
mapi_client *mapi_lua_client(lua_State *L, int idx);

/* Adds the methods prepare and observed to the client method table on the
   top of the stack, and registers the exchange metatable; the stack is left
   as it was.  Called by luaopen_merchantapi_core. */
void mapi_lua_transport_open(lua_State *L);

#endif /* MAPI_LUA_BINDING_H */

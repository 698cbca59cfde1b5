/*
 * test_lua_oom.c -- loop:start when Lua runs out of memory: the binding
 * (merchantapi.core, linked in) in a Lua 5.4 state of its own whose
 * allocator fails every allocation that grows while the test says so.
 *
 * loop:start takes registry refs (the exchange, the hooks): luaL_ref grows
 * the registry now and then, and raises when that fails.  Such a start
 * raises "not enough memory" and must leave nothing behind: no call
 * registered on the C loop (the exchange, collected once unreachable,
 * would be written to when the call ends; a call the caller was told had
 * failed would go out), no ref unreffed that was never taken.  Starts are
 * made one after another, each with the allocator failing, until one
 * raises (the registry had to grow); then the loop must hold exactly the
 * calls that started.  The calls go to a socket of the test's that
 * listens and never answers, so that none ends before the loop is closed.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

int luaopen_merchantapi_core(lua_State *L);

/* Test-only state: 1 while every allocation that grows fails. */
static int failing;

static void *failing_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    if (failing && (ptr == NULL || nsize > osize))
        return NULL;
    return realloc(ptr, nsize);
}

/* Runs chunk (unarmed); fails the test with its error. */
static void run(lua_State *L, const char *chunk)
{
    if (luaL_dostring(L, chunk) != 0)
        fail_msg("%s: %s", chunk, lua_tostring(L, -1));
}

static lua_Integer global_int(lua_State *L, const char *name)
{
    lua_Integer v;

    lua_getglobal(L, name);
    v = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return v;
}

/* A socket listening on 127.0.0.1 that never accepts; its port in *port. */
static int silent_server(int *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 1024), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* Starts calls (to a server that never answers) until a start raises out
   of memory; then checks that the loop holds exactly the calls that
   started.  hooks: each start with a hooks table (a second ref); extra:
   refs taken first, so that the registry grows at another point of the
   starts.  1 when a start failed, 0 when none did in 200 (the registry
   grew at each c:prepare, which takes a ref too). */
static int starts_until_one_fails(int hooks, int extra)
{
    lua_State *L = lua_newstate(failing_alloc, NULL);
    int k, port, server = silent_server(&port), status = LUA_OK;
    char url[64];

    assert_non_null(L);
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    luaL_openlibs(L);
    lua_pushcfunction(L, luaopen_merchantapi_core);
    lua_call(L, 0, 1);
    lua_setglobal(L, "core");
    lua_pushboolean(L, hooks);
    lua_setglobal(L, "with_hooks");
    lua_pushinteger(L, extra);
    lua_setglobal(L, "extra");
    lua_pushstring(L, url);
    lua_setglobal(L, "url");
    /* no collection (nor its shrinking of stacks) but the emergency ones */
    run(L, "collectgarbage('stop')\n"
           "c = assert(core.new({ base_url = url, api_key = 'sk_test_x', max_retries = 0 }))\n"
           "loop = assert(core.loop_new())\n"
           "hooks = with_hooks and { on_request = function() end } or nil\n"
           "local reg = debug.getregistry()\n"
           "for _ = 1, extra do reg[#reg + 1] = true end\n"
           "started = {}\n"
           "function try_start() return loop:start(c, x, hooks) end\n");
    for (k = 0; k < 200; k++) {
        run(L, "x = assert(c:prepare('get_channel', 'ch_1'))");
        lua_getglobal(L, "try_start");
        failing = 1;
        status = lua_pcall(L, 0, 1, 0);
        failing = 0;
        if (status != LUA_OK)
            break;
        assert_true(lua_toboolean(L, -1));
        lua_pop(L, 1);
        run(L, "started[#started + 1] = x");
    }
    if (status == LUA_OK) { /* the registry grew at the prepares only */
        lua_close(L);
        close(server);
        return 0;
    }
    assert_int_equal(status, LUA_ERRMEM);
    lua_pop(L, 1);
    /* the exchange of the failed start: unreachable, collected, freed */
    run(L, "x = nil\n"
           "collectgarbage('restart')\n"
           "collectgarbage(); collectgarbage()\n"
           "running = loop:step(0)\n"
           "loop:close()\n"
           "for _, e in ipairs(started) do\n"
           "  local v, err = e:result()\n"
           "  assert(v == nil and err.kind == 'transport', 'a call ended by the close')\n"
           "end\n"
           "c:close()\n");
    /* every call that started, and only those, was on the loop */
    assert_int_equal(global_int(L, "running"), k);
    lua_close(L);
    close(server);
    return 1;
}

/* With refs taken first from 0 to 7, so that the registry grows at the
   exchange's ref for some, and (with hooks, on Lua 5.4.4: extra 1 to 5) at
   the hooks' for others; at least one start must have failed. */
static void start_without_hooks(void **state)
{
    int extra, failed = 0;

    (void)state;
    for (extra = 0; extra < 8; extra++)
        failed += starts_until_one_fails(0, extra);
    assert_true(failed > 0);
}

static void start_with_hooks(void **state)
{
    int extra, failed = 0;

    (void)state;
    for (extra = 0; extra < 8; extra++)
        failed += starts_until_one_fails(1, extra);
    assert_true(failed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(start_without_hooks),
        cmocka_unit_test(start_with_hooks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * call-trace.c -- for scripts/call-path only: the order in which one call
 * enters the core's functions.  The module is built with
 * -finstrument-functions, so that every C function of src/ calls
 * __cyg_profile_func_enter and _exit, defined here; this file is
 * preloaded (LD_PRELOAD: its hooks are found before glibc's, which do
 * nothing), then opened as the Lua module calltrace
 * (package.loadlib(path, "luaopen_calltrace")):
 *
 *   calltrace.start()      record from now (the entries and exits of
 *                          instrumented functions, in order)
 *   calltrace.stop(path)   stop, and write to path one line per event:
 *                          "E <object> <offset>" (a function entered: the
 *                          shared object it is in and its offset there, for
 *                          addr2line), "X" (the function entered last
 *                          returned)
 *
 * Not part of the library: nothing of src/ includes or links it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <lua.h>
#include <lauxlib.h>

#define NO_TRACE __attribute__((no_instrument_function))

typedef struct event {
    void *fn; /* NULL: an exit */
} event;

static event *events;
static size_t nevents, capevents;
static int on, oom;

void __cyg_profile_func_enter(void *fn, void *site) NO_TRACE;
void __cyg_profile_func_exit(void *fn, void *site) NO_TRACE;
int luaopen_calltrace(lua_State *L) NO_TRACE;

static void NO_TRACE record(void *fn)
{
    if (!on || oom)
        return;
    if (nevents == capevents) {
        size_t cap = capevents ? capevents * 2 : 65536;
        event *e = realloc(events, cap * sizeof *e);
        if (!e) {
            oom = 1;
            return;
        }
        events = e;
        capevents = cap;
    }
    events[nevents++].fn = fn;
}

void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    record(fn);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)fn;
    (void)site;
    record(NULL);
}

static int NO_TRACE l_start(lua_State *L)
{
    (void)L;
    nevents = 0;
    oom = 0;
    on = 1;
    return 0;
}

static int NO_TRACE l_stop(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    FILE *f;
    size_t i;

    on = 0;
    if (oom)
        return luaL_error(L, "calltrace: out of memory");
    f = fopen(path, "w");
    if (!f)
        return luaL_error(L, "calltrace: cannot write %s", path);
    for (i = 0; i < nevents; i++) {
        Dl_info info;
        if (!events[i].fn)
            fputs("X\n", f);
        else if (dladdr(events[i].fn, &info) && info.dli_fname)
            fprintf(f, "E %s 0x%lx\n", info.dli_fname,
                    (unsigned long)((char *)events[i].fn - (char *)info.dli_fbase));
        else
            fprintf(f, "E ? %p\n", events[i].fn);
    }
    fclose(f);
    lua_pushinteger(L, (lua_Integer)nevents);
    return 1;
}

int luaopen_calltrace(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, l_start);
    lua_setfield(L, -2, "start");
    lua_pushcfunction(L, l_stop);
    lua_setfield(L, -2, "stop");
    return 1;
}

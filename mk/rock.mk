# The LuaRocks build of merchantapi: `luarocks make merchantapi-scm-1.rockspec`
# runs this makefile (build type "make").  Not for direct use: the project's
# Makefile builds the same module with `make LUA=...`.
#
# merchantapi/core.so holds the binding (src/lua_*.c) and the C core (every
# other src/*.c: new core files need no listing here, and src/json_parse.cpp,
# the JSON reader over simdjson, compiled with CXX) and llhttp's C sources
# (LLHTTP_SRCDIR, LLHTTP_INCDIR), compiled with hidden
# visibility and linked with mk/luamod.map, so that it exports
# luaopen_merchantapi_core and nothing else.  Then the Lua files.
#
# LuaRocks passes CFLAGS, LIBFLAG, LUA_INCDIR, CURL_INCDIR, CURL_LIBDIR,
# SIMDJSON_INCDIR, SIMDJSON_LIBDIR (build) and INST_LIBDIR, INST_LUADIR
# (install).  The version script needs GNU ld or lld.

CC           ?= cc
CXX          ?= c++
CFLAGS       ?= -O2 -fPIC
LIBFLAG      ?= -shared
LUA_INCDIR   ?= /usr/include/lua5.4
CURL_INCDIR  ?= /usr/include
CURL_LIBDIR  ?= /usr/lib
SIMDJSON_INCDIR ?= /usr/include
SIMDJSON_LIBDIR ?= /usr/lib
# llhttp's C sources and header (Debian's node-llhttp; docs/decisions.md, "One
# HTTP/1.1 reader"), compiled into the module with flags of their own; set in
# the environment of `luarocks make` to take them from elsewhere
LLHTTP_SRCDIR ?= /usr/share/llhttp
LLHTTP_INCDIR ?= /usr/share/include/llhttp

# one object directory per Lua (the binding's objects depend on its headers)
ROCK_BUILD := build/rock/$(notdir $(LUA_INCDIR))
SRC        := $(wildcard src/*.c)
CXX_SRC    := $(wildcard src/*.cpp)
LLHTTP_OBJ := $(ROCK_BUILD)/llhttp/api.o $(ROCK_BUILD)/llhttp/http.o $(ROCK_BUILD)/llhttp/llhttp.o
OBJ        := $(SRC:src/%.c=$(ROCK_BUILD)/%.o) $(CXX_SRC:src/%.cpp=$(ROCK_BUILD)/%.o) $(LLHTTP_OBJ)
ROCK_FLAGS := $(CFLAGS) -std=c99 -D_POSIX_C_SOURCE=200809L -DMAPI_BUILDING -fPIC \
              -fvisibility=hidden -Isrc -I$(LUA_INCDIR) -I$(CURL_INCDIR) -I$(SIMDJSON_INCDIR) \
              -I$(LLHTTP_INCDIR)
# simdjson's error codes only: no exceptions, no RTTI
ROCK_CXXFLAGS := $(CFLAGS) -std=c++17 -fno-exceptions -fno-rtti -DMAPI_BUILDING -fPIC \
              -fvisibility=hidden -Isrc -I$(SIMDJSON_INCDIR)
CORE_SO    := $(ROCK_BUILD)/merchantapi/core.so
# what `install` copies: the module the last build made (install is not
# given LUA_INCDIR, so it must not pick a directory by it)
STAGED     := build/rock/core.so

.PHONY: all install

all: $(CORE_SO)
	cp $(CORE_SO) $(STAGED)

$(ROCK_BUILD)/%.o: src/%.c $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(CC) $(ROCK_FLAGS) -c $< -o $@

# llhttp's own sources: not under our warnings; hidden like the rest
$(ROCK_BUILD)/llhttp/%.o: $(LLHTTP_SRCDIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -w -I$(LLHTTP_INCDIR) -c $< -o $@

$(ROCK_BUILD)/%.o: src/%.cpp $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(CXX) $(ROCK_CXXFLAGS) -c $< -o $@

$(CORE_SO): $(OBJ) mk/luamod.map
	@mkdir -p $(@D)
	$(CC) $(LIBFLAG) -Wl,--version-script=mk/luamod.map -o $@ $(OBJ) \
	  -L$(CURL_LIBDIR) -L$(SIMDJSON_LIBDIR) -lcurl -lsimdjson -lstdc++

install:
	@test -f $(STAGED) || { echo "rock.mk: build first (luarocks make runs all, then install)"; exit 1; }
	mkdir -p "$(INST_LIBDIR)/merchantapi" "$(INST_LUADIR)/merchantapi/transport" "$(INST_LUADIR)/merchantapi/cli"
	cp $(STAGED) "$(INST_LIBDIR)/merchantapi/core.so"
	cp lua/merchantapi.lua "$(INST_LUADIR)/merchantapi.lua"
	cp lua/merchantapi/*.lua "$(INST_LUADIR)/merchantapi/"
	cp lua/merchantapi/transport/*.lua "$(INST_LUADIR)/merchantapi/transport/"
	cp lua/merchantapi/cli/*.lua "$(INST_LUADIR)/merchantapi/cli/"

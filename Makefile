# merchantapi -- build, test, demo.  `make help` lists the targets.
#   make LUA=lua5.4            Lua target for the module (lua5.1 lua5.2 lua5.3 lua5.4 lua5.5 luajit)
#   make lua LUA_INCDIR=DIR [HOST=name]   the module for the Lua whose lua.h is in DIR (a
#                              host's own Lua), into a folder of the host's: $(BUILD)/host-<name>/
#   make DEV=1                 strictest warnings
#   make test SANITIZE=1       ASan+UBSan build of the core and module, tests under it

# The version is written once, in src/merchantapi.h (MAPI_VERSION); the .pc file,
# the shared library's SONAME and file name, _VERSION and mapi_version() read it.
VERSION    := $(shell sed -n 's/^\#define MAPI_VERSION "\([0-9.]*\)".*/\1/p' src/merchantapi.h)
SOMAJOR    := $(firstword $(subst ., ,$(VERSION)))
LUA        ?= lua5.4
PREFIX     ?= /usr/local
CC         ?= cc
BUILD      ?= build
SANDBOX_PORT ?= 8089
export SANDBOX_PORT

# Lua 5.5 is not a Debian 12 package: scripts/lua55 (make deps) builds it and
# its headers into $(BUILD)/lua5.5
LUA_INC    := $(or $(LUA_INCDIR),$(if $(filter lua5.5,$(LUA)),$(BUILD)/lua5.5/include))
# LUA_INCDIR=DIR: the headers of the Lua that will load the module (a host's
# own Lua, e.g. skynet's 3rd/lua).  Their version, read from DIR/lua.h, names
# the target; the output goes to a folder of the host's own, never one the
# tests build into ($(BUILD)/lua5.x, $(BUILD)/luajit): $(BUILD)/host-NAME/
# with HOST=NAME, else $(BUILD)/host-<version>-<checksum of DIR's real
# path>/ (two hosts on one Lua version, two folders); LUAMOD_DIR=DIR names
# it whole.
ifneq ($(LUA_INCDIR),)
LUA_INC_NUM := $(shell printf '\043include "lua.h"\nLUA_VERSION_NUM\n' | \
                 $(CC) -E -P -I'$(LUA_INC)' - 2>/dev/null | tail -n 1)
LUA_INC_TAG := $(shell n=$$(( $(or $(LUA_INC_NUM),0) )) 2>/dev/null; \
                 if [ "$${n:-0}" -lt 501 ]; then echo none; \
                 elif [ -f '$(LUA_INC)/luajit.h' ]; then echo luajit; \
                 else echo lua$$((n / 100)).$$((n % 100)); fi)
ifeq ($(LUA_INC_TAG),none)
$(error LUA_INCDIR=$(LUA_INC): no lua.h there whose LUA_VERSION_NUM reads as 501 or more)
endif
ifeq ($(origin LUA),file)
LUA        := $(LUA_INC_TAG)
else ifneq ($(LUA),$(LUA_INC_TAG))
$(error LUA=$(LUA), but the headers in LUA_INCDIR=$(LUA_INC) are $(LUA_INC_TAG)'s)
endif
ifneq ($(HOST),)
ifneq ($(shell printf '%s' '$(HOST)' | tr -d 'A-Za-z0-9._-'),)
$(error HOST=$(HOST): a plain name (letters, digits, '.', '_', '-') expected)
endif
endif
HOST_NAME  := $(or $(HOST),$(LUA_INC_TAG)-$(shell printf '%s' '$(abspath $(realpath $(LUA_INC)))' | \
                 cksum | cut -d' ' -f1))
# the binding's objects and their flags stamp are the host's own too
LUA_HOST_TAG := host-$(HOST_NAME)
endif
LUA_TAG    := $(or $(LUA_HOST_TAG),$(LUA))
PKG_LUA    := $(if $(filter luajit,$(LUA)),luajit,$(LUA))
LUA_VER    := $(patsubst lua%,%,$(filter lua5.%,$(LUA)))$(if $(filter luajit,$(LUA)),5.1)
LUA_CFLAGS := $(if $(LUA_INC),-I$(LUA_INC),$(shell pkg-config --cflags $(PKG_LUA) 2>/dev/null \
                || echo -I/usr/include/$(LUA)))
DEP_CFLAGS := $(shell pkg-config --cflags libcurl simdjson 2>/dev/null)
# src/json_parse.cpp is C++ (simdjson): the C++ runtime comes with the link
DEP_LIBS   := $(shell pkg-config --libs libcurl simdjson 2>/dev/null || echo -lcurl -lsimdjson) \
              -lstdc++

WARN       := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
ifeq ($(DEV),1)
WARN       += -pedantic -Wconversion -Wno-sign-conversion
endif
ifeq ($(SANITIZE),1)
SAN        := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
              -fno-sanitize-recover=undefined,float-cast-overflow
OBJDIR     := $(BUILD)/obj-san
else
SAN        :=
OBJDIR     := $(BUILD)/obj
endif
OPT        ?= -O2 -g
CFLAGS_ALL := -std=c99 -D_POSIX_C_SOURCE=200809L -DMAPI_BUILDING -fPIC -fvisibility=hidden \
              $(OPT) $(WARN) $(SAN) $(DEP_CFLAGS) $(CFLAGS)
# The one C++ file: simdjson's error codes only (no exceptions, no RTTI)
CXXFLAGS_ALL := -std=c++17 -fno-exceptions -fno-rtti -DMAPI_BUILDING -fPIC -fvisibility=hidden \
              $(OPT) $(filter-out -Wmissing-prototypes -Wstrict-prototypes,$(WARN)) $(SAN) \
              $(DEP_CFLAGS) $(CXXFLAGS)

CORE_SRC   := src/http.c src/http_transfer.c src/http_loop.c src/response.c src/doc_parse.c \
              src/doc_index.c src/doc_resolve.c src/doc_access.c src/value.c src/client.c \
              src/mapping.c src/url.c src/retry.c src/clock.c src/random.c src/budget.c src/error.c src/error_doc.c src/buf.c src/exchange.c src/attempt.c src/trace.c src/metrics.c \
              src/pages.c src/version.c src/headers.c src/calls.c src/loop.c \
              src/framing.c src/limits.c src/json_tree.c src/page_walk.c src/pager.c \
              src/h1_reader.c
CORE_CXX   := src/json_parse.cpp
CORE_SRC   += src/memory.c src/trace_context.c src/strdup.c src/redact.c

# llhttp (docs/decisions.md, "One HTTP/1.1 reader"): by default its C sources
# (Debian's node-llhttp) compiled here with flags of their own (they do not
# pass our warnings) and linked into one object with src/h1_reader.c whose
# llhttp symbols are made local: nothing named llhttp* is exported by the
# libraries or the module, and a static link beside another llhttp links.
# LLHTTP_LIBDIR=DIR links a built libllhttp (-lllhttp) instead.
LLHTTP_SRCDIR ?= /usr/share/llhttp
LLHTTP_LIBDIR ?=
LLHTTP_INCDIR ?= $(if $(LLHTTP_LIBDIR),/usr/include,/usr/share/include/llhttp)
LLHTTP_CFLAGS := -O2 -fPIC -fvisibility=hidden -w -I$(LLHTTP_INCDIR)
LLHTTP_OBJ := $(if $(LLHTTP_LIBDIR),,$(OBJDIR)/llhttp/api.o $(OBJDIR)/llhttp/http.o \
              $(OBJDIR)/llhttp/llhttp.o)
DEP_LIBS   += $(if $(LLHTTP_LIBDIR),-L$(LLHTTP_LIBDIR) -lllhttp)
H1_OBJ     := $(if $(LLHTTP_LIBDIR),$(OBJDIR)/h1_reader.o,$(OBJDIR)/h1_reader_llhttp.o)
CORE_OBJ   := $(filter-out $(OBJDIR)/h1_reader.o,$(CORE_SRC:src/%.c=$(OBJDIR)/%.o)) $(H1_OBJ) \
              $(CORE_CXX:src/%.cpp=$(OBJDIR)/%.o)
ifneq ($(origin LUAMOD_DIR),command line)
LUAMOD_DIR := $(BUILD)/$(LUA_TAG)$(if $(filter 1,$(SANITIZE)),-san)
endif
# the folders the tests build into and load from: never a host build's
ifneq ($(LUA_INCDIR),)
ifneq ($(filter $(abspath $(LUAMOD_DIR)),$(foreach t,lua5.1 lua5.2 lua5.3 lua5.4 lua5.5 luajit,\
        $(abspath $(BUILD)/$(t)) $(abspath $(BUILD)/$(t)-san))),)
$(error LUAMOD_DIR=$(LUAMOD_DIR) is a folder the tests build into: name another (or HOST=name))
endif
endif
LUAMOD     := $(LUAMOD_DIR)/merchantapi/core.so
# SANITIZE=1 libraries go to $(BUILD)/san/: they never replace the plain ones.
LIB_DIR    := $(BUILD)$(if $(filter 1,$(SANITIZE)),/san)
# libmerchantapi.so.<version> with SONAME libmerchantapi.so.<major>, and the two
# links users and the dynamic linker expect
LIB_SONAME := libmerchantapi.so.$(SOMAJOR)
LIB_REAL   := $(LIB_DIR)/libmerchantapi.so.$(VERSION)
LIB_SO     := $(LIB_DIR)/libmerchantapi.so
LIB_A      := $(LIB_DIR)/libmerchantapi.a

.PHONY: all lib lua deps deps-demo deps-bench test check demo sandbox install uninstall clean help check-c check-lua lint \
        examples fuzz version rockspec

all: lib lua

help:
	@echo "merchantapi $(VERSION) -- make TARGET [LUA=lua5.1|lua5.2|lua5.3|lua5.4|lua5.5|luajit] [PREFIX=/usr/local]"
	@echo "  (LUA_INCDIR=DIR: the module for the Lua whose lua.h is in DIR, into $(BUILD)/host-<name>/:"
	@echo "   HOST=name names it, else <its version>-<checksum of DIR>; LUAMOD_DIR=dir names the folder)"
	@echo "  deps        the test bench (make test, make check): install the missing Debian 12 packages of"
	@echo "              scripts/deps's sets build, run, test (apt-get; silent when all are there), then"
	@echo "              download Lua 5.5 and four sources from Debian's archive, built into $(BUILD)/lua5.5"
	@echo "  deps-demo   what builds and runs the demo and the sandbox (sets build, run; no source download)"
	@echo "  deps-bench  what make bench needs (sets build, run, bench)"
	@echo "  all         libmerchantapi.so/.a and merchantapi.core for LUA (default target)"
	@echo "  lib | lua   only the C library | only the Lua module"
	@echo "  demo        start a sandbox, confirm, read a channel, list, follow a txid, stop it"
	@echo "  test        every C test, spec and suite; ends with 'N passed, N failed' (SANITIZE=1: ASan+UBSan)"
	@echo "  check       the edit-run loop (about 35 s): every C test and spec in two lanes, lint and"
	@echo "              the suites 01-standalone and 45-docs, no other; ends with 'N passed, N failed'"
	@echo "  check-c     build the C tests (make test runs them)"
	@echo "  lint        luacheck over every Lua file"
	@echo "  matrix      the fault matrix: every fault through every driver, printed as a table"
	@echo "  call-path   the files whose code one blocking client:get_channel runs (gcov), counted,"
	@echo "              and the layers it crosses, in order (-finstrument-functions)"
	@echo "  sandbox     run the local sandbox in the foreground (SANDBOX_PORT, default 8089)"
	@echo "  examples    install into build/, build and run every example against a sandbox"
	@echo "  docs        the Lua reference (LDoc) into docs/lua/, the header into docs/c/"
	@echo "  bench       benchmarks against named alternatives, one table of ratios (BENCHMARKS.md)"
	@echo "  fuzz        libFuzzer over the parser and the Lua conversion (FUZZ_SECONDS=120); fuzz-doc, fuzz-lua"
	@echo "  soak        100,000 calls in one process, RSS bound, valgrind leak check"
	@echo "  install     library, header, merchantapi.pc, the Lua module for LUA, the merchantapi tool"
	@echo "              and its man page into PREFIX (DESTDIR too)"
	@echo "  uninstall   remove what install put into PREFIX"
	@echo "  rockspec    the release rockspec merchantapi-<version>-1.rockspec (ROCK_URL=...)"
	@echo "  version     print the version ($(VERSION))"
	@echo "  clean       remove build/"

version:
	@echo $(VERSION)

# scripts/deps holds the package sets: make deps installs the test bench
# (make test, make check), deps-demo what builds and runs the demo and the
# sandbox (no source fetched), deps-bench what make bench needs
deps:
	@./scripts/deps build run test
	@BUILD=$(BUILD) ./scripts/lua55
deps-demo:
	@./scripts/deps build run
deps-bench:
	@./scripts/deps build run bench

lib: $(LIB_SO) $(LIB_A)
lua: $(LUAMOD)

$(OBJDIR)/%.o: src/%.c $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(OBJDIR)/h1_reader.o: src/h1_reader.c $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -I$(LLHTTP_INCDIR) -c $< -o $@

$(OBJDIR)/llhttp/%.o: $(LLHTTP_SRCDIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(LLHTTP_CFLAGS) -c $< -o $@

# the reader and llhttp as one object, llhttp's symbols local to it
$(OBJDIR)/h1_reader_llhttp.o: $(OBJDIR)/h1_reader.o $(LLHTTP_OBJ)
	$(CC) -r -nostdlib -o $@ $^
	objcopy --wildcard --localize-symbol='llhttp*' $@

$(OBJDIR)/%.o: src/%.cpp src/merchantapi.h src/json_parse.h src/memory.h
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_ALL) -c $< -o $@

# The binding's files, compiled once per Lua target.
LUA_SRC    := src/lua_merchantapi.c src/lua_base.c src/lua_values.c src/lua_error.c src/lua_response.c src/lua_options.c src/lua_client.c src/lua_transport.c \
              src/lua_loop.c src/lua_pages.c src/lua_walk.c src/lua_h1_reader.c src/lua_metrics.c
LUA_OBJ    := $(LUA_SRC:src/%.c=$(OBJDIR)/%-$(LUA_TAG).o)
# the headers the binding was last compiled with: other headers of the same
# version (LUA_INCDIR=another dir) compile it again
LUA_STAMP  := $(OBJDIR)/$(LUA_TAG).cflags
$(shell mkdir -p $(OBJDIR) && { echo '$(LUA_CFLAGS)' | cmp -s - $(LUA_STAMP) 2>/dev/null || \
          echo '$(LUA_CFLAGS)' >$(LUA_STAMP); })

$(OBJDIR)/%-$(LUA_TAG).o: src/%.c $(wildcard src/*.h) $(LUA_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LUA_CFLAGS) -c $< -o $@

$(LIB_REAL): $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(SAN) -Wl,-soname,$(LIB_SONAME) -o $@ $^ $(DEP_LIBS) $(LDFLAGS)

$(LIB_SO): $(LIB_REAL)
	ln -sf $(notdir $(LIB_REAL)) $(LIB_DIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $@

$(LIB_A): $(CORE_OBJ)
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^

# The Lua module carries the core inside it (never links liblua) and exports
# luaopen_merchantapi_core only (mk/luamod.map): its mapi_ functions cannot
# be interposed by, nor clash with, a libmerchantapi loaded in the same process.
$(LUAMOD): $(LUA_OBJ) $(CORE_OBJ) mk/luamod.map
	@mkdir -p $(@D)
	$(CC) -shared $(SAN) -Wl,--version-script=mk/luamod.map -o $@ $(LUA_OBJ) $(CORE_OBJ) \
	  $(DEP_LIBS) $(LDFLAGS)
	$(if $(LUA_INCDIR),@echo "merchantapi.core for the Lua of $(LUA_INC) ($(LUA)): $@")

include mk/test.mk
include mk/install.mk
include mk/demo.mk
include mk/fuzz.mk
include mk/examples.mk
include mk/docs.mk
include mk/soak.mk
include mk/bench.mk

clean:
	rm -rf $(BUILD)

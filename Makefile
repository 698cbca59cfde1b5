# merchantapi -- build, test, demo.  `make help` lists the targets.
#   make LUA=lua5.4            Lua target for the module (lua5.1 lua5.2 lua5.3 lua5.4 luajit)
#   make DEV=1                 strictest warnings
#   make test SANITIZE=1       ASan+UBSan build of the core and module, tests under it

LUA        ?= lua5.4
PREFIX     ?= /usr/local
CC         ?= cc
BUILD      ?= build
SANDBOX_PORT ?= 8089
export SANDBOX_PORT

PKG_LUA    := $(if $(filter luajit,$(LUA)),luajit,$(LUA))
LUA_VER    := $(patsubst lua%,%,$(filter lua5.%,$(LUA)))$(if $(filter luajit,$(LUA)),5.1)
LUA_CFLAGS := $(shell pkg-config --cflags $(PKG_LUA) 2>/dev/null || echo -I/usr/include/$(LUA))
DEP_CFLAGS := $(shell pkg-config --cflags libcurl json-c 2>/dev/null)
DEP_LIBS   := $(shell pkg-config --libs libcurl json-c 2>/dev/null || echo -lcurl -ljson-c)

WARN       := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes
ifeq ($(DEV),1)
WARN       += -pedantic -Wconversion -Wno-sign-conversion
endif
ifeq ($(SANITIZE),1)
SAN        := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OBJDIR     := $(BUILD)/obj-san
else
SAN        :=
OBJDIR     := $(BUILD)/obj
endif
OPT        ?= -O2 -g
CFLAGS_ALL := -std=c99 -D_POSIX_C_SOURCE=200809L -DMAPI_BUILDING -fPIC -fvisibility=hidden \
              $(OPT) $(WARN) $(SAN) $(DEP_CFLAGS) $(CFLAGS)

CORE_SRC   := src/http.c src/response.c src/jsonapi.c src/numscan.c src/value.c \
              src/client.c src/mapping.c src/url.c src/retry.c src/error.c \
              src/error_doc.c src/buf.c src/request.c src/utf8.c src/exchange.c \
              src/multi.c src/headers.c
CORE_OBJ   := $(CORE_SRC:src/%.c=$(OBJDIR)/%.o)
LUAMOD_DIR := $(BUILD)/$(LUA)$(if $(filter 1,$(SANITIZE)),-san)
LUAMOD     := $(LUAMOD_DIR)/merchantapi/core.so
# SANITIZE=1 libraries go to $(BUILD)/san/: they never replace the plain ones.
LIB_DIR    := $(BUILD)$(if $(filter 1,$(SANITIZE)),/san)
LIB_SO     := $(LIB_DIR)/libmerchantapi.so
LIB_A      := $(LIB_DIR)/libmerchantapi.a

.PHONY: all lib lua deps test demo sandbox install clean help check-c check-lua lint examples fuzz

all: lib lua

help:
	@echo "make deps | all | test | demo | sandbox | install PREFIX=... | lint | clean"

deps:
	@./scripts/deps

lib: $(LIB_SO) $(LIB_A)
lua: $(LUAMOD)

$(OBJDIR)/%.o: src/%.c src/merchantapi.h src/internal.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# The binding's files, compiled once per Lua target.
LUA_SRC    := src/lua_merchantapi.c src/lua_transport.c
LUA_OBJ    := $(LUA_SRC:src/%.c=$(OBJDIR)/%-$(LUA).o)

$(OBJDIR)/%-$(LUA).o: src/%.c src/merchantapi.h src/internal.h src/lua_compat.h src/lua_binding.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(LUA_CFLAGS) -c $< -o $@

$(LIB_SO): $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) -shared $(SAN) -o $@ $^ $(DEP_LIBS) $(LDFLAGS)

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

# make install PREFIX=/usr/local [DESTDIR=...] / make uninstall (the same variables)
LUA_SHARE  := $(DESTDIR)$(PREFIX)/share/lua/$(LUA_VER)
LUA_LIBDIR := $(DESTDIR)$(PREFIX)/lib/lua/$(LUA_VER)
LIBDIR     := $(DESTDIR)$(PREFIX)/lib
INCDIR     := $(DESTDIR)$(PREFIX)/include
PCDIR      := $(LIBDIR)/pkgconfig
LUA_FILES  := $(patsubst lua/%,%,$(wildcard lua/*.lua lua/merchantapi/*.lua lua/merchantapi/transport/*.lua \
              lua/merchantapi/cli/*.lua))
# the command-line tool, its manual, and the sandbox it runs (`merchantapi
# sandbox`) with what sandbox/run needs beside it, under share/merchantapi/
BINDIR     := $(DESTDIR)$(PREFIX)/bin
MAN1DIR    := $(DESTDIR)$(PREFIX)/share/man/man1
DATADIR    := $(DESTDIR)$(PREFIX)/share/merchantapi
DATA_FILES := sandbox/run sandbox/nginx.conf.in sandbox/locations.conf sandbox/README.md \
              $(wildcard sandbox/lua/sandbox/*.lua) scripts/free-port $(wildcard fixtures/*.json)
# what bin/merchantapi's INSTALLED line becomes: the installed modules (the tool is
# merchantapi.cli) and data
CLI_INSTALLED := local INSTALLED = { lua = "$(PREFIX)/share/lua/$(LUA_VER)", \
  lib = "$(PREFIX)/lib/lua/$(LUA_VER)", share = "$(PREFIX)/share/merchantapi" }

install: all
	install -d $(LUA_SHARE)/merchantapi/transport $(LUA_SHARE)/merchantapi/cli $(LUA_LIBDIR)/merchantapi \
	  $(LIBDIR) $(INCDIR) $(PCDIR)
	install -m 644 lua/merchantapi.lua $(LUA_SHARE)/merchantapi.lua
	install -m 644 lua/merchantapi/*.lua $(LUA_SHARE)/merchantapi/
	install -m 644 lua/merchantapi/transport/*.lua $(LUA_SHARE)/merchantapi/transport/
	install -m 644 lua/merchantapi/cli/*.lua $(LUA_SHARE)/merchantapi/cli/
	install -m 755 $(LUAMOD) $(LUA_LIBDIR)/merchantapi/core.so
	install -m 755 $(LIB_REAL) $(LIBDIR)/$(notdir $(LIB_REAL))
	ln -sf $(notdir $(LIB_REAL)) $(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(LIBDIR)/libmerchantapi.so
	install -m 644 $(LIB_A) $(LIBDIR)/libmerchantapi.a
	install -m 644 src/merchantapi.h $(INCDIR)/merchantapi.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
	    -e 's|@LIBS@|$(DEP_LIBS)|g' merchantapi.pc.in > $(PCDIR)/merchantapi.pc
	install -d $(BINDIR) $(MAN1DIR) $(DATADIR)/sandbox/lua/sandbox $(DATADIR)/scripts $(DATADIR)/fixtures
	sed -e '1s|.*|#!/usr/bin/env $(LUA)|' -e 's|^local INSTALLED = nil.*|$(CLI_INSTALLED)|' \
	    bin/merchantapi > $(BINDIR)/merchantapi.tmp
	grep -q '^local INSTALLED = {' $(BINDIR)/merchantapi.tmp || \
	  { echo "install: bin/merchantapi has no 'local INSTALLED = nil' line" >&2; exit 1; }
	chmod 755 $(BINDIR)/merchantapi.tmp && mv -f $(BINDIR)/merchantapi.tmp $(BINDIR)/merchantapi
	install -m 644 man/merchantapi.1 $(MAN1DIR)/merchantapi.1
	for f in $(DATA_FILES); do \
	  install -m $$(if [ -x $$f ]; then echo 755; else echo 644; fi) $$f $(DATADIR)/$$f || exit 1; \
	done

# Removes exactly what install wrote (for this LUA), then the folders it made
# if they are left empty.
uninstall:
	rm -f $(addprefix $(LUA_SHARE)/,$(LUA_FILES)) $(LUA_LIBDIR)/merchantapi/core.so
	rm -f $(LIBDIR)/libmerchantapi.so $(LIBDIR)/$(LIB_SONAME) $(LIBDIR)/$(notdir $(LIB_REAL)) \
	  $(LIBDIR)/libmerchantapi.a $(INCDIR)/merchantapi.h $(PCDIR)/merchantapi.pc
	rm -f $(BINDIR)/merchantapi $(MAN1DIR)/merchantapi.1 $(addprefix $(DATADIR)/,$(DATA_FILES))
	-rmdir $(LUA_SHARE)/merchantapi/transport $(LUA_SHARE)/merchantapi/cli $(LUA_SHARE)/merchantapi \
	  $(LUA_LIBDIR)/merchantapi 2>/dev/null || true
	-rmdir $(DATADIR)/sandbox/lua/sandbox $(DATADIR)/sandbox/lua $(DATADIR)/sandbox \
	  $(DATADIR)/scripts $(DATADIR)/fixtures $(DATADIR) 2>/dev/null || true

# make rockspec ROCK_URL=<published source archive or git URL>: the release
# rockspec merchantapi-<version>-1.rockspec in $(BUILD)/, made from the checkout's
# merchantapi-scm-1.rockspec with the version of src/merchantapi.h.
.PHONY: rockspec
rockspec:
	@test -n "$(ROCK_URL)" || { echo "rockspec: set ROCK_URL to where the release's sources are published" >&2; exit 2; }
	@mkdir -p $(BUILD)
	sed -e 's|^version = "scm-1"|version = "$(VERSION)-1"|' \
	    -e 's|^  url = .*|  url = "$(ROCK_URL)",|' \
	    merchantapi-scm-1.rockspec > $(BUILD)/merchantapi-$(VERSION)-1.rockspec
	@echo "rockspec: $(BUILD)/merchantapi-$(VERSION)-1.rockspec"

# make install PREFIX=/usr/local [DESTDIR=...]
LUA_SHARE  := $(DESTDIR)$(PREFIX)/share/lua/$(LUA_VER)
LUA_LIBDIR := $(DESTDIR)$(PREFIX)/lib/lua/$(LUA_VER)
LIBDIR     := $(DESTDIR)$(PREFIX)/lib
INCDIR     := $(DESTDIR)$(PREFIX)/include
PCDIR      := $(LIBDIR)/pkgconfig

install: all
	install -d $(LUA_SHARE)/merchantapi/transport $(LUA_LIBDIR)/merchantapi $(LIBDIR) $(INCDIR) \
	  $(PCDIR)
	install -m 644 lua/merchantapi.lua $(LUA_SHARE)/merchantapi.lua
	install -m 644 lua/merchantapi/*.lua $(LUA_SHARE)/merchantapi/
	install -m 644 lua/merchantapi/transport/*.lua $(LUA_SHARE)/merchantapi/transport/
	install -m 755 $(LUAMOD) $(LUA_LIBDIR)/merchantapi/core.so
	install -m 755 $(LIB_SO) $(LIBDIR)/libmerchantapi.so
	install -m 644 $(LIB_A) $(LIBDIR)/libmerchantapi.a
	install -m 644 src/merchantapi.h $(INCDIR)/merchantapi.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|0.1.0|g' \
	    -e 's|@LIBS@|$(DEP_LIBS)|g' merchantapi.pc.in > $(PCDIR)/merchantapi.pc

# Tests: C tests (cmocka) and busted specs, against fixtures and a sandbox
# the run starts and stops itself.  Ends with one line "N passed, N failed".

CTEST_SRC  := $(wildcard tests/test_*.c)
CTEST_BIN  := $(CTEST_SRC:tests/%.c=$(BUILD)/tests$(if $(filter 1,$(SANITIZE)),-san)/%)

$(BUILD)/tests$(if $(filter 1,$(SANITIZE)),-san)/%: tests/%.c tests/testutil.h $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Isrc -o $@ $< $(CORE_OBJ) $(DEP_LIBS) -lcmocka $(SAN)

# tests/test_lua_*.c run the binding in a Lua 5.4 state of their own (an
# allocator of the test's): the binding's sources compiled in, against the
# system's Lua 5.4 whatever LUA is.
TEST_LUA_CFLAGS := $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
TEST_LUA_LIBS   := $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
$(BUILD)/tests$(if $(filter 1,$(SANITIZE)),-san)/test_lua_%: tests/test_lua_%.c tests/testutil.h \
    $(CORE_OBJ) $(LUA_SRC) src/lua_compat.h src/lua_binding.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) $(TEST_LUA_CFLAGS) -Isrc -o $@ $< $(LUA_SRC) $(CORE_OBJ) $(TEST_LUA_LIBS) \
	  $(DEP_LIBS) -lcmocka $(SAN) -lm

# The README's "C quick start" as written: the first ```c block under that
# heading, extracted from README.md, built as its users build it (only
# <merchantapi.h>, strict C99) and run against the sandbox by
# tests/test_readme.c, which finds it beside itself.
QUICKSTART := $(BUILD)/tests$(if $(filter 1,$(SANITIZE)),-san)/readme_quick_start

$(QUICKSTART).c: README.md
	@mkdir -p $(@D)
	@awk '/^## /{s=($$0=="## C quick start")} s&&/^```c$$/{c=1;next} c&&/^```$$/{exit} c' \
	  README.md >$@.tmp
	@if [ -s $@.tmp ]; then mv $@.tmp $@; \
	 else rm -f $@.tmp; echo 'README.md: no ```c block under "## C quick start"' >&2; exit 1; fi

$(QUICKSTART): $(QUICKSTART).c $(CORE_OBJ)
	$(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Isrc $(DEP_CFLAGS) $(SAN) -o $@ $< \
	  $(CORE_OBJ) $(DEP_LIBS) $(SAN)

check-c: $(CTEST_BIN) $(QUICKSTART)
# the module for Lua 5.4 and for 5.5, plain: spec/calls/lua_mismatch_spec.lua
# loads each into the other Lua
check-lua: $(LUAMOD)
	@$(MAKE) -s --no-print-directory LUA=lua5.4 LUA_INCDIR= SANITIZE= lua
	@$(MAKE) -s --no-print-directory LUA=lua5.5 LUA_INCDIR= SANITIZE= lua

TEST_ENV   = LUA=$(LUA) BUILD=$(BUILD) SANITIZE=$(SANITIZE) LUAMOD_DIR=$(LUAMOD_DIR) \
             CTEST_BIN="$(CTEST_BIN)"

test: deps
	@$(MAKE) --no-print-directory all check-c check-lua
	@$(TEST_ENV) MERCHANTAPI_CHECK=0 ./scripts/test

# The edit-run loop: the C tests and every spec in two lanes against two
# sandboxes, lint, the suites 01-standalone, 02-runner and 45-docs, no other suite
# (scripts/test, MERCHANTAPI_CHECK=1).
check: deps
	@$(MAKE) --no-print-directory all check-c check-lua
	@./scripts/rule-homes
	@$(TEST_ENV) MERCHANTAPI_CHECK=1 ./scripts/test

lint:
	luacheck --formatter plain lua spec examples sandbox tests/keepalive bench bin/merchantapi

# The fault matrix alone (spec/faults/fault_matrix_spec.lua, RELIABILITY.md "The
# fault matrix"): every row through every driver against a sandbox and an
# nginx of its own (free ports), printed as a table at the end.
# MERCHANTAPI_MATRIX_ROWS=<Lua pattern> runs the rows whose name matches.
.PHONY: matrix
matrix: deps
	@$(MAKE) --no-print-directory all
	@env MERCHANTAPI_BASE_URL= LUA_PATH="$(CURDIR)/lua/?.lua;$(CURDIR)/lua/?/init.lua;$(CURDIR)/spec/?.lua;;" \
	  LUA_CPATH="$(CURDIR)/$(LUAMOD_DIR)/?.so;;" $(LUA) /usr/bin/busted spec/faults/fault_matrix_spec.lua

# The files whose code one blocking `client:get_channel` runs, and the layers it
# crosses (docs/architecture.md, "The path of one call"): a build with gcov's
# counters and -finstrument-functions in $(BUILD)/call-path.
.PHONY: call-path
call-path: deps
	@BUILD=$(BUILD) ./scripts/call-path

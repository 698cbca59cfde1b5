# Tests: C tests (cmocka) and busted specs, against fixtures and a sandbox
# the run starts and stops itself.  Ends with one line "N passed, N failed".

CTEST_SRC  := $(wildcard tests/test_*.c)
CTEST_BIN  := $(CTEST_SRC:tests/%.c=$(BUILD)/tests$(if $(filter 1,$(SANITIZE)),-san)/%)

$(BUILD)/tests$(if $(filter 1,$(SANITIZE)),-san)/%: tests/%.c tests/testutil.h $(CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -Isrc -o $@ $< $(CORE_OBJ) $(DEP_LIBS) -lcmocka $(SAN)

check-c: $(CTEST_BIN)
check-lua: $(LUAMOD)

test: deps
	@$(MAKE) --no-print-directory all check-c check-lua
	@LUA=$(LUA) BUILD=$(BUILD) SANITIZE=$(SANITIZE) LUAMOD_DIR=$(LUAMOD_DIR) \
	  CTEST_BIN="$(CTEST_BIN)" ./scripts/test

lint:
	luacheck lua spec examples sandbox tests/openresty bench

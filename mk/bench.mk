# Benchmarks: `make bench` prints one table of medians and ratios measured in
# the same run (BENCHMARKS.md holds one and says how to read it).  Not part
# of `make test`.  The sandbox takes free ports (BENCH_PORT=N fixes them).
# BENCH_ONLY=openresty: the OpenResty rows alone (the handler against a bare
# cosocket, the transport on a scripted socket).

BENCH_DIR  := $(BUILD)/bench
BENCH_BIN  := $(BENCH_DIR)/curl_loop $(BENCH_DIR)/mapi_loop $(BENCH_DIR)/parse_floor \
              $(BENCH_DIR)/limit

$(BENCH_DIR)/curl_loop: bench/curl_loop.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) $(DEP_CFLAGS) -o $@ $< $(DEP_LIBS)

# client:get_channel's loop without Lua: the library's own cost per call
$(BENCH_DIR)/mapi_loop: bench/mapi_loop.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) -std=c99 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) $(DEP_CFLAGS) -Isrc -o $@ $< $(LIB_A) \
	  $(DEP_LIBS)

# C++: simdjson's DOM parse is the floor it measures against
$(BENCH_DIR)/parse_floor: bench/parse_floor.cpp $(LIB_A)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -fno-exceptions $(OPT) $(filter-out -Wmissing-prototypes -Wstrict-prototypes,$(WARN)) \
	  $(DEP_CFLAGS) -Isrc -o $@ $< $(LIB_A) $(DEP_LIBS)

# C++ (simdjson) with Lua 5.4's C API: the honest limit of client:get_channel
$(BENCH_DIR)/limit: bench/limit.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -fno-exceptions $(OPT) $(filter-out -Wmissing-prototypes -Wstrict-prototypes,$(WARN)) \
	  $(DEP_CFLAGS) $(shell pkg-config --cflags lua5.4) -o $@ $< \
	  $(DEP_LIBS) $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)

.PHONY: bench
bench: deps-bench
	@$(MAKE) --no-print-directory lib lua $(BENCH_BIN)
	@# the LuaJIT build is optional: the table says when there is none
	@$(MAKE) --no-print-directory LUA=luajit lua >/dev/null 2>&1 || \
	  echo "bench: no LuaJIT build of the module (LuaJIT rows skipped)" >&2
	@BUILD=$(BUILD) LUAMOD_DIR=$(LUAMOD_DIR) LUAJITMOD_DIR=$(BUILD)/luajit BENCH_ONLY=$(BENCH_ONLY) \
	  ./bench/run
	@# calls that never block (merchantapi.loop): 50 in flight under a 60 Hz tick, CPU per call
	@[ "$(BENCH_ONLY)" = openresty ] || BUILD=$(BUILD) LUAMOD_DIR=$(LUAMOD_DIR) ./bench/loop_run

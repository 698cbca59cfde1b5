# make fuzz FUZZ_SECONDS=N: libFuzzer (clang) with ASan+UBSan for N seconds
# in all, seeded from the fixtures and the kept regression inputs in
# tests/fuzz/regressions/: two thirds over mapi_doc_parse and the resolver
# (fuzz_doc), one third over the Lua conversion (fuzz_lua: merchantapi.core
# decode in a Lua 5.4 state).  make fuzz-doc / fuzz-lua run one of them for
# FUZZ_SECONDS.  A crash leaves its input in $(BUILD)/fuzz/<doc|lua>-crash-*.
FUZZ_SECONDS ?= 120
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CFLAGS  := -std=c99 -D_POSIX_C_SOURCE=200809L -DMAPI_BUILDING -g -O1 -Wall -Wextra -Werror \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(DEP_CFLAGS) \
                -I$(LLHTTP_INCDIR)
# The whole core (the parser needs no HTTP, but the files reference each
# other; linking all of them keeps this list from going stale) with llhttp's
# objects as the library has them, and the JSON reader, the one C++ file,
# compiled by clang++ with the same sanitizers.
FUZZ_SRC     := $(CORE_SRC) $(LLHTTP_OBJ)
FUZZ_CXXFLAGS := -std=c++17 -fno-exceptions -fno-rtti -DMAPI_BUILDING -g -O1 -Wall -Wextra -Werror \
                -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
                $(DEP_CFLAGS)
FUZZ_CXX_OBJ := $(FUZZ_DIR)/json_parse.o

$(FUZZ_CXX_OBJ): $(CORE_CXX) src/json_parse.h src/merchantapi.h | deps
	@mkdir -p $(@D)
	clang++ $(FUZZ_CXXFLAGS) -Isrc -c $(CORE_CXX) -o $@
FIXTURES     ?= $(abspath fixtures)

# `| deps`: clang and libclang-rt-14-dev come from scripts/deps on a fresh machine.
$(FUZZ_DIR)/fuzz_doc: tests/fuzz/fuzz_doc.c $(FUZZ_SRC) $(FUZZ_CXX_OBJ) $(wildcard src/*.h) | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -Isrc -o $@ tests/fuzz/fuzz_doc.c $(FUZZ_SRC) $(FUZZ_CXX_OBJ) $(DEP_LIBS)

.PHONY: fuzz-doc fuzz-lua fuzz-seeds

# The Lua harness links the binding, the whole core and Lua 5.4 itself.
FUZZ_LUA_SRC := $(LUA_SRC) $(CORE_SRC) $(LLHTTP_OBJ)
FUZZ_LUA_FLAGS := $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
FUZZ_LUA_LIBS := $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)

$(FUZZ_DIR)/fuzz_lua: tests/fuzz/fuzz_lua.c $(FUZZ_LUA_SRC) $(FUZZ_CXX_OBJ) $(wildcard src/*.h) | deps
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(FUZZ_LUA_FLAGS) -Isrc -o $@ tests/fuzz/fuzz_lua.c $(FUZZ_LUA_SRC) \
	  $(FUZZ_CXX_OBJ) $(FUZZ_LUA_LIBS) $(DEP_LIBS) -lm

# Seconds for each harness: a third (at least 1) for the Lua one.
FUZZ_LUA_PART := $(shell n=$(FUZZ_SECONDS); p=$$((n / 3)); [ $$p -ge 1 ] || p=1; echo $$p)
FUZZ_DOC_PART := $(shell n=$(FUZZ_SECONDS); p=$$((n - n / 3)); [ $$p -ge 1 ] || p=1; echo $$p)
FUZZ_FLAGS    := -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

fuzz-seeds:
	@mkdir -p $(FUZZ_DIR)/corpus-doc $(FUZZ_DIR)/corpus-lua $(FUZZ_DIR)/seeds
	@cp $(FIXTURES)/*.json tests/fuzz/regressions/* $(FUZZ_DIR)/seeds/ 2>/dev/null || true

fuzz: $(FUZZ_DIR)/fuzz_doc $(FUZZ_DIR)/fuzz_lua fuzz-seeds
	$(FUZZ_DIR)/fuzz_doc -max_total_time=$(FUZZ_DOC_PART) $(FUZZ_FLAGS) \
	  -artifact_prefix=$(FUZZ_DIR)/doc- $(FUZZ_DIR)/corpus-doc $(FUZZ_DIR)/seeds
	$(FUZZ_DIR)/fuzz_lua -max_total_time=$(FUZZ_LUA_PART) $(FUZZ_FLAGS) \
	  -artifact_prefix=$(FUZZ_DIR)/lua- $(FUZZ_DIR)/corpus-lua $(FUZZ_DIR)/seeds

fuzz-doc fuzz-lua: fuzz-%: $(FUZZ_DIR)/fuzz_% fuzz-seeds
	$(FUZZ_DIR)/fuzz_$* -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) \
	  -artifact_prefix=$(FUZZ_DIR)/$*- $(FUZZ_DIR)/corpus-$* $(FUZZ_DIR)/seeds

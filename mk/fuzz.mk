# make fuzz FUZZ_SECONDS=N: libFuzzer (clang) over mapi_doc_parse and the
# resolver, with ASan+UBSan, seeded from the fixtures and the kept
# regression inputs in tests/fuzz/regressions/.
FUZZ_SECONDS ?= 120
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_CFLAGS  := -std=c99 -D_POSIX_C_SOURCE=200809L -DMAPI_BUILDING -g -O1 -Wall -Wextra -Werror \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $(DEP_CFLAGS)
FUZZ_SRC     := $(filter-out src/http.c src/client.c,$(CORE_SRC))
FIXTURES     ?= $(abspath ../shared/fixtures)

$(FUZZ_DIR)/fuzz_doc: tests/fuzz/fuzz_doc.c $(FUZZ_SRC) src/merchantapi.h src/internal.h
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -Isrc -o $@ tests/fuzz/fuzz_doc.c $(FUZZ_SRC) $(DEP_LIBS)

fuzz: $(FUZZ_DIR)/fuzz_doc
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds
	@cp $(FIXTURES)/*.json tests/fuzz/regressions/* $(FUZZ_DIR)/seeds/ 2>/dev/null || true
	$(FUZZ_DIR)/fuzz_doc -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
	  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/ \
	  $(FUZZ_DIR)/corpus $(FUZZ_DIR)/seeds

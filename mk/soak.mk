# make soak: the long-run checks of tests/soak/ against a sandbox they start
# and stop themselves (see tests/soak/run):
#   SOAK_CALLS=100000   calls in one Lua process, RSS after the first 5,000
#                       and at the end (the end must be within 10 %)
#   SOAK_VALGRIND_CALLS=2000  the same script under valgrind --leak-check=full:
#                       0 bytes definitely lost
SOAK_CALLS          ?= 100000
SOAK_VALGRIND_CALLS ?= 2000
SOAK_PORT           ?= auto

.PHONY: soak

soak: deps
	@$(MAKE) --no-print-directory lua
	@LUA=$(LUA) LUAMOD_DIR=$(LUAMOD_DIR) BUILD=$(BUILD) SOAK_CALLS=$(SOAK_CALLS) \
	  SOAK_VALGRIND_CALLS=$(SOAK_VALGRIND_CALLS) SOAK_PORT=$(SOAK_PORT) tests/soak/run

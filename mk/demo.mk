# make demo: build, start the sandbox in the background, run the examples
# against it, stop it (by pid, also when an example fails).
# DEMO_PORT=N fixes the sandbox's plain port (default: free ports, picked at random)
DEMO_PORT ?= auto

demo: deps
	@$(MAKE) --no-print-directory all
	@DEMO_PORT=$(DEMO_PORT) LUA=$(LUA) LUAMOD_DIR=$(LUAMOD_DIR) ./scripts/demo

sandbox: deps
	@$(MAKE) --no-print-directory all
	sandbox/run fg

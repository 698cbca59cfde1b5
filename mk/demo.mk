# make demo: build, start the sandbox in the background, run the examples
# against it, stop it (by pid, also when an example fails).
DEMO_PORT ?= $(SANDBOX_PORT)

demo: deps
	@$(MAKE) --no-print-directory all
	@SANDBOX_PORT=$(DEMO_PORT) LUA=$(LUA) LUAMOD_DIR=$(LUAMOD_DIR) ./scripts/demo

sandbox: deps
	@$(MAKE) --no-print-directory all
	sandbox/run fg

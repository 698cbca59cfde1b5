# make demo: build, start the sandbox in the background, run the examples
# against it, stop it (by pid, also when an example fails).
# Both install only what builds and runs them (make deps-demo): no test bench,
# no source download.
# DEMO_PORT=N fixes the sandbox's plain port (default: free ports, picked at random)
DEMO_PORT ?= auto

demo: deps-demo
	@$(MAKE) --no-print-directory all
	@DEMO_PORT=$(DEMO_PORT) LUA=$(LUA) LUAMOD_DIR=$(LUAMOD_DIR) ./scripts/demo

sandbox: deps-demo
	@$(MAKE) --no-print-directory all
	sandbox/run fg

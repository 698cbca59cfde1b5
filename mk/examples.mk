# make examples: installs into $(BUILD)/examples-prefix, builds every example
# the way its users build it (pkg-config, an embedding host, lua5.4, lua5.1 with
# copas, nginx)
# and runs it against the sandbox (scripts/examples; tests/suites/60-install
# runs the same).
examples: deps
	@BUILD=$(BUILD) ./scripts/examples

-- luacheck configuration: `make lint` (luacheck lua spec examples sandbox tests/keepalive bench bin/merchantapi).
std = "max"
max_line_length = 120
-- _ is the usual name of a value left unused
unused_args = true
ignore = { "212/_.*", "211/_.*", "213/_.*" }

files["spec"] = { std = "+busted" }
files["sandbox"] = { std = "+ngx_lua" }
files["examples/openresty"] = { std = "+ngx_lua" }
files["bench/or_bench.lua"] = { std = "+ngx_lua" }
files["spec/openresty"] = { std = "+ngx_lua+busted" }
files[".busted"] = { std = "max" }

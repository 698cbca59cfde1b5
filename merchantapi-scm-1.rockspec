rockspec_format = "3.0"
package = "merchantapi"
version = "scm-1"
source = {
  -- the checkout's rockspec: `luarocks --lua-version=5.4 make merchantapi-scm-1.rockspec`
  -- builds the sources beside it.  `make rockspec ROCK_URL=...` writes the release
  -- rockspec (the version of src/merchantapi.h, the published sources' URL).
  url = "git+file:///dev/null",
}
description = {
  summary = "Client for the merchant payments service: confirm payouts, read channels, list addresses",
  detailed = [[
A C core (libcurl, simdjson) with a Lua binding: JSON:API documents come back as
flattened, resolved Lua tables with exact numbers; retries and errors that are
safe with money; a pager over address lists.]],
  license = "MIT",
  labels = { "payments", "jsonapi", "http" },
}
dependencies = {
  "lua >= 5.1",
  "argparse", -- the command-line tool's option parser (merchantapi.cli)
}
external_dependencies = {
  CURL = { library = "curl" },
  SIMDJSON = { header = "simdjson.h", library = "simdjson" },
}
-- A "make" build (mk/rock.mk) rather than "builtin": the module must be
-- compiled with -fvisibility=hidden and linked with a version script so that
-- merchantapi/core.so exports luaopen_merchantapi_core only, and builtin
-- has no per-rock compiler or linker flags.  mk/rock.mk compiles every
-- src/*.c (the binding is src/lua_*.c) and src/json_parse.cpp (C++, with
-- the system's c++), links libsimdjson and the C++ runtime, and installs
-- every lua/ file.
build = {
  type = "make",
  makefile = "mk/rock.mk",
  build_variables = {
    CC = "$(CC)",
    CFLAGS = "$(CFLAGS)",
    LIBFLAG = "$(LIBFLAG)",
    LUA_INCDIR = "$(LUA_INCDIR)",
    CURL_INCDIR = "$(CURL_INCDIR)",
    CURL_LIBDIR = "$(CURL_LIBDIR)",
    SIMDJSON_INCDIR = "$(SIMDJSON_INCDIR)",
    SIMDJSON_LIBDIR = "$(SIMDJSON_LIBDIR)",
  },
  install_variables = {
    INST_LIBDIR = "$(LIBDIR)",
    INST_LUADIR = "$(LUADIR)",
  },
  -- the command-line tool (its modules, merchantapi.cli and merchantapi/cli/, are installed
  -- with every lua/ file by mk/rock.mk); luarocks wraps it so that it finds the tree's modules
  install = {
    bin = { merchantapi = "bin/merchantapi" },
  },
}

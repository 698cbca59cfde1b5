rockspec_format = "3.0"
package = "merchantapi"
version = "scm-1"
source = {
  url = "git+file:///dev/null", -- replaced by the published repository's URL on release
}
description = {
  summary = "Client for the merchant payments service: confirm payouts, read channels, list addresses",
  detailed = [[
A C core (libcurl, json-c) with a Lua binding: JSON:API documents come back as
flattened, resolved Lua tables with exact numbers; retries and errors that are
safe with money; a pager over address lists.]],
  license = "MIT",
  labels = { "payments", "jsonapi", "http" },
}
dependencies = {
  "lua >= 5.1",
}
external_dependencies = {
  CURL = { library = "curl" },
  JSONC = { library = "json-c" },
}
build = {
  type = "builtin",
  modules = {
    merchantapi = "lua/merchantapi.lua",
    ["merchantapi.pager"] = "lua/merchantapi/pager.lua",
    ["merchantapi.core"] = {
      sources = {
        "src/lua_merchantapi.c", "src/http.c", "src/response.c", "src/jsonapi.c",
        "src/numscan.c", "src/value.c", "src/client.c", "src/mapping.c", "src/url.c",
        "src/retry.c", "src/error.c", "src/error_doc.c", "src/buf.c",
      },
      defines = { "MAPI_BUILDING", "_POSIX_C_SOURCE=200809L" },
      incdirs = { "src", "$(CURL_INCDIR)", "$(JSONC_INCDIR)" },
      libdirs = { "$(CURL_LIBDIR)", "$(JSONC_LIBDIR)" },
      libraries = { "curl", "json-c" },
    },
  },
}

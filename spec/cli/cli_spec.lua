-- The command-line tool against the sandbox, as a user drives it: each command called in
-- this process (merchantapi.cli.run with streams of the spec's own) and its exit
-- status, confirm asking on a terminal (and refusing without --yes off one:
-- `script` gives it a pty), the key from a file and never as an argument,
-- --verbose, help, version, the sandbox, and the key in no output.  The exit
-- statuses are one table (merchantapi.cli.status), which --help and the man
-- page's EXIT STATUS must match.  What it prints, byte for byte, and its exit
-- status for each error kind: spec/cli/output_spec.lua.  The runs:
-- spec/support/cli.lua.  man/merchantapi.1.
local merchantapi = require "merchantapi"
local helpers = require "helpers"
local T = require "support.cli"

local format = string.format
local quote = helpers.shell_quote
local count = helpers.count

T.describe_tool(function()
  describe("in process: merchantapi.cli.run", function()
    it("confirm on a terminal: shows the draft and asks; 'n' sends nothing (exit 1), 'y' confirms", function()
      local out, err, code = T.run("confirm " .. T.PAYOUT, { tty = true, stdin = "n\n" })
      assert.equal(T.EXIT.declined, code, err)
      assert.equal("", out)
      assert.equal("payout " .. T.PAYOUT .. ": 250.10 EUR to TJTuEYJ8P9to4Zhdw7zg55VPH3gzLaQDV6, status draft\n"
        .. "Confirm payout " .. T.PAYOUT .. "? This moves money. [y/N] "
        .. "merchantapi: not confirmed (nothing sent)\n", err)
      assert.equal(1, count(T.PAYOUT)) -- the read shown, no PUT
      out, err, code = T.run("confirm " .. T.PAYOUT .. " --json", { tty = true, stdin = "y\n" })
      assert.equal(T.EXIT.ok, code, err)
      assert.matches('"status":"processing"', out)
      assert.equal(3, count(T.PAYOUT))
    end)

    it("payout --wait-txid on a terminal: a line per read without a txid", function()
      local _, out, err, code
      out, err, code = T.run("payout draft-track-fast --wait-txid=0.2")
      assert.equal(T.EXIT.timeout, code, err) -- a draft never gets a txid
      assert.equal("", out)
      _, err, code = T.run("payout " .. T.PAYOUT .. " --wait-txid=0", { tty = true })
      assert.equal(T.EXIT.timeout, code)
      assert.matches("^merchantapi: payout " .. T.escape_pattern(T.PAYOUT) .. " is draft, no txid yet\n", err)
      _, err, code = T.run("payout x --wait-txid=soon")
      assert.equal(T.EXIT.usage, code)
      assert.equal("merchantapi: --wait-txid: expected seconds (a number >= 0), got 'soon'\n", err)
    end)

    it("usage errors, version and sandbox without its files", function()
      local _, out, err, code
      out, err, code = T.run("addresses acct-22 --concurrency 2")
      assert.same({ "", "merchantapi: --concurrency is for --all\n", T.EXIT.usage }, { out, err, code })
      _, err, code = T.run("--json --csv channel x")
      assert.same({ "merchantapi: --json and --csv: one output format at a time\n", T.EXIT.usage }, { err, code })
      _, err, code = T.run("channel x --per-page 2")
      assert.equal(T.EXIT.usage, code)
      assert.matches("^merchantapi: unknown option '%-%-per%-page'", err)
      _, err, code = T.run("addresses x --max-retries 1.5")
      assert.equal(T.EXIT.usage, code)
      assert.matches("expected an integer, got '1%.5'", err)
      out, err, code = T.run("version")
      assert.same({ "", T.EXIT.ok }, { err, code })
      assert.equal(format("merchantapi %s (%s)\n", merchantapi._VERSION, rawget(_G, "jit") and jit.version or _VERSION),
        out)
      out, err, code = T.run("sandbox")
      assert.same({ "", T.EXIT.tool }, { out, code })
      assert.matches("^merchantapi: the sandbox is not installed with this copy", err)
    end)

    it("the exit statuses are one table: --help and the man page's EXIT STATUS match it", function()
      local status = require "merchantapi.cli.status"
      local help = (T.cli("--help"))
      assert.truthy(help:find(status.HELP, 1, true), help)
      local man = T.read_file(helpers.ROOT .. "/man/merchantapi.1"):match("\n%.SH EXIT STATUS\n(.-)\n%.SH ")
      local codes = {}
      for n, text in man:gmatch("\n%.TP\n%.B (%d+)\n([^\n]*)") do
        codes[#codes + 1] = tonumber(n)
        local want = status.LIST[#codes]
        assert.equal(want[1], tonumber(n))
        assert.equal(want[3]:lower(), text:sub(1, #want[3]):lower(), "man page, status " .. n)
      end
      assert.equal(#status.LIST, #codes)
      -- a guide's table of them ("| code | meaning |" under a heading "Exit status"), where there is one
      for _, doc in ipairs({ "README.md", "docs/guide/shell.md", "docs/guide/cli.md" }) do
        local f = io.open(helpers.ROOT .. "/" .. doc, "rb")
        local rows = f and f:read("*a"):match("\n#+ Exit status\n.-\n| code | meaning |\n|[-|]+|\n(.-)\n\n")
        if f then f:close() end
        if rows then
          local listed = {}
          for n in rows:gmatch("| (%d+) |") do
            listed[#listed + 1] = tonumber(n)
          end
          assert.same(codes, listed, doc .. "'s exit status table")
        end
      end
      for _, s in ipairs(status.LIST) do
        assert.equal(s[1], T.EXIT[s[2]])
        assert.truthy(help:find(s[1] .. " " .. s[3], 1, true))
      end
    end)
  end)

  describe("confirm and the terminal", function()
    it("refuses without --yes when stdin is not a terminal, even with 'y' on it, sending nothing", function()
      for _, input in ipairs({ "", "y\n" }) do
        local out, err, code = T.cli("confirm " .. T.PAYOUT, { stdin = input })
        assert.equal(T.EXIT.usage, code)
        assert.equal("", out)
        assert.equal("merchantapi: confirm moves money: pass --yes when stdin is not a terminal "
          .. "(nothing was sent)\n", err)
      end
      assert.equal(0, count(T.PAYOUT))
      assert.equal("draft", assert(T.client():get_payout(T.PAYOUT)).status)
    end)

    it("asks on a terminal: 'n' sends nothing (exit 1), 'y' confirms", function()
      if not T.have("script") then
        pending("no `script` (bsdutils) for a pseudo-terminal")
        return
      end
      local shown, code = T.cli_tty("confirm " .. T.PAYOUT, "n\n")
      assert.equal(1, code, shown)
      assert.matches("250%.10 EUR to TJTuEYJ8P9to4Zhdw7zg55VPH3gzLaQDV6, status draft", shown)
      assert.matches("Confirm payout " .. T.escape_pattern(T.PAYOUT) .. "%? This moves money%. %[y/N%]", shown)
      assert.matches("not confirmed %(nothing sent%)", shown)
      assert.equal(1, count(T.PAYOUT)) -- the read that showed the draft, no PUT
      assert.equal("draft", assert(T.client():get_payout(T.PAYOUT)).status)
      shown, code = T.cli_tty("confirm " .. T.PAYOUT, "y\n")
      assert.equal(0, code, shown)
      assert.matches("\nstatus +processing\r?\n", shown)
      assert.equal(4, count(T.PAYOUT)) -- + this spec's read, the read shown, the one PUT
      assert.equal("processing", assert(T.client():get_payout(T.PAYOUT)).status)
    end)
  end)

  describe("configuration and the key", function()
    it("the key from --api-key-file; never as an argument; none: the service's 401", function()
      local path = os.tmpname()
      T.write_file(path, T.KEY .. "\n")
      local _
      local out, err, code = T.cli("addresses acct-one --api-key-file " .. quote(path), { key = false })
      os.remove(path)
      assert.equal(0, code, err)
      assert.matches("\npage 1: 1 address of 1", out)
      for _, args in ipairs({ "--api-key=" .. T.KEY .. " channel x", "channel x --api-key " .. T.KEY }) do
        err, code = select(2, T.cli(args))
        assert.equal(T.EXIT.usage, code)
        assert.equal("merchantapi: the api key is never an argument (other users can read argv): "
          .. "set MERCHANTAPI_API_KEY or pass --api-key-file FILE\n", err)
      end
      _, err, code = T.cli("channel " .. T.CHANNEL, { key = false })
      assert.equal(T.EXIT.api, code)
      assert.matches("^merchantapi: 401 unauthorized", err)
      _, err, code = T.cli("channel " .. T.CHANNEL, { env = "MERCHANTAPI_BASE_URL=" })
      assert.equal(T.EXIT.usage, code)
      assert.equal("merchantapi: no base URL: set MERCHANTAPI_BASE_URL or pass --base-url\n", err)
    end)

    it("--verbose logs every attempt with the module's one line (MERCHANTAPI_DEBUG's), never the key", function()
      local _, err, code = T.cli("-v channel fault-flaky-1-503 --max-retries 1")
      assert.equal(0, code, err)
      assert.matches("^merchantapi: base URL [^\n]+; api key from MERCHANTAPI_API_KEY\n"
        .. "merchantapi: GET [^\n]+/channels/fault%-flaky%-1%-503 attempt 1/2: 503 %(api service_unavailable%) "
        .. "in [%d.]+ s, request id %x+, retry in [%d.]+ s\n"
        .. "merchantapi: GET [^\n]+ attempt 2/2: 200 in [%d.]+ s, request id %x+\n$", err)
      -- the same lines as the module writes under MERCHANTAPI_DEBUG=1 (times and ids aside)
      local function shape(text)
        return (text:gsub("^[^\n]*base URL[^\n]*\n", ""):gsub("[%d.]+ s", "T s"):gsub("request id %x+", "ID"))
      end
      helpers.reset()
      local _, debug_err = T.cli("channel fault-flaky-1-503 --max-retries 1", { env = "MERCHANTAPI_DEBUG=1" })
      helpers.reset()
      local _, verbose_err = T.cli("channel fault-flaky-1-503 --max-retries 1 --verbose")
      assert.equal(shape(debug_err), shape(verbose_err))
      _, err = T.cli("channel " .. T.CHANNEL .. " --verbose")
      assert.matches("attempt 1/3: 200", err)
    end)

    -- (every run of the tool in this file before this test; `merchantapi sandbox`,
    -- below, prints the sandbox's own key on purpose)
    it("the key is in no output, also when the server echoes it back", function()
      T.sandbox_config('{"echo_key":true}')
      local path = os.tmpname()
      T.write_file(path, T.KEY)
      for _, args in ipairs({
        "-v channel " .. T.CHANNEL, "-v channel nope", "-v --json channel fault-500 --max-retries 0",
        "-v confirm fault-502-json -y --max-retries 0", "-v addresses acct-22 --all --per-page 10 --csv",
        "-v request GET /api/public/v1/channels/" .. T.CHANNEL .. " --json",
        "-v --api-key-file " .. quote(path) .. " payout " .. T.PAYOUT,
      }) do
        T.cli(args)
      end
      os.remove(path)
      T.sandbox_config('{"echo_key":false}')
      for _, text in ipairs(T.outputs) do
        assert.is_nil(text:find(T.KEY, 1, true), "the key in:\n" .. text)
      end
      assert.is_true(#T.outputs > 60) -- every run of this file was checked
    end)
  end)

  describe("help, version, sandbox", function()
    it("--help for the tool and each command; version", function()
      local out, _, code = T.cli("--help")
      assert.equal(0, code)
      assert.matches("^Usage: merchantapi ", out)
      assert.matches("8 outcome unknown", out)
      for _, c in ipairs({ "confirm", "payout", "channel", "addresses", "request", "sandbox", "version" }) do
        local c_out, _, c_code = T.cli(c .. " --help")
        assert.equal(0, c_code)
        assert.matches("^Usage: merchantapi " .. c .. " ", c_out)
      end
      assert.matches("%-%-wait%-txid", (T.cli("help payout")))
      out, _, code = T.cli("version")
      assert.equal(0, code)
      assert.matches("^merchantapi " .. T.escape_pattern(merchantapi._VERSION) .. " %(", out)
      local _, err
      _, err, code = T.cli("")
      assert.equal(T.EXIT.usage, code)
      assert.matches("a command is required", err)
    end)

    it("sandbox: prints its URL and key, runs in the foreground, stops with nginx", function()
      if T.under_asan() then
        pending("nginx must not inherit the sanitizer's preload, which the tool's Lua needs here")
        return
      end
      local work = os.tmpname()
      os.remove(work)
      -- a prefix of its own: the Lua matrix runs this file in two lanes at once
      local prefix = helpers.ROOT .. "/build/sandbox-cli-" .. work:match("([^/]+)$")
      local cmd = format("(env MERCHANTAPI_BASE_URL= SANDBOX_PREFIX=%s %s %s sandbox --port auto "
        .. ">%s.out 2>%s.err; echo $? >%s.rc) >/dev/null 2>&1 &",
        quote(prefix), helpers.lua_command(), quote(T.BIN), work, work, work)
      assert(helpers.run(cmd, true) ~= nil)
      local url
      for _ = 1, 200 do -- until it answers, or the tool has exited
        local f = io.open(work .. ".out", "rb")
        local text = f and f:read("*a") or ""
        if f then f:close() end
        url = text:match("export MERCHANTAPI_BASE_URL=(%S+)\n")
        if url and select(2, helpers.run("curl -sf -o /dev/null " .. quote(url .. "/__sandbox/health"))) then
          break
        end
        f = io.open(work .. ".rc", "rb")
        if f then
          f:close()
          break
        end
        helpers.run("sleep 0.05")
      end
      local errors = T.read_file(work .. ".err")
      local shown = T.read_file(work .. ".out")
      local out, err, code = T.cli("channel " .. T.CHANNEL .. " --json", { base_url = url })
      assert.equal(0, code, err .. errors)
      helpers.run(format("env SANDBOX_PREFIX=%s %s stop", quote(prefix), quote(helpers.ROOT .. "/sandbox/run")))
      local rc
      for _ = 1, 200 do
        local f = io.open(work .. ".rc", "rb")
        rc = f and f:read("*a")
        if f then f:close() end
        if rc and rc ~= "" then break end
        helpers.run("sleep 0.05")
      end
      os.remove(work .. ".out")
      os.remove(work .. ".err")
      os.remove(work .. ".rc")
      helpers.run("rm -rf " .. quote(prefix))
      assert.matches("^export MERCHANTAPI_BASE_URL=http://127%.0%.0%.1:%d+\n"
        .. "export MERCHANTAPI_API_KEY=" .. T.KEY .. "\n$", shown)
      assert.equal(0, code, err)
      assert.matches('"balance":"6194.43"', out)
      assert.equal("0", (rc or ""):match("%d+"))
    end)
  end)
end)

--- Rows of the fault matrix about the concurrent pages themselves (the core's
-- page batch, src/pages.c): a walk of `client:addresses(...):all()` made by
-- every driver -- blocking (the core's libcurl driver, retry rounds), a loop
-- task, a custom transport, nginx's light threads (each page's exchange
-- retrying on its own) -- and by pages1/4/8 at their own concurrency.  The
-- answer is the same on each: the pages before the failed one kept, its
-- error returned, a retried page counted apart (`<account>/page<k>`).
-- acct-22's 22 addresses 8 a page: 3 pages, page 1 alone (it tells
-- meta.total), then pages 2 and 3 at once.
local E = require("support.matrix.cell").expect

local function walk(name, account, expect, opts)
  return { name = name, server = "sandbox",
           calls = { pages = { account = account, per_page = 8, concurrency = 2, page = 2 } },
           opts = opts or { max_retries = 1, timeout = 5 }, expect = { pages = expect } }
end

return {
  -- page 3 is dropped (cancelled, or its end not kept), page 1 kept
  walk("page 2 of 3 fails for good, 2 at once", "fault-page-2-flaky-9-500",
    E("api", nil, 500, 1)),
  -- a retry of one page: rounds (libcurl) or its own waits (the others)
  walk("page 2 of 3 retried once, 2 at once", "fault-page-2-flaky-1-503",
    { ok = true, reached = { 2, 2 } }),
  -- the retry's wait outlasts the page's deadline: it fails at once
  walk("page 2 of 3 told Retry-After 30, 2 at once", "fault-page-2-429-after-30",
    E("api", nil, 429, 1, 1, { deadline_exceeded = true }), { max_retries = 1, timeout = 5, deadline = 3 }),
}

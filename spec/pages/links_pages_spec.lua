-- client:paginate(path, opts) and merchantapi.paginate(client, path, opts):
-- a list of any JSON:API service reached with client:request pages by its
-- own pagination links (`links.next`), same origin only, with the pager's
-- duplicate rules.  Over the sandbox's `links-…` accounts (sandbox/README.md,
-- "Addresses") and over a fake transport for what the sandbox does not do.
local merchantapi = require "merchantapi"
local helpers = require "helpers"

local count, format = helpers.count, string.format
local acct22_ids = helpers.acct22_ids

local function addresses(id)
  return "/api/public/v1/accounts/" .. id .. "/addresses"
end

describe("client:paginate over the sandbox", function()
  local client
  before_each(function()
    helpers.reset()
    client = helpers.client()
  end)
  after_each(function()
    client:close()
  end)

  it("follows links.next to the last page, one request per page, with no meta", function()
    local pager = client:paginate(addresses("links-acct-22"), { query = { ["page[size]"] = 5 } })
    local items = assert(pager:all())
    assert.same(acct22_ids(1, 22), helpers.ids(items))
    assert.equal(5, count("links-acct-22"))
    assert.equal(5, pager.pages_fetched)
  end)

  it("hands out pages with their links", function()
    local pager = merchantapi.paginate(client, addresses("links-acct-22"),
      { query = { ["page[size]"] = 10, order_type = "desc" } })
    local sizes, nexts = {}, {}
    for list in pager:pages() do
      sizes[#sizes + 1] = #list
      nexts[#nexts + 1] = list.links.next or "none"
      assert.is_nil(list.meta)
      assert.truthy(list.links.self:find("page[size]=10&order_type=desc", 1, true))
    end
    assert.same({ 10, 10, 2 }, sizes)
    assert.matches("page%[number%]=2&", nexts[1])
    assert.equal("none", nexts[3])
    assert.equal(3, count("links-acct-22"))
  end)

  it("resolves links written as paths without scheme and host", function()
    local items = assert(client:paginate(addresses("links-relative-acct-22"),
      { query = { ["page[size]"] = 8 } }):all())
    assert.same(acct22_ids(1, 22), helpers.ids(items))
    assert.equal(3, count("links-relative-acct-22"))
  end)

  it("refuses a next link to another host, after the items of the page that gave it", function()
    local items, err = client:paginate(addresses("links-foreign-acct-22"),
      { query = { ["page[size]"] = 5 } }):all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal("decode", err.kind)
    assert.equal("links.next is not under the base URL", err.title)
    assert.truthy(err.detail:find("elsewhere.invalid", 1, true))
    assert.same(acct22_ids(1, 5), helpers.ids(partial))
    assert.equal(1, count("links-foreign-acct-22"))
  end)

  it("ends with a decode error on a page that repeats ids (a server that ignores the page)", function()
    local pager = client:paginate(addresses("links-ignore-acct-22"), { query = { ["page[size]"] = 5 } })
    local items, err = pager:all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal("decode", err.kind)
    assert.equal(2, err.page)
    assert.truthy(err.title:find("page 2: id " .. acct22_ids(1, 1)[1] .. " again, already yielded on page 1",
      1, true))
    assert.same(acct22_ids(1, 5), helpers.ids(partial))
    assert.equal(5, partial.received)
    assert.is_nil(partial.announced)
    assert.equal(2, count("links-ignore-acct-22"))
  end)

  it("stops after max_pages", function()
    local items = assert(client:paginate(addresses("links-acct-22"),
      { query = { ["page[size]"] = 5 }, max_pages = 2 }):all())
    assert.same(acct22_ids(1, 10), helpers.ids(items))
    assert.equal(2, count("links-acct-22"))
  end)

  it("fails as decode on a document that is not a list, and gives the call's errors", function()
    local _, err = client:paginate("/api/public/v1/channels/" .. helpers.CHANNEL_ID):all()
    assert.equal("decode", err.kind)
    assert.equal("expected a list (an array as primary data)", err.title)
    local _, err2 = client:paginate(addresses("no-such-account")):all()
    assert.equal("api", err2.kind)
    assert.equal(404, err2.status)
    local _, err3 = client:paginate(addresses("acct-22"), { query = { x = { a = 1 } } }):all()
    assert.equal("usage", err3.kind)
  end)

  it("raises on arguments of the wrong type and unknown options", function()
    assert.has_error(function() client:paginate(1) end,
      "bad argument #1 to 'paginate' (string expected, got number)")
    assert.has_error(function() client:paginate("/x", { page = 2 }) end,
      "unknown option 'page' to 'paginate'")
    assert.has_error(function() client:paginate("/x", { max_pages = 0 }) end)
    assert.has_error(function() merchantapi.paginate(client, "/x", 5) end)
  end)
end)

describe("client:paginate over a fake transport", function()
  local BASE = "https://api.example/v2"
  local JSONAPI = { ["Content-Type"] = "application/vnd.api+json" }

  -- A client whose transport answers pages[url] (a body) and records the URLs.
  local function paged(pages)
    local urls = {}
    local c = assert(merchantapi.new { base_url = BASE, api_key = "k", max_retries = 0,
      transport = function(req)
        urls[#urls + 1] = req.url
        local body = pages[req.url]
        if not body then
          return { status = 500, headers = JSONAPI,
                   body = '{"errors":[{"status":"500","code":"boom","title":"Boom"}]}' }
        end
        return { status = 200, headers = JSONAPI, body = body }
      end })
    return c, urls
  end

  local function page(ids, next_link)
    local data = {}
    for i, id in ipairs(ids) do
      data[i] = format('{"type":"things","id":"%s"}', id)
    end
    local links = next_link and (',"links":{"next":' .. next_link .. "}") or ""
    return '{"data":[' .. table.concat(data, ",") .. "]" .. links .. "}"
  end

  it("follows link objects and query-only references", function()
    local c, urls = paged({
      [BASE .. "/things"] = page({ "1", "2" }, '{"href":"https://API.example:443/v2/things?p=2"}'),
      [BASE .. "/things?p=2"] = page({ "3" }, '"?p=3"'),
      [BASE .. "/things?p=3"] = page({ "4" }, "null"),
    })
    local items = assert(c:paginate("/things"):all())
    assert.same({ "1", "2", "3", "4" }, helpers.ids(items))
    assert.same({ BASE .. "/things", BASE .. "/things?p=2", BASE .. "/things?p=3" }, urls)
  end)

  it("ends with a decode error on a page that repeats an id of any page before", function()
    local c, urls = paged({
      [BASE .. "/things"] = page({ "1", "2" }, '"?p=2"'),
      [BASE .. "/things?p=2"] = page({ "3" }, '"?p=3"'),
      [BASE .. "/things?p=3"] = page({ "4", "1" }, '"?p=4"'),
      [BASE .. "/things?p=4"] = page({ "5" }, "null"),
    })
    local items, err = c:paginate("/things"):all()
    assert.is_nil(items)
    local partial = err.partial
    assert.equal("decode", err.kind)
    assert.equal(3, err.page)
    assert.equal("page 3: id 1 again, already yielded on page 1", err.title)
    assert.same({ "1", "2", "3" }, helpers.ids(partial))
    assert.equal(3, #urls)
  end)

  it("checks no meta.total in follow mode: a page's meta neither ends nor fails the walk", function()
    local c = paged({
      [BASE .. "/things"] = '{"data":[{"type":"things","id":"1"}],"meta":{"total":1,"per_page":5},'
        .. '"links":{"next":"?p=2"}}',
      [BASE .. "/things?p=2"] = '{"data":[{"type":"things","id":"2"}],"meta":{"total":0}}',
    })
    local items = assert(c:paginate("/things"):all())
    assert.same({ "1", "2" }, helpers.ids(items))
    assert.is_nil(items.announced)
    assert.equal(2, items.received)
  end)

  it("stops at a next link it has already followed", function()
    local c, urls = paged({
      [BASE .. "/things"] = page({ "1" }, '"' .. BASE .. '/things?p=2"'),
      [BASE .. "/things?p=2"] = page({ "2" }, '"' .. BASE .. '/things"'),
    })
    assert.same({ "1", "2" }, helpers.ids(assert(c:paginate("/things"):all())))
    assert.equal(2, #urls)
  end)

  it("never sends the key elsewhere: another scheme, port or path prefix is refused", function()
    for _, link in ipairs({ '"http://api.example/v2/things?p=2"', '"https://api.example:8443/v2/x"',
                            '"https://api.example/v1/things"', '"//other.example/v2/x"',
                            '"mailto:x@api.example"' }) do
      local c, urls = paged({ [BASE .. "/things"] = page({ "1" }, link) })
      local items, err = c:paginate("/things"):all()
      assert.is_nil(items)
      local partial = err.partial
      assert.equal("decode", err.kind, link)
      assert.same({ "1" }, helpers.ids(partial))
      assert.same({ BASE .. "/things" }, urls)
    end
  end)

  it("fails as decode on a next link the request cannot send", function()
    local c = paged({ [BASE .. "/things"] = page({ "1" }, '"/v2/things?q=a b"') })
    local _, err = c:paginate("/things"):all()
    assert.equal("decode", err.kind)
    assert.equal("links.next cannot be requested", err.title)
  end)

  it("ends with the error of a page after the items of the pages before", function()
    local c = paged({ [BASE .. "/things"] = page({ "1", "2" }, '"' .. BASE .. '/things?p=2"') })
    local pager = c:paginate("/things")
    local seen = {}
    local ok, err = pcall(function()
      for item in pager:each() do
        seen[#seen + 1] = item.id
      end
    end)
    assert.is_false(ok)
    assert.equal("api", err.kind)
    assert.equal(500, err.status)
    assert.same({ "1", "2" }, seen)
  end)
end)

"""What the fault servers of tests/servers/ share: the normal answer to a
call (JSON:API documents shaped like fixtures/, with the ids asked for) and
the counts of what they received and processed, kept in DIR/counts.

DIR/counts holds one key a line, each line one more of that key (the
reader adds them up: spec/support/test_server.lua): "<protocol> <METHOD>
<path>" (protocol "h2" or "http/1.1", the path with its query) for a
request received, and "processed <protocol> <METHOD> <path>" for one the
server took on (answered, or failed after taking: a reset after the
request, a body cut); a stream refused or left above a GOAWAY's
last_stream_id is received but never processed.  The lines are written
(one write, flushed) before the request is answered, so a client that got
its answer finds it counted.
"""
import copy
import json
import os
import re
import threading
from urllib.parse import unquote

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures")


def _fixture(name):
    with open(os.path.join(FIXTURES, name + ".json"), "rb") as f:
        return json.loads(f.read().decode("utf-8"))


CHANNEL = _fixture("get_channel.200")
PAYOUT = _fixture("confirm_payout.201")
ADDRESSES = _fixture("list_addresses.200")
BIG = 48 * 1024  # bytes of meta.padding in a page of a "big" account
BOOK = None  # a whole list (load_addresses): every account's addresses


def load_addresses(path):
    """Every list is served from the list document at path (its data, in
    order, and its included), paged by the request's page and per_page:
    e.g. the sandbox's acct-22, so that a test compares the same ids."""
    global BOOK
    with open(path, "rb") as f:
        BOOK = json.loads(f.read().decode("utf-8"))


def fault_name(path, names):
    """The fault a path asks for: (name, segment, page) for the first path
    segment that has one of names (longest first) as a dash-separated part,
    before any "~<tag>" ("x-h2-refused", "h2-refused-loop8",
    "fault-h2-cut~b1ge1"); page is K when the name follows "page-K-" (the
    fault then plays on page K of a list only), else None.  None when no
    segment asks for a fault."""
    for seg in segments(path):
        base = seg.split("~", 1)[0]
        for name in names:
            if base == name or base.startswith(name + "-") or base.endswith("-" + name) \
                    or ("-" + name + "-") in base:
                m = re.search(r"(?:^|-)page-(\d+)-" + re.escape(name) + r"(?:-|$)", base)
                return name, seg, int(m.group(1)) if m else None
    return None


def plays(path, page):
    """Whether a fault for page (None: any) plays on the request for path."""
    return page is None or list_page(path) == page


class Counts:
    """Thread-safe counts, appended to DIR/counts (one key a line).

    A request costs one short append, whatever came before it.  The counts
    were once a JSON of every key rewritten at each request, under the lock:
    a cost growing with the run (some 4,000 keys by the fault matrix's
    cosocket driver) paid while holding the lock and the GIL, so that on a
    loaded machine the server's other threads, its accept loop too, waited
    seconds, and the framing rows' clients ran out their 10 s."""

    def __init__(self, state_dir):
        self.lock = threading.Lock()
        self.file = open(os.path.join(state_dir, "counts"), "a")

    def bump(self, *keys):
        """One more of each key, in one write."""
        with self.lock:
            self.file.write("".join(k.replace("\n", " ") + "\n" for k in keys))
            self.file.flush()

    def add(self, proto, method, path, processed=True):
        key = "%s %s %s" % (proto, method, path)
        if processed:
            self.bump(key, "processed " + key)
        else:
            self.bump(key)

    def processed(self, proto, method, path):
        """Marks a request counted as received (processed=False) as processed."""
        self.bump("processed %s %s %s" % (proto, method, path))


def write_port(state_dir, name, port):
    tmp = os.path.join(state_dir, name + ".tmp")
    with open(tmp, "w") as f:
        f.write(str(port))
    os.replace(tmp, os.path.join(state_dir, name))


def segments(path):
    """The path's segments, percent-decoded (an id "a~b" may come as "a%7Eb")."""
    return [unquote(s) for s in path.split("?", 1)[0].split("/")]


def query(path):
    return dict(q.partition("=")[::2] for q in path.partition("?")[2].split("&") if q)


def list_page(path):
    """The page number a list request asks for, or None for other paths."""
    parts = segments(path.rstrip("/"))
    if len(parts) >= 3 and parts[-1] == "addresses" and parts[-3] == "accounts":
        return int(query(path).get("page", "1"))
    return None


def answer(method, path):
    """status, body (bytes) of the normal answer:
        PUT  .../payouts/<id>   201, fixtures/confirm_payout.201 with that id
        GET  .../payouts/<id>   200, the same
        GET  .../channels/<id>  200, fixtures/get_channel.200 with that id
        GET  .../accounts/<acct>/addresses?page=P&per_page=N
                                200, page P of the list load_addresses read,
                                or, without one or when the account's name
                                has a part pK ("p10-h2-goaway-low"), of K*N
                                addresses (3*N without pK) with ids
                                <acct>-P-i; meta page, per_page and total; an
                                account with a part "big" has meta.padding
                                too (BIG bytes: a page takes several DATA
                                frames and flow-control windows)
        anything else           404, an error document"""
    parts = segments(path.rstrip("/"))
    rid = parts[-1] if parts else ""
    kind = parts[-2] if len(parts) >= 2 else ""
    if method == "GET" and list_page(path) is not None:
        acct = parts[-2]
        q = query(path)
        page, per_page = int(q.get("page", "1")), int(q.get("per_page", "2"))
        first = (page - 1) * per_page
        m = re.search(r"(?:^|-)p(\d+)(?:-|~|$)", acct)
        if BOOK is not None and not m:
            doc = copy.deepcopy(BOOK)
            items = doc["data"]
            doc["data"] = items[first:first + per_page]
            total = len(items)
            doc.pop("links", None)
        else:
            total = (int(m.group(1)) if m else 3) * per_page
            doc = copy.deepcopy(ADDRESSES)
            template = doc["data"][0]
            doc["data"] = []
            for i in range(max(0, min(per_page, total - first))):
                item = copy.deepcopy(template)
                item["id"] = "%s-%d-%d" % (acct, page, i)
                item["attributes"]["label"] = "address %d" % (first + i + 1)
                doc["data"].append(item)
        doc["meta"] = {"page": page, "per_page": per_page, "total": total}
        if re.search(r"(?:^|-)big(?:-|~|$)", acct):
            doc["meta"]["padding"] = "x" * BIG
        return 200, json.dumps(doc).encode()
    if kind in ("payouts", "channels") and (method == "GET" or (method == "PUT" and kind == "payouts")):
        doc = copy.deepcopy(PAYOUT if kind == "payouts" else CHANNEL)
        doc["data"]["id"] = rid
        return (201 if method == "PUT" else 200), json.dumps(doc).encode()
    doc = {"errors": [{"status": "404", "code": "not_found", "title": "Not Found"}]}
    return 404, json.dumps(doc).encode()


REASONS = {200: "OK", 201: "Created", 404: "Not Found"}


def read_request(sock, buf):
    """One HTTP/1.1 request from sock, buf holding what was read before it:
    (method, path, what was read after it), its body read and dropped;
    None when the peer closed first."""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data:
            return None
        buf += data
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    method, path = lines[0].split(" ")[:2]
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(buf) < length:
        data = sock.recv(65536)
        if not data:
            return None
        buf += data
    return method, path, buf[length:]

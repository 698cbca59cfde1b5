#!/usr/bin/python3
"""An HTTPS server that speaks HTTP/2 and HTTP/1.1 (ALPN) and plays the
HTTP/2 stream resets that make libcurl send a request again by itself.

    h2_fault.py --cert server.pem --key server.key --dir DIR [--watch PID]

Listens on 127.0.0.1, on a port the system picks, and writes it to
DIR/port once it accepts connections.  Every request it receives is counted
in DIR/counts.json ({"<protocol> <METHOD> <path>": n}, protocol "h2" or
"http/1.1"), rewritten before the request is answered, so a client that got
its answer finds its request counted.  With --watch it exits once process
PID is gone (the test that started it); SIGTERM stops it.

What it answers depends on a path segment that is, or ends with "-", one
of these names, over HTTP/2 only:
    h2-1.1-required        RST_STREAM HTTP_1_1_REQUIRED before any header
    h2-1.1-required-late   :status 201 headers, then RST_STREAM HTTP_1_1_REQUIRED
    h2-refused             RST_STREAM REFUSED_STREAM
Any other request, and every request over HTTP/1.1, is answered normally:
    PUT  .../payouts/<id>   201, a "payouts" resource with that id
    GET  .../payouts/<id>   200, the same
    GET  .../channels/<id>  200, a "channels" resource with that id
    GET  .../accounts/<id>/addresses?page=P&per_page=N
                            200, page P of 3*N "addresses" (ids <id>-P-i)
    anything else           404, an error document
The resets come after the whole request was received (END_STREAM): the
server took the request, as a real server would have before failing.
"""
import argparse
import json
import os
import signal
import socket
import ssl
import sys
import threading


from lifetime import watch

import h2.config
import h2.connection
import h2.errors
import h2.events

FAULTS = {
    "h2-1.1-required": ("reset", h2.errors.ErrorCodes.HTTP_1_1_REQUIRED),
    "h2-1.1-required-late": ("late", h2.errors.ErrorCodes.HTTP_1_1_REQUIRED),
    "h2-refused": ("reset", h2.errors.ErrorCodes.REFUSED_STREAM),
}

lock = threading.Lock()
counts = {}
state_dir = None


def count(proto, method, path):
    with lock:
        key = "%s %s %s" % (proto, method, path)
        counts[key] = counts.get(key, 0) + 1
        tmp = os.path.join(state_dir, "counts.json.tmp")
        with open(tmp, "w") as f:
            json.dump(counts, f)
        os.replace(tmp, os.path.join(state_dir, "counts.json"))


def fault(path):
    """The fault a path asks for (a segment that is, or ends with "-", a
    fault's name), or None."""
    for seg in path.split("?", 1)[0].split("/"):
        for name, f in FAULTS.items():
            if seg == name or seg.endswith("-" + name):
                return f
    return None


def answer(method, path):
    """status, body of the normal answer."""
    parts = path.split("?", 1)[0].rstrip("/").split("/")
    rid = parts[-1] if parts else ""
    kind = parts[-2] if len(parts) >= 2 else ""
    if method == "GET" and rid == "addresses" and len(parts) >= 3:
        query = dict(q.partition("=")[::2] for q in path.partition("?")[2].split("&") if q)
        page, per_page = int(query.get("page", "1")), int(query.get("per_page", "2"))
        doc = {"data": [{"type": "addresses", "id": "%s-%d-%d" % (parts[-2], page, i),
                         "attributes": {}} for i in range(per_page)],
               "meta": {"page": page, "per_page": per_page, "total": 3 * per_page}}
        return 200, json.dumps(doc).encode()
    if kind in ("payouts", "channels") and (method == "GET" or (method == "PUT" and kind == "payouts")):
        doc = {"data": {"type": kind, "id": rid, "attributes": {"status": "processing"}
                        if kind == "payouts" else {}}, "meta": {}}
        return (201 if method == "PUT" else 200), json.dumps(doc).encode()
    doc = {"errors": [{"status": "404", "code": "not_found", "title": "Not Found"}]}
    return 404, json.dumps(doc).encode()


def serve_h2(sock):
    conn = h2.connection.H2Connection(
        config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    heads = {}
    while True:
        data = sock.recv(65536)
        if not data:
            return
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                heads[ev.stream_id] = dict(ev.headers)
                if ev.stream_ended:
                    respond_h2(conn, ev.stream_id, heads.pop(ev.stream_id))
            elif isinstance(ev, h2.events.DataReceived):
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                if ev.stream_id in heads:
                    respond_h2(conn, ev.stream_id, heads.pop(ev.stream_id))
            elif isinstance(ev, h2.events.ConnectionTerminated):
                sock.sendall(conn.data_to_send())
                return
        sock.sendall(conn.data_to_send())


def respond_h2(conn, sid, head):
    method, path = head.get(":method", "?"), head.get(":path", "?")
    count("h2", method, path)
    f = fault(path)
    if f:
        what, code = f
        if what == "late":
            conn.send_headers(sid, [(":status", "201"),
                                    ("content-type", "application/vnd.api+json")])
        conn.reset_stream(sid, error_code=code)
        return
    status, body = answer(method, path)
    conn.send_headers(sid, [(":status", str(status)),
                            ("content-type", "application/vnd.api+json"),
                            ("content-length", str(len(body)))])
    conn.send_data(sid, body, end_stream=True)


def serve_http1(sock):
    buf = b""
    while True:
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            if not data:
                return
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
                return
            buf += data
        buf = buf[length:]
        count("http/1.1", method, path)
        status, body = answer(method, path)
        reason = {200: "OK", 201: "Created", 404: "Not Found"}[status]
        sock.sendall(("HTTP/1.1 %d %s\r\nContent-Type: application/vnd.api+json\r\n"
                      "Content-Length: %d\r\n\r\n" % (status, reason, len(body))).encode()
                     + body)


def connection(raw, ctx):
    try:
        sock = ctx.wrap_socket(raw, server_side=True)
    except (ssl.SSLError, OSError):
        raw.close()
        return
    try:
        if sock.selected_alpn_protocol() == "h2":
            serve_h2(sock)
        else:
            serve_http1(sock)
    except (ssl.SSLError, OSError, ValueError):
        pass
    finally:
        try:
            sock.close()
        except OSError:
            pass


def main():
    global state_dir
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--watch", type=int)
    a = p.parse_args()
    state_dir = a.dir
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    count_file = os.path.join(state_dir, "counts.json")
    with open(count_file, "w") as f:
        f.write("{}")
    tmp = os.path.join(state_dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.replace(tmp, os.path.join(state_dir, "port"))
    if a.watch:
        threading.Thread(target=watch, args=(a.watch,), daemon=True).start()
    while True:
        raw, _ = srv.accept()
        threading.Thread(target=connection, args=(raw, ctx), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())

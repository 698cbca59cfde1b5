#!/usr/bin/python3
"""A small forward HTTP proxy that counts what goes through it.

    http_proxy.py --dir DIR [--watch PID] [--host ADDRESS]

Listens on 127.0.0.1 (or ADDRESS), on a port the system picks, and writes it
to DIR/port once it accepts connections.  Every request it receives is counted
in DIR/counts (answers.Counts: a line "<METHOD> <target>" a request, target
as the client sent it: an absolute URL, or host:port for CONNECT), with
"authorization <METHOD> <target>" counted too when the request carried an
Authorization header; counted before the request is forwarded.  A request in
absolute form is forwarded to its origin (HTTP/1.1, Connection: close) and
the answer relayed; CONNECT opens a tunnel.  On an ADDRESS other than
127.0.0.1 it forwards nothing (it would be an open proxy): it counts, then
answers 502.  With --watch it exits once process PID is gone; SIGTERM
stops it.
"""
import argparse
import os
import signal
import socket
import sys
import threading


from answers import Counts
from lifetime import watch
from urllib.parse import urlsplit

counts = None
state_dir = None
forward = True


def count(key):
    counts.bump(key)


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(client):
    try:
        buf = b""
        while b"\r\n\r\n" not in buf:
            data = client.recv(65536)
            if not data:
                return
            buf += data
        head, rest = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = []
        length = 0
        auth = False
        for line in lines[1:]:
            name, _, value = line.partition(":")
            lname = name.strip().lower()
            if lname == "content-length":
                length = int(value.strip())
            if lname == "authorization":
                auth = True
            if lname not in ("proxy-connection", "connection", "keep-alive"):
                headers.append(line)
        count("%s %s" % (method, target))
        if auth:
            count("authorization %s %s" % (method, target))
        if not forward:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n"
                           b"Connection: close\r\n\r\n")
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host.strip("[]"), int(port)))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            if rest:
                upstream.sendall(rest)
            t = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
            t.start()
            pipe(client, upstream)
            t.join()
            return
        while len(rest) < length:
            data = client.recv(65536)
            if not data:
                return
            rest += data
        u = urlsplit(target)
        path = u.path or "/"
        if u.query:
            path += "?" + u.query
        upstream = socket.create_connection((u.hostname, u.port or 80))
        out = "%s %s HTTP/1.1\r\n%s\r\nConnection: close\r\n\r\n" % (method, path,
                                                                     "\r\n".join(headers))
        upstream.sendall(out.encode("latin-1") + rest[:length])
        pipe(upstream, client)
    except (OSError, ValueError):
        pass
    finally:
        try:
            client.close()
        except OSError:
            pass


def main():
    global state_dir, forward, counts
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--watch", type=int)
    p.add_argument("--host", default="127.0.0.1")
    a = p.parse_args()
    forward = a.host == "127.0.0.1"
    state_dir = a.dir
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind((a.host, 0))
    srv.listen(16)
    counts = Counts(state_dir)
    tmp = os.path.join(state_dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(srv.getsockname()[1]))
    os.replace(tmp, os.path.join(state_dir, "port"))
    if a.watch:
        threading.Thread(target=watch, args=(a.watch,), daemon=True).start()
    while True:
        c, _ = srv.accept()
        threading.Thread(target=handle, args=(c,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())

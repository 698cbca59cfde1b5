#!/usr/bin/python3
"""A plain HTTP/1.1 server that frames some answers wrongly, byte by byte.

    h1_framing.py --dir DIR [--watch PID]

Listens on 127.0.0.1, on a port the system picks, written to DIR/port once
it accepts connections.  Counts what it receives in DIR/counts.json (see
answers.py; every request it reads is processed).  With --watch it exits
once process PID is gone; SIGTERM stops it.

What it answers depends on a path segment that has one of these names as
a dash-separated part, before any "~<tag>" ("x-h1-two-lengths",
"fault-h1-cut-chunk~b1"; the longest name wins); "page-K-<name>" plays it
on page K of a list only.  Any other request is answered normally
(answers.py; --addresses FILE: every list paged from that list document),
on a kept-alive connection:
    h1-two-lengths     two Content-Length headers that disagree (the body's
                       length, and 5 more), the body; then the connection
                       closes
    h1-length-chunked  Content-Length (the body's length) and
                       Transfer-Encoding: chunked, the body in chunks; then
                       the connection closes
    h1-cut-chunk       Transfer-Encoding: chunked, a chunk of the whole body
                       announced and half of it sent, then the connection
                       closes
    h1-short-body      Content-Length, half the body, then the connection
                       closes
    h1-huge-head       320 header lines of 1,024 bytes each (a head of about
                       330 KiB, over the clients' 256 KiB cap of a head), then
                       Content-Length and the body; then the connection closes
    h1-long-line       one header line of 2 MiB (over the clients' 256 KiB cap
                       of a head, and over libcurl's 100 KiB cap of a line),
                       then Content-Length and the body; then the connection
                       closes
    h1-trickle-head    the head (with Content-Length) one byte every 0.25 s,
                       then the body; h1-trickle-body: the head at once, the
                       body one byte every 0.25 s.  The trickle stops when
                       the client hangs up, and after TRICKLE_CAP seconds at
                       most (the rest sent at once); then the connection
                       closes
    h1-bad-chunk-size  Transfer-Encoding: chunked and the chunk-size line
                       "zz"; then the connection closes
    h1-trailers        a chunked body, then the trailer "X-Trailer: yes" and
                       the blank line (kept alive)
    h1-status-trailer  a chunked body, then a trailer line "HTTP/1.1 200 OK"
                       and the blank line; then the connection closes
    h1-length-trailer  a chunked body, then the trailer "Content-Length: 5"
                       (a framing field where RFC 9110 6.5.1 forbids one);
                       then the connection closes
    h1-folded-header   a header folded onto a second line (obs-fold,
                       "X-Folded: a" CR LF " b"), Content-Length, the body;
                       then the connection closes
    h1-folded-length   "Content-Length:" CR LF " <length>" (the value on a
                       folded line), the body; then the connection closes
    h1-space-chunk-size  chunked, each chunk-size line with two spaces
                       before the size; then the connection closes
    h1-long-chunk-size chunked, the first chunk-size line 2 MiB of zeros
                       before the size; then the connection closes
    h1-equal-lengths   the same Content-Length twice, the body; then the
                       connection closes
    h1-length-list     "Content-Length: <length>, <length>", the body; then
                       the connection closes
    h1-lf-only         the head and a chunked body with LF line ends (no CR);
                       then the connection closes
"""
import argparse
import os
import signal
import socket
import sys
import threading
import time

from lifetime import watch
from answers import Counts, REASONS, answer, read_request, fault_name, load_addresses, plays, write_port

FAULTS = ("h1-two-lengths", "h1-length-chunked", "h1-cut-chunk", "h1-short-body",
          "h1-huge-head", "h1-long-line", "h1-trickle-head", "h1-trickle-body",
          "h1-bad-chunk-size", "h1-trailers", "h1-status-trailer", "h1-length-trailer", "h1-folded-header",
          "h1-folded-length", "h1-space-chunk-size", "h1-long-chunk-size",
          "h1-equal-lengths", "h1-length-list", "h1-lf-only")
NAMES = sorted(FAULTS, key=len, reverse=True)
LONG_LINE = b"X-Long: " + b"l" * (2 << 20) + b"\r\n"  # h1-long-line's, made once
ZEROS = b"0" * (2 << 20)  # h1-long-chunk-size's, made once
TRICKLE_EVERY = 0.25  # seconds between two bytes of a trickle
TRICKLE_CAP = 4.0  # seconds a trickle lasts at most

counts = None


def fault(path):
    f = fault_name(path, NAMES)
    return f[0] if f and plays(path, f[2]) else None


def chunked(body, size_prefix=b"", trailers=b"", eol=b"\r\n"):
    half = len(body) // 2
    out = b""
    for part in (body[:half], body[half:]):
        out += b"%s%x%s%s%s" % (size_prefix, len(part), eol, part, eol)
    return out + b"0" + eol + trailers + eol


class Trickle:
    """An answer whose middle part goes one byte every TRICKLE_EVERY
    seconds: before (at once), slow (trickled, for TRICKLE_CAP seconds at
    most), after (at once, with what is left of slow)."""

    def __init__(self, before, slow, after):
        self.before, self.slow, self.after = before, slow, after

    def send(self, sock):
        sock.sendall(self.before)
        n = min(len(self.slow), int(TRICKLE_CAP / TRICKLE_EVERY))
        for i in range(n):
            sock.sendall(self.slow[i:i + 1])  # OSError once the client hung up
            time.sleep(TRICKLE_EVERY)
        sock.sendall(self.slow[n:] + self.after)


def respond(method, path):
    """The bytes to send, and whether the connection closes after them."""
    status, body = answer(method, path)
    head = "HTTP/1.1 %d %s\r\nContent-Type: application/vnd.api+json\r\n" % (
        status, REASONS[status])
    f = fault(path)
    if f is None:
        return (head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body, False
    if f == "h1-two-lengths":
        head += "Content-Length: %d\r\nContent-Length: %d\r\n" % (len(body), len(body) + 5)
        return (head + "Connection: close\r\n\r\n").encode() + body, True
    if f == "h1-length-chunked":
        head += "Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(body)
        return (head + "Connection: close\r\n\r\n").encode() + chunked(body), True
    if f == "h1-huge-head":
        pad = "".join("X-Pad-%03d: %s\r\n" % (i, "p" * 1010) for i in range(320))
        head += pad + "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        return head.encode() + body, True
    if f == "h1-long-line":
        tail = "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
        return head.encode() + LONG_LINE + tail.encode() + body, True
    json_head = head + "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    chunked_head = (head + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()
    if f == "h1-trickle-head":
        return Trickle(b"", json_head.encode(), body), True
    if f == "h1-trickle-body":
        return Trickle(json_head.encode(), body, b""), True
    if f == "h1-bad-chunk-size":
        return chunked_head + b"zz\r\n" + body + b"\r\n0\r\n\r\n", True
    if f == "h1-trailers":
        head += "Transfer-Encoding: chunked\r\n\r\n"
        return head.encode() + chunked(body, trailers=b"X-Trailer: yes\r\n"), False
    if f == "h1-status-trailer":
        return chunked_head + chunked(body, trailers=b"HTTP/1.1 200 OK\r\n"), True
    if f == "h1-length-trailer":
        return chunked_head + chunked(body, trailers=b"Content-Length: 5\r\n"), True
    if f == "h1-folded-header":
        return (head + "X-Folded: a\r\n b\r\n").encode() + json_head[len(head):].encode() + body, True
    if f == "h1-folded-length":
        head += "Content-Length:\r\n %d\r\nConnection: close\r\n\r\n" % len(body)
        return head.encode() + body, True
    if f == "h1-space-chunk-size":
        return chunked_head + chunked(body, size_prefix=b"  "), True
    if f == "h1-long-chunk-size":
        return chunked_head + ZEROS + chunked(body), True
    if f == "h1-equal-lengths":
        twice = head + "Content-Length: %d\r\n" % len(body) + json_head[len(head):]
        return twice.encode() + body, True
    if f == "h1-length-list":
        head += "Content-Length: %d, %d\r\nConnection: close\r\n\r\n" % (len(body), len(body))
        return head.encode() + body, True
    if f == "h1-lf-only":
        lf_head = chunked_head.replace(b"\r\n", b"\n")
        return lf_head + chunked(body, eol=b"\n"), True
    if f == "h1-cut-chunk":
        head += "Transfer-Encoding: chunked\r\n\r\n"
        return head.encode() + b"%x\r\n" % len(body) + body[:len(body) // 2], True
    # h1-short-body
    head += "Content-Length: %d\r\n\r\n" % len(body)
    return head.encode() + body[:len(body) // 2], True


def serve(sock):
    buf = b""
    while True:
        got = read_request(sock, buf)
        if got is None:
            return
        method, path, buf = got
        counts.add("http/1.1", method, path)
        out, close = respond(method, path)
        if isinstance(out, Trickle):
            out.send(sock)
        else:
            sock.sendall(out)
        if close:
            return


def connection(sock):
    try:
        serve(sock)
    except (OSError, ValueError):
        pass
    finally:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()


def main():
    global counts
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--watch", type=int)
    p.add_argument("--addresses", help="a list document every list is paged from")
    a = p.parse_args()
    if a.addresses:
        load_addresses(a.addresses)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    counts = Counts(a.dir)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    write_port(a.dir, "port", srv.getsockname()[1])
    if a.watch:
        threading.Thread(target=watch, args=(a.watch,), daemon=True).start()
    while True:
        raw, _ = srv.accept()
        threading.Thread(target=connection, args=(raw,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())

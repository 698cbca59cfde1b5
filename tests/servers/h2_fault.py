#!/usr/bin/python3
"""An HTTPS server that speaks HTTP/2 and HTTP/1.1 (ALPN) and plays HTTP/2's
faults: stream resets, refused streams, GOAWAYs, a connection cut mid-body.

    h2_fault.py --cert server.pem --key server.key --dir DIR [--watch PID]

Listens on 127.0.0.1, on ports the system picks: HTTPS (ALPN h2 and
http/1.1) written to DIR/port, and plain HTTP/1.1 (for clients that speak
nothing else) written to DIR/plain_port, once both accept connections.
Counts what it receives and processes in DIR/counts.json (see answers.py:
"<protocol> <METHOD> <path>" received, "processed ..." taken on).  With
--watch it exits once process PID is gone (the test that started it);
SIGTERM stops it; SIGUSR1 forgets which connections played a fault once
(below), so the same ids can play it again.

What it answers depends on a path segment that has one of these names as
a dash-separated part, before any "~<tag>" ("x-h2-refused",
"h2-refused-loop8", "fault-h2-cut~b1"; the longest name wins), over HTTP/2
only; every request over HTTP/1.1 is answered normally (answers.py):
    h2-1.1-required        RST_STREAM HTTP_1_1_REQUIRED before any header
    h2-1.1-required-late   the answer's :status, then RST_STREAM HTTP_1_1_REQUIRED
    h2-refused             RST_STREAM REFUSED_STREAM (never processed)
    h2-rst-before          RST_STREAM INTERNAL_ERROR before any header
    h2-rst-after           the answer's :status, then RST_STREAM INTERNAL_ERROR
    h2-refuse-first        REFUSED_STREAM, on the first connection that carries
                           the segment only: the client's next connection
                           is answered
    h2-goaway              graceful GOAWAY: the streams that arrive until the
                           client is quiet for WINDOW are taken, then GOAWAY
                           (NO_ERROR, last_stream_id = the newest stream),
                           they are answered, and the connection closes;
                           streams opened after it are never processed
    h2-goaway-low          on the first connection that carries the segment:
                           the streams that arrive until the client is quiet
                           for WINDOW (several at once), then GOAWAY (NO_ERROR,
                           last_stream_id = 2 below the lowest of them) and
                           close: none of them is processed; the segment's
                           later connections are answered
    h2-cut                 on the first connection that carries the segment:
                           the streams that arrive until the client is quiet
                           for WINDOW; those that ask for h2-cut get their
                           :status, a Content-Length and half their body,
                           the others (multiplexed on the connection) their
                           whole answer, then the connection is closed (TCP,
                           no GOAWAY); the segment's later connections are
                           answered
    h2-goaway-every        nginx's keepalive_requests: every connection takes
                           EVERY (3) such requests, answers them, and sends
                           GOAWAY (NO_ERROR, last_stream_id = the third);
                           streams opened after it are never processed
"page-K-<name>" ("fault-page-3-h2-cut") plays the fault on page K of a list
only (the pages before it are answered).  --addresses FILE serves every
list from that list document (e.g. the sandbox's acct-22), paged.
The resets and refusals come after the whole request was received
(END_STREAM): the server took the request, as a real server would have
before failing.
"""
import argparse
import itertools
import os
import select
import signal
import socket
import ssl
import sys
import threading
import time

from lifetime import watch
from answers import (Counts, REASONS, answer, read_request, fault_name, list_page, load_addresses, plays,
                     write_port)

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
from hyperframe.frame import GoAwayFrame

E = h2.errors.ErrorCodes
WINDOW = 0.1  # seconds without a byte from the client before a batched fault plays

# name: (what, error code, once per connection)
FAULTS = {
    "h2-1.1-required": ("reset", E.HTTP_1_1_REQUIRED, False),
    "h2-1.1-required-late": ("late", E.HTTP_1_1_REQUIRED, False),
    "h2-refused": ("refuse", E.REFUSED_STREAM, False),
    "h2-rst-before": ("reset", E.INTERNAL_ERROR, False),
    "h2-rst-after": ("late", E.INTERNAL_ERROR, False),
    "h2-refuse-first": ("refuse", E.REFUSED_STREAM, True),
    "h2-goaway": ("goaway", E.NO_ERROR, False),
    "h2-goaway-low": ("goaway-low", E.NO_ERROR, True),
    "h2-cut": ("cut", None, True),
    "h2-goaway-every": ("every", E.NO_ERROR, False),
}
EVERY = 3  # h2-goaway-every: the stream of a connection that gets the GOAWAY
NAMES = sorted(FAULTS, key=len, reverse=True)
BATCHED = ("goaway", "goaway-low", "cut")

counts = None
faulty_lock = threading.Lock()
faulty = {}  # segment -> the connection (id) that plays its once-only fault


def forget(*_):
    with faulty_lock:
        faulty.clear()


def fault(path, conn_id):
    """(what, code) of the fault path asks for on connection conn_id, or None."""
    f = fault_name(path, NAMES)
    if f is None:
        return None
    name, seg, page = f
    if not plays(path, page):
        return None
    what, code, once = FAULTS[name]
    if once:
        with faulty_lock:
            if faulty.setdefault(seg, conn_id) != conn_id:
                return None
    return what, code


class H2Server:
    def __init__(self, sock, conn_id):
        self.sock = sock
        self.id = conn_id
        self.conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.heads = {}
        self.outbox = {}       # bodies waiting for flow control (pump)
        self.batch = []        # (sid, method, path, what) waiting for the window
        self.batch_until = None
        self.last = None       # last_stream_id of a GOAWAY sent: later streams are ignored
        self.taken = 0         # h2-goaway-every: its requests taken on this connection
        self.closing = False   # a GOAWAY went out: drain, then close

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def goaway(self, last):
        self.flush()
        f = GoAwayFrame(0)
        f.last_stream_id = last
        f.error_code = 0
        self.sock.sendall(f.serialize())
        self.last = last

    def run(self):
        self.conn.initiate_connection()
        self.flush()
        while True:
            timeout = None
            if self.batch_until is not None:
                timeout = max(0.0, self.batch_until - time.monotonic())
            if timeout is not None and self.sock.pending() == 0:
                ready, _, _ = select.select([self.sock], [], [], timeout)
                if not ready:
                    if self.play_batch():
                        return
                    continue
            data = self.sock.recv(65536)
            if not data:
                return
            if self.batch_until is not None:  # the client is still sending: wait on
                self.batch_until = time.monotonic() + WINDOW
            if self.receive(data):
                return
            if self.closing:
                self.drain()
                return

    def receive(self, data):
        """Feeds data to the connection; True when the connection is done."""
        for ev in self.conn.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                self.heads[ev.stream_id] = dict(ev.headers)
                if ev.stream_ended:
                    self.request(ev.stream_id, self.heads.pop(ev.stream_id))
            elif isinstance(ev, (h2.events.WindowUpdated, h2.events.RemoteSettingsChanged)):
                self.pump()
            elif isinstance(ev, h2.events.DataReceived):
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                if ev.stream_id in self.heads:
                    self.request(ev.stream_id, self.heads.pop(ev.stream_id))
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.flush()
                return True
        self.flush()
        return False

    def answer(self, sid, method, path, part=False):
        status, body = answer(method, path)
        self.conn.send_headers(sid, [(":status", str(status)),
                                     ("content-type", "application/vnd.api+json"),
                                     ("content-length", str(len(body)))])
        if part:
            self.outbox[sid] = [body[:len(body) // 2], False]
        else:
            self.outbox[sid] = [body, True]
        self.pump()

    def pump(self):
        """Sends what the flow-control windows and the frame size let out of
        the bodies waiting (self.outbox: sid -> [bytes left, end the stream])."""
        for sid in list(self.outbox):
            data, end = self.outbox[sid]
            while True:
                try:
                    room = min(self.conn.local_flow_control_window(sid),
                               self.conn.max_outbound_frame_size)
                except h2.exceptions.StreamClosedError:
                    del self.outbox[sid]
                    break
                n = min(room, len(data))
                if n == 0 and data:
                    self.outbox[sid][0] = data
                    break
                last = n == len(data)
                self.conn.send_data(sid, data[:n], end_stream=end and last)
                data = data[n:]
                if last:
                    del self.outbox[sid]
                    break

    def request(self, sid, head):
        method, path = head.get(":method", "?"), head.get(":path", "?")
        if self.last is not None and sid > self.last:
            counts.add("h2", method, path, processed=False)  # above a GOAWAY: ignored
            return
        f = fault(path, self.id)
        what = f and f[0]
        named = fault_name(path, NAMES)
        before = named and named[2] and (list_page(path) or 0) < named[2]
        if what in BATCHED or (self.batch and not before):
            # once a batch started, every stream joins it (but a page before
            # the one a fault is for)
            counts.add("h2", method, path, processed=False)
            self.batch.append((sid, method, path, what))
            if self.batch_until is None:
                self.batch_until = time.monotonic() + WINDOW
            return
        counts.add("h2", method, path, processed=what != "refuse")
        if what is None:
            self.answer(sid, method, path)
        elif what == "refuse" or what == "reset":
            self.conn.reset_stream(sid, error_code=f[1])
        elif what == "every":
            self.answer(sid, method, path)
            self.taken += 1
            if self.taken == EVERY:
                self.goaway(sid)
                self.closing = True
        elif what == "late":
            status, _ = answer(method, path)
            self.conn.send_headers(sid, [(":status", str(status)),
                                         ("content-type", "application/vnd.api+json")])
            self.conn.reset_stream(sid, error_code=f[1])

    def play_batch(self):
        """Plays the batched fault; True when the connection is done."""
        batch, self.batch, self.batch_until = self.batch, [], None
        kinds = set(b[3] for b in batch)  # the streams that joined have what None
        if "goaway-low" in kinds:
            self.goaway(max(0, min(b[0] for b in batch) - 2))
            self.drain()
            return True
        if "cut" in kinds:
            for sid, method, path, what in batch:
                # the streams that joined (other requests multiplexed on the
                # connection) are answered whole before the cut
                counts.processed("h2", method, path)
                self.answer(sid, method, path, part=what == "cut")
            self.flush()
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        # graceful: GOAWAY at the newest stream, answer, close
        self.goaway(max(b[0] for b in batch))
        for sid, method, path, what in batch:
            counts.processed("h2", method, path)
            self.answer(sid, method, path)
        self.flush()
        self.drain()
        return True

    def drain(self):
        """Reads (counting streams above the GOAWAY as never processed) until
        the client closes, at most 2 s."""
        until = time.monotonic() + 2
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            if self.sock.pending() == 0:
                ready, _, _ = select.select([self.sock], [], [], left)
                if not ready:
                    return
            data = self.sock.recv(65536)
            if not data:
                return
            try:
                if self.receive(data):
                    return
            except h2.exceptions.ProtocolError:
                return


def serve_http1(sock):
    buf = b""
    while True:
        got = read_request(sock, buf)
        if got is None:
            return
        method, path, buf = got
        counts.add("http/1.1", method, path)
        status, body = answer(method, path)
        sock.sendall(("HTTP/1.1 %d %s\r\nContent-Type: application/vnd.api+json\r\n"
                      "Content-Length: %d\r\n\r\n" % (status, REASONS[status], len(body))).encode()
                     + body)


def connection(raw, ctx, conn_id):
    sock = raw
    try:
        if ctx is not None:
            sock = ctx.wrap_socket(raw, server_side=True)
        if ctx is not None and sock.selected_alpn_protocol() == "h2":
            H2Server(sock, conn_id).run()
        else:
            serve_http1(sock)
    except (ssl.SSLError, OSError, ValueError, h2.exceptions.ProtocolError):
        pass
    finally:
        try:
            sock.close()
        except OSError:
            pass


def listen():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    return srv


def accept_loop(srv, ctx, ids):
    while True:
        raw, _ = srv.accept()
        threading.Thread(target=connection, args=(raw, ctx, next(ids)), daemon=True).start()


def main():
    global counts
    p = argparse.ArgumentParser()
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--watch", type=int)
    p.add_argument("--addresses", help="a list document every list is paged from")
    a = p.parse_args()
    if a.addresses:
        load_addresses(a.addresses)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGUSR1, forget)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    counts = Counts(a.dir)
    tls, plain = listen(), listen()
    ids = itertools.count(1)  # connection ids (next() on it is atomic in CPython)
    write_port(a.dir, "plain_port", plain.getsockname()[1])
    write_port(a.dir, "port", tls.getsockname()[1])
    if a.watch:
        threading.Thread(target=watch, args=(a.watch,), daemon=True).start()
    threading.Thread(target=accept_loop, args=(plain, None, ids), daemon=True).start()
    accept_loop(tls, ctx, ids)


if __name__ == "__main__":
    sys.exit(main())

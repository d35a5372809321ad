#!/usr/bin/python3
"""serve_limits.py - a running `kiln serve` at its limits.

usage: serve_limits.py --port PORT --tree DIR (--slow N | --sweep) [--pid PID --fd-limit L]

  --slow N   N connections from 127.0.0.1, each sending half a request
             line and then a header line now and then (slowloris), more
             than the server's --max-connections: a client from another
             address (127.0.0.2) must still be answered, with the page's
             bytes, while they hang on.
  --sweep    every asset of DIR's manifest once, with Accept-Encoding
             gzip, over four keep-alive connections: each answered 200
             with the bytes of the file it names (the .gz when
             Content-Encoding says gzip).  With --pid and --fd-limit, the
             server's open descriptors (/proc/PID/fd) must stay below the
             limit, and a new connection must still be answered after.

Prints "FAIL: what" per failure and "serve_limits: ..."; exits 1 on any.
"""
import argparse
import http.client
import json
import os
import socket
import sys
import threading
import time

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def get(port, path, source="127.0.0.1", ae=None, timeout=5):
    """One GET on a new connection from SOURCE: (status, headers, body), or
    None when it was not answered."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                   source_address=(source, 0))
    try:
        c.request("GET", path, headers={"Accept-Encoding": ae} if ae else {})
        r = c.getresponse()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read()
    except OSError:
        return None
    finally:
        c.close()


def slow(o, index):
    socks, stop = [], threading.Event()
    for _ in range(o.slow):
        try:
            s = socket.create_connection(("127.0.0.1", o.port), timeout=5)
            s.sendall(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            socks.append(s)
        except OSError:
            pass  # refused or reset: the server keeps its slots

    def trickle():  # a header line a second, as slowloris does
        while not stop.wait(1.0):
            for s in socks:
                try:
                    s.sendall(b"X-a: b\r\n")
                except OSError:
                    pass
    t = threading.Thread(target=trickle)
    t.start()
    time.sleep(0.5)
    try:
        got = get(o.port, "/index.html", source="127.0.0.2")
        if not got or got[0] != 200 or got[2] != index:
            fail("with %d slow senders from 127.0.0.1, a client from 127.0.0.2 is not answered "
                 "with index.html (%s)" % (o.slow, got[0] if got else "no answer"))
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()
    print("serve_limits: %d slow senders opened" % len(socks), file=sys.stderr)


def sweep(o):
    with open(os.path.join(o.tree, "kiln-manifest.json")) as f:
        files = json.load(f)["files"]
    rels = sorted(files)
    peak = [0]

    def fds():
        return len(os.listdir("/proc/%d/fd" % o.pid)) if o.pid else 0

    def worker(part):
        c = http.client.HTTPConnection("127.0.0.1", o.port, timeout=10)
        for rel in part:
            c.request("GET", "/" + rel, headers={"Accept-Encoding": "gzip"})
            r = c.getresponse()
            body = r.read()
            name = rel + (".gz" if r.getheader("Content-Encoding") == "gzip" else "")
            with open(os.path.join(o.tree, name), "rb") as f:
                want = f.read()
            if r.status != 200 or body != want:
                fail("/%s: status %d, %s" % (rel, r.status, "its bytes" if body == want
                                             else "not the bytes of " + name))
            peak[0] = max(peak[0], fds())
        c.close()
    threads = [threading.Thread(target=worker, args=(rels[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if o.fd_limit and peak[0] >= o.fd_limit:
        fail("the server held %d descriptors, its limit is %d" % (peak[0], o.fd_limit))
    got = get(o.port, "/" + rels[0])
    if not got or got[0] != 200:
        fail("after the sweep, a new connection is not answered")
    print("serve_limits: %d assets, %d descriptors at most" % (len(rels), peak[0]),
          file=sys.stderr)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--slow", type=int, default=0)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--pid", type=int, default=0)
    ap.add_argument("--fd-limit", type=int, default=0)
    o = ap.parse_args(argv)
    if o.slow:
        with open(os.path.join(o.tree, "index.html"), "rb") as f:
            slow(o, f.read())
    if o.sweep:
        sweep(o)
    print("serve_limits: %d failures" % len(failures), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
